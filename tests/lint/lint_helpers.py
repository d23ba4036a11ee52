"""Shared helpers for the lint tests (imported by name; fixtures are in conftest.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional

from blockkit.context import Context
from blockkit.engine import ALL_LAYERS, check, read_path
from blockkit.report import Finding
from sample_manifests import PAGE_BLOCK, changed

# A manifest that every layer accepts and no lint rule remarks on; tests change one thing.
CLEAN = PAGE_BLOCK

# A block that answers BLOCK_INIT, the smallest honest one.
READY_JS = ("window.addEventListener('message', (event) => {\n"
            "  if (event.data && event.data.type === 'BLOCK_INIT') {\n"
            "    parent.postMessage({ type: 'BLOCK_READY', payload: { height: 400 } }, event.origin);\n"
            "  }\n"
            "});\n")


def clean(**changes: Any) -> dict[str, Any]:
    """A copy of CLEAN with top-level keys replaced; a value of ... deletes the key."""
    return changed(CLEAN, **changes)


def write_project(root: Path, manifest: Any, files: Optional[dict[str, str]] = None) -> Path:
    """Write block.manifest.json (and ``files``, paths with /) into ``root``; returns the manifest path."""
    root.mkdir(parents=True, exist_ok=True)
    path = root / "block.manifest.json"
    path.write_text(manifest if isinstance(manifest, str) else json.dumps(manifest, indent=2), encoding="utf-8")
    for name, content in (files or {}).items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    return path


def lint_file(path: Path, context: Optional[Context] = None, project: bool = True) -> list[Finding]:
    """The lint-layer findings for the manifest at ``path`` (its folder is the project)."""
    report = check(read_path(path), context, layers=ALL_LAYERS, project_dir=path.parent if project else None)
    assert not [f for f in report.findings if f.code == "BK000"], report.findings  # no rule crashed
    return [f for f in report.findings if f.layer == "lint"]


def codes(findings: list[Finding]) -> list[str]:
    return [f.code for f in findings]


def run_cli(*args: str, cwd: Optional[Path] = None) -> subprocess.CompletedProcess[str]:
    """``blockkit ARGS`` as a user runs it: a real process, no colour."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NO_COLOR": "1"}
    if "PYTHONPATH" in os.environ:  # a worktree's own code, not the installed copy
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return subprocess.run([sys.executable, "-m", "blockkit.cli", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120)


def invoke(*args: str, cwd: Optional[Path] = None) -> Any:
    """``blockkit ARGS`` in-process (click's runner): .exit_code, .stdout, .stderr."""
    from click.testing import CliRunner

    from blockkit.cli import main

    runner = CliRunner()
    if cwd is None:
        return runner.invoke(main, list(args), env={"NO_COLOR": "1"})
    previous = Path.cwd()
    os.chdir(cwd)
    try:
        return runner.invoke(main, list(args), env={"NO_COLOR": "1"})
    finally:
        os.chdir(previous)

"""The scaffolded .pre-commit-config.yaml runs blockkit's hooks with the real pre-commit."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from new_helpers import invoke, subprocess_env

pytestmark = [
    pytest.mark.precommit,
    pytest.mark.skipif(
        shutil.which("pre-commit") is None or shutil.which("git") is None, reason="needs pre-commit and git"
    ),
]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _pre_commit(block: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # The hooks call `blockkit` from PATH, as they would for a developer who
    # pip-installed it; a shim stands in for the console script here.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "blockkit"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m blockkit.cli "$@"\n')
    shim.chmod(0o755)
    env = {
        **subprocess_env(),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
    }
    return subprocess.run(
        ["pre-commit", "run", *args, "--all-files", "--color", "never"],
        cwd=block,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def block(tmp_path: Path) -> Path:
    block = tmp_path / "hooked-block"
    assert invoke([str(block), "--defaults", "--template", "vite"]).exit_code == 0
    _git(block, "init", "-q")
    _git(block, "add", ".")
    return block


def test_validate_hook_passes_then_catches_a_bad_manifest(block: Path, tmp_path: Path) -> None:
    result = _pre_commit(block, tmp_path, "blockkit-validate")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "blockkit validate" in result.stdout and "Passed" in result.stdout

    manifest = block / "block.manifest.json"
    manifest.write_text(
        manifest.read_text().replace('"allow-scripts allow-forms"', '"allow-scripts allow-same-origin"')
    )
    _git(block, "add", ".")
    result = _pre_commit(block, tmp_path, "blockkit-validate")
    assert result.returncode == 1 and "Failed" in result.stdout


def test_all_hooks_pass_on_a_fresh_block(block: Path, tmp_path: Path) -> None:
    result = _pre_commit(block, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr

"""What `blockkit new` scaffolds runs in `blockkit dev` and completes the handshake."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from blockkit.dev import trace

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Path:
    if find_spec("blockkit.commands.new") is None:
        pytest.skip("blockkit new is not available")
    target = tmp_path_factory.mktemp("scaffold") / "fresh-block"
    created = subprocess.run(
        [sys.executable, "-m", "blockkit.cli", "new", str(target), "--template", "static", "--defaults"],
        capture_output=True,
        check=False,
        text=True,
        timeout=120,
    )
    assert created.returncode == 0, created.stdout + created.stderr
    return target


def test_a_scaffolded_static_block_passes_the_check(scaffolded: Path, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "blockkit.cli", "dev", str(scaffolded), "--check", "--format", "json",
         "--trace", str(tmp_path / "t.jsonl")],
        capture_output=True,
        check=False,
        text=True,
        timeout=120,
    )
    verdict = json.loads(result.stdout)
    assert result.returncode == 0, result.stdout + result.stderr
    assert verdict["verdict"] == "handshake-completed" and "BLOCK_READY" in verdict["sentTypes"]


def test_a_scaffolded_block_follows_the_hosts_theme(scaffolded: Path, host: Any) -> None:
    run = host(scaffolded)
    run.wait_outcome("ready")
    manifest = json.loads((scaffolded / "block.manifest.json").read_text())
    sandbox = run.page.get_attribute("#block-frame", "sandbox")
    assert sandbox == manifest["iframe"]["sandbox"]
    run.page.click("#theme-toggle")
    run.page.wait_for_function("() => document.documentElement.dataset.theme === 'light'")
    run.frame.wait_for_function("() => document.documentElement.dataset.theme === 'light'")
    assert trace.messages(run.events(), "out", "THEME_CHANGE")
    assert trace.violations(run.events()) == []

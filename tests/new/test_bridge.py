"""The shared bridge module's protocol behaviour, run under Node's own test runner."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from blockkit.resources import templates_dir

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="needs node")


def test_bridge_protocol() -> None:
    env = {**os.environ, "BRIDGE_PATH": str(templates_dir() / "_shared" / "bridge.js")}
    result = subprocess.run(
        ["node", "--test", str(Path(__file__).with_name("bridge.test.mjs"))],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "# fail 0" in result.stdout

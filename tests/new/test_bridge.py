"""The shared bridge module's protocol behaviour, run under Node's own test runner."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from blockkit.platform import SCHEMA_ID
from blockkit.resources import templates_dir

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="needs node")


def test_without_apiBaseUrl_the_bridge_calls_the_platform_origin() -> None:
    # The platform's origin is the host of the manifest schema's $id: one fact, two places.
    source = (templates_dir() / "_shared" / "bridge.js").read_text(encoding="utf-8")
    match = re.search(r"export const PLATFORM_API_BASE = '([^']+)';", source)
    assert match is not None
    origin = re.match(r"https://[^/]+", SCHEMA_ID)
    assert origin is not None and match.group(1) == origin.group()


@needs_node
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

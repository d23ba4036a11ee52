"""A real Vite dev server behind ``--proxy``: handshake, hot reload, re-handshake."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from blockkit.dev import trace
from blockkit.dev.servers import bind_loopback

pytestmark = [pytest.mark.browser, pytest.mark.slow]

VITE_START_TIMEOUT_S = 60


@pytest.fixture(scope="module")
def vite_block(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    if find_spec("blockkit.commands.new") is None:
        pytest.skip("blockkit new is not available")
    pytest.importorskip("websockets", reason="hot reload through --proxy needs the websockets package")
    target = tmp_path_factory.mktemp("vite") / "vite-block"
    created = subprocess.run(
        [sys.executable, "-m", "blockkit.cli", "new", str(target), "--template", "vite", "--defaults"],
        capture_output=True, text=True, timeout=180, check=False,
    )
    assert created.returncode == 0, created.stdout + created.stderr
    installed = subprocess.run(
        ["npm", "ci", "--no-audit", "--no-fund"], cwd=target, capture_output=True, text=True, timeout=600, check=False
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return target


@pytest.fixture
def vite_server(vite_block: Path) -> Iterator[str]:
    probe = bind_loopback(0, "probe")
    port = probe.getsockname()[1]
    probe.close()
    # Vite itself, not npx: npx would leave Vite running as an orphan on terminate.
    process = subprocess.Popen(
        [str(vite_block / "node_modules" / ".bin" / "vite"), "--port", str(port), "--strictPort", "--host", "127.0.0.1"],
        cwd=vite_block, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + VITE_START_TIMEOUT_S
        while True:
            try:
                urllib.request.urlopen(url + "/", timeout=2).close()
                break
            except OSError:
                assert process.poll() is None, "vite exited"
                assert time.monotonic() < deadline, "vite did not start"
                time.sleep(0.2)
        yield url
    finally:
        # The whole group, in case Vite started workers of its own.
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(10)


def test_the_vite_block_passes_the_check_through_the_proxy(vite_block: Path, vite_server: str, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "blockkit.cli", "dev", str(vite_block), "--proxy", vite_server, "--check",
         "--format", "json", "--trace", str(tmp_path / "t.jsonl")],
        capture_output=True, text=True, timeout=120, check=False,
    )
    verdict = json.loads(result.stdout)
    # A console error here would mean hot reload's websocket did not get through.
    assert verdict["consoleErrors"] == [] and verdict["violations"] == []
    assert result.returncode == 0 and verdict["verdict"] == "handshake-completed"


def test_an_edit_reloads_the_block_and_it_handshakes_again(vite_block: Path, vite_server: str, host: Any) -> None:
    run = host(vite_block, proxy=vite_server)
    run.wait_outcome("ready")
    main = vite_block / "src" / "main.ts"
    original = main.read_text()
    try:
        main.write_text(original + "\ndocument.title = 'edited by the test';\n")
        run.page.wait_for_function(
            "() => document.querySelector('#trace-list').textContent.includes('block-reloaded')"
            " && window.__blockkit?.outcome === 'ready'",
            timeout=30_000,
        )
        run.frame.wait_for_function("() => document.title === 'edited by the test'")
        events = run.events()
    finally:
        main.write_text(original)
    assert len(trace.lifecycle(events, "ready")) == 2
    assert len(trace.lifecycle(events, "block-reloaded")) == 1
    assert trace.violations(events) == []

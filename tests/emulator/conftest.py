"""Fixtures for the emulator tests: one running emulator per session and a client
whose every response is checked against the OpenAPI document.

``emulator`` starts ``blockkit emulator start --port 0 --ready-file PATH`` (the CLI
contract of DESIGN.md) once per session and yields the ready file's JSON
(``base_url``, ``auth_url``, ``orchestration_url``, ``pid``, ``data``).

``api`` is an ``httpx.Client`` on ``base_url`` with the conformance hook installed:
any answer that departs from ``openapi.json`` fails the test that received it.
Use ``raw_api`` only to look at an answer the hook would refuse (the contract's
own tests).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from contract import conformance_hook

READY_TIMEOUT_S = 60.0
SEED = 1


def _start(tmp: Path, *extra: str) -> tuple[subprocess.Popen[bytes], dict[str, Any]]:
    ready = tmp / "ready.json"
    log = (tmp / "emulator.log").open("wb")
    cmd = [
        sys.executable, "-c", "import sys; from blockkit.cli import main; sys.exit(main())",
        "emulator", "start", "--port", "0", "--seed", str(SEED), "--ready-file", str(ready), *extra,
    ]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=os.environ.copy())
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if ready.exists():
            try:
                info = json.loads(ready.read_text())
            except ValueError:
                info = None  # being written
            if info:
                return proc, info
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    output = (tmp / "emulator.log").read_text(errors="replace")
    pytest.fail(f"blockkit emulator start did not become ready (exit {proc.returncode}):\n{output[-3000:]}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    proc, info = _start(tmp_path_factory.mktemp("emulator"))
    try:
        yield info
    finally:
        _stop(proc)


@pytest.fixture(scope="session")
def base_url(emulator: dict[str, Any]) -> str:
    return str(emulator["base_url"]).rstrip("/")


@pytest.fixture(scope="session")
def api(base_url: str) -> Iterator[httpx.Client]:
    """A client on base_url whose every response must conform to openapi.json."""
    with httpx.Client(base_url=base_url, timeout=30.0, event_hooks={"response": [conformance_hook]}) as client:
        yield client


@pytest.fixture(scope="session")
def raw_api(base_url: str) -> Iterator[httpx.Client]:
    """A client without the hook: for tests that assert on non-conformance themselves."""
    with httpx.Client(base_url=base_url, timeout=30.0) as client:
        yield client

"""Start and stop ``blockkit emulator start`` as a subprocess (the CLI contract of DESIGN.md)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

READY_TIMEOUT_S = 60.0
SEED = 1


def start_emulator(tmp: Path, *extra: str) -> tuple[subprocess.Popen[bytes], dict[str, Any]]:
    ready = tmp / "ready.json"
    log = (tmp / "emulator.log").open("wb")
    cmd = [
        sys.executable, "-m", "blockkit", "emulator", "start", "--port", "0", "--seed", str(SEED), "--ready-file", str(ready), *extra,
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


def stop_emulator(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

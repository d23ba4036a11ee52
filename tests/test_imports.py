"""Every module of the package imports on its own, as the first blockkit module of a process.

An import cycle only breaks when the cycle is entered from a particular module (a name read
from a half-imported module), so the suite, which imports in its own order, can pass while
``python -c "import blockkit.emulator.services.orchestration.workflows"`` fails. Each module is imported in a child
forked from a fresh interpreter that has imported nothing of blockkit.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

# Run in a fresh interpreter: fork one child per module, each imports its module and reports.
_PROBE = r"""
import os, sys, traceback
failed = []
running = {}  # pid -> (name, the pipe's read end)
width = max(1, min(4, os.cpu_count() or 1))  # children at a time: each waits on its own imports' disk reads


def reap(pid, status):
    name, read = running.pop(pid)
    with os.fdopen(read, "rb") as pipe:
        message = pipe.read().decode(errors="replace")
    if status:
        failed.append(f"{name}: {message.strip().splitlines()[-1] if message.strip() else status}")


for name in sys.argv[1:]:
    while len(running) >= width:
        reap(*os.wait())
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            __import__(name)
        except BaseException:
            os.write(write, traceback.format_exc(limit=3).encode()[-2000:])
            os._exit(1)
        os._exit(0)
    os.close(write)
    running[pid] = (name, read)
while running:
    reap(*os.wait())
print("\n".join(sorted(failed)))
"""


def modules() -> list[str]:
    names = []
    for path in sorted((SRC / "blockkit").rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        if parts[-1] == "__main__":
            continue  # runs the command line
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_every_module_imports_first() -> None:
    names = modules()
    assert "blockkit.emulator.services.orchestration.workflows" in names and len(names) > 100
    done = subprocess.run([sys.executable, "-c", _PROBE, *names], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(SRC)}, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", done.stdout

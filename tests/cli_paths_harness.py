"""Runs argument lists through ``blockkit.cli.main`` in forked children, each as a fresh process
would see it: its own working directory, environment, standard streams (files) and exit status.

Used by tests/test_cli_fast.py, in a process of its own so that click is not loaded unless
a run loads it. Reads a JSON list of cases on stdin; writes a JSON list of results.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import traceback
from typing import Any

import blockkit.cli  # noqa: F401  (what the console script imports first)
import blockkit.commands.validate  # noqa: F401  (loaded once here: the children start warm)
from blockkit.engine import warm_up

CLICK_ONLY = "_BLOCKKIT_CLICK_ONLY"


def _patch(how: str) -> None:
    """Make the command fail inside, as a bug of ours or a Ctrl-C would."""
    import blockkit.commands.validate as validate

    def fail(*_: Any, **__: Any) -> int:
        if how == "interrupt":
            raise KeyboardInterrupt
        if how == "cleanup-under-interrupt":  # cleanup that fails while a Ctrl-C unwinds
            try:
                raise KeyboardInterrupt
            finally:
                raise OSError(9, "Bad file descriptor")
        raise RuntimeError("rule table is empty \x1b[2J")

    validate.run_check = fail  # type: ignore[assignment]


def _child(case: dict[str, Any], click_only: bool, out: str, err: str, stdin: str) -> None:
    os.chdir(case["cwd"])
    os.environ.pop(CLICK_ONLY, None)
    if click_only:
        os.environ[CLICK_ONLY] = "1"
    os.environ.update(case.get("env", {}))
    for fd, path, flags in ((0, stdin, os.O_RDONLY), (1, out, os.O_WRONLY), (2, err, os.O_WRONLY)):
        handle = os.open(path, flags)
        os.dup2(handle, fd)
        os.close(handle)
    # The streams a Python process starts with when they are files.
    sys.stdin = open(0, encoding="utf-8", closefd=False)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
    if case.get("patch"):
        _patch(case["patch"])
    status = 0
    try:
        from blockkit.cli import main

        main(case["argv"])
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # what the interpreter does with an exception that reaches it
        traceback.print_exc()
        status = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    with open(out + ".click", "w") as handle:
        handle.write("yes" if "click" in sys.modules else "no")
    os._exit(status)


def run(case: dict[str, Any], click_only: bool, scratch: str) -> dict[str, Any]:
    out, err, stdin = (os.path.join(scratch, name) for name in ("out", "err", "in"))
    for path in (out, err):
        open(path, "wb").close()
    with open(stdin, "wb") as handle:
        handle.write(case.get("stdin", "").encode("utf-8"))
    written = [os.path.join(case["cwd"], name) for name in case.get("writes", [])]
    for path in written:
        if os.path.exists(path):
            os.unlink(path)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            _child(case, click_only, out, err, stdin)
        finally:
            os._exit(99)
    _, wait_status = os.waitpid(pid, 0)
    result: dict[str, Any] = {"status": os.waitstatus_to_exitcode(wait_status)}
    for name, path in (("stdout", out), ("stderr", err)):
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            result[name] = handle.read()
    with open(out + ".click") as handle:
        result["click"] = handle.read() == "yes"
    files = {}
    for path in written:
        if os.path.exists(path):
            with open(path, "rb") as handle:
                files[os.path.basename(path)] = handle.read().decode("utf-8", "surrogateescape")
            os.unlink(path)
    result["files"] = files
    return result


def main() -> None:
    cases = json.load(sys.stdin)
    warm_up(("parse", "schema", "server"))
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        for case in cases:
            results.append({"fast": run(case, False, scratch), "click": run(case, True, scratch)})
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()

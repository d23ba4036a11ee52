"""A closed standard output ends a command quietly, as a good Unix tool does (issue 21:
``blockkit emulator users | head`` said "internal error: BrokenPipeError ... a bug in blockkit"
and exited 2; with BLOCKKIT_DEBUG=1 it exited 1 and printed nothing).

The convention chosen: exit 141 (128 + SIGPIPE, what a shell reports for ``yes | head``), no
message; BLOCKKIT_DEBUG=1 adds the traceback on standard error, as for every error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from blockkit.commands._run import CLOSED_OUTPUT

REPO = Path(__file__).resolve().parents[1]

COMMANDS = [
    ["emulator", "users"],
    ["emulator", "users", "--scale", "large", "--format", "json"],
    ["rules"],
    ["rules", "--format", "markdown"],
    ["explain", "BK104"],
    ["validate", str(REPO / "examples" / "broken-block.manifest.json")],  # the fast path (no click)
    ["lint", "--format", "json", str(REPO / "examples" / "hello-block")],
    ["--help"],
    ["--version"],
    ["emulator", "--help"],
    ["new", "--help"],
]


def _run_into_closed_pipe(args: list[str], debug: bool) -> subprocess.CompletedProcess[str]:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first write, as `| head` is after its lines
    env = {**os.environ, "BLOCKKIT_DEBUG": "1" if debug else ""}
    try:
        return subprocess.run([sys.executable, "-m", "blockkit", *args], stdout=write_end, stderr=subprocess.PIPE,
                              text=True, env=env, timeout=120, cwd=REPO)
    finally:
        os.close(write_end)


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_a_closed_stdout_ends_quietly_with_141(args: list[str]) -> None:
    done = _run_into_closed_pipe(args, debug=False)
    assert done.returncode == CLOSED_OUTPUT == 141, done.stderr
    assert done.stderr == ""


@pytest.mark.parametrize("args", COMMANDS[:3] + COMMANDS[5:6], ids=" ".join)
def test_blockkit_debug_shows_the_traceback_of_the_closed_pipe(args: list[str]) -> None:
    done = _run_into_closed_pipe(args, debug=True)
    assert done.returncode == 141
    assert "Traceback (most recent call last)" in done.stderr
    assert "BrokenPipeError" in done.stderr
    assert "internal error" not in done.stderr


def test_head_in_a_shell_pipeline_sees_the_lines_and_no_error() -> None:
    script = f'"{sys.executable}" -m blockkit emulator users | head -2; echo "status=${{PIPESTATUS[0]}}" >&2'
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.stdout.splitlines()[0].split() == ["id", "username", "tier", "status", "notes"]
    assert done.stderr.strip() in ("status=0", "status=141")  # 0 when all fitted before head left
    assert "internal error" not in done.stderr


def test_debug_still_shows_the_traceback_of_a_real_internal_error(tmp_path: Path) -> None:
    # BLOCKKIT_DEBUG=1 shows the traceback behind every error, not only a closed pipe's.
    from click.testing import CliRunner

    import blockkit.commands.rules as rules_module
    from blockkit.cli import main

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("boom")

    original = rules_module.command.callback
    rules_module.command.callback = broken
    try:
        quiet = CliRunner().invoke(main, ["rules"], env={"BLOCKKIT_DEBUG": ""})
        loud = CliRunner().invoke(main, ["rules"], env={"BLOCKKIT_DEBUG": "1"})
    finally:
        rules_module.command.callback = original
    assert quiet.exit_code == 2 and "internal error: RuntimeError: boom" in quiet.output
    assert isinstance(loud.exception, RuntimeError)

"""`blockkit lsp` as a command: listed, and one line when its extra is not installed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from lsp_helpers import cli_env  # type: ignore[import-not-found]


def test_without_pygls_one_line_and_exit_2(tmp_path: Path) -> None:
    # A pygls that cannot be imported shadows the installed one, as if the extra were missing.
    (tmp_path / "pygls").mkdir()
    (tmp_path / "pygls" / "__init__.py").write_text("raise ImportError('No module named pygls')\n")
    env = cli_env()
    env["PYTHONPATH"] = f"{tmp_path}:{env['PYTHONPATH']}"
    result = subprocess.run([sys.executable, "-m", "blockkit", "lsp"], capture_output=True, text=True,
                            env=env, timeout=60, stdin=subprocess.DEVNULL)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "blockkit: error: blockkit lsp needs pygls and lsprotocol: pip install 'blockkit[lsp]'"]


def test_listed_among_the_commands() -> None:
    result = subprocess.run([sys.executable, "-m", "blockkit", "--help"], capture_output=True, text=True,
                            env=cli_env(), timeout=60)
    assert result.returncode == 0
    assert any(line.split()[:1] == ["lsp"] for line in result.stdout.splitlines())


def test_a_malformed_message_is_one_line_on_stderr_not_a_traceback() -> None:
    body = b"{bad}"
    result = subprocess.run([sys.executable, "-m", "blockkit", "lsp"], capture_output=True, env=cli_env(),
                            timeout=60, input=b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    assert result.returncode == 0
    assert b"Traceback" not in result.stderr
    assert result.stderr.decode().splitlines() == [
        "blockkit lsp: error: Unable to handle message (JSONDecodeError: Expecting property name enclosed in "
        "double quotes: line 1 column 2 (char 1))"]
    assert b"window/showMessage" in result.stdout  # and the editor is told


def _frames(*messages: dict) -> bytes:
    import json

    out = b""
    for message in messages:
        body = json.dumps(message).encode()
        out += b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    return out


def test_shutdown_then_exit_ends_with_status_0_and_no_traceback() -> None:
    # The server closes stdout on "exit"; the CLI's final flush met the closed file (status 1).
    stdin = _frames({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                     "params": {"processId": None, "rootUri": None, "capabilities": {}}},
                    {"jsonrpc": "2.0", "method": "initialized", "params": {}},
                    {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
                    {"jsonrpc": "2.0", "method": "exit"})
    result = subprocess.run([sys.executable, "-m", "blockkit", "lsp"], capture_output=True, env=cli_env(),
                            timeout=60, input=stdin)
    assert b"Traceback" not in result.stderr, result.stderr.decode()[-2000:]
    assert result.returncode == 0
    assert b'"id": 2' in result.stdout or b'"id":2' in result.stdout  # shutdown was answered

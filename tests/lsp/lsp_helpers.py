"""Helpers (imported by the lsp tests) for driving `blockkit lsp` with a real LSP client (pytest-lsp) over stdio, and for
asking the CLI (`blockkit lint --format json`, `blockkit fix`) what the answers should be."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Optional

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
# Rule documentation pages (codeDescription) go to a cache folder of the test run's own.
CACHE = Path(tempfile.mkdtemp(prefix="blockkit-lsp-cache-"))


def cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SRC) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["XDG_CACHE_HOME"] = str(CACHE)
    env.pop("BLOCKKIT_DEBUG", None)
    return env


def server_config() -> ClientServerConfig:
    return ClientServerConfig(server_command=[sys.executable, "-m", "blockkit", "lsp"], server_env=cli_env())


@asynccontextmanager
async def session(options: Optional[dict[str, Any]] = None,
                  capabilities: Optional[types.ClientCapabilities] = None) -> AsyncIterator[LanguageClient]:
    """A started server, initialized with ``options``; shut down at the end."""
    client = await server_config().start()
    try:
        await client.initialize_session(types.InitializeParams(
            capabilities=capabilities or types.ClientCapabilities(), initialization_options=options))
        yield client
        await client.shutdown_session()
    finally:
        # A failed test leaves the server running (no exit was sent): end it, or stop() waits for it.
        server = getattr(client, "_server", None)
        if server is not None and server.returncode is None:
            server.kill()
        await client.stop()


async def settle(client: LanguageClient) -> None:
    """Wait until the server has handled everything sent so far: it handles messages in order
    and publishes a document's diagnostics while handling its change, so once a request sent
    after them is answered, those diagnostics have arrived."""
    await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier("file:///nowhere/settle.json"), types.Position(0, 0)))


def open_document(client: LanguageClient, path: Path, text: str, version: int = 1) -> str:
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri, language_id="json", version=version, text=text)))
    return uri


def change_full(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        [types.TextDocumentContentChangeWholeDocument(text=text)]))


def change_ranges(client: LanguageClient, uri: str, version: int,
                  edits: list[tuple[types.Range, str]]) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        [types.TextDocumentContentChangePartial(range=r, text=t) for r, t in edits]))


# --- positions, computed here independently of blockkit.lsp.positions ------------------------

_BREAK = re.compile(r"\r\n|\r|\n")


def lines_of(text: str) -> list[str]:
    return _BREAK.split(text)


def utf16(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def lsp_position(text: str, line: int, column: int) -> tuple[int, int]:
    """blockkit's 1-based (line, character column) as LSP's 0-based (line, UTF-16 unit)."""
    row = lines_of(text)[line - 1]
    return line - 1, utf16(row[:column - 1])


def offset_of(text: str, line: int, character: int) -> int:
    """The character offset of an LSP UTF-16 position."""
    starts = [0] + [m.end() for m in _BREAK.finditer(text)]
    start = starts[line]
    row = lines_of(text)[line]
    units = 0
    for index, ch in enumerate(row):
        if units >= character:
            return start + index
        units += utf16(ch)
    return start + len(row)


def apply_text_edits(text: str, edits: list[types.TextEdit]) -> str:
    spans = sorted(((offset_of(text, e.range.start.line, e.range.start.character),
                     offset_of(text, e.range.end.line, e.range.end.character), e.new_text) for e in edits),
                   reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


def as_tuple(diagnostic: types.Diagnostic) -> tuple[Any, ...]:
    r = diagnostic.range
    return (diagnostic.code, int(diagnostic.severity or 0), diagnostic.message,
            (r.start.line, r.start.character, r.end.line, r.end.character))


_SEVERITY = {"error": 1, "warning": 2, "info": 3}


def expected_tuples(text: str, entries: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """`blockkit lint --format json` diagnostics of ``text``, as LSP would carry them."""
    out = []
    for d in entries:
        message = d["message"] if not d["hint"] else f"{d['message']}\nhint: {d['hint']}"
        start = lsp_position(text, d["line"], d["column"])
        end = lsp_position(text, d["end_line"], d["end_column"])
        out.append((d["code"], _SEVERITY[d["severity"]], message, (*start, *end)))
    return out


# --- the CLI's answers -------------------------------------------------------------------

def lint_json(paths: list[Path], *extra: str) -> dict[str, list[dict[str, Any]]]:
    """path -> diagnostics of one `blockkit lint --format json` run over ``paths``."""
    result = subprocess.run([sys.executable, "-m", "blockkit", "lint", "--format", "json", *extra,
                             *map(str, paths)], capture_output=True, env=cli_env(), timeout=300)
    assert result.returncode in (0, 1), result.stderr.decode()
    report = json.loads(result.stdout)
    return {file["path"]: file["diagnostics"] for file in report["files"]}


def lint_stdin(path: Path, text: str, *extra: str, cwd: Optional[Path] = None) -> list[dict[str, Any]]:
    """`blockkit lint - --stdin-filename PATH --format json` of ``text``."""
    result = subprocess.run([sys.executable, "-m", "blockkit", "lint", "-", "--stdin-filename", str(path),
                             "--format", "json", *extra], input=text.encode("utf-8", "surrogatepass"),
                            capture_output=True, env=cli_env(), timeout=120, cwd=cwd)
    assert result.returncode in (0, 1), result.stderr.decode()
    files = json.loads(result.stdout)["files"]
    return files[0]["diagnostics"] if files else []


def run_fix(paths: list[Path], *extra: str) -> None:
    result = subprocess.run([sys.executable, "-m", "blockkit", "fix", *extra, *map(str, paths)],
                            capture_output=True, env=cli_env(), timeout=300)
    assert result.returncode in (0, 1), result.stderr.decode()

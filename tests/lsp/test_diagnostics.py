"""`blockkit lsp` diagnostics against `blockkit lint --format json`, through a real LSP client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lsp_helpers import (  # type: ignore[import-not-found]
    REPO,
    as_tuple,
    change_full,
    change_ranges,
    expected_tuples,
    lint_json,
    lint_stdin,
    lsp_position,
    open_document,
    session,
    settle,
    utf16,
)
from lsprotocol import types
from tests.conftest import OWN_CORPUS, SHARED_CORPUS, corpus_files

pytestmark = pytest.mark.asyncio

EVERY_JSON = {"manifestNames": ["*.json"]}
HELLO = REPO / "examples" / "hello-block" / "block.manifest.json"


def _range(text: str, start: int, end: int) -> types.Range:
    def position(offset: int) -> types.Position:
        before = text[:offset]
        line = before.count("\n")
        column = offset - (before.rfind("\n") + 1)
        return types.Position(*lsp_position(text, line + 1, column + 1))

    return types.Range(position(start), position(end))


async def test_diagnostics_match_lint_on_both_corpora_range_for_range() -> None:
    files = corpus_files(OWN_CORPUS) + corpus_files(SHARED_CORPUS)
    assert len(files) >= 40
    texts = {path: path.read_bytes().decode("utf-8", errors="replace") for path in files}
    # The editor holds text: a file that is not UTF-8 reaches the server (and lint, from standard
    # input) as the text the editor decoded; every other file is linted in one run.
    whole = [p for p in files if texts[p].encode("utf-8") == p.read_bytes()]
    expected = lint_json(whole)
    for path in files:
        if path not in whole:
            expected[str(path)] = lint_stdin(path, texts[path])
    compared = astral = 0
    async with session(EVERY_JSON) as client:
        for path in files:
            open_document(client, path, texts[path])
        await settle(client)
        for path in files:
            got = [as_tuple(d) for d in client.diagnostics[path.as_uri()]]
            assert got == expected_tuples(texts[path], expected[str(path)]), path
            compared += len(got)
            astral += any(ord(ch) > 0xFFFF for ch in texts[path]) and bool(got)
        # every diagnostic names its rule's documentation: the page `blockkit explain` prints
        for diagnostic in client.diagnostics[files[0].as_uri()][:3]:
            assert diagnostic.source == "blockkit"
            href = diagnostic.code_description.href
            assert href.startswith("file://")
            page = Path(href[len("file://"):]).read_text(encoding="utf-8")
            assert f"**{diagnostic.code}**" in page and "**Why it matters.**" in page
    assert compared > 100


async def test_changes_incremental_and_full_are_checked_as_lint_checks_the_result(tmp_path: Path) -> None:
    path = tmp_path / "block.manifest.json"
    text = HELLO.read_text(encoding="utf-8")
    path.write_text(text, encoding="utf-8")
    async with session() as client:
        uri = open_document(client, path, text)
        await settle(client)
        assert [as_tuple(d) for d in client.diagnostics[uri]] == expected_tuples(text, lint_stdin(path, text))

        # incremental: the tagline gets astral characters, the blockId an upper-case letter,
        # sent as two changes of one notification (the second's range is in the first's result)
        start = text.index("A minimal")
        first = text[:start] + "😀😀 " + text[start:]
        at = first.index('"hello-block"') + 1
        change_ranges(client, uri, 2, [(_range(text, start, start), "😀😀 "), (_range(first, at, at + 1), "H")])
        text = first[:at] + "H" + first[at + 1:]
        await settle(client)
        got = [as_tuple(d) for d in client.diagnostics[uri]]
        assert got == expected_tuples(text, lint_stdin(path, text))
        assert any(code == "BK104" for code, *_ in got)

        # a change after the astral characters on the same line: UTF-16 positions, CRLF text
        text = text.replace("\n", "\r\n")
        change_full(client, uri, text, 3)
        at = text.index("greets")
        change_ranges(client, uri, 4, [(_range(text, at, at + len("greets")), "\u2028greets")])
        text = text[:at] + "\u2028greets" + text[at + len("greets"):]
        await settle(client)
        good = [as_tuple(d) for d in client.diagnostics[uri]]
        assert good == expected_tuples(text, lint_stdin(path, text))
        # a quote typed there breaks the string exactly where the client says it was typed (the
        # blockId's finding, before the break, stays)
        at = text.index("eets")
        change_ranges(client, uri, 5, [(_range(text, at, at), '"')])
        text = text[:at] + '"' + text[at:]
        await settle(client)
        got = [as_tuple(d) for d in client.diagnostics[uri]]
        assert got == expected_tuples(text, lint_stdin(path, text)) + [t for t in good if t[0] == "BK104"]
        # the error is at "eets", after the quote: two 😀 before it on the line count 2 units each
        assert got[0][3][:2] == (text[:at].count("\n"), (at + 1) - (text.rfind("\n", 0, at) + 1) + 2)


async def test_a_parse_error_keeps_the_findings_before_it(tmp_path: Path) -> None:
    path = tmp_path / "block.manifest.json"
    text = HELLO.read_text(encoding="utf-8").replace('"1.0.0"', '"1.0"')
    async with session() as client:
        uri = open_document(client, path, text)
        await settle(client)
        before = [as_tuple(d) for d in client.diagnostics[uri]]
        assert [code for code, *_ in before] == ["BK104"]
        # break the JSON after the version: its finding stays, the parse error joins it
        at = text.index('"page"')
        broken = text[:at] + "{" + text[at:]
        change_full(client, uri, broken, 2)
        await settle(client)
        after = [as_tuple(d) for d in client.diagnostics[uri]]
        parse = expected_tuples(broken, lint_stdin(path, broken))
        assert parse and all(code.startswith("BK00") for code, *_ in parse)
        assert sorted(after) == sorted(parse + before)
        # break it before the version: that finding can no longer be vouched for
        at = text.index('"version"')
        broken = text[:at] + "{" + text[at:]
        change_full(client, uri, broken, 3)
        await settle(client)
        assert [as_tuple(d) for d in client.diagnostics[uri]] == expected_tuples(broken, lint_stdin(path, broken))


async def test_typing_a_manifest_char_by_char_never_crashes_the_server(tmp_path: Path) -> None:
    path = tmp_path / "block.manifest.json"
    target = HELLO.read_text(encoding="utf-8").replace("greets", "greets 😀 (é)")
    async with session() as client:
        uri = open_document(client, path, "")
        typed = ""
        for version, ch in enumerate(target, start=2):
            line = typed.count("\n")
            character = utf16(typed[typed.rfind("\n") + 1:])
            position = types.Position(line, character)
            change_ranges(client, uri, version, [(types.Range(position, position), ch)])
            typed += ch
            if version % 97 == 0:
                await settle(client)
                assert client.diagnostics[uri], "every prefix of a manifest is an invalid one"
        await settle(client)
        assert typed == target
        assert [as_tuple(d) for d in client.diagnostics[uri]] == expected_tuples(target, lint_stdin(path, target))
        assert client.error is None
        assert not [m for m in client.messages if m.type == types.MessageType.Error]


async def test_project_aware_advice_and_config_changes_without_restart(tmp_path: Path) -> None:
    manifest = json.loads(HELLO.read_text(encoding="utf-8"))
    path = tmp_path / "block.manifest.json"
    text = json.dumps(manifest, indent=2) + "\n"
    path.write_text(text, encoding="utf-8")
    # the block's code uses app storage without declaring a storage scope: project-aware lint
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.js").write_text("const [v, set] = useAppStorage('k');\n", encoding="utf-8")
    (tmp_path / "index.html").write_text('<div id="root"></div><script src="/src/main.js"></script>\n')
    capabilities = types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(
        did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)))
    async with session(capabilities=capabilities) as client:
        uri = open_document(client, path, text)
        await settle(client)
        expected = lint_stdin(path, text)
        assert [as_tuple(d) for d in client.diagnostics[uri]] == expected_tuples(text, expected)
        codes = {d["code"] for d in expected}
        assert {"BK318", "BK319"} <= codes, "project-aware: BLOCK_READY never sent, storage used undeclared"
        ignored = "BK319"

        # the block's code changes on disk (the server keeps the project read while it does not)
        (tmp_path / "src" / "ready.js").write_text("parent.postMessage({type: 'BLOCK_READY'}, '*');\n")
        # loaded by the entry module: an emitter nothing loads would not count
        (tmp_path / "src" / "main.js").write_text("const [v, set] = useAppStorage('k');\nimport './ready.js';\n",
                                                  encoding="utf-8")
        client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
        await settle(client)
        now = [as_tuple(d) for d in client.diagnostics[uri]]
        assert now == expected_tuples(text, lint_stdin(path, text))
        assert "BK318" not in {code for code, *_ in now}

        # a config written beside it is read at the next check, announced by the editor's watcher
        (tmp_path / "blockkit.toml").write_text(f'ignore = ["{ignored}"]\ntier = "verified"\n', encoding="utf-8")
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[types.FileEvent(
            uri=(tmp_path / "blockkit.toml").as_uri(), type=types.FileChangeType.Created)]))
        await settle(client)
        after = [as_tuple(d) for d in client.diagnostics[uri]]
        assert after == expected_tuples(text, lint_stdin(path, text))
        assert ignored not in {code for code, *_ in after}

        # the block's code changes on disk, and the editor's watcher says so: checked again at once
        (tmp_path / "src" / "ready.js").write_text("// BLOCK_READY is sent no more\n", encoding="utf-8")
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[types.FileEvent(
            uri=(tmp_path / "src" / "ready.js").as_uri(), type=types.FileChangeType.Changed)]))
        await settle(client)
        now = [as_tuple(d) for d in client.diagnostics[uri]]
        assert now == expected_tuples(text, lint_stdin(path, text))
        assert "BK318" in {code for code, *_ in now}

        # a config that cannot be read: the CLI's one line, as a diagnostic
        (tmp_path / "blockkit.toml").write_text("ignore = [\n", encoding="utf-8")
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[types.FileEvent(
            uri=(tmp_path / "blockkit.toml").as_uri(), type=types.FileChangeType.Changed)]))
        await settle(client)
        [problem] = client.diagnostics[uri]
        assert problem.message.startswith("blockkit: error: ") and "invalid TOML" in problem.message


async def test_initialization_options_are_the_cli_flags(tmp_path: Path) -> None:
    manifest = json.loads(HELLO.read_text(encoding="utf-8"))
    manifest["scopes"] = ["user:read:self", "buzz:read:self"]
    manifest["iframe"]["sandbox"] = "allow-scripts allow-popups"
    path = tmp_path / "block.manifest.json"
    text = json.dumps(manifest, indent=2)
    flags = ["--tier", "verified", "--granted-scope", "user:read:self", "--allowed-origin", "https://x.example"]
    options = {"tier": "verified", "grantedScopes": ["user:read:self"], "allowedOrigins": ["https://x.example"]}
    async with session(options) as client:
        uri = open_document(client, path, text)
        await settle(client)
        got = [as_tuple(d) for d in client.diagnostics[uri]]
    assert got == expected_tuples(text, lint_stdin(path, text, *flags))
    assert got != expected_tuples(text, lint_stdin(path, text))


async def test_a_client_that_prefers_utf8_gets_byte_columns(tmp_path: Path) -> None:
    path = tmp_path / "block.manifest.json"
    text = '{"name": "😀é", "blockId": "Bad"}'
    capabilities = types.ClientCapabilities(general=types.GeneralClientCapabilities(
        position_encodings=[types.PositionEncodingKind.Utf8, types.PositionEncodingKind.Utf16]))
    async with session(capabilities=capabilities) as client:
        uri = open_document(client, path, text)
        await settle(client)
        [bad] = [d for d in client.diagnostics[uri] if d.code == "BK104"]
    at = text.index('"Bad"')
    assert bad.range.start.character == len(text[:at].encode("utf-8")) == at + 3 + 1


async def test_a_hostile_checkout_does_not_take_the_servers_own_input(tmp_path: Path) -> None:
    # Security review 2, S08: index.html -> /dev/stdin is the server's own JSON-RPC stream;
    # reading it for BK316 swallowed the editor's messages and nothing was answered again.
    import asyncio
    import os

    manifest = {**json.loads(HELLO.read_text(encoding="utf-8")), "bootSkeleton": True}
    path = tmp_path / "block.manifest.json"
    text = json.dumps(manifest, indent=2) + "\n"
    path.write_text(text, encoding="utf-8")
    os.symlink("/dev/stdin", tmp_path / "index.html")
    async with session() as client:
        uri = open_document(client, path, text)
        try:
            await asyncio.wait_for(settle(client), timeout=60)  # a hang guard, not a speed bound
        except asyncio.TimeoutError:
            pytest.fail("the server stopped answering once it read index.html -> /dev/stdin")
        assert uri in client.diagnostics

"""The server's plumbing, in this process: what the stdio tests cannot see from outside."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from blockkit.lsp.server import build


def test_notifications_leave_nothing_behind(tmp_path: Path) -> None:
    # pygls 2.1 keeps the future of every notification it runs through a generator handler
    # (its own didOpen/didChange/didClose) for good: ~1 KB a keystroke. Ours are plain calls.
    server = build()
    published: list[types.PublishDiagnosticsParams] = []
    server.text_document_publish_diagnostics = published.append  # type: ignore[method-assign]
    protocol = server.protocol
    uri = (tmp_path / "block.manifest.json").as_uri()
    protocol._handle_notification(types.TEXT_DOCUMENT_DID_OPEN, types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri, language_id="json", version=1, text='{"name": "x"}')))
    for version in range(2, 52):
        protocol._handle_notification(types.TEXT_DOCUMENT_DID_CHANGE, types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            [types.TextDocumentContentChangeWholeDocument(text='{"name": "x%d"}' % version)]))
    protocol._handle_notification(types.TEXT_DOCUMENT_DID_CLOSE, types.DidCloseTextDocumentParams(
        types.TextDocumentIdentifier(uri=uri)))
    assert len(published) == 52 and published[-1].diagnostics == []
    assert [p.version for p in published[:51]] == list(range(1, 52))
    assert protocol._request_futures == {}
    assert server.documents == {}


def test_a_project_is_read_once_while_its_files_stay_as_they_were(tmp_path: Path) -> None:
    from blockkit.lsp.checking import Projects, Settings, check_text

    (tmp_path / "src").mkdir()
    code = tmp_path / "src" / "main.js"
    code.write_text("useAppStorage('k');\n")
    manifest = tmp_path / "block.manifest.json"
    text = '{"blockId": "kept", "version": "1.0.0", "name": "K", "contentRating": "g", "scopes": []}'
    projects = Projects()
    first = projects.project(tmp_path)
    assert projects.project(tmp_path) is first
    assert {f.code for f in check_text(manifest, text, Settings(), projects).findings} >= {"BK318", "BK319"}
    code.write_text("parent.postMessage({type: 'BLOCK_READY'});\n")  # another size: another fingerprint
    assert projects.project(tmp_path) is not first
    assert "BK318" not in {f.code for f in check_text(manifest, text, Settings(), projects).findings}
    assert "BK319" not in {f.code for f in check_text(manifest, text, Settings(), projects).findings}


def test_hover_and_completion_anywhere_in_any_text_never_raise(tmp_path: Path) -> None:
    from tests.conftest import OWN_CORPUS, corpus_files

    server = build()
    server.text_document_publish_diagnostics = lambda params: None  # type: ignore[method-assign]
    texts = [p.read_bytes().decode("utf-8", errors="replace") for p in corpus_files(OWN_CORPUS)[:12]]
    texts += [t[: len(t) // 3] for t in texts[:6]]  # half-typed
    texts += ['{"a\\', '{"scopes": ["', '[{"', '"\\ud800"', '{"iframe": {"sandbox": "allow-', "\ufeff{", ""]
    answered = 0
    for number, text in enumerate(texts):
        uri = (tmp_path / f"{number}.manifest.json").as_uri()
        server.open(uri, text, 1)
        document = server.documents[uri]
        for line, row in enumerate(text.split("\n")):
            for character in range(0, len(row) + 2, 3):
                position = types.Position(line, character)
                answered += server.hover(document, position) is not None
                answered += bool(server.complete(document, position))
    assert answered > 500

"""Hover and completion of `blockkit lsp` at chosen places, through a real LSP client."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_helpers import apply_text_edits, open_document, session, settle  # type: ignore[import-not-found]
from lsprotocol import types

from blockkit.platform import MODEL_SLOTS, SCOPES, SENSITIVE_SCOPES

pytestmark = pytest.mark.asyncio

TEXT = """{
  "blockId": "hover-demo",
  "version": "1.0",
  "name": "Hover 😀 demo",
  "contentRating": "pg",
  "scopes": ["user:read:self", "buzz:read:self"],
  "scopeJustifications": {"buzz:read:self": "shows the balance"},
  "iframe": {"sandbox": "allow-scripts ", "minHeight": 400},
  "targets": [{"slotId": "model.sidebar_top"}]
}
"""


def position(text: str, needle: str, delta: int = 0) -> types.Position:
    """Where ``needle`` (+ ``delta`` characters) is, in UTF-16 units."""
    offset = text.index(needle) + delta
    before = text[:offset]
    line = before.count("\n")
    row = before[before.rfind("\n") + 1:]
    return types.Position(line, len(row.encode("utf-16-le")) // 2)


async def hover_at(client, uri: str, text: str, needle: str, delta: int = 1) -> str:  # type: ignore[no-untyped-def]
    found = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), position(text, needle, delta)))
    assert found is not None, needle
    return found.contents.value


async def complete_at(client, uri: str, text: str, needle: str, delta: int = 0) -> list[types.CompletionItem]:  # type: ignore[no-untyped-def]
    found = await client.text_document_completion_async(types.CompletionParams(
        types.TextDocumentIdentifier(uri), position(text, needle, delta)))
    return list(found.items if isinstance(found, types.CompletionList) else found or [])


async def test_hover(tmp_path: Path) -> None:
    async with session() as client:
        uri = open_document(client, tmp_path / "block.manifest.json", TEXT)
        await settle(client)
        said = await hover_at(client, uri, TEXT, '"blockId"', 3)
        assert "(required)" in said and "lowercase letters" in said and "host name" in said
        said = await hover_at(client, uri, TEXT, '"sandbox"', 3)
        assert "trust tier" in said and "BK214" in said
        said = await hover_at(client, uri, TEXT, '"buzz:read:self"]', 3)
        assert "**Sensitive**" in said and "Buzz balance" in said
        said = await hover_at(client, uri, TEXT, '"user:read:self"', 3)
        assert "Not sensitive" in said
        said = await hover_at(client, uri, TEXT, '"buzz:read:self": "shows', 3)
        assert said.startswith("Justification for") and "**Sensitive**" in said
        # on a finding: its rule, as `blockkit explain` tells it
        said = await hover_at(client, uri, TEXT, '"1.0"', 2)
        assert "**BK104**" in said and "**Why it matters.**" in said
        said = await hover_at(client, uri, TEXT, "allow-scripts ", 3)
        assert "allowed at the `unverified` tier" in said
        nothing = await client.text_document_hover_async(types.HoverParams(
            types.TextDocumentIdentifier(uri), position(TEXT, "\n}\n", 1)))
        assert nothing is None


async def test_completion(tmp_path: Path) -> None:
    async with session() as client:
        uri = open_document(client, tmp_path / "block.manifest.json", TEXT)
        await settle(client)

        # keys of the top level, minus those present; required ones first
        items = await complete_at(client, uri, TEXT, '  "version"')
        labels = {i.label for i in items}
        assert {"tagline", "category", "page", "goods", "$schema"} <= labels
        assert not labels & {"blockId", "scopes", "iframe", "trustTier"}
        documented = next(i for i in items if i.label == "tagline")
        assert "store listing" in documented.documentation.value

        # inside iframe: its members, never the server-owned src
        items = await complete_at(client, uri, TEXT, '"minHeight"')
        assert {i.label for i in items} == {"maxHeight", "resizable"}

        # enum values, with the edit that writes them
        items = await complete_at(client, uri, TEXT, '"pg"', 1)
        assert [i.label for i in items] == ["g", "pg", "pg13", "r", "x"]
        g = items[0]
        assert apply_text_edits(TEXT, [g.text_edit]).count('"contentRating": "g"') == 1

        # categories, each with its docs, where a value goes
        items = await complete_at(client, uri, TEXT, '"contentRating"')
        assert "category" in {i.label for i in items}
        category_text = TEXT.replace('"name"', '"category": "g", "name"')
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            [types.TextDocumentContentChangeWholeDocument(text=category_text)]))
        items = await complete_at(client, uri, category_text, '"g", "name"', 1)
        assert [i.label for i in items] == ["generation", "games", "utility", "discovery", "moderation",
                                            "analytics", "other"]
        assert all(i.documentation is not None for i in items)
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=3),
            [types.TextDocumentContentChangeWholeDocument(text=TEXT)]))

        # scopes, the sensitive ones marked
        items = await complete_at(client, uri, TEXT, '"buzz:read:self"]', 1)
        assert {i.label for i in items} == set(SCOPES)
        assert {i.label for i in items if i.detail == "sensitive"} == set(SENSITIVE_SCOPES)

        # scopeJustifications keys: scopes, minus those justified already
        items = await complete_at(client, uri, TEXT, '"buzz:read:self": "shows')
        assert "buzz:read:self" not in {i.label for i in items} and "ai:write:budgeted" in {i.label for i in items}

        # slot ids
        items = await complete_at(client, uri, TEXT, '"model.sidebar_top"', 1)
        assert [i.label for i in items] == list(MODEL_SLOTS)

        # sandbox tokens after the space, those the tier forbids marked
        items = await complete_at(client, uri, TEXT, 'allow-scripts "', len("allow-scripts "))
        by_label = {i.label: i for i in items}
        assert "allow-scripts" not in by_label and "allow-forms" in by_label
        assert by_label["allow-forms"].detail is None
        assert "not allowed at the unverified tier" in by_label["allow-same-origin"].detail
        edited = apply_text_edits(TEXT, [by_label["allow-forms"].text_edit])
        assert '"sandbox": "allow-scripts allow-forms"' in edited


async def test_completion_while_the_text_is_not_json_yet(tmp_path: Path) -> None:
    text = '{\n  "blockId": "x😀",\n  "ta'
    async with session() as client:
        uri = open_document(client, tmp_path / "block.manifest.json", text)
        await settle(client)
        assert client.diagnostics[uri]  # the parse error
        items = await complete_at(client, uri, text, '"ta', 3)
        tagline = next(i for i in items if i.label == "tagline")
        assert apply_text_edits(text, [tagline.text_edit]).endswith('"tagline": ')
        # renaming a key that has its colon and value already
        text3 = '{"ta": "x", "name": "n"}'
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=3),
            [types.TextDocumentContentChangeWholeDocument(text=text3)]))
        items = await complete_at(client, uri, text3, '"ta"', 2)
        tagline = next(i for i in items if i.label == "tagline")
        assert "name" not in {i.label for i in items}
        assert apply_text_edits(text3, [tagline.text_edit]) == '{"tagline": "x", "name": "n"}'
        text2 = '{"contentRating": '
        change = types.TextDocumentContentChangeWholeDocument(text=text2)
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=2), [change]))
        items = await complete_at(client, uri, text2 + "|", "|")
        assert [i.label for i in items] == ["g", "pg", "pg13", "r", "x"]
        assert apply_text_edits(text2, [items[2].text_edit]) == '{"contentRating": "pg13"'

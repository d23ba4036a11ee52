"""`blockkit lsp` code actions give what `blockkit fix` gives, through a real LSP client."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lsp_helpers import (  # type: ignore[import-not-found]
    REPO,
    apply_text_edits,
    change_ranges,
    open_document,
    run_fix,
    session,
    settle,
)
from lsprotocol import types
from tests.conftest import OWN_CORPUS, SHARED_CORPUS, corpus_files

pytestmark = pytest.mark.asyncio

FIX_ALL = "source.fixAll.blockkit"
FIX_ALL_UNSAFE = "source.fixAll.blockkit.unsafe"
WHOLE = types.Range(types.Position(0, 0), types.Position(100000, 0))


async def actions(client, uri: str, only: list[str], rng: types.Range = WHOLE) -> list[types.CodeAction]:  # type: ignore[no-untyped-def]
    found = await client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(uri), rng, types.CodeActionContext(diagnostics=[], only=only)))
    return list(found or [])


def edits_of(action: types.CodeAction, uri: str) -> list[types.TextEdit]:
    assert action.edit is not None and action.edit.document_changes
    [change] = action.edit.document_changes
    assert change.text_document.uri == uri
    return list(change.edits)


def _copies(root: Path, files: list[Path]) -> list[Path]:
    out = []
    for number, source in enumerate(files):
        target = root / f"{number:03d}" / "block.manifest.json"
        target.parent.mkdir(parents=True)
        shutil.copyfile(source, target)
        out.append(target)
    return out


async def test_fix_all_and_every_quick_fix_give_what_blockkit_fix_gives(tmp_path: Path) -> None:
    files = [p for p in corpus_files(OWN_CORPUS) + corpus_files(SHARED_CORPUS)
             if p.read_bytes().decode("utf-8", errors="replace").encode("utf-8") == p.read_bytes()]
    # What the CLI writes, safe and --unsafe, on copies named block.manifest.json (as the
    # editor's files are), each in a folder of its own.
    originals = _copies(tmp_path / "edited", files)
    safe = _copies(tmp_path / "safe", files)
    unsafe = _copies(tmp_path / "unsafe", files)
    run_fix([tmp_path / "safe"])
    run_fix([tmp_path / "unsafe"], "--unsafe")
    changed = [i for i, path in enumerate(originals) if safe[i].read_bytes() != path.read_bytes()]
    changed_unsafe = [i for i, path in enumerate(originals) if unsafe[i].read_bytes() != path.read_bytes()]
    assert len(changed) >= 10 and len(changed_unsafe) > len(changed)

    async with session() as client:
        texts = {}
        for i, path in enumerate(originals):
            texts[i] = path.read_text(encoding="utf-8")
            open_document(client, path, texts[i])
        for i, path in enumerate(originals):
            uri = path.as_uri()
            for kind, expected in ((FIX_ALL, safe[i]), (FIX_ALL_UNSAFE, unsafe[i])):
                found = await actions(client, uri, [kind])
                want = expected.read_text(encoding="utf-8")
                if want == texts[i]:
                    assert found == [], (path, kind)
                    continue
                [action] = found
                assert action.kind == kind
                assert apply_text_edits(texts[i], edits_of(action, uri)) == want, (files[i], kind)

        # Each safe quick fix applied in turn, as an editor sends it (an incremental change),
        # until none is left: the text `blockkit fix` writes.
        for i in changed:
            uri = originals[i].as_uri()
            text = texts[i]
            for version in range(2, 60):
                offered = [a for a in await actions(client, uri, ["quickfix"]) if a.kind == "quickfix"]
                if not offered:
                    break
                action = offered[0]
                assert action.is_preferred and action.diagnostics
                edits = edits_of(action, uri)
                change_ranges(client, uri, version, [(e.range, e.new_text) for e in
                                                     sorted(edits, key=lambda e: (e.range.start.line,
                                                                                  e.range.start.character),
                                                            reverse=True)])
                text = apply_text_edits(text, edits)
            assert text == safe[i].read_text(encoding="utf-8"), files[i]
        await settle(client)


async def test_unsafe_fixes_are_offered_and_marked(tmp_path: Path) -> None:
    path = tmp_path / "block.manifest.json"
    text = (REPO / "examples" / "broken-block.manifest.json").read_text(encoding="utf-8")
    async with session() as client:
        uri = open_document(client, path, text)
        every = await actions(client, uri, ["quickfix"])
        unsafe = [a for a in every if a.kind == "quickfix.blockkit.unsafe"]
        safe = [a for a in every if a.kind == "quickfix"]
        assert unsafe and safe
        assert all("unsafe" in a.title and not a.is_preferred for a in unsafe)
        assert all(a.diagnostics and a.diagnostics[0].code in a.title for a in every)
        # a range over one finding offers its fixes only
        [trust_tier] = [a for a in safe if "/trustTier" in a.title]
        only_there = await actions(client, uri, ["quickfix"], trust_tier.diagnostics[0].range)
        assert [a.title for a in only_there] == [trust_tier.title]
        # "fix all on save" (source.fixAll) never applies the unsafe ones
        on_save = await actions(client, uri, ["source.fixAll"])
        assert [a.kind for a in on_save] == [FIX_ALL]
        # asked without a kind: quick fixes only when the editor asks on its own (a lightbulb as
        # the cursor moves), every action when the user asks
        for trigger, kinds in ((types.CodeActionTriggerKind.Automatic, set()),
                               (types.CodeActionTriggerKind.Invoked, {FIX_ALL, FIX_ALL_UNSAFE})):
            found = await client.text_document_code_action_async(types.CodeActionParams(
                types.TextDocumentIdentifier(uri), WHOLE,
                types.CodeActionContext(diagnostics=[], trigger_kind=trigger)))
            assert {a.kind for a in found} - {"quickfix", "quickfix.blockkit.unsafe"} == kinds
            assert {"quickfix", "quickfix.blockkit.unsafe"} <= {a.kind for a in found}


async def test_a_quick_fix_title_names_what_it_changes(tmp_path: Path) -> None:
    # BK110's fix removes the one key its finding names; its title said "trustTier, iframe.src".
    path = tmp_path / "block.manifest.json"
    text = (REPO / "examples" / "broken-block.manifest.json").read_text(encoding="utf-8")
    async with session() as client:
        uri = open_document(client, path, text)
        every = await actions(client, uri, ["quickfix"])
        server_owned = [a for a in every if a.diagnostics and a.diagnostics[0].code == "BK110"]
        assert server_owned
        for action in server_owned:
            pointer = action.title.split(" at ", 1)[1].split(":", 1)[0]
            key = pointer.lstrip("/").replace("/", ".")
            assert f"remove {key} " in action.title, action.title
            assert "trustTier, iframe.src" not in action.title
        await settle(client)

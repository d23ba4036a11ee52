from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from blockkit.dev.errors import DevError
from blockkit.dev.manifest import load_dev_manifest
from blockkit.dev.surface import choose_surface
from blockkit.platform import IFRAME_DEFAULTS


def write(tmp_path: Path, document: Any) -> Path:
    text = document if isinstance(document, str) else json.dumps(document)
    (tmp_path / "block.manifest.json").write_text(text)
    return tmp_path


def test_reads_the_iframe_as_declared(tmp_path: Path, manifest: dict[str, Any]) -> None:
    manifest["iframe"] = {"minHeight": 100, "maxHeight": 300, "resizable": True, "sandbox": "allow-scripts"}
    dev = load_dev_manifest(write(tmp_path, manifest))
    assert (dev.iframe.min_height, dev.iframe.max_height, dev.iframe.resizable) == (100, 300, True)
    assert dev.iframe.sandbox == "allow-scripts"
    assert dev.notes == ()


def test_missing_iframe_keys_take_the_platform_defaults_with_a_note(tmp_path: Path, manifest: dict[str, Any]) -> None:
    del manifest["iframe"]
    dev = load_dev_manifest(write(tmp_path, manifest))
    assert dev.iframe.min_height == IFRAME_DEFAULTS["minHeight"]
    assert dev.iframe.max_height is None
    assert dev.iframe.sandbox == IFRAME_DEFAULTS["sandbox"]
    assert len(dev.notes) == 4 and all("missing" in note for note in dev.notes)


def test_wrongly_typed_values_are_replaced_and_named(tmp_path: Path, manifest: dict[str, Any]) -> None:
    manifest["iframe"]["minHeight"] = "400px"
    manifest["iframe"]["resizable"] = "yes"
    manifest["scopes"] = "user:read:self"
    dev = load_dev_manifest(write(tmp_path, manifest))
    assert dev.iframe.min_height == IFRAME_DEFAULTS["minHeight"] and dev.iframe.resizable is False
    assert dev.scopes == ()
    assert any('"400px"' in note for note in dev.notes)


def test_the_sandbox_string_is_kept_exactly(tmp_path: Path, manifest: dict[str, Any]) -> None:
    manifest["iframe"]["sandbox"] = " allow-scripts\u00a0allow-forms  "
    assert load_dev_manifest(write(tmp_path, manifest)).iframe.sandbox == " allow-scripts\u00a0allow-forms  "


def test_clamp_respects_both_bounds(tmp_path: Path, manifest: dict[str, Any]) -> None:
    manifest["iframe"].update(minHeight=100, maxHeight=300)
    iframe = load_dev_manifest(write(tmp_path, manifest)).iframe
    assert [iframe.clamp(h) for h in (5, 100, 250, 300, 9000)] == [100, 100, 250, 300, 300]


@pytest.mark.parametrize(
    "text, fragment",
    [("{", "not valid JSON"), ("[1, 2]", "not an array"), ('"x"', "not a string"), (b"\xff\xfe{", "")],
)
def test_unreadable_manifests_raise_one_line(tmp_path: Path, text: Any, fragment: str) -> None:
    path = tmp_path / "block.manifest.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(DevError) as info:
        load_dev_manifest(tmp_path)
    message = str(info.value)
    assert "\n" not in message and str(path) in message
    assert fragment.replace("not an array", "an array") in message


def test_a_missing_manifest_is_named(tmp_path: Path) -> None:
    with pytest.raises(DevError, match="no manifest here"):
        load_dev_manifest(tmp_path)


def test_bad_json_names_line_and_column(tmp_path: Path) -> None:
    write(tmp_path, '{\n  "blockId": "x",\n  oops\n}')
    with pytest.raises(DevError, match=r":3:3: the manifest is not valid JSON"):
        load_dev_manifest(tmp_path)


def test_surface_defaults_to_the_page_then_the_first_target(tmp_path: Path, manifest: dict[str, Any]) -> None:
    manifest["targets"] = [{"slotId": "model.below_images"}, {"slotId": "model.sidebar_top"}]
    surface, notes = choose_surface(load_dev_manifest(write(tmp_path, manifest)), None)
    assert (surface.kind, surface.slot_id, notes) == ("page", "app.page", [])
    del manifest["page"]
    surface, _ = choose_surface(load_dev_manifest(write(tmp_path, manifest)), None)
    assert (surface.kind, surface.slot_id) == ("slot", "model.below_images")


def test_a_block_without_surfaces_runs_as_a_page_with_a_note(tmp_path: Path, manifest: dict[str, Any]) -> None:
    del manifest["page"]
    surface, notes = choose_surface(load_dev_manifest(write(tmp_path, manifest)), None)
    assert surface.kind == "page" and len(notes) == 1


def test_an_untargeted_known_slot_runs_with_a_note(tmp_path: Path, manifest: dict[str, Any]) -> None:
    surface, notes = choose_surface(load_dev_manifest(write(tmp_path, manifest)), "model.actions_extra")
    assert surface.slot_id == "model.actions_extra"
    assert "does not target" in notes[0]


def test_an_unknown_surface_is_refused(tmp_path: Path, manifest: dict[str, Any]) -> None:
    with pytest.raises(DevError, match="not a surface.*model.sidebar_top"):
        choose_surface(load_dev_manifest(write(tmp_path, manifest)), "model.sidebar")

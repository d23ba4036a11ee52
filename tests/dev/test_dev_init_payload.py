from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from blockkit.dev.errors import DevError
from blockkit.dev.init_payload import (
    block_instance_id,
    build_context,
    build_identity,
    build_init_payload,
    normalize_sub_path,
)
from blockkit.dev.manifest import DevManifest, load_dev_manifest
from blockkit.dev.surface import Surface

PAGE = Surface("page", "app.page")
SLOT = Surface("slot", "model.sidebar_top")


def load(tmp_path: Path, document: dict[str, Any]) -> DevManifest:
    (tmp_path / "block.manifest.json").write_text(json.dumps(document))
    return load_dev_manifest(tmp_path)


def test_page_and_slot_contexts(tmp_path: Path, manifest: dict[str, Any]) -> None:
    dev = load(tmp_path, manifest)
    # The platform's page context (PageBlockHost.tsx buildContext): subPath without its slashes.
    page = build_context(dev, PAGE, {"subPath": "/gallery/"}, {"userId": 3, "username": "ada"})
    assert page == {"slotId": "app.page", "entityType": "none", "slug": "demo-block", "subPath": "gallery",
                    "viewerUserId": 3, "viewerUsername": "ada"}
    assert build_context(dev, PAGE, {}, None)["subPath"] == ""
    slot = build_context(dev, SLOT, {"modelId": "42", "modelName": "My LoRA"}, None)
    assert slot["slotId"] == "model.sidebar_top" and slot["modelId"] == 42 and slot["modelName"] == "My LoRA"
    assert set(slot) == {"slotId", "modelId", "modelVersionId", "modelName", "modelType", "modelNsfwLevel"}


def test_context_flags_are_checked(tmp_path: Path, manifest: dict[str, Any]) -> None:
    dev = load(tmp_path, manifest)
    with pytest.raises(DevError, match="has no 'modelId'"):
        build_context(dev, PAGE, {"modelId": "1"}, None)
    with pytest.raises(DevError, match="whole number"):
        build_context(dev, SLOT, {"modelId": "forty"}, None)


def test_the_init_payload_has_every_member_of_the_bridge(tmp_path: Path, manifest: dict[str, Any]) -> None:
    dev = load(tmp_path, manifest)
    identity = build_identity(dev, PAGE, {}, anonymous=True)
    payload = build_init_payload(dev, identity, token={"raw": "t"}, theme="light", block_instance_id="bi_1")
    assert set(payload) >= {
        "blockInstanceId", "blockId", "appId", "token", "context", "settings", "viewer", "theme", "renderMode"
    }
    assert payload["viewer"] is None and payload["context"]["viewerUserId"] is None
    assert payload["settings"] == {"publisherSettings": {}, "userSettings": {}}
    assert (payload["theme"], payload["renderMode"], payload["blockInstanceId"]) == ("light", "iframe", "bi_1")


@pytest.mark.parametrize("text, expected", [("", ""), ("/", ""), ("//a//b/", "a/b"), ("a/b", "a/b")])
def test_a_sub_path_has_no_slashes_at_its_ends(text: str, expected: str) -> None:
    assert normalize_sub_path(text) == expected


def test_the_init_payload_adds_the_platforms_members(tmp_path: Path, manifest: dict[str, Any]) -> None:
    dev = load(tmp_path, manifest)
    page = build_init_payload(dev, build_identity(dev, PAGE, {}, anonymous=False), token={"raw": "t"},
                              theme="dark", block_instance_id="page_x", max_browsing_level=31)
    # projectBlockInit.ts's maturity members at the top level, and the theme in the context.
    assert (page["domain"], page["maxBrowsingLevel"], page["context"]["theme"]) == (None, 31, "dark")
    slot = build_init_payload(dev, build_identity(dev, SLOT, {}, anonymous=True), token={"raw": "t"},
                              theme="light", block_instance_id="mbi_x")
    context = slot["context"]
    assert (context["theme"], context["showcaseImages"]) == ("light", [])
    assert context["checkpoint"] == {"versionId": 1, "modelId": 1, "modelName": "Dev Model",
                                     "versionName": "Dev Version", "baseModel": "SDXL 1.0"}
    assert "maxBrowsingLevel" not in slot
    lora = build_init_payload(dev, build_identity(dev, SLOT, {"modelType": "LORA"}, anonymous=True),
                              token={"raw": "t"}, theme="light", block_instance_id="mbi_x")
    assert lora["context"]["checkpoint"] is None


def test_instance_ids_have_the_platforms_prefixes() -> None:
    assert block_instance_id(PAGE, "demo") == "page_apb_dev_demo"
    assert block_instance_id(SLOT, "demo") == "mbi_dev_demo"
    assert len(block_instance_id(PAGE, "x" * 80)) == 64

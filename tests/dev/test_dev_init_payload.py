from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from blockkit.dev.errors import DevError
from blockkit.dev.init_payload import (
    build_context,
    build_identity,
    build_init_payload,
)
from blockkit.dev.manifest import DevManifest, load_dev_manifest
from blockkit.dev.protocol import init_fragment
from blockkit.dev.surface import Surface

PAGE = Surface("page", "app.page")
SLOT = Surface("slot", "model.sidebar_top")


def load(tmp_path: Path, document: dict[str, Any]) -> DevManifest:
    (tmp_path / "block.manifest.json").write_text(json.dumps(document))
    return load_dev_manifest(tmp_path)


def test_page_and_slot_contexts(tmp_path: Path, manifest: dict[str, Any]) -> None:
    dev = load(tmp_path, manifest)
    page = build_context(dev, PAGE, {"subPath": "/gallery"}, {"userId": 3})
    assert page == {"slotId": "app.page", "slug": "demo-block", "subPath": "/gallery", "viewerUserId": 3}
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


def test_the_fragment_hint_has_the_wire_format() -> None:
    assert init_fragment("dark", "iframe", "bi_x") == "civitai-block=v1&theme=dark&renderMode=iframe&blockInstanceId=bi_x"

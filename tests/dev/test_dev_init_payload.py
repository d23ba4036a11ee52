from __future__ import annotations

import base64
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from blockkit.dev.errors import DevError
from blockkit.dev.init_payload import (
    build_context,
    build_identity,
    build_init_payload,
    mint_dev_token,
)
from blockkit.dev.manifest import DevManifest, load_dev_manifest
from blockkit.dev.protocol import init_fragment
from blockkit.dev.surface import Surface

PAGE = Surface("page", "app.page")
SLOT = Surface("slot", "model.sidebar_top")


def load(tmp_path: Path, document: dict[str, Any]) -> DevManifest:
    (tmp_path / "block.manifest.json").write_text(json.dumps(document))
    return load_dev_manifest(tmp_path)


def claims(raw: str) -> dict[str, Any]:
    part = raw.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def test_the_dev_token_carries_the_manifest_scopes_and_an_expiry(tmp_path: Path, manifest: dict[str, Any]) -> None:
    manifest["scopes"] = ["user:read:self", "apps:storage:read"]
    now = datetime(2030, 1, 1, tzinfo=timezone.utc)
    token = mint_dev_token(load(tmp_path, manifest), PAGE, {"userId": 7}, now=now)
    assert set(token) == {"raw", "scopes", "expiresAt", "kind"}
    assert token["scopes"] == ["user:read:self", "apps:storage:read"]
    assert token["expiresAt"] == "2030-01-01T00:15:00.000Z"
    decoded = claims(token["raw"])
    assert decoded["scopes"] == token["scopes"] and decoded["sub"] == "7" and decoded["blockId"] == "demo-block"


@pytest.mark.parametrize("budget, expected", [(None, 10), (50, 50), (5000, 1000)])
def test_a_page_with_the_generation_scope_gets_a_clamped_budget(
    tmp_path: Path, manifest: dict[str, Any], budget: int | None, expected: int
) -> None:
    manifest["scopes"] = ["ai:write:budgeted"]
    if budget is not None:
        manifest["page"]["buzzBudgetPerGen"] = budget
    assert mint_dev_token(load(tmp_path, manifest), PAGE, None)["buzzBudget"] == expected
    assert "buzzBudget" not in mint_dev_token(load(tmp_path, manifest), SLOT, None)


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

"""The dev host's bridge answers, from the local platform (a real in-process emulator)."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from blockkit.dev.bridge import (
    BLOCK_TOKEN_ERROR,
    CANCELED,
    SCOPE_ERROR,
    SIGN_IN_ERROR,
    Bridge,
)
from blockkit.dev.manifest import load_dev_manifest
from blockkit.dev.platform import DevPlatform
from blockkit.dev.protocol import BLOCK_TO_HOST
from blockkit.dev.surface import choose_surface
from blockkit.emulator.services import consent

ALL_SCOPES = [
    "apps:storage:read", "apps:storage:write", "apps:storage:shared:read", "apps:storage:shared:write",
    "ai:write:budgeted", "buzz:read:self", "goods:purchase:self", "goods:read:self", "user:read:self",
]
GOODS = [{"id": "sticker", "title": "Sticker pack", "priceBuzz": 25, "payload": {"pack": 1}}]
INSTANCE = "bi_test_1"


@pytest.fixture(scope="module")
def platform_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("platform")


def _block(root: Path, name: str, scopes: list[str], **extra: Any) -> Path:
    block = root / name
    block.mkdir(exist_ok=True)
    document = {"blockId": name, "version": "1.0.0", "name": name, "contentRating": "g", "scopes": scopes,
                "iframe": {"minHeight": 120, "maxHeight": 480, "resizable": True, "sandbox": "allow-scripts"},
                "page": {"path": "/", "title": name, "buzzBudgetPerGen": 50}, "goods": GOODS, **extra}
    (block / "block.manifest.json").write_text(json.dumps(document))
    (block / "index.html").write_text("<!doctype html>")
    return block


@pytest.fixture(scope="module")
def started(tmp_path_factory: pytest.TempPathFactory, platform_dir: Path) -> Iterator[Callable[..., Bridge]]:
    root = tmp_path_factory.mktemp("blocks")
    platforms: list[DevPlatform] = []

    def make(scopes: list[str] = ALL_SCOPES, surface: str | None = None, name: str = "wired",
             anonymous: bool = False, granted: bool = True) -> Bridge:
        """A bridge over a started platform; ``granted``: the viewer consented to every declared scope (as an
        install records), else the viewer's first visit."""
        manifest = load_dev_manifest(_block(root, name, scopes, targets=[{"slotId": "model.below_images"}]))
        chosen, _ = choose_surface(manifest, surface)
        platform = DevPlatform(manifest, chosen, anonymous=anonymous, data_dir=platform_dir / name).start()
        platforms.append(platform)
        platform.register(INSTANCE)
        if granted and platform.viewer_id is not None:
            consent.grant_declared(platform.store, platform.clock, platform.viewer_id, INSTANCE)
        platform.mint(INSTANCE)
        return Bridge(declared_scopes=frozenset(scopes), mint_token=lambda i: platform.current_token(i or INSTANCE),
                      platform=platform, surface_kind=chosen.kind, goods=list(manifest.goods))

    yield make
    for platform in platforms:
        platform.stop()


@pytest.fixture(scope="module")
def b(started: Callable[..., Bridge]) -> Bridge:
    return started()


DROPPED_WITHOUT_FIELDS = {"OPEN_RESOURCE_PICKER", "GET_WILDCARD_PACK", "PUBLISH_GENERATION_OUTPUTS",
                          "CANCEL_APP_WORKFLOW"}


def confirm(bridge: Bridge, type_: str, choice: dict[str, Any] | None, **payload: Any) -> dict[str, Any]:
    """Send a request that opens a host dialog, answer the dialog with ``choice``, return the reply's payload."""
    outcome = bridge.handle({"type": type_, "payload": {"requestId": "r", **payload}}, INSTANCE)
    assert outcome.dialog is not None, outcome
    reply = bridge.finish_dialog(outcome.dialog["dialogId"], choice).reply
    assert reply is not None and reply["type"] == BLOCK_TO_HOST[type_].reply
    return reply["payload"]  # type: ignore[no-any-return]


def ask(bridge: Bridge, type_: str, **payload: Any) -> dict[str, Any]:
    reply = bridge.reply_to({"type": type_, "payload": {"requestId": "r", **payload}}, INSTANCE)
    assert reply is not None and reply["type"] == BLOCK_TO_HOST[type_].reply
    assert reply["payload"]["requestId"] == "r"
    return reply["payload"]  # type: ignore[no-any-return]


def test_the_token_is_the_emulators_rs256_block_jwt(b: Bridge) -> None:
    token = ask(b, "REQUEST_TOKEN")["token"]
    header = json.loads(base64.urlsafe_b64decode(token["raw"].split(".")[0] + "=="))
    # The platform's page token is {raw, scopes, expiresAt}: no kind, and the budget only in the JWT.
    assert header["alg"] == "RS256" and set(token) == {"raw", "scopes", "expiresAt"}
    claims = b.platform.claims(INSTANCE)
    assert claims is not None and claims["buzzBudget"] == 50
    assert claims is not None and claims["sub"] == f"user:{b.platform.viewer_id}"
    assert claims["blockId"] == "wired" and claims["blockInstanceId"] == INSTANCE


def test_get_viewer_needs_user_read_self(started: Callable[..., Bridge]) -> None:
    narrow = started(["apps:storage:read"], name="noviewer")
    assert ask(narrow, "GET_VIEWER") == {"requestId": "r", "error": "block lacks user:read:self scope"}


def test_get_viewer_names_the_chosen_viewer(b: Bridge) -> None:
    viewer = ask(b, "GET_VIEWER")["viewer"]
    # The platform's blocks.getMyViewer shape.
    assert viewer == {"id": b.platform.viewer_id, "username": b.platform.user(b.platform.viewer_id).username,
                      "status": "active", "buzzBudget": 50}


def test_storage_round_trip_is_persisted_in_the_store(b: Bridge) -> None:
    assert ask(b, "APP_STORAGE_SET", key="k", value={"n": 1}) == {"requestId": "r", "ok": True, "sizeBytes": 7}
    assert ask(b, "APP_STORAGE_GET", key="k")["value"] == {"n": 1}
    assert [row["key"] for row in ask(b, "APP_STORAGE_LIST")["keys"]] == ["k"]
    assert ask(b, "APP_STORAGE_QUOTA")["rowCount"] == 1
    assert ask(b, "APP_STORAGE_DELETE", key="k")["deleted"] is True


def test_storage_survives_a_restart(started: Callable[..., Bridge]) -> None:
    first = started(name="restarted")
    ask(first, "APP_STORAGE_SET", key="kept", value="yes")
    first.platform.stop()
    again = started(name="restarted")
    assert ask(again, "APP_STORAGE_GET", key="kept")["value"] == "yes"


def test_a_request_without_its_scope_gets_an_error_not_silence(started: Callable[..., Bridge]) -> None:
    # The platform's words: its token cannot hold an undeclared scope, so its procedure says it lacks it.
    narrow = started(["apps:storage:read"], name="narrow")
    reply = ask(narrow, "APP_STORAGE_SET", key="k", value=1)
    assert reply == {"requestId": "r", "ok": False, "error": "block lacks apps:storage:write scope"}
    outcome = narrow.handle({"type": "APP_STORAGE_SET", "payload": {"requestId": "s", "key": "k", "value": 1}}, INSTANCE)
    assert outcome.call is not None and outcome.call["error"] == SCOPE_ERROR  # the trace keeps the code


def test_the_buzz_balance_needs_no_scope_the_other_buzz_reads_do(started: Callable[..., Bridge]) -> None:
    # The platform's getMyBuzzBalance is scope-free; accounts and transactions need buzz:read:self.
    bare = started([], name="noscopes")
    assert set(ask(bare, "GET_BUZZ_BALANCE")["balance"]) == {"blue", "green", "yellow"}
    assert ask(bare, "GET_BUZZ_ACCOUNTS") == {"requestId": "r", "error": "block lacks buzz:read:self scope"}
    assert ask(bare, "GET_BUZZ_TRANSACTIONS")["error"] == "block lacks buzz:read:self scope"


def test_buzz_balance_and_purchase_dialog(b: Bridge) -> None:
    before = ask(b, "GET_BUZZ_BALANCE")["balance"]
    assert set(before) == {"blue", "green", "yellow"}
    outcome = b.handle({"type": "OPEN_BUZZ_PURCHASE", "payload": {"requestId": "buy"}}, INSTANCE)
    assert outcome.reply is None and outcome.dialog is not None and outcome.dialog["packs"]
    reply = b.finish_dialog("buy", {"amount": 1000})
    assert reply.reply is not None and reply.reply["payload"]["purchased"] is True
    assert ask(b, "GET_BUZZ_BALANCE")["balance"]["blue"] == before["blue"] + 1000
    b.handle({"type": "OPEN_BUZZ_PURCHASE", "payload": {"requestId": "no"}}, INSTANCE)
    canceled = b.finish_dialog("no", None).reply
    assert canceled is not None and canceled["payload"] == {"requestId": "no", "purchased": False}
    assert [a["accountType"] for a in ask(b, "GET_BUZZ_ACCOUNTS")["result"]["accounts"]] == ["blue", "green", "yellow"]
    ledger = ask(b, "GET_BUZZ_TRANSACTIONS", params={"limit": 5})["result"]
    assert any(t["kind"] == "purchase" for t in ledger["transactions"]) and "cursor" in ledger
    compensation = ask(b, "GET_DAILY_COMPENSATION")
    assert set(compensation) == {"requestId", "result"}
    assert compensation["result"]["resources"] == [] and isinstance(compensation["result"]["hasPublishedResources"], bool)
    assert compensation["result"]["goodsSales"]["amount"] == 0


def test_a_good_is_bought_through_the_consent_dialog(b: Bridge) -> None:
    outcome = b.handle({"type": "PURCHASE_GOOD", "payload": {"requestId": "g", "goodId": "sticker"}}, INSTANCE)
    assert outcome.dialog is not None and outcome.dialog["good"]["title"] == "Sticker pack"
    assert outcome.dialog["good"]["priceBuzz"] == 25
    done = b.finish_dialog(outcome.dialog["dialogId"], {"goodId": "sticker", "priceBuzz": 25}).reply
    assert done is not None and done["type"] == "GOOD_PURCHASE_RESULT" and done["payload"]["ok"] is True
    items = ask(b, "GET_ENTITLEMENTS")["entitlements"]
    assert [i["goodId"] for i in items] == ["sticker"] and items[0]["payload"] == {"pack": 1}


def test_the_dev_platform_registers_the_goods_for_the_purchase_route(b: Bridge) -> None:
    from blockkit.emulator.services import goods

    found = goods.catalogue(b.platform.store, b.platform.app_id)
    assert found is not None and [g["id"] for g in found[0]] == ["sticker"]


def _png() -> str:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (64, 64), (200, 40, 40)).save(out, "PNG")
    return "data:image/png;base64," + base64.b64encode(out.getvalue()).decode()


def test_an_upscale_workflow_runs_to_completion(b: Bridge) -> None:
    # The platform's replies carry a BlockWorkflowSnapshot: {requestId, snapshot}.
    workflow = {"steps": [{"$type": "imageUpscaler", "input": {"image": _png(), "numberOfRepeats": 1}}]}
    estimate = ask(b, "ESTIMATE_WORKFLOW", body=workflow)
    assert set(estimate) == {"requestId", "snapshot"}
    assert estimate["snapshot"]["workflowId"] == "whatif" and estimate["snapshot"]["cost"]["total"] >= 1
    submitted = ask(b, "SUBMIT_WORKFLOW", body=workflow)["snapshot"]
    assert submitted["status"] == "pending" and submitted["spentAccountType"] in ("blue", "green")
    workflow_id = submitted["workflowId"]
    assert ask(b, "POLL_WORKFLOW", workflowId=workflow_id)["snapshot"].get("imageUrls") is None
    b.platform.clock.advance(30)
    status = ask(b, "POLL_WORKFLOW", workflowId=workflow_id)["snapshot"]
    assert status["status"] == "succeeded" and status["workflowId"] == workflow_id
    assert len(status["imageUrls"]) == 1 and status["imageUrls"][0].startswith("http")
    page = ask(b, "QUERY_APP_WORKFLOWS", params={"limit": 10})
    assert set(page) == {"requestId", "result"} and page["result"]["cursor"] is None
    listed = next(w for w in page["result"]["workflows"] if w["workflowId"] == workflow_id)
    assert set(listed) == {"workflowId", "status", "images", "cost", "createdAt"}
    assert listed["status"] == "succeeded" and listed["cost"] == status["cost"]["total"] and listed["createdAt"]
    assert [i["url"] for i in listed["images"]] == status["imageUrls"]
    assert set(listed["images"][0]) == {"url", "width", "height", "nsfwLevel"} and listed["images"][0]["nsfwLevel"] == 1
    pending = ask(b, "SUBMIT_WORKFLOW", body=workflow)["snapshot"]["workflowId"]
    canceled = ask(b, "CANCEL_APP_WORKFLOW", workflowId=pending)
    assert set(canceled) == {"requestId", "result"}
    assert canceled["result"]["workflow"]["workflowId"] == pending
    assert canceled["result"]["workflow"]["status"] == "canceled" and canceled["result"]["workflow"]["images"] == []
    # PUBLISH asks the viewer first (a host dialog); the reply comes with the confirmation.
    published = confirm(b, "PUBLISH_GENERATION_OUTPUTS", {}, workflowId=workflow_id)
    assert set(published) == {"requestId", "result"} and len(published["result"]["imageIds"]) == 1
    again = confirm(b, "PUBLISH_GENERATION_OUTPUTS", {}, workflowId=workflow_id,
                    imageIndexes=[0, 0, 7])["result"]["imageIds"]
    assert len(again) == 1 and again[0] > published["result"]["imageIds"][0]
    assert confirm(b, "PUBLISH_GENERATION_OUTPUTS", {}, workflowId=workflow_id, imageIndexes=[7]) == {
        "requestId": "r", "error": "no valid output indexes to publish"}
    assert confirm(b, "PUBLISH_GENERATION_OUTPUTS", {}, workflowId=pending) == {
        "requestId": "r", "error": "workflow has no available outputs to publish"}
    # GET_IMAGES_BY_IDS reads back what this block published, in request order; unknown ids are left out.
    ids = [again[0], published["result"]["imageIds"][0], 999999]
    images = ask(b, "GET_IMAGES_BY_IDS", imageIds=ids)
    assert set(images) == {"requestId", "result"}
    assert [i["imageId"] for i in images["result"]["images"]] == ids[:2]
    first = images["result"]["images"][1]
    assert first == {"imageId": ids[1], "status": "visible", "nsfwLevel": 1, "contentRating": "g",
                     "url": status["imageUrls"][0], "width": listed["images"][0]["width"],
                     "height": listed["images"][0]["height"]}
    assert ask(b, "GET_IMAGES_BY_IDS", imageIds=[])["result"] == {"images": []}
    # An image above the token's maxBrowsingLevel comes back hidden, with no url.
    path = b.platform.data_dir / "dev-published-images.json"
    saved = json.loads(path.read_text(encoding="utf-8"))
    saved["images"][str(ids[0])]["nsfwLevel"] = 32
    path.write_text(json.dumps(saved), encoding="utf-8")
    assert ask(b, "GET_IMAGES_BY_IDS", imageIds=ids[:1])["result"]["images"] == [{"imageId": ids[0], "status": "hidden"}]


def test_the_platforms_text_to_image_body_and_failure_snapshots(b: Bridge) -> None:
    body = {"kind": "textToImage", "modelId": 1, "modelVersionId": 1, "params": {"prompt": "a fox", "width": 512,
                                                                               "height": 512}}
    submitted = ask(b, "SUBMIT_WORKFLOW", body=body)["snapshot"]
    assert submitted["status"] == "pending" and submitted["cost"] == {"total": 2}
    over = ask(b, "SUBMIT_WORKFLOW", body={**body, "params": {"prompt": "big", "width": 2048, "height": 2048,
                                                                               "quantity": 4}})
    assert over["snapshot"]["workflowId"] == "failed" and over["snapshot"]["status"] == "failed"
    assert over["snapshot"]["error"].startswith("insufficient buzz budget: estimate ")
    assert over["snapshot"]["cost"]["total"] > 50
    missing = ask(b, "POLL_WORKFLOW", workflowId="wf-nope")["snapshot"]
    assert missing["status"] == "failed" and missing["error"]
    outcome = b.handle({"type": "SUBMIT_WORKFLOW", "payload": {"requestId": "x", "body": {"kind": "customComfy"}}},
                       INSTANCE)
    # The trace gets the service's code and status; the block gets the platform's failed snapshot only.
    snapshot = outcome.reply["payload"]["snapshot"]
    assert outcome.call == {"type": "SUBMIT_WORKFLOW", "ok": False, "error": "unsupported_kind",
                            "message": snapshot["error"], "status": 400}
    assert set(outcome.reply["payload"]) == {"requestId", "snapshot"}


def test_shared_storage_in_the_platforms_shapes(b: Bridge) -> None:
    key = ask(b, "SHARED_APPEND", value={"title": "hi", "data": {"n": 1}})["key"]
    assert ask(b, "SHARED_VOTE", key=key) == {"requestId": "r", "count": 1}
    assert ask(b, "SHARED_GET_COUNT", key=key)["count"] == 1
    assert ask(b, "SHARED_GET_COUNTS", keys=[key])["counts"] == {key: 1}
    item = ask(b, "SHARED_GET", key=key)["item"]
    assert item["authorUserId"] == b.platform.viewer_id and item["viewerVoted"] is True
    assert [i["key"] for i in ask(b, "SHARED_LIST")["items"]] == [key]
    assert ask(b, "SHARED_UPDATE", key=key, value={"title": "edited"}) == {"requestId": "r", "ok": True}
    assert ask(b, "SHARED_REPORT", key=key, reason="spam") == {"requestId": "r", "ok": True}
    assert ask(b, "SHARED_WITHDRAW", key=key) == {"requestId": "r", "ok": True, "deleted": True}


def test_an_oauth_kind_token_is_refused_by_the_procedures(b: Bridge) -> None:
    b.platform.tokens[INSTANCE] = "opaque-oauth-access-token"
    try:
        assert ask(b, "GET_BUZZ_BALANCE") == {"requestId": "r", "error": "invalid block token"}
        outcome = b.handle({"type": "GET_BUZZ_BALANCE", "payload": {"requestId": "t"}}, INSTANCE)
        assert outcome.call is not None and outcome.call["error"] == BLOCK_TOKEN_ERROR
    finally:
        b.platform.mint(INSTANCE)


def test_a_signed_out_viewer(started: Callable[..., Bridge]) -> None:
    anon = started(name="anon", anonymous=True)
    # An error either way, never a viewer: the emulator's anonymous token carries no :self scope.
    answer = ask(anon, "GET_VIEWER")
    assert "viewer" not in answer and answer["error"] == "viewer read requires an authenticated viewer"
    assert ask(anon, "GET_BUZZ_BALANCE") == {"requestId": "r", "error": "buzz balance requires an authenticated viewer"}
    outcome = anon.handle({"type": "GET_BUZZ_BALANCE", "payload": {"requestId": "t"}}, INSTANCE)
    assert outcome.call is not None and outcome.call["error"] == SIGN_IN_ERROR
    # App storage: a signed-out viewer reads nothing and may not write (the platform's answers).
    assert ask(anon, "APP_STORAGE_GET", key="k") == {"requestId": "r", "value": None}
    assert ask(anon, "APP_STORAGE_SET", key="k", value=1)["error"] == "storage requires an authenticated viewer"
    assert ask(anon, "SHARED_LIST")["items"] == []
    assert ask(anon, "SHARED_APPEND", value={"title": "t"})["error"].startswith("shared storage writes require")


def test_a_signed_out_viewer_read_is_the_viewers_state_not_the_blocks_fault(started: Callable[..., Bridge]) -> None:
    from blockkit.dev.failures import VIEWER, cause_of

    anon = started(name="anon-viewer", anonymous=True)
    outcome = anon.handle({"type": "GET_VIEWER", "payload": {"requestId": "v"}}, INSTANCE)
    # Issue 21: never "block lacks user:read:self scope" when the manifest declares the scope.
    assert outcome.reply is not None and outcome.reply["payload"] == {
        "requestId": "v", "error": "viewer read requires an authenticated viewer"}
    assert outcome.call == {"type": "GET_VIEWER", "ok": False, "error": "sign_in_required",
                            "message": "viewer read requires an authenticated viewer"}
    assert cause_of(outcome.call["error"], None) == VIEWER
    # A signed-in viewer of a block that never declared the scope: the block's own request.
    undeclared = started(name="no-user-scope", scopes=[s for s in ALL_SCOPES if s != "user:read:self"])
    outcome = undeclared.handle({"type": "GET_VIEWER", "payload": {"requestId": "v"}}, INSTANCE)
    assert outcome.call is not None and outcome.call["error"] == "block lacks user:read:self scope"
    assert cause_of(outcome.call["error"], None) != VIEWER


def test_not_bridged_on_a_model_slot_gets_no_answer_and_a_note(started: Callable[..., Bridge]) -> None:
    slot = started(surface="model.below_images", name="slotted")
    outcome = slot.handle({"type": "GET_VIEWER", "payload": {"requestId": "v"}}, INSTANCE)
    assert outcome.reply is None and outcome.note is not None and "not bridged" in outcome.note
    assert slot.reply_to({"type": "APP_STORAGE_QUOTA", "payload": {"requestId": "q"}}, INSTANCE) is not None


def test_every_inventory_request_gets_a_real_answer_on_the_page(b: Bridge) -> None:
    for type_, spec in BLOCK_TO_HOST.items():
        if spec.reply is None:
            continue
        outcome = b.handle({"type": type_, "payload": {"requestId": "all"}}, INSTANCE)
        if type_ in DROPPED_WITHOUT_FIELDS:
            # The platform drops these without their required fields (row 41); a note says why.
            assert outcome.reply is None and outcome.note_event == "dropped", type_
            continue
        assert outcome.reply is not None or outcome.dialog is not None, type_
        text = json.dumps(outcome.reply or {})
        assert "NOT_SIMULATED" not in text, type_
        b.dialogs.clear()


def test_no_reply_to_unknown_types_notices_or_broken_envelopes(b: Bridge) -> None:
    assert b.reply_to({"type": "FETCH_SECRETS", "payload": {"requestId": "q"}}) is None
    assert b.reply_to({"type": "BLOCK_READY", "payload": {"height": 10}}) is None
    assert b.reply_to("REQUEST_TOKEN") is None
    assert b.reply_to({"payload": {"requestId": "q"}}) is None


def test_a_handler_that_fails_answers_a_platform_error(b: Bridge, monkeypatch: pytest.MonkeyPatch) -> None:
    from blockkit.dev import bridge as bridge_module

    def broken(*args: Any) -> dict[str, Any]:
        raise RuntimeError("the store went away")

    monkeypatch.setitem(bridge_module._HANDLERS, "GET_BUZZ_BALANCE", broken)
    outcome = b.handle({"type": "GET_BUZZ_BALANCE", "payload": {"requestId": "r"}}, INSTANCE)
    assert outcome.reply is not None and outcome.reply["payload"] == {
        "requestId": "r", "error": "RuntimeError: the store went away"}
    assert outcome.call == {"type": "GET_BUZZ_BALANCE", "ok": False, "error": "PLATFORM_ERROR",
                            "message": "RuntimeError: the store went away"}


def test_a_workflow_that_ended_failed_is_a_failed_call(b: Bridge, monkeypatch: pytest.MonkeyPatch) -> None:
    from blockkit.dev import bridge as bridge_module

    monkeypatch.setitem(bridge_module._HANDLERS, "POLL_WORKFLOW",
                        lambda *args: {"snapshot": {"workflowId": "w9", "status": "failed"}})
    outcome = b.handle({"type": "POLL_WORKFLOW", "payload": {"requestId": "p", "workflowId": "w9"}}, INSTANCE)
    assert outcome.reply is not None and outcome.reply["payload"]["snapshot"]["status"] == "failed"
    assert outcome.call == {"type": "POLL_WORKFLOW", "ok": False, "error": "workflow_failed",
                            "message": "workflow w9 is failed"}


def test_a_token_for_no_instance_is_refused_never_made_up(b: Bridge) -> None:
    reply = b.reply_to({"type": "REQUEST_TOKEN", "payload": {"requestId": "t"}}, None)
    assert reply is not None and reply["payload"]["error"] == "UNKNOWN_BLOCK_INSTANCE" and "token" not in reply["payload"]


def test_e21_a_reused_request_id_cannot_change_what_buy_charges(started: Callable[..., Bridge]) -> None:
    # Security review E21 (D6): PURCHASE_GOOD "dup" for a 25-Buzz good, then "dup" again for a
    # 400-Buzz one, then Buy on the first dialog. It used to buy the second good.
    first_bridge = started(name="e21")
    gold = {"id": "gold", "title": "Gold pack", "priceBuzz": 400, "payload": {"gold": 1}}
    b = Bridge(declared_scopes=first_bridge.declared_scopes, mint_token=first_bridge.mint_token,
               platform=first_bridge.platform, surface_kind=first_bridge.surface_kind, goods=[*GOODS, gold])
    first = b.handle({"type": "PURCHASE_GOOD", "payload": {"requestId": "dup", "goodId": "sticker"}}, INSTANCE).dialog
    second = b.handle({"type": "PURCHASE_GOOD", "payload": {"requestId": "dup", "goodId": "gold"}}, INSTANCE).dialog
    assert first is not None and second is not None and first["dialogId"] != second["dialogId"]
    assert b.finish_dialog("dup", {}).reply is None  # two dialogs carry "dup": neither is answered by it
    # A Buy that names something other than what its dialog showed buys nothing.
    wrong = b.finish_dialog(second["dialogId"], {"goodId": "sticker", "priceBuzz": 25}).reply
    assert wrong is not None and wrong["payload"]["ok"] is False
    assert wrong["payload"]["error"] == "CONFIRMATION_MISMATCH"
    done = b.finish_dialog(first["dialogId"], {"goodId": "sticker", "priceBuzz": 25}).reply
    assert done is not None and done["payload"]["ok"] is True and done["payload"]["purchase"]["goodId"] == "sticker"
    assert [i["goodId"] for i in ask(b, "GET_ENTITLEMENTS")["entitlements"]] == ["sticker"]


def test_e02_e07_the_dev_platform_checks_host_and_asks_for_its_key(started: Callable[..., Bridge]) -> None:
    # Security review E02 (D1) and E07 on the three origins blockkit dev starts.
    import httpx

    platform = started(name="e02").platform
    for url in platform.urls.as_dict().values():
        port = url.rsplit(":", 1)[1]
        assert httpx.get(url + "/", headers={"Host": f"rebind.evil.example:{port}"}).status_code == 403
    assert httpx.get(platform.urls.auth_url + "/login").status_code == 401
    link = httpx.get(platform.sign_in_url)
    from blockkit.emulator.http.access import access_cookie

    name, value = access_cookie(platform.access_key, int(platform.urls.auth_url.rsplit(":", 1)[1]))
    assert link.status_code == 303 and any(c.startswith(f"{name}={value};") for c in link.headers.get_list("set-cookie"))
    assert platform.access_key not in " ".join(link.headers.get_list("set-cookie"))
    assert httpx.post(platform.urls.base_url + "/__emulator/clock", json={"advance": 0}).status_code == 401


# --- consent (rows 20, 21, 26, 44 of the 2026-12-02 fidelity review) --------------------------------------

GATED = ["ai:write:budgeted", "buzz:read:self", "goods:purchase:self", "goods:read:self", "user:read:self"]


def test_a_first_visit_token_holds_only_the_consent_exempt_scopes(started: Callable[..., Bridge]) -> None:
    first = started(name="first-visit", granted=False)
    token = ask(first, "REQUEST_TOKEN")["token"]
    assert token["scopes"] == [s for s in ALL_SCOPES if s not in GATED]
    assert first.platform.missing_scopes(INSTANCE) == [s for s in ALL_SCOPES if s in GATED]
    claims = first.platform.claims(INSTANCE)
    assert claims is not None and sorted(claims["scopes"]) == sorted(token["scopes"]) and "buzzBudget" not in claims
    # The procedures answer as the platform's do for a token without the scope.
    assert ask(first, "GET_VIEWER") == {"requestId": "r", "error": "block lacks user:read:self scope"}
    assert ask(first, "GET_BUZZ_ACCOUNTS") == {"requestId": "r", "error": "block lacks buzz:read:self scope"}
    assert ask(first, "SUBMIT_WORKFLOW", body={"steps": []})["snapshot"]["status"] == "failed"
    # ... and the trace marks each as refused for want of consent.
    outcome = first.handle({"type": "GET_VIEWER", "payload": {"requestId": "v"}}, INSTANCE)
    assert outcome.call is not None and outcome.call["error"] == "consent_required"
    assert outcome.call["consentScopes"] == ["user:read:self"]
    assert "block lacks user:read:self scope" in outcome.call["message"]


def test_request_consent_opens_the_step_and_allow_grants_what_the_mint_withheld(started: Callable[..., Bridge]) -> None:
    first = started(name="consent-allow", granted=False)
    # The block's hint is ignored: the step asks for what the mint withheld (requestConsentGate.ts).
    outcome = first.handle({"type": "REQUEST_CONSENT", "payload": {"scopes": ["posts:write:self"]}}, INSTANCE)
    assert outcome.reply is None and outcome.consent == {
        "appName": "consent-allow", "missingScopes": [s for s in ALL_SCOPES if s in GATED]}
    token = first.platform.grant_consent(INSTANCE)
    assert token["scopes"] == ALL_SCOPES and first.platform.missing_scopes(INSTANCE) == []
    assert first.platform.granted_scopes() == sorted(GATED)
    assert ask(first, "GET_VIEWER")["viewer"]["id"] == first.platform.viewer_id
    # Granted once, granted for the next page load (a new instance) too.
    first.platform.register("bi_test_2")
    assert first.platform.mint("bi_test_2")["scopes"] == ALL_SCOPES
    # Nothing withheld any more: a repeat is dropped silently, a hint naming a scope no consent adds gets
    # the platform's notice.
    assert first.handle({"type": "REQUEST_CONSENT"}, INSTANCE).consent is None
    assert first.handle({"type": "REQUEST_CONSENT", "payload": {"scopes": ["user:read:self"]}}, INSTANCE).notice is None
    notice = first.handle({"type": "REQUEST_CONSENT", "payload": {"scopes": ["posts:write:self"]}}, INSTANCE).notice
    assert notice == "This app requested a permission that isn\u2019t available in this preview."
    # Reset: the next page load is a first visit again.
    assert first.platform.reset_consent() is True
    first.platform.register("bi_test_3")
    assert first.platform.mint("bi_test_3")["scopes"] == [s for s in ALL_SCOPES if s not in GATED]


def test_a_signed_out_viewer_is_told_every_declared_scope_and_asked_nothing(started: Callable[..., Bridge]) -> None:
    # pageBlockHostLogic.grantedPageScopes: declared minus missing, and missing is [] signed out, though the
    # JWT holds only the scopes that need no subject (block-tokens/index.ts:1044-1051).
    anon = started(name="anon-consent", anonymous=True, granted=False)
    token = ask(anon, "REQUEST_TOKEN")["token"]
    assert token["scopes"] == ALL_SCOPES
    claims = anon.platform.claims(INSTANCE)
    assert claims is not None and claims["sub"] == "anon" and set(claims["scopes"]) < set(ALL_SCOPES)
    assert anon.handle({"type": "REQUEST_CONSENT"}, INSTANCE).consent is None
    with pytest.raises(Exception, match="signed-out"):
        anon.platform.grant_consent(INSTANCE)


def test_request_token_answers_the_current_token_not_a_new_one(b: Bridge) -> None:
    # PageBlockHost.tsx:1038-1053: the reply wraps the token the host holds.
    first = ask(b, "REQUEST_TOKEN")["token"]
    again = ask(b, "REQUEST_TOKEN")["token"]
    assert again == first
    pushed = b.reply_to({"type": "REQUEST_TOKEN"}, INSTANCE)
    assert pushed is not None and pushed["type"] == "TOKEN_REFRESH" and pushed["payload"]["token"] == first
    # Once the held token is no longer valid, the host's refresh would have replaced it: a new one.
    b.platform.clock.advance(16 * 60)
    assert ask(b, "REQUEST_TOKEN")["token"]["raw"] != first["raw"]


def test_the_model_slot_token_carries_the_buzz_budget(started: Callable[..., Bridge]) -> None:
    # IframeHost.tsx:713-719 adds buzzBudget on the slot; the page's token has none (row 20).
    slot = started(surface="model.below_images", name="slot-budget")
    token = ask(slot, "REQUEST_TOKEN")["token"]
    assert set(token) == {"raw", "scopes", "expiresAt", "buzzBudget"}


# --- pickers, uploads, saves, packs and checkpoints in the platform's shapes (review 2026-12-02, rows 31, 41,
# 48, 49, 51-57, 62, 67) ---------------------------------------------------------------------------------------

CHECKPOINT_KEYS = {"versionId", "modelId", "modelName", "versionName", "baseModel"}
RESOURCE_KEYS = CHECKPOINT_KEYS | {"modelType", "strength", "minStrength", "maxStrength", "trainedWords", "clipSkip"}


def _open(bridge: Bridge, type_: str, **payload: Any) -> Any:
    return bridge.handle({"type": type_, "payload": {"requestId": "r", **payload}}, INSTANCE)


def _base_model_of(bridge: Bridge, version_id: int) -> tuple[str, str]:
    with bridge.platform.store.read() as db:
        row = db.execute("SELECT v.base_model, m.type FROM model_versions v JOIN models m ON m.id = v.model_id"
                         " WHERE v.id = ?", (version_id,)).fetchone()
    return row[0], row[1]


def test_the_checkpoint_picker_narrows_by_family_and_answers_selected_or_a_bare_dismissal(b: Bridge) -> None:
    from blockkit.dev.basemodels import base_models_of_group

    # No family: the platform's picker lists nothing (an unnarrowed list would hold families that fail at submit).
    assert _open(b, "OPEN_CHECKPOINT_PICKER").dialog["items"] == []
    with b.platform.store.read() as db:
        base = db.execute("SELECT v.base_model FROM model_versions v JOIN models m ON m.id = v.model_id"
                          " WHERE m.type = 'Checkpoint' AND m.status = 'Published' AND v.status = 'Published'"
                          " AND m.nsfw_level = 1 LIMIT 1").fetchone()[0]
    for hint in (base, __import__("blockkit.dev.basemodels", fromlist=["x"]).base_model_group(base)):
        items = _open(b, "OPEN_CHECKPOINT_PICKER", baseModelGroup=hint).dialog["items"]
        family = set(base_models_of_group(__import__("blockkit.dev.basemodels", fromlist=["x"]).base_model_group(base)))
        assert items and all(_base_model_of(b, i["versionId"]) in {(m, "Checkpoint") for m in family} for i in items)
    outcome = _open(b, "OPEN_CHECKPOINT_PICKER", baseModelGroup=base)
    picked = outcome.dialog["items"][0]
    reply = b.finish_dialog(outcome.dialog["dialogId"], {"versionId": picked["versionId"]})
    assert reply.reply == {"type": "CHECKPOINT_PICKER_RESULT",
                           "payload": {"requestId": "r", "selected": {k: picked[k] for k in CHECKPOINT_KEYS}}}
    assert set(reply.reply["payload"]["selected"]) == CHECKPOINT_KEYS
    # Dismissed: a bare {requestId}, traced as CANCELED (no failure).
    dismissed = b.finish_dialog(_open(b, "OPEN_CHECKPOINT_PICKER", baseModelGroup=base).dialog["dialogId"], None)
    assert dismissed.reply == {"type": "CHECKPOINT_PICKER_RESULT", "payload": {"requestId": "r"}}
    assert dismissed.call == {"type": "OPEN_CHECKPOINT_PICKER", "ok": False, "error": CANCELED}
    # Only what the dialog listed can come back.
    other = _open(b, "OPEN_CHECKPOINT_PICKER", baseModelGroup=base).dialog
    assert "selected" not in b.finish_dialog(other["dialogId"], {"versionId": 10**9}).reply["payload"]
    # The page drops a picker request without a non-empty requestId.
    assert b.handle({"type": "OPEN_CHECKPOINT_PICKER", "payload": {"requestId": ""}}, INSTANCE).note_event == "dropped"


def test_the_resource_picker_takes_checkpoints_and_loras_only(b: Bridge) -> None:
    outcome = _open(b, "OPEN_RESOURCE_PICKER", resourceType="lora")
    items = outcome.dialog["items"]
    assert items and all(_base_model_of(b, i["versionId"])[1] == "LORA" for i in items)
    # Without a family the resource picker lists every base model of the type (PageBlockHost).
    assert len({i["baseModel"] for i in items}) > 1
    reply = b.finish_dialog(outcome.dialog["dialogId"], {"versionId": items[0]["versionId"]}).reply["payload"]
    selected = reply["selected"]
    assert set(selected) == RESOURCE_KEYS and selected["modelType"] == "LORA"
    assert (selected["strength"], selected["minStrength"], selected["maxStrength"]) == (1, -1, 2)
    assert isinstance(selected["trainedWords"], list)
    for kind in ("Embedding", "TextualInversion", "", None):
        dropped = _open(b, "OPEN_RESOURCE_PICKER", resourceType=kind)
        assert dropped.dialog is None and dropped.reply is None and dropped.note_event == "dropped"
    assert b.finish_dialog(_open(b, "OPEN_RESOURCE_PICKER", resourceType="Checkpoint").dialog["dialogId"],
                           None).reply["payload"] == {"requestId": "r"}


def _png_data_url(size: tuple[int, int] = (3, 2)) -> str:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", size, (200, 10, 10)).save(out, "PNG")
    return "data:image/png;base64," + base64.b64encode(out.getvalue()).decode()


def test_an_upload_answers_each_purpose_in_the_platforms_shape(b: Bridge) -> None:
    from blockkit.emulator.services.orchestration import media

    choice = {"dataUrl": _png_data_url(), "name": "/home/dev/secret/photo.png"}
    display = confirm(b, "OPEN_IMAGE_UPLOAD", choice)
    selected = display["selected"]
    assert set(selected) == {"imageId", "nsfwLevel", "contentRating", "url"}
    assert (selected["nsfwLevel"], selected["contentRating"]) == (1, "g")
    assert selected["url"].startswith(b.platform.urls.orchestration_url + "/__emulator/blobs/")
    assert media.resolve_local(b.platform.urls, b.platform.store, selected["url"]).startswith(b"\x89PNG")
    assert "secret" not in json.dumps(display) and "data:" not in json.dumps(display)
    source = confirm(b, "OPEN_IMAGE_UPLOAD", choice, purpose="generationSource")["selected"]
    assert source.keys() == {"url", "width", "height"} and (source["width"], source["height"]) == (3, 2)
    # asyncScan: a pending handle at once, then IMAGE_SCAN_RESOLVED with the verdict.
    outcome = _open(b, "OPEN_IMAGE_UPLOAD", asyncScan=True)
    assert outcome.dialog["asyncScan"] is True
    done = b.finish_dialog(outcome.dialog["dialogId"], choice)
    pending = done.reply["payload"]["selected"]
    assert pending["status"] == "pending" and set(pending) == {"status", "imageId", "url"}
    assert done.pushes == [{"type": "IMAGE_SCAN_RESOLVED", "payload": {
        "requestId": "r", "imageId": pending["imageId"],
        "result": {"status": "scanned", "image": {"imageId": pending["imageId"], "nsfwLevel": 1,
                                                   "contentRating": "g", "url": pending["url"]}}}}]
    assert _open(b, "OPEN_IMAGE_UPLOAD", asyncScan="yes").dialog["asyncScan"] is False  # only a literal true
    assert confirm(b, "OPEN_IMAGE_UPLOAD", None, asyncScan=True) == {"requestId": "r"}


def test_save_image_takes_the_platforms_urls_and_ids_only(b: Bridge) -> None:
    from blockkit.emulator.services.orchestration import media

    b.dialogs.clear()
    for bad in ({}, {"url": "https://image.civitai.com/a.png", "imageId": 3}, {"imageId": 0}):
        assert ask(b, "SAVE_IMAGE", **bad) == {"requestId": "r", "ok": False, "error": "invalid save-image request"}
    for url in (_png_data_url(), "blob:https://civitai.com/1", "http://image.civitai.com/a.png",
                "https://evil.example/a.png", "file:///etc/passwd", b.platform.base_url + "/api/v1/models"):
        assert ask(b, "SAVE_IMAGE", url=url) == {"requestId": "r", "ok": False, "error": "image url is not allowed"}
    uploaded = confirm(b, "OPEN_IMAGE_UPLOAD", {"dataUrl": _png_data_url(), "name": "x.png"})["selected"]
    saving = _open(b, "SAVE_IMAGE", url=uploaded["url"], filename="../../out.png").dialog
    assert saving["local"] is True and saving["filename"] == "out.png"
    data, media_type = b.download(saving["dialogId"])
    assert media_type == "image/png" and data == media.resolve_local(b.platform.urls, b.platform.store, uploaded["url"])
    # More than three at once: busy.
    more = [_open(b, "SAVE_IMAGE", url="https://image.civitai.com/x/y.jpeg").dialog for _ in range(2)]
    assert all(d is not None and d["local"] is False for d in more)
    assert ask(b, "SAVE_IMAGE", url=uploaded["url"]) == {"requestId": "r", "ok": False, "error": "busy"}
    assert b.finish_dialog(saving["dialogId"], {"ok": True}).reply["payload"] == {"requestId": "r", "ok": True}
    failed = b.finish_dialog(more[0]["dialogId"], {"error": "download failed (404)"}).reply["payload"]
    assert failed == {"requestId": "r", "ok": False, "error": "download failed (404)"}
    b.finish_dialog(more[1]["dialogId"], {"ok": True})
    # imageId: through the gated read of this block's images; another id is "not available".
    by_id = _open(b, "SAVE_IMAGE", imageId=uploaded["imageId"]).dialog
    assert by_id["url"] == uploaded["url"]
    b.finish_dialog(by_id["dialogId"], {"ok": True})
    assert ask(b, "SAVE_IMAGE", imageId=10**8) == {"requestId": "r", "ok": False, "error": "image is not available"}


def _wildcards_version(b: Bridge) -> tuple[int, int, str]:
    with b.platform.store.read() as db:
        row = db.execute("SELECT v.id, m.id, m.name FROM model_versions v JOIN models m ON m.id = v.model_id"
                         " JOIN model_files f ON f.version_id = v.id AND f.visibility = 'Public'"
                         " WHERE m.type = 'Wildcards' AND m.status = 'Published' AND v.status = 'Published'"
                         " AND v.nsfw_level = 1 LIMIT 1").fetchone()
    assert row is not None, "the seed has no published Wildcards version"
    return row


def test_a_wildcard_pack_by_model_version(b: Bridge, started: Callable[..., Bridge]) -> None:
    version_id, model_id, model_name = _wildcards_version(b)
    pack = ask(b, "GET_WILDCARD_PACK", modelVersionId=version_id)["pack"]
    assert set(pack) == {"modelId", "modelVersionId", "modelName", "versionName", "creatorUsername", "lists",
                         "truncated", "truncatedLists", "maturity"}
    assert (pack["modelId"], pack["modelVersionId"], pack["modelName"]) == (model_id, version_id, model_name)
    assert pack["lists"] and all(isinstance(v, list) and v for v in pack["lists"].values())
    assert set(pack["maturity"]) == {"browsingLevel", "sfwOnly"}
    assert ask(b, "GET_WILDCARD_PACK", modelVersionId=str(version_id))["pack"]["modelVersionId"] == version_id
    with b.platform.store.read() as db:
        checkpoint = db.execute("SELECT v.id FROM model_versions v JOIN models m ON m.id = v.model_id"
                                " WHERE m.type = 'Checkpoint' LIMIT 1").fetchone()[0]
    assert ask(b, "GET_WILDCARD_PACK", modelVersionId=checkpoint) == {"requestId": "r", "error": "not-found"}
    assert ask(b, "GET_WILDCARD_PACK", modelVersionId=10**9) == {"requestId": "r", "error": "not-found"}
    for bad in ({}, {"modelVersionId": 0}, {"modelVersionId": "x"}, {"name": "colors"}):
        outcome = b.handle({"type": "GET_WILDCARD_PACK", "payload": {"requestId": "w", **bad}}, INSTANCE)
        assert outcome.reply is None and outcome.note_event == "dropped", bad
    anon = started(name="anon-packs", anonymous=True)
    assert ask(anon, "GET_WILDCARD_PACK", modelVersionId=version_id) == {"requestId": "r", "error": "parse-failed"}


def test_set_user_checkpoint_on_a_page_and_on_a_slot(b: Bridge, started: Callable[..., Bridge]) -> None:
    for payload in ({"versionId": 11}, {"versionId": None}, {"modelVersionId": 11}, {}):
        assert ask(b, "SET_USER_CHECKPOINT", **payload) == {
            "requestId": "r", "ok": False,
            "error": "page blocks cannot persist a checkpoint override (no model binding)"}
    slot = started(surface="model.below_images", name="slot-checkpoint")
    assert ask(slot, "SET_USER_CHECKPOINT", versionId=11) == {"requestId": "r", "ok": True}
    assert '"modelVersionId": 11' in (slot.platform.data_dir / "dev-user-checkpoints.json").read_text()
    assert ask(slot, "SET_USER_CHECKPOINT", versionId=None) == {"requestId": "r", "ok": True}
    assert "11" not in (slot.platform.data_dir / "dev-user-checkpoints.json").read_text()
    for bad in ("11", True, {}, [11]):
        assert ask(slot, "SET_USER_CHECKPOINT", versionId=bad) == {
            "requestId": "r", "ok": False, "error": "versionId must be a number or null"}
    assert ask(slot, "SET_USER_CHECKPOINT") == {"requestId": "r", "ok": False,
                                                "error": "versionId must be a number or null"}
    # The slot takes a string requestId, the empty one too (IframeHost).
    assert slot.reply_to({"type": "SET_USER_CHECKPOINT", "payload": {"requestId": "", "versionId": 5}},
                         INSTANCE)["payload"] == {"requestId": "", "ok": True}


def test_publish_asks_first_and_cancel_says_so(b: Bridge) -> None:
    outcome = _open(b, "PUBLISH_GENERATION_OUTPUTS", workflowId="wf-any", imageIndexes=[1, "x", -1])
    assert outcome.reply is None and outcome.dialog["title"] == "Publish to the shared grid?"
    assert outcome.dialog["message"].startswith("Publish 1 result to ")
    canceled = b.finish_dialog(outcome.dialog["dialogId"], None)
    assert canceled.reply["payload"] == {"requestId": "r", "error": "publish canceled"}
    assert canceled.call is not None and canceled.call["error"] == CANCELED
    for bad in ({}, {"workflowId": ""}, {"workflowId": 5}):
        assert _open(b, "PUBLISH_GENERATION_OUTPUTS", **bad).note_event == "dropped"


def test_app_workflow_refusals_are_the_error_sentence(b: Bridge) -> None:
    refused = ask(b, "CANCEL_APP_WORKFLOW", workflowId="wf-not-this-blocks")
    assert set(refused) == {"requestId", "error"} and isinstance(refused["error"], str) and " " in refused["error"]
    for bad in ({}, {"workflowId": ""}):
        assert _open(b, "CANCEL_APP_WORKFLOW", **bad).note_event == "dropped"
    assert b.handle({"type": "QUERY_APP_WORKFLOWS", "payload": {"requestId": 5}}, INSTANCE).note_event == "dropped"


SLOT_UNBRIDGED = ("GET_VIEWER", "GET_BUZZ_TRANSACTIONS", "GET_BUZZ_ACCOUNTS", "GET_DAILY_COMPENSATION",
                  "QUERY_APP_WORKFLOWS", "CANCEL_APP_WORKFLOW", "NAVIGATE", "OPEN_RESOURCE_PICKER",
                  "OPEN_IMAGE_UPLOAD", "SAVE_IMAGE", "GET_WILDCARD_PACK", "PUBLISH_GENERATION_OUTPUTS",
                  "GET_IMAGES_BY_IDS")


def test_what_the_slot_does_not_bridge_goes_unanswered_with_a_note(started: Callable[..., Bridge]) -> None:
    slot = started(surface="model.below_images", name="slot-unbridged")
    for type_ in SLOT_UNBRIDGED:
        outcome = slot.handle({"type": type_, "payload": {"requestId": "n", "workflowId": "w", "resourceType": "LORA",
                                                          "modelVersionId": 1, "url": "https://image.civitai.com/a"}},
                              INSTANCE)
        assert outcome.reply is None and outcome.dialog is None and "not bridged on model slots" in outcome.note, type_
    # The checkpoint picker is bridged there, narrowed the same way.
    assert slot.handle({"type": "OPEN_CHECKPOINT_PICKER", "payload": {"requestId": ""}}, INSTANCE).dialog is not None

"""Goods: catalogue-only sales at the manifest price, the daily ceiling, the 30/70 split, entitlements
(payload verbatim, never the justification), app_unlock gates nothing, refunds; GET /blocks/entitlements."""

from __future__ import annotations

from pathlib import Path

import pytest
from inproc import URLS
from orch_env import FREE, MEMBER, OWNER, make

from blockkit.emulator import blocktokens, buzz, goods
from blockkit.emulator.options import EmulatorOptions
from blockkit.emulator.orchestration.errors import ServiceError
from blockkit.emulator.state import EmulatorState
from blockkit.emulator.store import tokens

CATALOGUE = [
    {"id": "gem-pack", "title": "Gem pack", "priceBuzz": 100, "payload": {"gems": 50, "nested": [1, {"a": None}]}},
    {"id": "unlock", "title": "Unlock", "priceBuzz": 2000, "kind": "app_unlock", "justification": "for moderators"},
    {"id": "big", "title": "Big", "priceBuzz": 9000, "justification": "secret reason"},
]
G = goods.GoodsCaller


@pytest.fixture
def o(tmp_path: Path):
    return make(tmp_path)


def test_purchase_records_ledger_split_and_entitlement(o) -> None:
    before = buzz.balance(o.store, o.clock, MEMBER)
    owner_before = buzz.balance(o.store, o.clock, OWNER)
    out = goods.purchase_good(o.store, o.clock, G(MEMBER, "app1", "blk"), CATALOGUE, "gem-pack", owner_user_id=OWNER)
    p = out["purchase"]
    assert (p["priceBuzz"], p["platformAmount"], p["ownerAmount"]) == (100, 30, 70)
    assert p["refundState"] == "none" and p["userId"] == MEMBER and p["appId"] == "app1" and p["blockId"] == "blk"
    assert p["purchasedAt"] == o.clock.iso()[:11] + p["purchasedAt"][11:]
    assert buzz.balance(o.store, o.clock, MEMBER)["blue"] == before["blue"] - 100
    assert buzz.balance(o.store, o.clock, OWNER)["yellow"] == owner_before["yellow"] + 70
    ent = goods.entitlements(o.store, o.clock, MEMBER, "app1")["items"]
    assert [e["goodId"] for e in ent] == ["gem-pack"] and ent[0]["payload"] == CATALOGUE[0]["payload"]


@pytest.mark.parametrize("price, platform, owner", [(2, 0, 2), (3, 0, 3), (10, 3, 7), (99, 29, 70), (50000, 15000, 35000)])
def test_split(price: int, platform: int, owner: int) -> None:
    assert goods.split(price) == (platform, owner)


def test_justification_never_copied_and_unlock_gates_nothing(o) -> None:
    out = goods.purchase_good(o.store, o.clock, G(MEMBER, "app1", "blk"), CATALOGUE, "unlock")
    assert out["entitlement"]["kind"] == "app_unlock" and out["entitlement"]["payload"] is None
    assert "justification" not in str(out) and "for moderators" not in str(out)
    with o.store.read() as db:
        assert "for moderators" not in str([tuple(r) for r in db.execute("SELECT * FROM goods_purchases")])
    # recorded like any good; buying a good without the unlock still works (no gate)
    assert goods.purchase_good(o.store, o.clock, G(FREE, "app1", "blk"), CATALOGUE, "gem-pack")["purchase"]


@pytest.mark.parametrize("caller, catalogue, good_id, status, code", [
    (G(None, "a", "b"), CATALOGUE, "gem-pack", 401, "sign_in_required"),
    (G(MEMBER, "a", "b", frozenset({"goods:read:self"})), CATALOGUE, "gem-pack", 403, "missing_scope"),
    (G(MEMBER, "a", "b"), CATALOGUE, "not-sold", 404, "not_found"),
    (G(MEMBER, "a", "b"), None, "gem-pack", 400, "no_catalogue"),
    (G(MEMBER, "a", "b"), [{"id": "x", "priceBuzz": "5"}], "x", 400, "bad_good"),
    (G(FREE, "a", "b"), CATALOGUE, "unlock", 403, "insufficient_buzz"),   # free holds 700
])
def test_purchase_refusals(o, caller: G, catalogue: object, good_id: str, status: int, code: str) -> None:
    with pytest.raises(ServiceError) as err:
        goods.purchase_good(o.store, o.clock, caller, catalogue, good_id)
    assert (err.value.status, err.value.code) == (status, code)
    assert goods.ledger(o.store, MEMBER) == []


def test_price_comes_from_the_catalogue_only(o) -> None:
    out = goods.purchase_good(o.store, o.clock, G(MEMBER, "a", "b"), [{"id": "g", "priceBuzz": 7, "title": "G"}], "g")
    assert out["purchase"]["priceBuzz"] == 7


def test_daily_ceiling_across_apps_resets_on_the_utc_day(o) -> None:
    buzz.purchase(o.store, o.clock, MEMBER, 50_000)
    goods.purchase_good(o.store, o.clock, G(MEMBER, "app1", "b"), CATALOGUE, "big")
    with pytest.raises(ServiceError) as err:   # 9000 + 2000 > 10000, in another app
        goods.purchase_good(o.store, o.clock, G(MEMBER, "app2", "b"), CATALOGUE, "unlock")
    assert (err.value.status, err.value.code) == (429, "daily_ceiling")
    goods.purchase_good(o.store, o.clock, G(MEMBER, "app2", "b"), CATALOGUE, "gem-pack")  # 9100: fits
    now = o.clock.now()
    o.advance((24 - now.hour) * 3600 - now.minute * 60 - now.second + 1)  # past the next UTC midnight
    assert goods.purchase_good(o.store, o.clock, G(MEMBER, "app2", "b"), CATALOGUE, "unlock")


def test_refund_flips_state_returns_buzz_and_drops_entitlement(o) -> None:
    before = buzz.balance(o.store, o.clock, MEMBER)
    pid = goods.purchase_good(o.store, o.clock, G(MEMBER, "a", "b"), CATALOGUE, "gem-pack",
                              owner_user_id=OWNER)["purchase"]["id"]
    owner_mid = buzz.balance(o.store, o.clock, OWNER)["yellow"]
    row = goods.refund(o.store, o.clock, pid)
    assert row["refundState"] == "refunded" and row["refundedAt"]
    assert buzz.balance(o.store, o.clock, MEMBER) == before
    assert buzz.balance(o.store, o.clock, OWNER)["yellow"] == owner_mid - 70
    assert goods.entitlements(o.store, o.clock, MEMBER, "a")["items"] == []
    assert [r["refundState"] for r in goods.ledger(o.store, MEMBER)] == ["refunded"]
    with pytest.raises(ServiceError) as err:
        goods.refund(o.store, o.clock, pid)
    assert err.value.status == 409


def _block_token(o, scopes: list[str], user_id: int | None, app: str = "app1") -> str:
    state = EmulatorState(o.store, o.clock, EmulatorOptions(), URLS)
    blocktokens.register_block_instance(o.store, o.clock.iso(), instance_id=f"inst-{app}-{len(scopes)}",
                                        block_id="blk", app_id=app, scopes=scopes)
    return blocktokens.mint_block_token(state, instance_id=f"inst-{app}-{len(scopes)}", user_id=user_id).token


def test_entitlements_route(o) -> None:
    goods.purchase_good(o.store, o.clock, G(MEMBER, "app1", "blk"), CATALOGUE, "gem-pack")
    goods.purchase_good(o.store, o.clock, G(MEMBER, "other", "blk"), CATALOGUE, "gem-pack")
    token = _block_token(o, ["goods:read:self"], MEMBER)
    r = o.api.get("/api/v1/blocks/entitlements", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200, r.text
    assert [(e["goodId"], e["appId"]) for e in r.json()["items"]] == [("gem-pack", "app1")]
    assert r.json()["items"][0]["payload"] == CATALOGUE[0]["payload"]
    no_scope = _block_token(o, ["user:read:self"], MEMBER)
    assert o.api.get("/api/v1/blocks/entitlements", headers={"Authorization": f"Bearer {no_scope}"}).status_code == 403
    assert o.api.get("/api/v1/blocks/entitlements").status_code == 401
    with o.store.write() as db:
        raw = tokens.issue_access_token(db, user_id=MEMBER, scope=1, now=o.clock.now())
    oauth = {"Authorization": f"Bearer {raw}"}
    assert o.api.get("/api/v1/blocks/entitlements", headers=oauth).status_code == 400
    r = o.api.get("/api/v1/blocks/entitlements?appId=other", headers=oauth)
    assert [e["appId"] for e in r.json()["items"]] == ["other"]

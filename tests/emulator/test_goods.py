"""Goods, by the platform's rules: catalogue-only sales at the manifest price, one ownership per good,
the daily ceiling, the floored 70% owner share paid in the buyer's colours, entitlements (payload
verbatim, never the justification), refunds; GET /blocks/entitlements, POST /blocks/goods/purchase."""

from __future__ import annotations

from pathlib import Path

import pytest
from inproc import URLS
from orch_env import FREE, MEMBER, OWNER, make

from blockkit.emulator.services import blocktokens, buzz, consent, goods
from blockkit.emulator.options import EmulatorOptions
from blockkit.emulator.services.errors import ServiceError
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
    assert out["ok"] is True and set(out["purchase"]) == {"id", "goodId", "priceBuzz"}
    assert out["purchase"]["goodId"] == "gem-pack" and out["purchase"]["priceBuzz"] == 100
    assert out["entitlement"] == {"goodId": "gem-pack", "kind": "good", "payload": CATALOGUE[0]["payload"],
                                  "grantedAt": out["entitlement"]["grantedAt"]}
    assert out["entitlement"]["grantedAt"][:16] == o.clock.iso()[:16]
    (row,) = goods.ledger(o.store, MEMBER)
    assert (row["priceBuzz"], row["platformAmount"], row["ownerAmount"]) == (100, 30, 70)
    assert row["refundState"] == "none" and row["userId"] == MEMBER and row["appId"] == "app1"
    assert buzz.balance(o.store, o.clock, MEMBER)["blue"] == before["blue"] - 100
    # The buyer paid all in blue, so the owner's 70 is paid in blue.
    assert buzz.balance(o.store, o.clock, OWNER)["blue"] == owner_before["blue"] + 70
    ent = goods.entitlements(o.store, o.clock, MEMBER, "app1")["entitlements"]
    assert [e["goodId"] for e in ent] == ["gem-pack"] and ent[0]["payload"] == CATALOGUE[0]["payload"]


@pytest.mark.parametrize("price, platform, owner", [(2, 1, 1), (3, 1, 2), (10, 3, 7), (25, 8, 17), (99, 30, 69),
                                                    (50000, 15000, 35000)])
def test_split_floors_the_owners_share(price: int, platform: int, owner: int) -> None:
    assert goods.split(price) == (platform, owner)


def test_paid_blue_then_yellow_never_green_and_the_owner_in_the_same_colours(o) -> None:
    with o.store.write() as db:
        buzz.open_accounts(db, MEMBER, o.clock.iso())
        db.execute("UPDATE buzz_accounts SET balance = CASE pool WHEN 'blue' THEN 40 WHEN 'yellow' THEN 500"
                   " ELSE 10000 END WHERE user_id = ?", (MEMBER,))
    owner_before = buzz.balance(o.store, o.clock, OWNER)
    goods.purchase_good(o.store, o.clock, G(MEMBER, "app1", "blk"), CATALOGUE, "gem-pack", owner_user_id=OWNER)
    assert buzz.balance(o.store, o.clock, MEMBER) == {"blue": 0, "green": 10000, "yellow": 440}
    owner_after = buzz.balance(o.store, o.clock, OWNER)
    # 70 owed: blue floor(70 * 40 / 100) = 28, the rest (42) yellow.
    assert (owner_after["blue"] - owner_before["blue"], owner_after["yellow"] - owner_before["yellow"]) == (28, 42)
    with o.store.write() as db:
        db.execute("UPDATE buzz_accounts SET balance = 0 WHERE user_id = ? AND pool != 'green'", (FREE,))
        buzz.open_accounts(db, FREE, o.clock.iso())
        db.execute("UPDATE buzz_accounts SET balance = 0 WHERE user_id = ? AND pool != 'green'", (FREE,))
    with pytest.raises(ServiceError) as err:   # green alone never pays for a good
        goods.purchase_good(o.store, o.clock, G(FREE, "app1", "blk"), CATALOGUE, "gem-pack")
    assert (err.value.status, err.value.code) == (400, "insufficient_funds")


def test_justification_never_copied_and_unlock_gates_nothing(o) -> None:
    out = goods.purchase_good(o.store, o.clock, G(MEMBER, "app1", "blk"), CATALOGUE, "unlock")
    assert out["entitlement"]["kind"] == "app_unlock" and out["entitlement"]["payload"] == {}
    assert "justification" not in str(out) and "for moderators" not in str(out)
    with o.store.read() as db:
        assert "for moderators" not in str([tuple(r) for r in db.execute("SELECT * FROM goods_purchases")])
    # recorded like any good; buying a good without the unlock still works (no gate)
    assert goods.purchase_good(o.store, o.clock, G(FREE, "app1", "blk"), CATALOGUE, "gem-pack")["purchase"]


@pytest.mark.parametrize("caller, catalogue, good_id, status, code", [
    (G(None, "a", "b"), CATALOGUE, "gem-pack", 403, "sign_in_required"),
    (G(MEMBER, "a", "b", frozenset({"goods:read:self"})), CATALOGUE, "gem-pack", 403, "missing_scope"),
    (G(MEMBER, "a", "b"), CATALOGUE, "not-sold", 404, "good_not_found"),
    (G(MEMBER, "a", "b"), None, "gem-pack", 404, "good_not_found"),
    (G(MEMBER, "a", "b"), [{"id": "x", "priceBuzz": "5"}], "x", 404, "good_not_found"),
    (G(MEMBER, "a", "b"), [{"id": "x", "priceBuzz": 60000}], "x", 400, "price_over_cap"),
    (G(FREE, "a", "b"), CATALOGUE, "unlock", 400, "insufficient_funds"),   # free holds 500 blue
])
def test_purchase_refusals(o, caller: G, catalogue: object, good_id: str, status: int, code: str) -> None:
    with pytest.raises(ServiceError) as err:
        goods.purchase_good(o.store, o.clock, caller, catalogue, good_id)
    assert (err.value.status, err.value.code) == (status, code)
    assert goods.ledger(o.store, MEMBER) == []


def test_price_comes_from_the_catalogue_only_and_a_stale_price_refuses(o) -> None:
    cat = [{"id": "g", "priceBuzz": 7, "title": "G"}]
    with pytest.raises(ServiceError) as err:
        goods.purchase_good(o.store, o.clock, G(MEMBER, "a", "b"), cat, "g", expected_price=5)
    assert (err.value.status, err.value.code) == (409, "price_changed") and "7 Buzz" in err.value.detail
    out = goods.purchase_good(o.store, o.clock, G(MEMBER, "a", "b"), cat, "g", expected_price=7)
    assert out["purchase"]["priceBuzz"] == 7


def test_a_good_is_owned_once_and_the_owner_cannot_buy(o) -> None:
    first = goods.purchase_good(o.store, o.clock, G(MEMBER, "a", "b"), CATALOGUE, "gem-pack")
    with pytest.raises(ServiceError) as err:
        goods.purchase_good(o.store, o.clock, G(MEMBER, "a", "b"), CATALOGUE, "gem-pack")
    assert (err.value.status, err.value.code) == (409, "already_owned")
    assert goods.purchase_good(o.store, o.clock, G(MEMBER, "other-app", "b"), CATALOGUE, "gem-pack")  # per app
    goods.refund(o.store, o.clock, first["purchase"]["id"])
    assert goods.purchase_good(o.store, o.clock, G(MEMBER, "a", "b"), CATALOGUE, "gem-pack")  # re-buyable
    with pytest.raises(ServiceError) as err:
        goods.purchase_good(o.store, o.clock, G(OWNER, "a", "b"), CATALOGUE, "gem-pack", owner_user_id=OWNER)
    assert (err.value.status, err.value.code) == (400, "self_purchase")


def test_daily_ceiling_across_apps_resets_on_the_utc_day(o, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(goods, "DAILY_CEILING", 10_000)  # the platform's is 150,000; the rule is the same
    buzz.purchase(o.store, o.clock, MEMBER, 50_000)
    goods.purchase_good(o.store, o.clock, G(MEMBER, "app1", "b"), CATALOGUE, "big")
    with pytest.raises(ServiceError) as err:   # 9000 + 2000 > 10000, in another app
        goods.purchase_good(o.store, o.clock, G(MEMBER, "app2", "b"), CATALOGUE, "unlock")
    assert (err.value.status, err.value.code) == (400, "daily_ceiling")
    assert err.value.detail == "Daily purchase limit reached (10000 Buzz). Try again tomorrow."
    goods.purchase_good(o.store, o.clock, G(MEMBER, "app2", "b"), CATALOGUE, "gem-pack")  # 9100: fits
    now = o.clock.now()
    o.advance((24 - now.hour) * 3600 - now.minute * 60 - now.second + 1)  # past the next UTC midnight
    assert goods.purchase_good(o.store, o.clock, G(MEMBER, "app2", "b"), CATALOGUE, "unlock")


def test_refund_flips_state_returns_buzz_and_drops_entitlement(o) -> None:
    before = buzz.balance(o.store, o.clock, MEMBER)
    pid = goods.purchase_good(o.store, o.clock, G(MEMBER, "a", "b"), CATALOGUE, "gem-pack",
                              owner_user_id=OWNER)["purchase"]["id"]
    owner_mid = buzz.balance(o.store, o.clock, OWNER)["blue"]
    row = goods.refund(o.store, o.clock, pid)
    assert row["refundState"] == "refunded" and row["refundedAt"]
    assert buzz.balance(o.store, o.clock, MEMBER) == before
    assert buzz.balance(o.store, o.clock, OWNER)["blue"] == owner_mid - 70
    assert goods.entitlements(o.store, o.clock, MEMBER, "a")["entitlements"] == []
    assert [r["refundState"] for r in goods.ledger(o.store, MEMBER)] == ["refunded"]
    with pytest.raises(ServiceError) as err:
        goods.refund(o.store, o.clock, pid)
    assert err.value.status == 409


def _block_token(o, scopes: list[str], user_id: int | None, app: str = "app1") -> str:
    state = EmulatorState(o.store, o.clock, EmulatorOptions(), URLS)
    instance = f"inst-{app}-{len(scopes)}-{user_id}"
    blocktokens.register_block_instance(o.store, o.clock.iso(), instance_id=instance,
                                        block_id="blk", app_id=app, scopes=scopes)
    if user_id is not None:  # the viewer consented (as an install does)
        consent.grant_declared(o.store, o.clock, user_id, instance)
    return blocktokens.mint_block_token(state, instance_id=instance, user_id=user_id).token


def test_entitlements_route(o) -> None:
    goods.purchase_good(o.store, o.clock, G(MEMBER, "app1", "blk"), CATALOGUE, "gem-pack")
    goods.purchase_good(o.store, o.clock, G(MEMBER, "other", "blk"), CATALOGUE, "big")
    token = _block_token(o, ["goods:read:self"], MEMBER)
    r = o.api.get("/api/v1/blocks/entitlements", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200, r.text
    assert r.json() == {"entitlements": [{"goodId": "gem-pack", "kind": "good", "payload": CATALOGUE[0]["payload"],
                                          "grantedAt": r.json()["entitlements"][0]["grantedAt"]}]}
    anon = _block_token(o, ["goods:read:self"], None)
    assert o.api.get("/api/v1/blocks/entitlements", headers={"Authorization": f"Bearer {anon}"}).status_code == 403
    no_scope = _block_token(o, ["user:read:self"], MEMBER)
    assert o.api.get("/api/v1/blocks/entitlements", headers={"Authorization": f"Bearer {no_scope}"}).status_code == 403
    assert o.api.get("/api/v1/blocks/entitlements").status_code == 401
    with o.store.write() as db:
        raw = tokens.issue_access_token(db, user_id=MEMBER, scope=1, now=o.clock.now())
    oauth = {"Authorization": f"Bearer {raw}"}
    assert o.api.get("/api/v1/blocks/entitlements", headers=oauth).status_code == 400
    r = o.api.get("/api/v1/blocks/entitlements?appId=other", headers=oauth)
    assert [e["goodId"] for e in r.json()["entitlements"]] == ["big"]


PURCHASE = "/api/v1/blocks/goods/purchase"


def test_purchase_route(o) -> None:
    goods.register_catalogue(o.store, o.clock, "app1", "blk", CATALOGUE, owner_user_id=OWNER)
    auth = {"Authorization": f"Bearer {_block_token(o, ['goods:purchase:self'], MEMBER)}"}
    r = o.api.post(PURCHASE, headers=auth, json={"goodId": "gem-pack", "expectedPriceBuzz": 100, "extra": 1})
    assert r.status_code == 200, r.text
    assert r.json()["ok"] is True and r.json()["purchase"]["priceBuzz"] == 100
    assert r.json()["entitlement"]["goodId"] == "gem-pack"
    again = o.api.post(PURCHASE, headers=auth, json={"goodId": "gem-pack"})
    assert again.status_code == 409 and again.json() == {"ok": False, "error": "You already own this item",
                                                         "reason": "already_owned"}
    stale = o.api.post(PURCHASE, headers=auth, json={"goodId": "unlock", "expectedPriceBuzz": 5})
    assert stale.status_code == 409 and stale.json()["reason"] == "price_changed"
    missing = o.api.post(PURCHASE, headers=auth, json={"goodId": "nope"})
    assert missing.status_code == 404 and missing.json() == {"ok": False, "error": "This item is not available"}
    for bad in ({"goodId": "Bad Id"}, {"goodId": "unlock", "expectedPriceBuzz": 0}, [1],
                {"goodId": "unlock", "idempotencyKey": "no spaces"}):
        answer = o.api.post(PURCHASE, headers=auth, json=bad)
        assert answer.status_code == 400 and answer.json()["error"] == "Invalid request body", bad
    assert o.api.post(PURCHASE, headers=auth, content=b"x" * 5000).status_code == 413
    anon = {"Authorization": f"Bearer {_block_token(o, ['goods:purchase:self'], None)}"}
    assert o.api.post(PURCHASE, headers=anon, json={"goodId": "gem-pack"}).status_code == 403
    reader = {"Authorization": f"Bearer {_block_token(o, ['goods:read:self'], MEMBER)}"}
    assert o.api.post(PURCHASE, headers=reader, json={"goodId": "gem-pack"}).status_code == 403
    assert o.api.post(PURCHASE, json={"goodId": "gem-pack"}).status_code == 401
    other_app = {"Authorization": f"Bearer {_block_token(o, ['goods:purchase:self'], MEMBER, app='unregistered')}"}
    assert o.api.post(PURCHASE, headers=other_app, json={"goodId": "gem-pack"}).status_code == 404


def test_purchase_route_idempotency_key(o) -> None:
    goods.register_catalogue(o.store, o.clock, "app1", "blk", CATALOGUE)
    auth = {"Authorization": f"Bearer {_block_token(o, ['goods:purchase:self'], MEMBER)}"}
    first = o.api.post(PURCHASE, headers=auth, json={"goodId": "gem-pack", "idempotencyKey": "k-1"})
    replay = o.api.post(PURCHASE, headers=auth, json={"goodId": "gem-pack", "idempotencyKey": "k-1"})
    assert first.status_code == replay.status_code == 200 and first.json() == replay.json()  # replayed, not 409
    assert len(goods.ledger(o.store, MEMBER)) == 1
    other = o.api.post(PURCHASE, headers=auth, json={"goodId": "unlock", "idempotencyKey": "k-1"})
    assert other.status_code == 422


def test_a_catalogue_with_a_bad_good_is_refused_when_it_is_registered(o) -> None:
    """R18 (reliability review 2): kind 'badge' was accepted, then every purchase answered 500
    (CHECK constraint failed: kind IN ('good', 'app_unlock'))."""
    from blockkit.emulator.errors import EmulatorError

    bad = [*CATALOGUE, {"id": "b", "title": "Badge", "priceBuzz": 5, "kind": "badge"}]
    with pytest.raises(EmulatorError, match=r"^app1: goods\[3\]: 'kind' 'badge' is not one of good, app_unlock"):
        goods.register_catalogue(o.store, o.clock, "app1", "blk", bad)
    for good, words in (({"priceBuzz": 5}, "'id'"), ("gem", "an object"), ({"id": "t", "title": 7}, "'title'")):
        with pytest.raises(EmulatorError, match=words):
            goods.register_catalogue(o.store, o.clock, "app1", "blk", [good])
    assert goods.catalogue(o.store, "app1") is None  # nothing was recorded
    goods.register_catalogue(o.store, o.clock, "app1", "blk", CATALOGUE)
    assert goods.catalogue(o.store, "app1") is not None


def _exchange(sock, request: bytes) -> bytes:
    """Send one request on a kept-alive socket and read its whole answer (Content-Length framed)."""
    sock.sendall(request)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def test_a_500_keeps_the_connection_for_the_next_request(tmp_path: Path) -> None:
    """R18: after a 500 the next request on the same keep-alive connection was reset."""
    import json as json_module
    import socket
    from urllib.parse import urlsplit

    from blockkit.emulator import running

    with running(data=tmp_path / "d") as platform:
        user = platform.users()[0]
        token = platform.block_token(user.username, scopes=["goods:purchase:self"], app_id="app-x", block_id="blk-x")
        with platform.store.write() as db:  # a catalogue the registration would refuse now, written as it was
            db.execute("INSERT INTO goods_catalogues (app_id, block_id, owner_user_id, goods, updated_at)"
                       " VALUES ('app-x', 'blk-x', NULL, ?, '2026-01-01T00:00:00.000Z')",
                       (json_module.dumps([{"id": "b", "title": "Badge", "priceBuzz": 5, "kind": "badge"}]),))
        base = urlsplit(platform.base_url)
        body = b'{"goodId": "b"}'
        purchase = (f"POST /api/v1/blocks/goods/purchase HTTP/1.1\r\nHost: {base.netloc}\r\n"
                    f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(body)}\r\n\r\n").encode() + body
        enums = f"GET /api/v1/enums HTTP/1.1\r\nHost: {base.netloc}\r\n\r\n".encode()
        with socket.create_connection((base.hostname, base.port), timeout=30) as sock:
            first = _exchange(sock, purchase)
            assert first.startswith(b"HTTP/1.1 500"), first[:200]
            second = _exchange(sock, enums)
            assert second.startswith(b"HTTP/1.1 200"), second[:200]

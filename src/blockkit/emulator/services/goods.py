"""Goods: purchases from a manifest's catalogue, the sales ledger, entitlements, refunds.

Python API (``blockkit dev`` and the block routes call these):

- ``GoodsCaller(user_id, app_id, block_id, scopes)`` (``GoodsCaller.from_claims(claims)``);
- ``register_catalogue(store, clock, app_id, block_id, goods, owner_user_id=None)``: the goods an
  app sells and who owns the app (what the platform reads from the approved app block);
- ``catalogue(store, app_id) -> (goods, owner_user_id) | None``;
- ``purchase_good(store, clock, caller, manifest_goods, good_id, *, owner_user_id=None,
  expected_price=None) -> {"ok": True, "purchase": {id, goodId, priceBuzz}, "entitlement"}``;
- ``purchase_once(store, clock, caller, good_id, *, expected_price, idempotency_key, refusal) -> (status,
  body)``: the purchase route's form (the registered catalogue; an idempotency key kept in the store);
- ``entitlements(store, clock, user_id, app_id) -> {"entitlements": [{goodId, kind, payload,
  grantedAt}]}``;
- ``ledger(store, user_id, app_id=None) -> [LedgerRow]`` (refunded rows too);
- ``refund(store, clock, purchase_id) -> LedgerRow`` (an emulator control: the buyer gets the price back).

The rules are the platform's (civitai/civitai ``src/pages/api/v1/blocks/goods/purchase.ts``,
``src/server/services/blocks/block-goods.service.ts``, ``block-goods-rate-limit.ts``,
``src/shared/constants/block-goods.constants.ts``): only a good of the catalogue is sold, at
its ``priceBuzz`` (``expected_price``, when sent, only refuses: 409 ``price_changed``); a good
is owned once (409 ``already_owned`` until refunded); the app's owner cannot buy their own
good (400 ``self_purchase``); it needs ``goods:purchase:self`` and a signed-in viewer; a
viewer's goods spending across every app is capped per UTC day of the emulator clock at
``DAILY_CEILING`` (a 400); the price is paid from blue, then yellow (green never); short of
Buzz is 400 ``insufficient_funds``. The owner gets ``floor(70%)`` at once, the platform the
rest, and the owner's share is paid in the colours the buyer paid, the blue part prorated and
floored, the remainder in yellow. The entitlement carries the good's ``payload`` verbatim
(``{}`` when none) and never its ``justification``; an ``app_unlock`` gates nothing. A refund
returns the buyer's Buzz, takes the owner's share back (as far as it is still there) and
revokes the entitlement, after which the good can be bought again.

A refusal is a :class:`ServiceError` whose ``code`` is the platform's ``reason`` and whose
``detail`` is its message.
"""

from __future__ import annotations

import sqlite3
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Callable

import orjson

from blockkit.emulator import journal
from blockkit.emulator.services import buzz
from blockkit.emulator.store.clock import format_timestamp
from blockkit.emulator.errors import EmulatorError
from blockkit.emulator.services.errors import ServiceError, not_found
from blockkit.emulator.store import buzz as buzz_store
from blockkit.emulator.store import goods as goods_store

if TYPE_CHECKING:
    from blockkit.emulator.store.clock import Clock
    from blockkit.emulator.store import Store

PURCHASE_SCOPE = "goods:purchase:self"
READ_SCOPE = "goods:read:self"
DAILY_CEILING = 150_000         # Buzz per viewer per UTC day across all apps (the platform's BLOCK_GOOD_CAP_PER_DAY)
OWNER_PERCENT = 70
MAX_PRICE = 50_000
GOODS_POOLS = ("blue", "yellow")  # the platform's payWith: blue first, then yellow
# How long a purchase's idempotency key holds its first answer, by the emulator clock: the platform's
# block idempotency records live 10 minutes (BLOCK_TIP_IDEM_TTL_SECONDS, BLOCK_GEN_IDEM_TTL_SECONDS in
# civitai/civitai src/server/utils/block-gen-idempotency.ts). An expired key is freed; the next request
# with it is a new purchase.
IDEMPOTENCY_TTL_SECONDS = 10 * 60
KEY_SCOPE = "goods.purchase"


@dataclass(frozen=True)
class GoodsCaller:
    user_id: int | None
    app_id: str
    block_id: str
    scopes: frozenset[str] = field(default_factory=lambda: frozenset({PURCHASE_SCOPE, READ_SCOPE}))

    @classmethod
    def from_claims(cls, claims: dict[str, Any]) -> GoodsCaller:
        sub = str(claims.get("sub", ""))
        return cls(int(sub.split(":", 1)[1]) if sub.startswith("user:") else None, str(claims.get("appId", "")),
                   str(claims.get("blockId", "")), frozenset(claims.get("scopes") or ()))


def split(price: int) -> tuple[int, int]:
    """(platform, owner): the owner's 70 percent is floored, the platform takes the remainder."""
    owner = price * OWNER_PERCENT // 100
    return price - owner, owner


def owner_legs(owner: int, price: int, debits: dict[str, int]) -> dict[str, int]:
    """The owner's share by colour: blue in proportion to the blue the buyer paid (floored), the rest yellow."""
    blue = owner * debits.get("blue", 0) // price if price else 0
    return {pool: amount for pool, amount in (("blue", blue), ("yellow", owner - blue)) if amount}


def register_catalogue(store: Store, clock: Clock, app_id: str, block_id: str, manifest_goods: object,
                       owner_user_id: int | None = None) -> None:
    """Record the goods ``app_id`` sells (its manifest's ``goods``) and its owner.

    Each good is checked here, as the manifest's schema does, so that a bad one is refused when it
    is registered (one line) rather than failing every purchase of it later.
    """
    goods = manifest_goods if isinstance(manifest_goods, list) else []
    for index, good in enumerate(goods):
        problem = _good_problem(good)
        if problem is not None:
            raise EmulatorError(f"{app_id}: goods[{index}]: {problem}")
    with store.write() as db:
        db.execute("INSERT INTO goods_catalogues (app_id, block_id, owner_user_id, goods, updated_at)"
                   " VALUES (?, ?, ?, ?, ?) ON CONFLICT (app_id) DO UPDATE SET block_id = excluded.block_id,"
                   " owner_user_id = excluded.owner_user_id, goods = excluded.goods, updated_at = excluded.updated_at",
                   (app_id, block_id, owner_user_id, orjson.dumps(goods).decode(), clock.iso()))


GOOD_KINDS = ("good", "app_unlock")  # the manifest schema's, and the purchases table's CHECK


def _good_problem(good: object) -> str | None:
    if not isinstance(good, dict):
        return "a good must be an object"
    if not isinstance(good.get("id"), str) or not good["id"]:
        return "'id' must be a non-empty string"
    kind = good.get("kind")
    if kind is not None and kind not in GOOD_KINDS:
        return f"'kind' {kind!r} is not one of {', '.join(GOOD_KINDS)} (good {good['id']!r})"
    if good.get("title") is not None and not isinstance(good["title"], str):
        return f"'title' must be a string (good {good['id']!r})"
    return None


def catalogue(store: Store, app_id: str) -> tuple[list[dict[str, Any]], int | None] | None:
    with store.read() as db:
        row = db.execute("SELECT goods, owner_user_id FROM goods_catalogues WHERE app_id = ?", (app_id,)).fetchone()
    return None if row is None else (orjson.loads(row[0]), row[1])


def _day(now: datetime) -> tuple[str, str]:
    start = now.astimezone(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    return format_timestamp(start), format_timestamp(start + timedelta(days=1))


NOT_AVAILABLE = "This item is not available"


def _good(manifest_goods: object, good_id: object) -> dict[str, Any]:
    # An unknown good, no catalogue, or a good without a valid price: the platform's one 404.
    for good in manifest_goods if isinstance(manifest_goods, list) else []:
        if isinstance(good, dict) and good.get("id") == good_id:
            price = good.get("priceBuzz")
            if not isinstance(price, bool) and isinstance(price, int) and price >= 1:
                return good
    raise ServiceError(404, "good_not_found", NOT_AVAILABLE)


def _ledger_row(row: dict[str, Any]) -> dict[str, Any]:
    return {"id": row["id"], "userId": row["user_id"], "appId": row["app_id"], "blockId": row["block_id"],
            "goodId": row["good_id"], "kind": row["kind"], "title": row["title"], "priceBuzz": row["price"],
            "platformAmount": row["platform_amount"], "ownerAmount": row["owner_amount"],
            "debits": orjson.loads(row["debits"]), "purchasedAt": row["created_at"],
            "refundState": row["refund_state"], "refundedAt": row["refunded_at"]}


def _entitlement(row: dict[str, Any]) -> dict[str, Any]:
    """The platform's SerializedEntitlement."""
    return {"goodId": row["good_id"], "kind": row["kind"],
            "payload": orjson.loads(row["payload"]) if row["payload"] else {}, "grantedAt": row["created_at"]}


def purchase_good(store: Store, clock: Clock, caller: GoodsCaller, manifest_goods: object, good_id: object, *,
                  owner_user_id: int | None = None, expected_price: object = None) -> dict[str, Any]:
    now_dt = clock.now()
    with store.write() as db:
        return _buy(db, now_dt, caller, manifest_goods, good_id, owner_user_id, expected_price)


def _buy(db: sqlite3.Connection, now_dt: datetime, caller: GoodsCaller, manifest_goods: object, good_id: object,
         owner_user_id: int | None, expected_price: object) -> dict[str, Any]:
    """The purchase inside the caller's write transaction: the charge, the owner's share and the purchase row
    (which is the entitlement) commit together or not at all."""
    if caller.user_id is None:
        raise ServiceError(403, "sign_in_required", "Anonymous block tokens may not buy items")
    if PURCHASE_SCOPE not in caller.scopes:
        journal.note_reason(f"a purchase needs the block scope {PURCHASE_SCOPE}; the block token holds"
                            f" {journal.described(sorted(caller.scopes))}")
        raise ServiceError(403, "missing_scope", f"missing required scope: {PURCHASE_SCOPE}")
    good = _good(manifest_goods, good_id)
    price = int(good["priceBuzz"])
    if price > MAX_PRICE:
        raise ServiceError(400, "price_over_cap", NOT_AVAILABLE)
    if expected_price is not None and expected_price != price:
        raise ServiceError(409, "price_changed", f"The price changed to {price} Buzz. Check the new price and try"
                                                 " again.")
    if owner_user_id is not None and owner_user_id == caller.user_id:
        raise ServiceError(400, "self_purchase", "You cannot buy your own app\u2019s items")
    now = format_timestamp(now_dt)
    platform, owner = split(price)
    purchase_id = str(uuid.uuid4())
    if goods_store.owns(db, caller.user_id, caller.app_id, str(good["id"])):
        raise ServiceError(409, "already_owned", "You already own this item")
    start, end = _day(now_dt)
    spent = goods_store.spent_between(db, caller.user_id, start, end)
    if spent + price > DAILY_CEILING:
        raise ServiceError(400, "daily_ceiling", f"Daily purchase limit reached ({DAILY_CEILING} Buzz). Try"
                                                 " again tomorrow.")
    try:
        debits = buzz.charge(db, now, caller.user_id, price, GOODS_POOLS, kind="good", reference=purchase_id,
                             description=f"{caller.app_id}: {good.get('title', good['id'])}")
    except ServiceError as exc:
        if exc.code == "insufficient_buzz":
            raise ServiceError(400, "insufficient_funds", "You do not have enough Buzz to buy this item") from None
        raise
    if owner_user_id is not None:
        buzz.open_accounts(db, owner_user_id, now)
        for pool, amount in owner_legs(owner, price, debits).items():
            buzz_store.move(db, owner_user_id, pool, amount, "good_sale", purchase_id,
                            f"sale of {good['id']} (70%)", now)
    row = {"id": purchase_id, "user_id": caller.user_id, "app_id": caller.app_id, "block_id": caller.block_id,
           "good_id": good["id"], "kind": good.get("kind") or "good", "title": good.get("title") or good["id"],
           "price": price, "platform_amount": platform, "owner_amount": owner, "owner_user_id": owner_user_id,
           "payload": orjson.dumps(good["payload"]).decode() if "payload" in good else None,
           "debits": orjson.dumps(debits).decode(), "created_at": now, "refund_state": "none",
           "refunded_at": None}
    goods_store.insert(db, row)
    return {"ok": True, "purchase": {"id": purchase_id, "goodId": row["good_id"], "priceBuzz": price},
            "entitlement": _entitlement(row)}


def purchase_once(store: Store, clock: Clock, caller: GoodsCaller, good_id: object, *, expected_price: object = None,
                  idempotency_key: str | None = None,
                  refusal: Callable[[ServiceError], tuple[int, dict[str, Any]]]) -> tuple[int, dict[str, Any]]:
    """A purchase from the app's registered catalogue, answered as ``(status, body)``; ``refusal`` shapes a
    :class:`ServiceError` into the route's answer.

    With ``idempotency_key`` the key is looked up, and otherwise reserved with its answer, in the purchase's
    own write transaction (``idempotency_keys``): the first answer (a 200 or a refusal) is stored once and
    replayed to every retry with the same payload and price until it expires (``IDEMPOTENCY_TTL_SECONDS`` of
    the emulator clock); another payload with a live key is 422. A good that is not for sale is 404 before
    any key is looked at, and is not stored (civitai/civitai ``goods/purchase.ts``). SQLite's write lock
    serialises the transactions, so a concurrent retry waits for the first request to commit and then gets
    its answer; nobody ever sees a half-done purchase, and the "in progress" 409 (the platform's, and
    draft-ietf-httpapi-idempotency-key-header's) has no window to happen in.
    """
    assert caller.user_id is not None
    now_dt = clock.now()
    now = format_timestamp(now_dt)
    with store.write() as db:
        found = catalogue(store, caller.app_id)
        try:
            # As the platform: an unknown good is 404 before any key is claimed (never stored), and the key is
            # pinned to the server's price as well as the payload (a price change makes the key a mismatch).
            price = _good(found[0] if found else None, good_id)["priceBuzz"]
        except ServiceError as exc:
            return refusal(exc)
        fingerprint = orjson.dumps([caller.app_id, good_id, price, expected_price]).decode()
        if idempotency_key is not None:
            goods_store.purge_expired_keys(db, now)
            seen = goods_store.find_key(db, KEY_SCOPE, caller.user_id, caller.app_id, idempotency_key)
            if seen is not None:
                if seen["fingerprint"] != fingerprint:
                    journal.note_reason(_key_conflict(idempotency_key, seen, fingerprint))
                    return 422, {"error": "This idempotency key was already used for a different purchase"}
                return int(seen["status"]), orjson.loads(seen["answer"])
        db.execute("SAVEPOINT purchase")
        try:
            assert found is not None
            status, answer = 200, _buy(db, now_dt, caller, found[0], good_id, found[1], expected_price)
        except ServiceError as exc:
            db.execute("ROLLBACK TO purchase")  # a refusal leaves nothing behind (e.g. accounts it opened)
            status, answer = refusal(exc)
        db.execute("RELEASE purchase")
        if idempotency_key is not None:
            expires = format_timestamp(now_dt + timedelta(seconds=IDEMPOTENCY_TTL_SECONDS))
            goods_store.store_key(db, KEY_SCOPE, caller.user_id, caller.app_id, idempotency_key, fingerprint,
                                  status, orjson.dumps(answer).decode(), now, expires)
    return status, answer


def entitlements(store: Store, clock: Clock, user_id: int, app_id: str | None = None) -> dict[str, Any]:
    """What the viewer owns from the app (refunded goods left out): ``{"entitlements": [...]}``."""
    with store.read() as db:
        rows = goods_store.for_user(db, user_id, app_id, include_refunded=False)
    return {"entitlements": [_entitlement(r) for r in rows]}


def ledger(store: Store, user_id: int, app_id: str | None = None) -> list[dict[str, Any]]:
    with store.read() as db:
        return [_ledger_row(r) for r in goods_store.for_user(db, user_id, app_id, include_refunded=True)]


def refund(store: Store, clock: Clock, purchase_id: str) -> dict[str, Any]:
    now = clock.iso()
    with store.write() as db:
        row = goods_store.find(db, purchase_id)
        if row is None:
            raise not_found(f"no purchase {purchase_id}")
        if row["refund_state"] == "refunded":
            raise ServiceError(409, "already_refunded", "this purchase was refunded already")
        buzz.refund(db, now, row["user_id"], orjson.loads(row["debits"]), reference=purchase_id,
                    description="good refunded")
        if row["owner_user_id"] is not None:
            held = buzz_store.balances(db, row["owner_user_id"])
            for pool, amount in owner_legs(row["owner_amount"], row["price"], orjson.loads(row["debits"])).items():
                back = min(held[pool], amount)
                if back:
                    buzz_store.move(db, row["owner_user_id"], pool, -back, "good_refund", purchase_id,
                                    "sale refunded", now)
        goods_store.mark_refunded(db, purchase_id, now)
        row = goods_store.find(db, purchase_id)
    assert row is not None
    return _ledger_row(row)


def _key_conflict(key: str, seen: dict[str, Any], fingerprint: str) -> str:
    """The request journal's words for a reused idempotency key (the purchase it named, and this one)."""

    def purchase(raw: str) -> str:
        try:
            _app, good, price, expected = orjson.loads(raw)
        except (orjson.JSONDecodeError, ValueError, TypeError):
            return "another purchase"
        said = "no expectedPriceBuzz" if expected is None else f"expectedPriceBuzz {orjson.dumps(expected).decode()}"
        return f"good {orjson.dumps(good).decode()} at {price} Buzz ({said})"

    return (f"idempotency key {key!r} was first used at {seen['created_at']} for {purchase(seen['fingerprint'])};"
            f" this request is for {purchase(fingerprint)}. A key names one purchase until it expires at"
            f" {seen['expires_at']}: send a new key for a different purchase")

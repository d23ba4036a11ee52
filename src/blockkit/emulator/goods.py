"""Goods: purchases from a manifest's catalogue, the sales ledger, entitlements, refunds.

Python API (``blockkit dev`` calls these in-process):

- ``GoodsCaller(user_id, app_id, block_id, scopes)`` (``GoodsCaller.from_claims(claims)``);
- ``purchase_good(store, clock, caller, manifest_goods, good_id, *, owner_user_id=None) -> Purchase``;
- ``entitlements(store, clock, user_id, app_id=None) -> {"items": [Entitlement]}``;
- ``ledger(store, user_id, app_id=None) -> [LedgerRow]`` (refunded rows too);
- ``refund(store, clock, purchase_id) -> LedgerRow`` (an emulator control: the buyer gets the price back).

Rules (spec goods rules 1-6): only a good of the manifest's catalogue can be sold, at its
``priceBuzz`` (the caller never names a price); the purchase needs ``goods:purchase:self``
and a signed-in viewer; a viewer's goods purchases across every app are capped per UTC day of
the emulator clock (``DAILY_CEILING``; 429 ``daily_ceiling``); the price is paid from the
viewer's pools (blue, then yellow, then green), split 30/70 (the platform's 30 percent rounded
down, the owner gets the rest), recorded on the ledger row; the owner's share is credited at once to the
owner's yellow pool when ``owner_user_id`` is known; the entitlement carries the good's
``payload`` verbatim and never its ``justification``; an ``app_unlock`` is recorded like any
good and gates nothing. A refund flips ``refundState`` to ``refunded``, returns the buyer's
Buzz, takes the owner's share back (as far as it is still there) and drops the entitlement.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

import orjson

from blockkit.emulator import buzz
from blockkit.emulator.clock import format_timestamp
from blockkit.emulator.orchestration.errors import ServiceError, bad_request, not_found
from blockkit.emulator.store import buzz as buzz_store
from blockkit.emulator.store import goods as goods_store

if TYPE_CHECKING:
    from blockkit.emulator.clock import Clock
    from blockkit.emulator.store import Store

PURCHASE_SCOPE = "goods:purchase:self"
READ_SCOPE = "goods:read:self"
DAILY_CEILING = 10_000          # Buzz per viewer per UTC day across all apps (our decision)
PLATFORM_PERCENT = 30
GOODS_POOLS = ("blue", "yellow", "green")


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
    """(platform, owner): 30 percent to the platform (rounded down), the rest to the owner."""
    platform = price * PLATFORM_PERCENT // 100
    return platform, price - platform


def _day(now: datetime) -> tuple[str, str]:
    start = now.astimezone(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    return format_timestamp(start), format_timestamp(start + timedelta(days=1))


def _good(manifest_goods: object, good_id: object) -> dict[str, Any]:
    if not isinstance(manifest_goods, list):
        raise bad_request("no_catalogue", "the block's manifest declares no goods")
    for good in manifest_goods:
        if isinstance(good, dict) and good.get("id") == good_id:
            price = good.get("priceBuzz")
            if isinstance(price, bool) or not isinstance(price, int) or price < 1:
                raise bad_request("bad_good", f"good {good_id!r} has no valid priceBuzz")
            return good
    raise not_found(f"good {good_id!r} is not in the manifest's catalogue")


def _ledger_row(row: dict[str, Any]) -> dict[str, Any]:
    return {"id": row["id"], "userId": row["user_id"], "appId": row["app_id"], "blockId": row["block_id"],
            "goodId": row["good_id"], "kind": row["kind"], "title": row["title"], "priceBuzz": row["price"],
            "platformAmount": row["platform_amount"], "ownerAmount": row["owner_amount"],
            "debits": orjson.loads(row["debits"]), "purchasedAt": row["created_at"],
            "refundState": row["refund_state"], "refundedAt": row["refunded_at"]}


def _entitlement(row: dict[str, Any]) -> dict[str, Any]:
    return {"id": row["id"], "goodId": row["good_id"], "kind": row["kind"], "title": row["title"],
            "priceBuzz": row["price"], "payload": orjson.loads(row["payload"]) if row["payload"] else None,
            "appId": row["app_id"], "blockId": row["block_id"], "purchasedAt": row["created_at"]}


def purchase_good(store: Store, clock: Clock, caller: GoodsCaller, manifest_goods: object, good_id: object, *,
                  owner_user_id: int | None = None) -> dict[str, Any]:
    if caller.user_id is None:
        raise ServiceError(401, "sign_in_required", "buying a good needs a signed-in viewer")
    if PURCHASE_SCOPE not in caller.scopes:
        raise ServiceError(403, "missing_scope", f"buying a good needs the {PURCHASE_SCOPE} scope")
    good = _good(manifest_goods, good_id)
    price = int(good["priceBuzz"])
    now_dt = clock.now()
    now = format_timestamp(now_dt)
    platform, owner = split(price)
    purchase_id = str(uuid.uuid4())
    with store.write() as db:
        start, end = _day(now_dt)
        spent = goods_store.spent_between(db, caller.user_id, start, end)
        if spent + price > DAILY_CEILING:
            raise ServiceError(429, "daily_ceiling", f"the viewer's daily goods ceiling is {DAILY_CEILING} Buzz"
                                                     f" across all apps; {spent} spent today (UTC), this costs {price}")
        debits = buzz.charge(db, now, caller.user_id, price, GOODS_POOLS, kind="good", reference=purchase_id,
                             description=f"{caller.app_id}: {good.get('title', good['id'])}")
        if owner_user_id is not None:
            buzz.open_accounts(db, owner_user_id, now)
            buzz_store.move(db, owner_user_id, "yellow", owner, "good_sale", purchase_id,
                            f"sale of {good['id']} (70%)", now)
        row = {"id": purchase_id, "user_id": caller.user_id, "app_id": caller.app_id, "block_id": caller.block_id,
               "good_id": good["id"], "kind": good.get("kind") or "good", "title": good.get("title") or good["id"],
               "price": price, "platform_amount": platform, "owner_amount": owner, "owner_user_id": owner_user_id,
               "payload": orjson.dumps(good["payload"]).decode() if "payload" in good else None,
               "debits": orjson.dumps(debits).decode(), "created_at": now, "refund_state": "none",
               "refunded_at": None}
        goods_store.insert(db, row)
    return {"purchase": _ledger_row(row), "entitlement": _entitlement(row)}


def entitlements(store: Store, clock: Clock, user_id: int, app_id: str | None = None) -> dict[str, Any]:
    with store.read() as db:
        rows = goods_store.for_user(db, user_id, app_id, include_refunded=False)
    return {"items": [_entitlement(r) for r in rows]}


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
            held = buzz_store.balances(db, row["owner_user_id"])["yellow"]
            back = min(held, row["owner_amount"])
            if back:
                buzz_store.move(db, row["owner_user_id"], "yellow", -back, "good_refund", purchase_id,
                                "sale refunded", now)
        goods_store.mark_refunded(db, purchase_id, now)
        row = goods_store.find(db, purchase_id)
    assert row is not None
    return _ledger_row(row)

"""Buzz: per-user pools (blue bought, green earned, yellow creator program), charges and a ledger.

Python API (``blockkit dev`` calls these in-process; every function takes the store and the clock):

- ``balance(store, clock, user_id) -> {"blue", "green", "yellow"}`` (GET_BUZZ_BALANCE);
- ``purchase(store, clock, user_id, amount, pool="blue") -> balance`` (what OPEN_BUZZ_PURCHASE confirms);
- ``transactions(store, clock, user_id, limit=50, cursor=None) -> {"items", "nextCursor"}``;
- ``charge(db, now, user_id, amount, order, ...) -> {pool: amount}`` and ``refund(...)``: used by
  workflows and goods inside their own write transaction;
- ``set_aside(store, clock, user_id)`` and ``give_back(store, clock)``: empty a viewer's pools for a
  while (``blockkit dev --scenario insufficient-buzz``) and return what was set aside; both are
  ledger entries (kind ``adjustment``), and what is set aside is remembered in the store, so a run
  that dies gives it back at the next ``give_back``.

Pools open lazily with a deterministic balance derived from the user's tier (``OPENING``), so
every seeded user has Buzz without the seed knowing about it. ``pool_order`` applies the
accountType preference and the maturity clamp.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from blockkit.emulator.services.errors import ServiceError, bad_request
from blockkit.emulator.store import buzz as buzz_store
from blockkit.emulator.store import meta
from blockkit.emulator.store.buzz import POOLS

if TYPE_CHECKING:
    from blockkit.emulator.store.clock import Clock
    from blockkit.emulator.store import Store

# Opening balances by tier (our decision: enough to try every feature; members hold yellow).
OPENING: dict[str, dict[str, int]] = {
    "free": {"blue": 500, "green": 200, "yellow": 0},
    "founder": {"blue": 5000, "green": 1000, "yellow": 2000},
    "bronze": {"blue": 2000, "green": 500, "yellow": 500},
    "silver": {"blue": 5000, "green": 1000, "yellow": 1000},
    "gold": {"blue": 10000, "green": 2000, "yellow": 3000},
}
MAX_PURCHASE = 1_000_000
# The maturity clamp (our reading of PLATFORM.md section 8): green pays safe-for-work work only,
# yellow is the mature currency; blue pays both. Automatic order, first choice first.
SFW_POOLS = ("green", "blue")
MATURE_POOLS = ("yellow", "blue")


def open_accounts(db: sqlite3.Connection, user_id: int, now: str) -> None:
    found = buzz_store.user_tier(db, user_id)
    if found is None:
        raise ServiceError(404, "no_user", f"user {user_id} does not exist")
    buzz_store.ensure_accounts(db, user_id, OPENING.get(found[0], OPENING["free"]), now)


def balance(store: Store, clock: Clock, user_id: int) -> dict[str, int]:
    with store.write() as db:
        open_accounts(db, user_id, clock.iso())
        return buzz_store.balances(db, user_id)


SET_ASIDE_PREFIX = "buzz.set_aside."


def set_aside(store: Store, clock: Clock, user_id: int) -> dict[str, int]:
    """Move every pool of ``user_id`` to 0 and remember what was moved; the pools as they were."""
    now = clock.iso()
    with store.write() as db:
        open_accounts(db, user_id, now)
        held = buzz_store.balances(db, user_id)
        key = f"{SET_ASIDE_PREFIX}{int(user_id)}"
        kept = meta.get(db, key) or {}
        for pool, amount in held.items():
            if amount:
                buzz_store.move(db, user_id, pool, -amount, "adjustment", None, "set aside (insufficient-buzz)", now)
                kept[pool] = int(kept.get(pool, 0)) + amount
        meta.put(db, key, kept)
    return held


def give_back(store: Store, clock: Clock) -> int:
    """Return everything :func:`set_aside` moved, for every user; how many users got theirs back."""
    now = clock.iso()
    with store.write() as db:
        keys = [r[0] for r in db.execute("SELECT key FROM meta WHERE key LIKE 'buzz.set_aside.%'")]
        for key in keys:
            user_id = int(key[len(SET_ASIDE_PREFIX):])
            for pool, amount in (meta.get(db, key) or {}).items():
                if pool in POOLS and isinstance(amount, int) and amount > 0:
                    buzz_store.move(db, user_id, pool, amount, "adjustment", None, "given back (insufficient-buzz)",
                                    now)
            db.execute("DELETE FROM meta WHERE key = ?", (key,))
    return len(keys)


def purchase(store: Store, clock: Clock, user_id: int, amount: int, pool: str = "blue") -> dict[str, int]:
    """Credit bought Buzz (the emulator's stand-in for checkout) and return the new balance."""
    if isinstance(amount, bool) or not isinstance(amount, int) or not 1 <= amount <= MAX_PURCHASE:
        raise bad_request("bad_amount", f"amount must be a whole number of Buzz from 1 to {MAX_PURCHASE}")
    if pool not in POOLS:
        raise bad_request("bad_pool", f"pool must be one of {', '.join(POOLS)}")
    now = clock.iso()
    with store.write() as db:
        open_accounts(db, user_id, now)
        buzz_store.move(db, user_id, pool, amount, "purchase", None, "Buzz purchase (emulated checkout)", now)
        return buzz_store.balances(db, user_id)


def transactions(store: Store, clock: Clock, user_id: int, limit: int = 50,
                 cursor: int | None = None, *, pool: str | None = None) -> dict[str, Any]:
    """The viewer's ledger, newest first; ``pool`` keeps one pool's rows (all pools when None)."""
    limit = max(1, min(int(limit), 200))
    with store.write() as db:
        open_accounts(db, user_id, clock.iso())
        rows = buzz_store.transactions(db, user_id, limit + 1, cursor, pool)
    items = [{"id": r["id"], "accountType": r["pool"], "amount": r["amount"],
              "type": "credit" if r["amount"] > 0 else "debit", "kind": r["kind"], "reference": r["reference"],
              "description": r["description"], "date": r["created_at"]} for r in rows[:limit]]
    return {"items": items, "nextCursor": rows[limit - 1]["id"] if len(rows) > limit else None}


def pool_order(account_type: object, *, mature: bool) -> tuple[str, ...]:
    """The pools to draw from, in order: the preference first (when the clamp allows it), then automatic.

    A value outside blue/green/yellow is refused (400); a preference the clamp forbids (yellow for
    safe-for-work work, green for mature work) is not widened to: it is dropped.
    """
    allowed = MATURE_POOLS if mature else SFW_POOLS
    if account_type is None:
        return allowed
    if not isinstance(account_type, str) or account_type not in POOLS:
        raise bad_request("bad_account_type", "accountType must be one of blue, green, yellow (or absent)")
    if account_type not in allowed:
        return allowed
    return (account_type, *(p for p in allowed if p != account_type))


def charge(db: sqlite3.Connection, now: str, user_id: int, amount: int, order: tuple[str, ...], *, kind: str,
           reference: str | None, description: str | None) -> dict[str, int]:
    """Debit ``amount`` across ``order`` (first pool first); {pool: debited}. 403 when short.

    Short of Buzz is a 403, as the orchestration service answers it: the platform's client maps
    the orchestrator's 403 to its "not enough funds" error (civitai/civitai
    ``src/server/services/orchestrator/workflows.ts``, ``throwInsufficientFundsError``). There is
    no 402 anywhere on that path. Over HTTP the body is a JSON string, the type @civitai/client's
    OpenAPI gives SubmitWorkflow's (and CreateFund's) 403.
    """
    open_accounts(db, user_id, now)
    if amount <= 0:
        return {}
    held = buzz_store.balances(db, user_id)
    available = sum(held[p] for p in order)
    if available < amount:
        from blockkit.emulator import journal

        pools = ", ".join(f"{pool} {held[pool]}" for pool in order)
        others = [p for p in held if p not in order]
        journal.note_reason(f"the price is {amount} Buzz and user {user_id}'s pools it may use hold {available}"
                            f" ({pools}); short by {amount - available}"
                            + (f" (not usable here: {', '.join(f'{p} {held[p]}' for p in others)})" if others else ""))
        raise ServiceError(403, "insufficient_buzz", f"this costs {amount} Buzz and the viewer holds {available}"
                                                     f" in the pools it may use ({', '.join(order)})", plain=True)
    debits: dict[str, int] = {}
    left = amount
    for pool in order:
        take = min(left, held[pool])
        if take:
            buzz_store.move(db, user_id, pool, -take, kind, reference, description, now)
            debits[pool] = take
            left -= take
        if not left:
            break
    return debits


def refund(db: sqlite3.Connection, now: str, user_id: int, debits: dict[str, int], *, reference: str | None,
           description: str) -> None:
    for pool, amount in debits.items():
        if amount:
            buzz_store.move(db, user_id, pool, amount, "refund", reference, description, now)


def largest_debit(debits: dict[str, int]) -> str | None:
    """spentAccountType: the pool of the largest debit (ties: the first drawn)."""
    best = None
    for pool, amount in debits.items():
        if best is None or amount > debits[best]:
            best = pool
    return best


def daily_compensation(store: Store, clock: Clock, user_id: int) -> dict[str, Any]:
    """GET_DAILY_COMPENSATION's answer (unwrapped): ``{resources, hasPublishedResources, goodsSales}``.

    The platform's per-model-version generation earnings; the emulator pays no generation compensation,
    so ``resources`` is always empty. ``hasPublishedResources``: the viewer owns a published model
    version. ``goodsSales`` is ours: today's (UTC, emulator clock) owner shares of goods sold.
    """
    day = clock.now().strftime("%Y-%m-%d")
    with store.read() as db:
        row = db.execute("SELECT coalesce(sum(owner_amount), 0), count(*) FROM goods_purchases WHERE owner_user_id = ?"
                         " AND refund_state = 'none' AND substr(created_at, 1, 10) = ?", (user_id, day)).fetchone()
        published = db.execute("SELECT 1 FROM model_versions v JOIN models m ON m.id = v.model_id WHERE m.user_id = ?"
                               " AND v.status = 'Published' LIMIT 1", (user_id,)).fetchone() is not None
    return {"resources": [], "hasPublishedResources": published,
            "goodsSales": {"date": day, "accountType": "yellow", "amount": int(row[0]), "sales": int(row[1])}}

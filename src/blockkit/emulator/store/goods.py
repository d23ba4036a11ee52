"""Goods purchases: the sales ledger and entitlements. SQL only; rules in ``emulator/services/goods.py``."""

from __future__ import annotations

import sqlite3
from typing import Any

COLUMNS = ("id, user_id, app_id, block_id, good_id, kind, title, price, platform_amount, owner_amount, owner_user_id,"
           " payload, debits, created_at, refund_state, refunded_at")


def insert(db: sqlite3.Connection, row: dict[str, Any]) -> None:
    names = [c.strip() for c in COLUMNS.split(",")]
    db.execute(f"INSERT INTO goods_purchases ({COLUMNS}) VALUES ({', '.join('?' * len(names))})",
               [row[n] for n in names])


def find(db: sqlite3.Connection, purchase_id: str) -> dict[str, Any] | None:
    row = db.execute(f"SELECT {COLUMNS} FROM goods_purchases WHERE id = ?", (purchase_id,)).fetchone()
    return None if row is None else dict(row)


def spent_between(db: sqlite3.Connection, user_id: int, start: str, end: str) -> int:
    """Buzz the user spent on goods (not refunded) in [start, end), across every app."""
    row = db.execute("SELECT coalesce(sum(price), 0) FROM goods_purchases WHERE user_id = ? AND refund_state = 'none'"
                     " AND created_at >= ? AND created_at < ?", (user_id, start, end)).fetchone()
    return int(row[0])


def owns(db: sqlite3.Connection, user_id: int, app_id: str, good_id: str) -> bool:
    """Whether the user holds an unrefunded purchase of the good from the app (a good is owned once)."""
    return db.execute("SELECT 1 FROM goods_purchases WHERE user_id = ? AND app_id = ? AND good_id = ?"
                      " AND refund_state = 'none' LIMIT 1", (user_id, app_id, good_id)).fetchone() is not None


def for_user(db: sqlite3.Connection, user_id: int, app_id: str | None, include_refunded: bool) -> list[dict[str, Any]]:
    rows = db.execute(f"SELECT {COLUMNS} FROM goods_purchases WHERE user_id = ? AND (? IS NULL OR app_id = ?)"
                      " AND (? OR refund_state = 'none') ORDER BY created_at, id",
                      (user_id, app_id, app_id, int(include_refunded)))
    return [dict(r) for r in rows]


def mark_refunded(db: sqlite3.Connection, purchase_id: str, now: str) -> None:
    db.execute("UPDATE goods_purchases SET refund_state = 'refunded', refunded_at = ? WHERE id = ?", (now, purchase_id))


# --- idempotency keys (the table idempotency_keys) ------------------------------------------------

def purge_expired_keys(db: sqlite3.Connection, now: str) -> int:
    """Free every key whose expiry has passed; the number freed."""
    return db.execute("DELETE FROM idempotency_keys WHERE expires_at <= ?", (now,)).rowcount


def find_key(db: sqlite3.Connection, scope: str, user_id: int, app_id: str, key: str) -> dict[str, Any] | None:
    row = db.execute("SELECT fingerprint, status, answer, created_at, expires_at FROM idempotency_keys"
                     " WHERE scope = ? AND user_id = ? AND app_id = ? AND key = ?",
                     (scope, user_id, app_id, key)).fetchone()
    return None if row is None else dict(row)


def store_key(db: sqlite3.Connection, scope: str, user_id: int, app_id: str, key: str, fingerprint: str,
              status: int, answer: str, now: str, expires_at: str) -> None:
    """Record a key's first answer. A plain INSERT: a second answer for a live key breaks the primary key
    (never an overwrite)."""
    db.execute("INSERT INTO idempotency_keys (scope, user_id, app_id, key, fingerprint, status, answer, created_at,"
               " expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
               (scope, user_id, app_id, key, fingerprint, status, answer, now, expires_at))

"""Buzz pools and their ledger. SQL only; the rules are in ``emulator/services/buzz.py``."""

from __future__ import annotations

import sqlite3
from typing import Any

POOLS = ("blue", "green", "yellow")


def ensure_accounts(db: sqlite3.Connection, user_id: int, defaults: dict[str, int], now: str) -> None:
    """Open the user's three pools with ``defaults`` the first time they are touched (and log the opening)."""
    for pool in POOLS:
        cursor = db.execute("INSERT OR IGNORE INTO buzz_accounts (user_id, pool, balance) VALUES (?, ?, ?)",
                            (user_id, pool, defaults.get(pool, 0)))
        if cursor.rowcount and defaults.get(pool, 0):
            db.execute("INSERT INTO buzz_transactions (user_id, pool, amount, kind, description, created_at)"
                       " VALUES (?, ?, ?, 'seed', 'opening balance', ?)", (user_id, pool, defaults[pool], now))


def balances(db: sqlite3.Connection, user_id: int) -> dict[str, int]:
    found = {r[0]: int(r[1]) for r in db.execute("SELECT pool, balance FROM buzz_accounts WHERE user_id = ?",
                                                 (user_id,))}
    return {pool: found.get(pool, 0) for pool in POOLS}


def move(db: sqlite3.Connection, user_id: int, pool: str, amount: int, kind: str, reference: str | None,
         description: str | None, now: str) -> None:
    """Add ``amount`` (negative: a debit) to a pool and log it; the CHECK refuses a negative balance."""
    db.execute("UPDATE buzz_accounts SET balance = balance + ? WHERE user_id = ? AND pool = ?", (amount, user_id, pool))
    db.execute("INSERT INTO buzz_transactions (user_id, pool, amount, kind, reference, description, created_at)"
               " VALUES (?, ?, ?, ?, ?, ?, ?)", (user_id, pool, amount, kind, reference, description, now))


def transactions(db: sqlite3.Connection, user_id: int, limit: int, before_id: int | None,
                 pool: str | None = None) -> list[dict[str, Any]]:
    rows = db.execute("SELECT id, pool, amount, kind, reference, description, created_at FROM buzz_transactions"
                      " WHERE user_id = ? AND (? IS NULL OR id < ?) AND (? IS NULL OR pool = ?)"
                      " ORDER BY id DESC LIMIT ?",
                      (user_id, before_id, before_id, pool, pool, limit))
    return [dict(r) for r in rows]


def user_tier(db: sqlite3.Connection, user_id: int) -> tuple[str, bool] | None:
    """(tier, has an active membership) of a user, or None when no such user."""
    row = db.execute("SELECT tier, EXISTS (SELECT 1 FROM subscriptions s WHERE s.user_id = u.id AND"
                     " s.status = 'active') FROM users u WHERE id = ? AND deleted_at IS NULL", (user_id,)).fetchone()
    return None if row is None else (str(row[0]), bool(row[1]))


def first_unbalanced(db: sqlite3.Connection) -> tuple[int, str, int, int] | None:
    """(user_id, pool, balance, ledger total) of the first pool whose balance is not the sum of its
    ledger entries (a pool with entries but no account counts as a balance of 0), or None: the books
    add up."""
    row = db.execute(
        "WITH ledger AS (SELECT user_id, pool, SUM(amount) AS total FROM buzz_transactions GROUP BY user_id, pool)"
        " SELECT a.user_id, a.pool, a.balance, COALESCE(l.total, 0) FROM buzz_accounts a"
        " LEFT JOIN ledger l ON l.user_id = a.user_id AND l.pool = a.pool"
        " WHERE a.balance != COALESCE(l.total, 0)"
        " UNION ALL SELECT l.user_id, l.pool, 0, l.total FROM ledger l"
        " WHERE l.total != 0 AND NOT EXISTS (SELECT 1 FROM buzz_accounts a WHERE a.user_id = l.user_id"
        " AND a.pool = l.pool) ORDER BY 1, 2 LIMIT 1").fetchone()
    return None if row is None else (int(row[0]), str(row[1]), int(row[2]), int(row[3]))

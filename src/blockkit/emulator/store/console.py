"""Queries the web console reads (``http/console``): what the platform holds, in the shapes its pages show.

SQL only, as every store module; the console's writes go through the services.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from blockkit.emulator.store.buzz import POOLS


_USERS = ("SELECT u.id, u.username, u.tier, u.status, u.is_moderator, u.deleted_at IS NOT NULL AS deleted,"
          " COALESCE(SUM(CASE a.pool WHEN 'blue' THEN a.balance END), 0) AS blue,"
          " COALESCE(SUM(CASE a.pool WHEN 'green' THEN a.balance END), 0) AS green,"
          " COALESCE(SUM(CASE a.pool WHEN 'yellow' THEN a.balance END), 0) AS yellow,"
          " COUNT(a.pool) AS opened"
          " FROM users u LEFT JOIN buzz_accounts a ON a.user_id = u.id")


def users_with_pools(db: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every user, by id, with the three pool balances (0 for a pool never opened)."""
    return [dict(row) for row in db.execute(_USERS + " GROUP BY u.id ORDER BY u.id")]


def user_with_pools(db: sqlite3.Connection, user_id: int) -> dict[str, Any] | None:
    row = db.execute(_USERS + " WHERE u.id = ? GROUP BY u.id", (user_id,)).fetchone()
    return None if row is None else dict(row)


def ledger(db: sqlite3.Connection, user_id: int, limit: int = 200) -> list[dict[str, Any]]:
    """The user's ledger entries, newest first, each with what its reference names (a workflow, a purchase)."""
    rows = db.execute(
        "SELECT t.id, t.pool, t.amount, t.kind, t.reference, t.description, t.created_at,"
        " EXISTS (SELECT 1 FROM workflows w WHERE w.id = t.reference) AS is_workflow,"
        " EXISTS (SELECT 1 FROM goods_purchases g WHERE g.id = t.reference) AS is_purchase,"
        " EXISTS (SELECT 1 FROM recipe_jobs j WHERE j.id = t.reference) AS is_job"
        " FROM buzz_transactions t WHERE t.user_id = ? ORDER BY t.id DESC LIMIT ?", (user_id, limit))
    return [dict(row) for row in rows]


def crossings(db: sqlite3.Connection, start: str, end: str, limit: int = 50) -> dict[str, list[dict[str, Any]]]:
    """What moving the clock from ``start`` to ``end`` (stored timestamps) passes: early-access ends
    of model versions and expiries of live access tokens, each soonest first."""
    early = db.execute(
        "SELECT v.id, v.name, m.id AS model_id, m.name AS model_name, v.early_access_ends_at AS at"
        " FROM model_versions v JOIN models m ON m.id = v.model_id"
        " WHERE v.early_access_ends_at > ? AND v.early_access_ends_at <= ?"
        " ORDER BY v.early_access_ends_at, v.id LIMIT ?", (start, end, limit))
    tokens = db.execute(
        "SELECT t.id, t.client_id, u.username, t.expires_at AS at FROM oauth_access_tokens t"
        " JOIN users u ON u.id = t.user_id WHERE t.revoked_at IS NULL AND t.expires_at > ? AND t.expires_at <= ?"
        " ORDER BY t.expires_at, t.id LIMIT ?", (start, end, limit))
    return {"early_access": [dict(row) for row in early], "tokens": [dict(row) for row in tokens]}


def counts(db: sqlite3.Connection) -> dict[str, int]:
    """How many of each main kind of row the platform holds (the overview's summary)."""
    tables = {"users": "users", "models": "models", "images": "images", "oauth clients": "oauth_clients",
              "workflows": "workflows", "purchases": "goods_purchases", "ledger entries": "buzz_transactions"}
    return {label: int(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])  # noqa: S608 - fixed names
            for label, table in tables.items()}


__all__ = ["POOLS", "counts", "crossings", "ledger", "user_with_pools", "users_with_pools"]

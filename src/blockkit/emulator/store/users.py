"""Queries about users. Each function takes the connection (``store.read()``/``write()``)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class UserSummary:
    id: int
    username: str
    tier: str
    status: str
    is_moderator: bool
    deleted: bool


def list_users(db: sqlite3.Connection) -> list[UserSummary]:
    """Every user (deleted ones and the system user too), by id."""
    rows = db.execute(
        "SELECT id, username, tier, status, is_moderator, deleted_at IS NOT NULL FROM users ORDER BY id")
    return [UserSummary(r[0], r[1], r[2], r[3], bool(r[4]), bool(r[5])) for r in rows]


def find_by_username(db: sqlite3.Connection, username: str) -> UserSummary | None:
    r = db.execute("SELECT id, username, tier, status, is_moderator, deleted_at IS NOT NULL FROM users"
                   " WHERE username = ?", (username,)).fetchone()
    return None if r is None else UserSummary(r[0], r[1], r[2], r[3], bool(r[4]), bool(r[5]))

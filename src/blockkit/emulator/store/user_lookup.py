"""Queries for GET /users: lookups by id and by username prefix.

Deleted users and the system user (id -1) never come out of these.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

_LISTED = "deleted_at IS NULL AND id > 0"


@dataclass(frozen=True, slots=True)
class LookupRow:
    id: int
    username: str
    avatar_nsfw: str
    avatar_url: str | None


def _prefix(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def lookup(db: sqlite3.Connection, *, ids: Sequence[int] | None, prefix: str | None, limit: int) -> list[LookupRow]:
    """Up to ``limit`` listed users: with ``prefix``, shortest usernames first; else by id."""
    where = [_LISTED]
    params: list[object] = []
    if ids is not None:
        where.append("id IN (SELECT value FROM json_each(?))")
        params.append(json.dumps(list(ids)))
    if prefix is not None:
        where.append("username LIKE ? ESCAPE '\\'")
        params.append(_prefix(prefix))
        order = "length(username), username COLLATE NOCASE, id"
    else:
        order = "id"
    rows = db.execute(f"SELECT id, username, avatar_nsfw, image FROM users WHERE {' AND '.join(where)}"
                      f" ORDER BY {order} LIMIT ?", [*params, limit])
    return [LookupRow(r[0], r[1], r[2], r[3]) for r in rows]

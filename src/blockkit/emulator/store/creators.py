"""Queries for GET /creators: users with at least one published model, by username."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

_FROM = (" FROM models m JOIN users u ON u.id = m.user_id"
         " WHERE m.status = 'Published' AND u.deleted_at IS NULL")


@dataclass(frozen=True, slots=True)
class CreatorRow:
    username: str
    image: str | None
    model_count: int


def _like(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _filter(query: str | None) -> tuple[str, list[Any]]:
    if not query:
        return "", []
    return " AND u.username LIKE ? ESCAPE '\\'", [_like(query)]


def list_creators(db: sqlite3.Connection, *, query: str | None, limit: int, offset: int) -> list[CreatorRow]:
    """Creators in username order (case-insensitive, then id), with their published model count."""
    extra, params = _filter(query)
    rows = db.execute(f"SELECT u.username, u.image, count(*){_FROM}{extra}"
                      " GROUP BY u.id ORDER BY u.username COLLATE NOCASE, u.id LIMIT ? OFFSET ?",
                      [*params, limit, offset])
    return [CreatorRow(r[0], r[1], r[2]) for r in rows]


def count_creators(db: sqlite3.Connection, *, query: str | None) -> int:
    extra, params = _filter(query)
    return int(db.execute(f"SELECT count(DISTINCT u.id){_FROM}{extra}", params).fetchone()[0])

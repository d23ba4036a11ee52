"""Queries for /collections and /collections/{id}."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class CollectionRow:
    id: int
    name: str
    description: str | None
    type: str
    nsfw_level: int
    read: str
    user_id: int
    username: str
    cover_url: str | None
    cover_level: int | None
    cover_scanned: bool


_SELECT = ("SELECT c.id, c.name, c.description, c.type, c.nsfw_level, c.read, u.id, u.username,"
           " i.url, i.nsfw_level, i.scanned_at IS NOT NULL"
           " FROM collections c JOIN users u ON u.id = c.user_id LEFT JOIN images i ON i.id = c.cover_image_id")


def _like(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def list_collections(db: sqlite3.Connection, *, sort: str, level: int, limit: int, start_id: int | None = None,
                     query: str | None = None) -> list[CollectionRow]:
    """Public collections rated within ``level``: Newest (id descending, from ``start_id`` down) or Most Followers."""
    where = ["c.read = 'Public'", "(c.nsfw_level & ~:level) = 0"]
    params: dict[str, Any] = {"level": level, "limit": limit}
    if query:
        where.append("c.name LIKE :query ESCAPE '\\'")
        params["query"] = _like(query)
    if start_id is not None:
        where.append("c.id <= :start")
        params["start"] = start_id
    order = "c.id DESC" if sort == "Newest" else "c.follower_count DESC, c.id DESC"
    sql = f"{_SELECT} WHERE {' AND '.join(where)} ORDER BY {order} LIMIT :limit"
    return [CollectionRow(*row[:10], bool(row[10])) for row in db.execute(sql, params)]


def get_collection(db: sqlite3.Connection, collection_id: int) -> CollectionRow | None:
    row = db.execute(f"{_SELECT} WHERE c.id = ?", (collection_id,)).fetchone()
    return None if row is None else CollectionRow(*row[:10], bool(row[10]))


def accepted_counts(db: sqlite3.Connection, ids: Sequence[int]) -> dict[int, int]:
    if not ids:
        return {}
    marks = ", ".join("?" * len(ids))
    return {r[0]: r[1] for r in db.execute(
        f"SELECT collection_id, count(*) FROM collection_items WHERE status = 'ACCEPTED'"
        f" AND collection_id IN ({marks}) GROUP BY collection_id", list(ids))}


def collection_tags(db: sqlite3.Connection, collection_id: int) -> list[tuple[int, str]]:
    return [(r[0], r[1]) for r in db.execute(
        "SELECT t.id, t.name FROM collection_tags ct JOIN tags t ON t.id = ct.tag_id WHERE ct.collection_id = ?"
        " ORDER BY t.id", (collection_id,))]

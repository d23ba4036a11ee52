"""Queries for GET /tags: model tags, most used first."""

from __future__ import annotations

import sqlite3
from typing import Any


def _like(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def list_model_tags(db: sqlite3.Connection, *, query: str | None, limit: int, offset: int) -> list[str]:
    """Model tag names by the number of published models carrying them, then by name."""
    where = "t.kind = 'model'"
    params: list[Any] = []
    if query:
        where += " AND t.name LIKE ? ESCAPE '\\'"
        params.append(_like(query))
    rows = db.execute(
        "SELECT t.name FROM tags t LEFT JOIN model_tags mt ON mt.tag_id = t.id"
        " LEFT JOIN models m ON m.id = mt.model_id AND m.status = 'Published'"
        f" WHERE {where} GROUP BY t.id ORDER BY count(m.id) DESC, t.name COLLATE NOCASE, t.id LIMIT ? OFFSET ?",
        [*params, limit, offset])
    return [r[0] for r in rows]

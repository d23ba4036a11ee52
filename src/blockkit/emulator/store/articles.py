"""Queries for /articles and /articles/{id}."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# Sort -> the column it orders by (descending, then id descending).
SORT_COLUMNS: dict[str, str] = {
    "Newest": "a.published_at",
    "Recently Updated": "a.updated_at",
    "Most Reactions": "a.reaction_count",
    "Most Comments": "a.comment_count",
    "Most Bookmarks": "a.favorite_count",
    "Most Collected": "a.collected_count",
}
DATE_SORTS = frozenset({"Newest", "Recently Updated"})


@dataclass(frozen=True, slots=True)
class ArticleRow:
    id: int
    title: str
    published_at: str | None
    created_at: str
    updated_at: str
    nsfw_level: int
    availability: str
    status: str
    scanned: bool
    favorite_count: int
    collected_count: int
    comment_count: int
    like_count: int
    heart_count: int
    view_count: int
    tipped_amount_count: int
    user_id: int
    username: str
    user_image: str | None
    user_is_moderator: bool
    cover_id: int | None
    cover_url: str | None
    cover_level: int | None
    cover_scanned: bool
    cover_width: int | None
    cover_height: int | None
    content: str | None
    sort_key: Any = None


def _columns(sort_key: str, with_content: bool) -> str:
    return ("a.id, a.title, a.published_at, a.created_at, a.updated_at, a.nsfw_level, a.availability, a.status,"
            " a.scanned_at IS NOT NULL, a.favorite_count, a.collected_count, a.comment_count, a.like_count,"
            " a.heart_count, a.view_count, a.tipped_amount_count, u.id, u.username, u.image, u.is_moderator = 1,"
            " c.id, c.url, c.nsfw_level, c.scanned_at IS NOT NULL, c.width, c.height,"
            f" {'a.content' if with_content else 'NULL'}, {sort_key}")


_FROM = " FROM articles a JOIN users u ON u.id = a.user_id LEFT JOIN images c ON c.id = a.cover_image_id"


def _like(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def list_articles(db: sqlite3.Connection, *, sort: str, level: int, now: str, limit: int,
                  after: tuple[Any, int] | None = None, query: str | None = None,
                  tags: Sequence[int] = (), username: str | None = None) -> list[ArticleRow]:
    """Published, scanned, non-private articles rated within ``level``, in ``sort`` order."""
    key = SORT_COLUMNS[sort]
    where = ["a.status = 'Published'", "a.published_at IS NOT NULL", "a.published_at <= :now",
             "a.scanned_at IS NOT NULL", "a.availability != 'Private'", "(a.nsfw_level & ~:level) = 0"]
    params: dict[str, Any] = {"now": now, "level": level, "limit": limit}
    if query:
        where.append("a.title LIKE :query ESCAPE '\\'")
        params["query"] = _like(query)
    if tags:
        where.append("a.id IN (SELECT t.article_id FROM article_tags t WHERE t.tag_id IN"
                     " (SELECT value FROM json_each(:tags)))")
        params["tags"] = json.dumps(list(tags))
    if username is not None:
        where.append("u.username = :username")
        params["username"] = username
    if after is not None:
        where.append(f"({key}, a.id) < (:after_key, :after_id)")
        params["after_key"], params["after_id"] = after
    sql = (f"SELECT {_columns(key, False)}{_FROM} WHERE {' AND '.join(where)}"
           f" ORDER BY {key} DESC, a.id DESC LIMIT :limit")
    return [ArticleRow(*row) for row in db.execute(sql, params)]


def get_article(db: sqlite3.Connection, article_id: int) -> ArticleRow | None:
    row = db.execute(f"SELECT {_columns('NULL', True)}{_FROM} WHERE a.id = ?", (article_id,)).fetchone()
    return None if row is None else ArticleRow(*row)


def article_tags(db: sqlite3.Connection, ids: Sequence[int]) -> dict[int, list[tuple[int, str, bool]]]:
    out: dict[int, list[tuple[int, str, bool]]] = {}
    if not ids:
        return out
    marks = ", ".join("?" * len(ids))
    for article_id, tag_id, name, category in db.execute(
            "SELECT at.article_id, t.id, t.name, t.is_category FROM article_tags at JOIN tags t ON t.id = at.tag_id"
            f" WHERE at.article_id IN ({marks}) ORDER BY at.article_id, t.id", list(ids)):
        out.setdefault(article_id, []).append((tag_id, name, bool(category)))
    return out

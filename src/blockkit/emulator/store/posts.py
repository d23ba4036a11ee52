"""Queries for /posts/{id} (its images come from store.images)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PostRow:
    id: int
    user_id: int
    username: str
    title: str | None
    detail: str | None
    model_version_id: int | None
    version_published: bool       # the post's model version exists and is published
    availability: str
    nsfw_level: int
    scanned: bool
    blocked: bool
    published_at: str | None


def get_post(db: sqlite3.Connection, post_id: int) -> PostRow | None:
    row = db.execute(
        "SELECT p.id, p.user_id, u.username, p.title, p.detail, p.model_version_id,"
        " v.id IS NOT NULL AND v.status = 'Published' AND v.published_at IS NOT NULL,"
        " p.availability, p.nsfw_level, p.scanned, p.blocked, p.published_at"
        " FROM posts p JOIN users u ON u.id = p.user_id LEFT JOIN model_versions v ON v.id = p.model_version_id"
        " WHERE p.id = ?", (post_id,)).fetchone()
    if row is None:
        return None
    return PostRow(row[0], row[1], row[2], row[3], row[4], row[5], bool(row[6]), row[7], row[8], bool(row[9]),
                   bool(row[10]), row[11])


def post_tags(db: sqlite3.Connection, post_id: int) -> list[tuple[int, str]]:
    return [(r[0], r[1]) for r in db.execute(
        "SELECT t.id, t.name FROM post_tags pt JOIN tags t ON t.id = pt.tag_id WHERE pt.post_id = ? ORDER BY t.id",
        (post_id,))]

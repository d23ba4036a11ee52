"""Queries for /images and the images of /posts/{id}.

The feed reads in two stages, as the platform's does (a search index, then the
database):

1. :func:`feed_candidates` walks the images in sort order from a keyset position
   (never an OFFSET scan, except for the legacy offset cursors and page lookups),
   applying what an index knows about an image: rating, scan, type, base model,
   uploader, post, tags, resources.
2. :func:`post_states` then tells which candidates' posts may be shown (public,
   published, scanned, not blocked); the service drops the rest. A page can thus
   hold fewer items than asked, or none, and still not be the end.

Per-page lookups are batched: one query each for the image rows, their stats and
their resources, whatever the page size.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

# The sorts of /images: (key expression, source, direction). A metric sort reads the
# metric row of the request's period (image_metrics has one per period), walking the
# index (period, <metric>, image_id) backwards.
METRIC_COLUMNS: dict[str, str] = {
    "Most Reactions": "reaction_count",
    "Most Comments": "comment_count",
    "Most Collected": "collected_count",
}
DATE_SORTS: dict[str, str] = {"Newest": "DESC", "Oldest": "ASC"}
RANDOM = "Random"

# A bijection on 32-bit ids (Knuth's multiplicative hash, then XOR with a salt): a Random
# order that is a pure function of (id, salt), so a cursor can continue it.
_KNUTH = 2654435761
_MASK32 = 4294967296


def random_key_sql(salt_param: str = ":salt") -> str:
    mixed = f"((i.id * {_KNUTH}) % {_MASK32})"
    return f"(({mixed} | {salt_param}) - ({mixed} & {salt_param}))"


def random_key(image_id: int, salt: int) -> int:
    """The Random sort key of an image, as random_key_sql computes it."""
    return ((image_id * _KNUTH) % _MASK32) ^ salt


@dataclass(frozen=True, slots=True)
class FeedSpec:
    """What stage 1 filters on and how it orders (built by the service from the query)."""

    sort: str
    period: str
    level: int                                  # served browsing level; 0 matches nothing
    salt: int = 0                               # Random only
    post_id: int | None = None
    image_id: int | None = None
    user_ids: tuple[int, ...] | None = None     # None: any uploader; (): nobody
    model_id: int | None = None
    model_version_id: int | None = None
    tags: tuple[int, ...] = ()
    tags_any: bool = False
    media_type: str | None = None
    base_models: tuple[str, ...] = ()
    # Legacy offset cursors: images created up to this instant, post rules in SQL.
    created_before: str | None = None
    legacy_visibility: tuple[str, ...] | None = None
    published_before: str | None = None


@dataclass(frozen=True, slots=True)
class Candidate:
    key: Any
    id: int
    post_id: int


def _conditions(spec: FeedSpec) -> tuple[list[str], dict[str, Any]]:
    where = ["i.post_id IS NOT NULL", "i.scanned_at IS NOT NULL", "(i.nsfw_level & :level) != 0"]
    params: dict[str, Any] = {"level": spec.level}
    if spec.post_id is not None:
        where.append("i.post_id = :post_id")
        params["post_id"] = spec.post_id
    if spec.image_id is not None:
        where.append("i.id = :image_id")
        params["image_id"] = spec.image_id
    if spec.user_ids is not None:
        where.append("i.user_id IN (SELECT value FROM json_each(:user_ids))")
        params["user_ids"] = json.dumps(list(spec.user_ids))
    if spec.model_version_id is not None:
        where.append("i.id IN (SELECT r.image_id FROM image_resources r WHERE r.model_version_id = :version_id)")
        params["version_id"] = spec.model_version_id
    if spec.model_id is not None:
        where.append("i.id IN (SELECT r.image_id FROM model_versions v JOIN image_resources r"
                     " ON r.model_version_id = v.id WHERE v.model_id = :model_id)")
        params["model_id"] = spec.model_id
    if spec.tags:
        # Lists go in as one JSON parameter (json_each), so a long list meets no variable limit.
        params["tags"] = json.dumps(sorted(set(spec.tags)))
        if spec.tags_any:
            where.append("i.id IN (SELECT t.image_id FROM image_tags t WHERE t.tag_id IN"
                         " (SELECT value FROM json_each(:tags)))")
        else:
            # All of them: the images of one tag (an index range), then a count of the rest.
            params["first_tag"] = min(spec.tags)
            params["tag_count"] = len(set(spec.tags))
            where.append("i.id IN (SELECT t.image_id FROM image_tags t WHERE t.tag_id = :first_tag)")
            where.append("(SELECT count(*) FROM image_tags t WHERE t.image_id = i.id AND t.tag_id IN"
                         " (SELECT value FROM json_each(:tags))) = :tag_count")
    if spec.media_type is not None:
        where.append("i.type = :media_type")
        params["media_type"] = spec.media_type
    if spec.base_models:
        where.append("i.base_model COLLATE NOCASE IN (SELECT value FROM json_each(:base_models))")
        params["base_models"] = json.dumps(list(spec.base_models))
    if spec.created_before is not None:
        where.append("i.created_at <= :created_before")
        params["created_before"] = spec.created_before
    if spec.legacy_visibility is not None:
        names = [f":vis{n}" for n in range(len(spec.legacy_visibility))]
        where.append(f"i.post_id IN (SELECT p.id FROM posts p WHERE p.availability IN ({', '.join(names)})"
                     " AND p.published_at IS NOT NULL AND p.published_at <= :published_before"
                     " AND p.scanned = 1 AND p.blocked = 0)")
        params.update({name[1:]: value for name, value in zip(names, spec.legacy_visibility)})
        params["published_before"] = spec.published_before
    return where, params


def feed_candidates(db: sqlite3.Connection, spec: FeedSpec, *, after: tuple[Any, int] | None, limit: int,
                    offset: int = 0) -> list[Candidate]:
    """Up to ``limit`` candidates in sort order, strictly after the keyset position ``after``."""
    where, params = _conditions(spec)
    if spec.sort in METRIC_COLUMNS:
        column = f"m.{METRIC_COLUMNS[spec.sort]}"
        source = "image_metrics m JOIN images i ON i.id = m.image_id"
        where.insert(0, "m.period = :period")
        params["period"] = spec.period
        key, tie, direction, compare = column, "m.image_id", "DESC", "<"
    elif spec.sort in DATE_SORTS:
        source = "images i"
        key, tie, direction = "i.created_at", "i.id", DATE_SORTS[spec.sort]
        compare = "<" if direction == "DESC" else ">"
    elif spec.sort == RANDOM:
        source = "images i"
        key, tie, direction, compare = random_key_sql(), "i.id", "ASC", ">"
        params["salt"] = spec.salt
    else:  # pragma: no cover - the query model admits only the sorts above
        raise ValueError(f"unknown sort {spec.sort!r}")
    if after is not None:
        where.append(f"({key}, {tie}) {compare} (:after_key, :after_id)")
        params["after_key"], params["after_id"] = after
    sql = (f"SELECT {key} AS k, {tie} AS id, i.post_id FROM {source} WHERE {' AND '.join(where)}"
           f" ORDER BY k {direction}, id {direction} LIMIT :limit OFFSET :offset")
    params["limit"], params["offset"] = limit, offset
    return [Candidate(*row) for row in _tuples(db, sql, params)]


# --- the rows of a page (stage 2, one query) ----------------------------------------------

def _tuples(db: sqlite3.Connection, sql: str, params: Any = ()) -> sqlite3.Cursor:
    """Rows as plain tuples: the store's connections make sqlite3.Row objects, which cost
    more per row than the rest of a feed page's work."""
    cursor = db.cursor()
    cursor.row_factory = None
    return cursor.execute(sql, params)


@dataclass(frozen=True, slots=True)
class ImageStats:
    cry: int = 0
    laugh: int = 0
    like: int = 0
    dislike: int = 0
    heart: int = 0
    comment: int = 0


@dataclass(frozen=True, slots=True)
class ImageRow:
    """An image with what its page needs: uploader, AllTime stats, resources and its post's state."""

    id: int
    post_id: int
    type: str
    url: str
    blurhash: str | None
    width: int | None
    height: int | None
    nsfw_level: int
    meta: str | None
    base_model: str | None
    thumbnail_url: str | None
    thumbnail_nsfw_level: int | None
    thumbnail_width: int | None
    thumbnail_height: int | None
    created_at: str
    username: str
    stats: ImageStats
    version_ids: list[int]          # the model versions it was made with, ascending, once each
    post_availability: str
    post_published_at: str | None
    post_scanned: bool
    post_blocked: bool

    def post_shown(self, now: str, availabilities: Iterable[str]) -> bool:
        """Whether the image's post may be shown: one of ``availabilities``, published by ``now``,
        scanned and not blocked."""
        return (self.post_availability in availabilities and self.post_published_at is not None
                and self.post_published_at <= now and self.post_scanned and not self.post_blocked)


_PAGE_SQL = (
    "SELECT i.id, i.post_id, i.type, i.url, i.blurhash, i.width, i.height, i.nsfw_level, {meta}, i.base_model,"
    " i.thumbnail_url, i.thumbnail_nsfw_level, i.thumbnail_width, i.thumbnail_height, i.created_at, u.username,"
    " m.cry_count, m.laugh_count, m.like_count, m.dislike_count, m.heart_count, m.comment_count,"
    " (SELECT group_concat(r.model_version_id) FROM image_resources r WHERE r.image_id = i.id),"
    " p.availability, p.published_at, p.scanned, p.blocked"
    " FROM images i JOIN users u ON u.id = i.user_id JOIN posts p ON p.id = i.post_id"
    " LEFT JOIN image_metrics m ON m.image_id = i.id AND m.period = 'AllTime'"
    " WHERE i.id IN (SELECT value FROM json_each(?))"
)


def image_rows(db: sqlite3.Connection, ids: Sequence[int], *, with_meta: bool) -> dict[int, ImageRow]:
    """The rows of images in posts, by id (ids not found, or not in a post, are absent)."""
    if not ids:
        return {}
    out: dict[int, ImageRow] = {}
    for r in _tuples(db, _PAGE_SQL.format(meta="i.meta" if with_meta else "NULL"), (json.dumps(list(ids)),)):
        stats = ImageStats(*(value or 0 for value in r[16:22]))
        versions = sorted({int(v) for v in r[22].split(",")}) if r[22] else []
        out[r[0]] = ImageRow(*r[:16], stats, versions, r[23], r[24], bool(r[25]), bool(r[26]))
    return out


def post_image_ids(db: sqlite3.Connection, post_id: int, level: int, limit: int) -> list[int]:
    """The first ``limit`` scanned images of a post within ``level``, in post order."""
    rows = db.execute("SELECT id FROM images WHERE post_id = ? AND scanned_at IS NOT NULL AND (nsfw_level & ?) != 0"
                      " ORDER BY post_position, id LIMIT ?", (post_id, level, limit))
    return [r[0] for r in rows]


def user_ids_by_name(db: sqlite3.Connection, username: str) -> tuple[int, ...]:
    """The user called ``username`` (case-insensitively: the column's collation), if any."""
    return tuple(r[0] for r in db.execute("SELECT id FROM users WHERE username = ?", (username,)))


def data_identity(db: sqlite3.Connection) -> str:
    """What the data was seeded from: a cursor made on other data cannot be continued."""
    from blockkit.emulator.store import meta

    return f"{meta.get(db, meta.SEED)}/{meta.get(db, meta.SCALE)}"

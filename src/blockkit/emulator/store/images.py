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
    return [Candidate(row[0], row[1], row[2]) for row in db.execute(sql, params)]


# --- post states (stage 2) -----------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class PostState:
    id: int
    availability: str
    published_at: str | None
    scanned: bool
    blocked: bool

    def shown(self, now: str, availabilities: Iterable[str]) -> bool:
        return (self.availability in availabilities and self.published_at is not None
                and self.published_at <= now and self.scanned and not self.blocked)


def _marks(values: Sequence[Any]) -> str:
    return ", ".join("?" * len(values))


def post_states(db: sqlite3.Connection, post_ids: Iterable[int]) -> dict[int, PostState]:
    ids = sorted(set(post_ids))
    if not ids:
        return {}
    rows = db.execute(f"SELECT id, availability, published_at, scanned, blocked FROM posts WHERE id IN ({_marks(ids)})",
                      ids)
    return {r[0]: PostState(r[0], r[1], r[2], bool(r[3]), bool(r[4])) for r in rows}


# --- the rows of a page (batched) ----------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ImageRow:
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


_IMAGE_COLUMNS = ("i.id, i.post_id, i.type, i.url, i.blurhash, i.width, i.height, i.nsfw_level, {meta},"
                  " i.base_model, i.thumbnail_url, i.thumbnail_nsfw_level, i.thumbnail_width, i.thumbnail_height,"
                  " i.created_at, u.username")


def image_rows(db: sqlite3.Connection, ids: Sequence[int], *, with_meta: bool) -> dict[int, ImageRow]:
    if not ids:
        return {}
    columns = _IMAGE_COLUMNS.format(meta="i.meta" if with_meta else "NULL")
    rows = db.execute(f"SELECT {columns} FROM images i JOIN users u ON u.id = i.user_id"
                      f" WHERE i.id IN ({_marks(ids)})", list(ids))
    return {r[0]: ImageRow(*r) for r in rows}


@dataclass(frozen=True, slots=True)
class ImageStats:
    cry: int = 0
    laugh: int = 0
    like: int = 0
    dislike: int = 0
    heart: int = 0
    comment: int = 0


def image_stats(db: sqlite3.Connection, ids: Sequence[int], period: str = "AllTime") -> dict[int, ImageStats]:
    if not ids:
        return {}
    rows = db.execute("SELECT image_id, cry_count, laugh_count, like_count, dislike_count, heart_count,"
                      f" comment_count FROM image_metrics WHERE period = ? AND image_id IN ({_marks(ids)})",
                      [period, *ids])
    return {r[0]: ImageStats(*r[1:]) for r in rows}


def image_version_ids(db: sqlite3.Connection, ids: Sequence[int]) -> dict[int, list[int]]:
    """The model versions each image was made with (image_resources mirrors meta.platformResources)."""
    out: dict[int, list[int]] = {}
    if not ids:
        return out
    for image_id, version_id in db.execute(
            f"SELECT image_id, model_version_id FROM image_resources WHERE image_id IN ({_marks(ids)})"
            " ORDER BY image_id, model_version_id", list(ids)):
        out.setdefault(image_id, []).append(version_id)
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

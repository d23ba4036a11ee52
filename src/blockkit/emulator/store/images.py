"""Queries for /images and the images of /posts/{id}.

The feed reads in two stages, as the platform's does (a search index, then the
database):

1. :func:`feed_candidates` walks the images in sort order from a keyset position
   (never an OFFSET scan, except for the legacy offset cursors and page lookups),
   applying what an index knows about an image: rating, scan, type, base model,
   uploader, post, tags, resources.
2. The catalogue renders the window's images in one statement
   (``catalogue.images.render_items``), leaving out those whose post may not be shown
   (public, published, scanned, not blocked). A page can thus hold fewer items than
   asked, or none, and still not be the end.

Each sort walks its own index from the keyset position; a filter that leaves few
images (:data:`NARROW_LIMIT`) reads those and sorts them instead. The plan is chosen
in :func:`_image_access`, with INDEXED BY, rather than left to SQLite's planner.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

import orjson

# The sorts of /images. A metric sort reads the metric row of the request's period
# (image_metrics has one per period), walking the index (period, <metric>, image_id)
# backwards.
METRIC_COLUMNS: dict[str, str] = {
    "Most Reactions": "reaction_count",
    "Most Comments": "comment_count",
    "Most Collected": "collected_count",
}
# The index each metric sort walks (store/indexes/images.sql).
METRIC_INDEXES: dict[str, str] = {
    "Most Reactions": "image_metrics_period",
    "Most Comments": "image_metrics_comments",
    "Most Collected": "image_metrics_collected",
}
DATE_SORTS: dict[str, str] = {"Newest": "DESC", "Oldest": "ASC"}
RANDOM = "Random"

# Random: a shuffle of the images that is a pure function of the id (Knuth's multiplicative
# hash, a bijection on 32-bit ids), rotated by a per-request salt, so a cursor can continue
# it. The hash has an expression index (images_shuffle), so a Random page walks an index
# from its position like the other sorts: the rotation puts the hashes from the pivot
# (2^32 - salt) upwards first, then the ones below it.
_KNUTH = 2654435761
_MASK32 = 4294967296
SHUFFLE_SQL = f"((i.id * {_KNUTH}) % {_MASK32})"   # exactly the indexed expression


def shuffle_hash(image_id: int) -> int:
    """An image's place in the unrotated shuffle (as SHUFFLE_SQL computes it)."""
    return (image_id * _KNUTH) % _MASK32


def random_order_key(image_id: int, salt: int) -> int:
    """Where an image falls in the Random order of ``salt``: ascending keys are that order."""
    return (shuffle_hash(image_id) + salt) % _MASK32


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


def _conditions(spec: FeedSpec, first_tag: int | None = None) -> tuple[list[str], dict[str, Any]]:
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
            params["first_tag"] = first_tag if first_tag is not None else min(spec.tags)
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


# A filter that leaves at most this many images is read and sorted; a wider one is checked
# row by row while the sort's index is walked. The cross-over, measured on the large seed
# (107,000 images, 200 a page): sorting N rows costs about N x 5 us, walking the index
# about (page / share of images passing) x 10 us; they meet near 6,000.
NARROW_LIMIT = 5000


def _image_access(db: sqlite3.Connection, spec: FeedSpec) -> tuple[str | None, int | None]:
    """How to reach the images (None: walk the sort's index) and the rarest tag to start from.

    The plan is chosen here, not left to SQLite: without ANALYZE statistics its planner
    may walk a whole sort index looking for one uploader's images, or pick another
    metric's index and sort 100,000 rows (both measured on the large seed: 0.5-2 s).
    """
    first_tag = None
    if spec.tags:
        counts = dict(_tuples(db, "SELECT tag_id, count(*) FROM image_tags WHERE tag_id IN"
                                  " (SELECT value FROM json_each(?)) GROUP BY tag_id", (json.dumps(list(spec.tags)),)))
        first_tag = min(spec.tags, key=lambda t: (counts.get(t, 0), t))
    if spec.image_id is not None:
        return "images i NOT INDEXED", first_tag      # one rowid
    if spec.post_id is not None:
        return "images i INDEXED BY images_post", first_tag
    sizes: list[tuple[int, str]] = []
    if spec.user_ids is not None:
        (n,), = _tuples(db, "SELECT count(*) FROM images WHERE user_id IN (SELECT value FROM json_each(?))",
                        (json.dumps(list(spec.user_ids)),))
        sizes.append((n, "images i INDEXED BY images_user"))
    # The other filters are IN-subqueries on the image id: rowid lookups from their ids.
    if spec.model_version_id is not None:
        (n,), = _tuples(db, "SELECT count(*) FROM image_resources WHERE model_version_id = ?",
                        (spec.model_version_id,))
        sizes.append((n, "images i NOT INDEXED"))
    if spec.model_id is not None:
        (n,), = _tuples(db, "SELECT count(*) FROM model_versions v JOIN image_resources r"
                            " ON r.model_version_id = v.id WHERE v.model_id = ?", (spec.model_id,))
        sizes.append((n, "images i NOT INDEXED"))
    if spec.tags:
        n = sum(counts.values()) if spec.tags_any else counts.get(first_tag, 0)
        sizes.append((n, "images i NOT INDEXED"))
    if spec.media_type is not None:
        (n,), = _tuples(db, "SELECT count(*) FROM images WHERE type = ?", (spec.media_type,))
        sizes.append((n, "images i INDEXED BY images_type"))
    if spec.base_models:
        (n,), = _tuples(db, "SELECT count(*) FROM images WHERE base_model COLLATE NOCASE IN"
                            " (SELECT value FROM json_each(?))", (json.dumps(list(spec.base_models)),))
        sizes.append((n, "images i INDEXED BY images_base_model"))
    if not sizes or min(sizes)[0] > NARROW_LIMIT:
        return None, first_tag
    return min(sizes)[1], first_tag


def feed_candidates(db: sqlite3.Connection, spec: FeedSpec, *, after: tuple[Any, int] | None, limit: int,
                    offset: int = 0) -> list[Candidate]:
    """Up to ``limit`` candidates in sort order, strictly after the keyset position ``after``.

    With a selective filter the filtered images are read and sorted; without one the sort's
    own index is walked from the keyset position, so each page costs about its own size.
    """
    narrowed, first_tag = _image_access(db, spec)
    where, params = _conditions(spec, first_tag)
    if spec.sort in METRIC_COLUMNS:
        column = METRIC_COLUMNS[spec.sort]
        if narrowed:
            source = f"{narrowed} CROSS JOIN image_metrics m ON m.image_id = i.id AND m.period = :period"
        else:
            source = (f"image_metrics m INDEXED BY {METRIC_INDEXES[spec.sort]}"
                      " CROSS JOIN images i ON i.id = m.image_id")
            where.insert(0, "m.period = :period")
        params["period"] = spec.period
        key, tie, direction, compare = f"m.{column}", "m.image_id", "DESC", "<"
    elif spec.sort in DATE_SORTS:
        source = narrowed or "images i INDEXED BY images_created"
        key, tie, direction = "i.created_at", "i.id", DATE_SORTS[spec.sort]
        compare = "<" if direction == "DESC" else ">"
    elif spec.sort == RANDOM:
        return _random_candidates(db, spec, narrowed or "images i INDEXED BY images_shuffle", where, params,
                                  after=after, limit=limit, offset=offset)
    else:  # pragma: no cover - the query model admits only the sorts above
        raise ValueError(f"unknown sort {spec.sort!r}")
    if after is not None:
        where.append(f"({key}, {tie}) {compare} (:after_key, :after_id)")
        params["after_key"], params["after_id"] = after
    sql = (f"SELECT {key} AS k, {tie} AS id, i.post_id FROM {source} WHERE {' AND '.join(where)}"
           f" ORDER BY k {direction}, id {direction} LIMIT :limit OFFSET :offset")
    params["limit"], params["offset"] = limit, offset
    return [Candidate(*row) for row in _all_at_once(db, _as_one_array(sql), params)]


def _random_candidates(db: sqlite3.Connection, spec: FeedSpec, source: str, where: list[str],
                       params: dict[str, Any], *, after: tuple[Any, int] | None, limit: int,
                       offset: int) -> list[Candidate]:
    """The Random order: hashes from the pivot upwards, then from 0 to the pivot (keys are hashes)."""
    pivot = (-spec.salt) % _MASK32
    segments = [f"{SHUFFLE_SQL} >= :pivot", f"{SHUFFLE_SQL} < :pivot"]
    if after is not None:
        if after[0] < pivot:
            segments = segments[1:]
        segments[0] += f" AND ({SHUFFLE_SQL}, i.id) > (:after_key, :after_id)"
        params["after_key"], params["after_id"] = after
    params["pivot"] = pivot
    wanted = offset + limit
    out: list[Candidate] = []
    for segment in segments:
        if len(out) >= wanted:
            break
        params["limit"] = wanted - len(out)
        sql = (f"SELECT {SHUFFLE_SQL} AS k, i.id AS id, i.post_id FROM {source}"
               f" WHERE {' AND '.join([*where, segment])} ORDER BY k, id LIMIT :limit")
        out.extend(Candidate(*row) for row in _all_at_once(db, _as_one_array(sql), params))
    return out[offset:]


# --- the rows of a page (stage 2, one query) ----------------------------------------------

def _tuples(db: sqlite3.Connection, sql: str, params: Any = ()) -> sqlite3.Cursor:
    """Rows as plain tuples: the store's connections make sqlite3.Row objects, which cost
    more per row than the rest of a feed page's work."""
    cursor = db.cursor()
    cursor.row_factory = None
    return cursor.execute(sql, params)


def _as_one_array(sql: str) -> str:
    """``sql`` (selecting k, id, post_id in order) as one JSON array of its rows, in its order.

    SQLite feeds an aggregate the rows of a FROM subquery in the subquery's ORDER BY order
    (the order the LIMIT already depends on); test_images.py holds every sort's candidates
    to the row-by-row query.
    """
    return f"SELECT json_group_array(json_array(k, id, post_id)) FROM ({sql})"


def _all_at_once(db: sqlite3.Connection, sql: str, params: Any = ()) -> list[list[Any]]:
    """The rows of ``sql``, which selects one ``json_group_array(json_array(...))``, as lists.

    SQLite builds the whole result in one step. Python's sqlite3 lets go of the interpreter
    lock around every step and takes it back after; with several request threads each row of
    a page then waits for the lock again, and the waits, not the query, set the time of a
    page under load (issue 27: /images at 16 connections served half its 1-connection rate).
    One step is one wait; the query itself runs with the lock free, beside the other threads.
    """
    row = _tuples(db, sql, params).fetchone()
    return orjson.loads(row[0]) if row and row[0] else []


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

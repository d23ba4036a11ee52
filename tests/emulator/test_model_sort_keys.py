"""GET /models sort keys kept on the model row (migration 0009, issue 27).

``models.image_count`` and ``models.published_version_count`` replace subqueries that ran per
model. These tests hold them to the SQL they replace, kept here as the reference:

- every sort, with and without filters, gives the same ids page after page (keyset cursors
  from the previous page, as the route makes them) as the old query did;
- after writes to images, posts, versions and models (the triggers' job), every model's
  counts equal what the reference subqueries compute.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blockkit.emulator.seed import ensure_seeded, template
from blockkit.emulator.store import Store
from blockkit.emulator.store import models as store

# --- the reference: GET /models' SQL before migration 0009 -------------------------------------

OLD_IMAGE_COUNT = (
    "(SELECT count(*) FROM model_versions iv JOIN posts ip ON ip.model_version_id = iv.id"
    " JOIN images ii ON ii.post_id = ip.id WHERE iv.model_id = m.id AND iv.status = 'Published'"
    " AND ip.user_id = m.user_id AND ip.published_at IS NOT NULL AND ip.blocked = 0 AND ip.scanned = 1"
    " AND ip.availability <> 'Private' AND ii.scanned_at IS NOT NULL AND ii.nsfw_level <> 0)")
OLD_PUBLISHED_VERSIONS = ("(SELECT count(*) FROM model_versions v WHERE v.model_id = m.id"
                          " AND v.status = 'Published' AND v.availability <> 'Private')")
OLD_SORTS: dict[str, tuple[str, bool, bool]] = {  # value, descending, uses metrics
    "Highest Rated": ("mm.thumbs_up_count - mm.thumbs_down_count", True, True),
    "Most Downloaded": ("mm.download_count", True, True),
    "Most Liked": ("mm.thumbs_up_count", True, True),
    "Most Discussed": ("mm.comment_count", True, True),
    "Most Collected": ("mm.collected_count", True, True),
    "Most Images": (OLD_IMAGE_COUNT, True, False),
    "Newest": ("coalesce(m.published_at, '')", True, False),
    "Oldest": ("coalesce(m.published_at, '')", False, False),
}


def old_where(f: store.ModelFilter) -> tuple[list[str], list[Any]]:
    """The old _where, for the filters these tests use."""
    where = ["m.status = 'Published' AND m.availability <> 'Private' AND m.availability <> 'Unsearchable'",
             "EXISTS (SELECT 1 FROM model_versions v WHERE v.model_id = m.id AND v.status = 'Published'"
             " AND v.availability <> 'Private')",
             "(m.nsfw_level & ?) <> 0"]
    args: list[Any] = [f.browsing_level]
    if not f.browsing_level & 28:
        where.append("m.nsfw = 0")
    if f.tag_id is not None:
        where.append("EXISTS (SELECT 1 FROM model_tags mt WHERE mt.model_id = m.id AND mt.tag_id = ?)")
        args.append(f.tag_id)
    if f.user_ids is not None:
        where.append(f"m.user_id IN ({','.join('?' * len(f.user_ids))})")
        args.extend(f.user_ids)
    if f.types:
        where.append(f"m.type IN ({','.join('?' * len(f.types))})")
        args.extend(f.types)
    if f.base_models:
        where.append("EXISTS (SELECT 1 FROM model_versions v WHERE v.model_id = m.id AND v.status = 'Published'"
                     f" AND v.availability <> 'Private' AND v.base_model IN ({','.join('?' * len(f.base_models))}))")
        args.extend(f.base_models)
    if f.checkpoint_type is not None:
        where.append("m.type = 'Checkpoint' AND m.checkpoint_type = ?")
        args.append(f.checkpoint_type)
    if f.early_access is not None:
        where.append(("" if f.early_access else "NOT ") +
                     "EXISTS (SELECT 1 FROM model_versions v WHERE v.model_id = m.id AND v.status = 'Published'"
                     " AND v.availability <> 'Private' AND v.availability = 'EarlyAccess' AND v.early_access_ends_at > ?)")
        args.append(f.now)
    for term in f.terms:
        where.append("m.name LIKE ? ESCAPE '\\'")
        args.append("%" + term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
    if f.ids is not None:
        where.append(f"m.id IN ({','.join('?' * len(f.ids))})")
        args.extend(f.ids)
    if f.hidden_of is not None:
        where.append("m.id IN (SELECT model_id FROM hidden_models WHERE user_id = ?)")
        args.append(f.hidden_of)
    if f.not_hidden_of is not None:
        where.append("m.id NOT IN (SELECT model_id FROM hidden_models WHERE user_id = ?)")
        args.append(f.not_hidden_of)
    assert f.favorites_of is None
    return where, args


def old_list_model_ids(db: sqlite3.Connection, f: store.ModelFilter, sort: str, *, limit: int,
                       after: tuple[Any, int] | None = None) -> list[tuple[int, Any]]:
    value, descending, metrics = OLD_SORTS[sort]
    where, args = old_where(f)
    if metrics:
        source, id_column = "model_metrics mm JOIN models m ON m.id = mm.model_id", "mm.model_id"
        where.insert(0, "mm.period = ?")
        args.insert(0, f.period)
    else:
        source, id_column = "models m", "m.id"
    if after is not None:
        op = "<" if descending else ">"
        where.append(f"(({value}) {op} ? OR (({value}) = ? AND {id_column} {op} ?))")
        args.extend([after[0], after[0], after[1]])
    direction = "DESC" if descending else "ASC"
    sql = (f"SELECT {id_column}, {value} FROM {source} WHERE {' AND '.join(where)}"
           f" ORDER BY {value} {direction}, {id_column} {direction} LIMIT ?")
    return [(r[0], r[1]) for r in db.execute(sql, [*args, limit])]


def reference_mismatches(db: sqlite3.Connection) -> list[tuple[int, int, int, int, int]]:
    """(id, image_count, reference, published_version_count, reference) of every model that is off."""
    return [tuple(r) for r in db.execute(
        f"SELECT m.id, m.image_count, {OLD_IMAGE_COUNT}, m.published_version_count, {OLD_PUBLISHED_VERSIONS}"
        f" FROM models m WHERE m.image_count <> {OLD_IMAGE_COUNT}"
        f" OR m.published_version_count <> {OLD_PUBLISHED_VERSIONS}")]


# --- fixtures -------------------------------------------------------------------------------------

def _fresh_store(path: Path) -> Store:
    template.install(path, 1, "small")  # a copy when a template exists; else seeded below
    opened = Store.open(path)
    ensure_seeded(opened, 1, "small")
    return opened


@pytest.fixture
def own_store(tmp_path: Path) -> Iterator[Store]:
    """A small seeded store of this test's own (the writes below must not reach other tests)."""
    opened = _fresh_store(tmp_path)
    try:
        yield opened
    finally:
        opened.close()


def _picks(db: sqlite3.Connection) -> dict[str, Any]:
    tag = db.execute("SELECT mt.tag_id FROM model_tags mt GROUP BY mt.tag_id ORDER BY count(*) DESC, mt.tag_id"
                     " LIMIT 1").fetchone()[0]
    base = db.execute("SELECT base_model FROM model_versions GROUP BY base_model ORDER BY count(*) DESC,"
                      " base_model LIMIT 1").fetchone()[0]
    user = db.execute("SELECT user_id FROM models GROUP BY user_id ORDER BY count(*) DESC, user_id"
                      " LIMIT 1").fetchone()[0]
    ids = [r[0] for r in db.execute("SELECT id FROM models ORDER BY id DESC LIMIT 40")]
    hider = db.execute("SELECT user_id FROM hidden_models GROUP BY user_id ORDER BY count(*) DESC, user_id"
                       " LIMIT 1").fetchone()[0]
    # a moment before which some early access windows are open, so that the filter keeps a few
    now = db.execute("SELECT min(early_access_ends_at) FROM model_versions WHERE availability = 'EarlyAccess'"
                     " AND status = 'Published'").fetchone()[0]
    return {"tag": tag, "base": base, "user": user, "ids": ids, "hider": hider, "now": now}


def _filters(picks: dict[str, Any]) -> list[tuple[str, store.ModelFilter]]:
    return [
        ("none", store.ModelFilter()),
        ("mature", store.ModelFilter(browsing_level=31)),
        ("month", store.ModelFilter(period="Month", browsing_level=31)),
        ("week", store.ModelFilter(period="Week")),
        ("types", store.ModelFilter(types=["LORA", "Checkpoint"], browsing_level=31)),
        ("rare type", store.ModelFilter(types=["Poses"], browsing_level=31)),
        ("tag", store.ModelFilter(tag_id=picks["tag"], browsing_level=31)),
        ("base model", store.ModelFilter(base_models=[picks["base"]])),
        ("user", store.ModelFilter(user_ids=[picks["user"]], browsing_level=31)),
        ("query", store.ModelFilter(terms=("a",), browsing_level=31)),
        ("rare query", store.ModelFilter(terms=("zq-none",), browsing_level=31)),
        ("two terms and a type", store.ModelFilter(terms=("e", "a"), types=["LORA"])),
        ("tag and base model", store.ModelFilter(tag_id=picks["tag"], base_models=[picks["base"], "SDXL 1.0"],
                                                 browsing_level=31, period="Year")),
        ("ids", store.ModelFilter(ids=picks["ids"], browsing_level=31)),
        ("hidden left out", store.ModelFilter(not_hidden_of=picks["hider"], browsing_level=31)),
        ("hidden only", store.ModelFilter(hidden_of=picks["hider"], browsing_level=31)),
        ("checkpoint type", store.ModelFilter(checkpoint_type="Merge", browsing_level=31)),
        ("early access", store.ModelFilter(early_access=True, now=picks["now"], browsing_level=31)),
        ("not early access", store.ModelFilter(early_access=False, now=picks["now"], browsing_level=31)),
    ]


def _walk(list_ids: Any, db: sqlite3.Connection, f: store.ModelFilter, sort: str, limit: int) -> list[list[int]]:
    """Every page's ids, each page after the cursor of the one before (what nextCursor carries)."""
    pages: list[list[int]] = []
    after = None
    for _ in range(10_000):
        rows = list_ids(db, f, sort, limit=limit + 1, after=after)
        page = rows[:limit]
        pages.append([r[0] for r in page])
        if len(rows) <= limit:
            return pages
        after = (page[-1][1], page[-1][0])
    raise AssertionError("the walk did not end")


# --- pages ------------------------------------------------------------------------------------------

# The page plan (walk the sort's index, or read what one filter lets through and sort it) is
# chosen from counts: 0 makes every filtered page walk, 1e9 makes every one lead with a filter.
@pytest.mark.parametrize("lead_factor", [store.LEAD_FACTOR, 0.0, 1e9])
@pytest.mark.parametrize("sort", list(store.SORTS))
def test_every_sort_gives_the_old_pages(seeded_store: Store, sort: str, lead_factor: float,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    assert set(store.SORTS) == set(OLD_SORTS)
    monkeypatch.setattr(store, "LEAD_FACTOR", lead_factor)
    with seeded_store.read() as db:
        picks = _picks(db)
        for label, f in _filters(picks):
            for limit in (7, 40):
                new = _walk(store.list_model_ids, db, f, sort, limit)
                old = _walk(old_list_model_ids, db, f, sort, limit)
                assert new == old, (sort, label, limit)
            if label == "none":
                assert sum(len(p) for p in new) > 30  # a real walk, over several pages


def test_sort_values_in_cursors_are_the_old_values(seeded_store: Store) -> None:
    """The cursor's value part (nextCursor = value|id) is what the old query returned."""
    with seeded_store.read() as db:
        for sort in store.SORTS:
            f = store.ModelFilter(browsing_level=31)
            assert store.list_model_ids(db, f, sort, limit=500) == old_list_model_ids(db, f, sort, limit=500)


@pytest.mark.parametrize("lead_factor", [0.0, 1e9])
def test_offset_pages_are_slices_of_the_walk(seeded_store: Store, lead_factor: float,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store, "LEAD_FACTOR", lead_factor)
    with seeded_store.read() as db:
        picks = _picks(db)
        for f in (store.ModelFilter(browsing_level=31), store.ModelFilter(types=["LORA", "Checkpoint"]),
                  store.ModelFilter(tag_id=picks["tag"], browsing_level=31)):
            for sort in store.SORTS:
                whole = old_list_model_ids(db, f, sort, limit=1000)
                assert len(whole) > 12
                assert store.list_model_ids(db, f, sort, limit=5, offset=7) == whole[7:12], (sort, f)


# --- the counts stay exact under writes ---------------------------------------------------------------

def test_seed_fills_the_counts_exactly(seeded_store: Store) -> None:
    with seeded_store.read() as db:
        assert reference_mismatches(db) == []
        # a real test: many models have images and versions to count
        assert db.execute("SELECT count(*) FROM models WHERE image_count > 0").fetchone()[0] > 20
        triggers = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert {"model_counts_image_insert", "model_counts_post_update", "model_counts_version_update",
            "model_counts_model_update"} <= triggers  # the seed put them back after its bulk insert


def _counted_post(db: sqlite3.Connection) -> tuple[int, int, int]:
    """(post id, model id, image count) of a post whose images count toward its model."""
    row = db.execute(
        "SELECT ip.id, iv.model_id, count(*) FROM posts ip JOIN model_versions iv ON iv.id = ip.model_version_id"
        " JOIN models m ON m.id = iv.model_id JOIN images ii ON ii.post_id = ip.id"
        " WHERE iv.status = 'Published' AND ip.user_id = m.user_id AND ip.published_at IS NOT NULL"
        " AND ip.blocked = 0 AND ip.scanned = 1 AND ip.availability <> 'Private' AND ii.scanned_at IS NOT NULL"
        " AND ii.nsfw_level <> 0 GROUP BY ip.id HAVING count(*) >= 2 ORDER BY ip.id LIMIT 1").fetchone()
    return int(row[0]), int(row[1]), int(row[2])


def _image_count(db: sqlite3.Connection, model_id: int) -> int:
    return int(db.execute("SELECT image_count FROM models WHERE id = ?", (model_id,)).fetchone()[0])


def test_writes_move_the_counts_as_the_subquery_would(own_store: Store) -> None:
    with own_store.write() as db:
        post_id, model_id, in_post = _counted_post(db)
        before = _image_count(db, model_id)
        assert before == db.execute("SELECT " + OLD_IMAGE_COUNT.replace("m.id", "?").replace("m.user_id", "?"),
                                    (model_id, db.execute("SELECT user_id FROM models WHERE id = ?",
                                                          (model_id,)).fetchone()[0])).fetchone()[0]
        user_id = db.execute("SELECT user_id FROM posts WHERE id = ?", (post_id,)).fetchone()[0]
        steps: list[tuple[str, str, tuple[Any, ...], int]] = [
            # (what, SQL, args, expected image_count of the model after it)
            ("a new rated image", "INSERT INTO images (id, user_id, post_id, post_position, type, url, nsfw_level,"
             " scanned_at, created_at) VALUES (9000001, ?, ?, 99, 'image', '/x.png', 1, '2025-01-01T00:00:00.000Z',"
             " '2025-01-01T00:00:00.000Z')", (user_id, post_id), before + 1),
            ("an unrated image", "INSERT INTO images (id, user_id, post_id, post_position, type, url, nsfw_level,"
             " scanned_at, created_at) VALUES (9000002, ?, ?, 100, 'image', '/y.png', 0, '2025-01-01T00:00:00.000Z',"
             " '2025-01-01T00:00:00.000Z')", (user_id, post_id), before + 1),
            ("the unrated image rated", "UPDATE images SET nsfw_level = 4 WHERE id = 9000002", (), before + 2),
            ("an image unscanned", "UPDATE images SET scanned_at = NULL WHERE id = 9000001", (), before + 1),
            ("the post blocked", "UPDATE posts SET blocked = 1 WHERE id = ?", (post_id,), before - in_post),
            ("the post unblocked", "UPDATE posts SET blocked = 0 WHERE id = ?", (post_id,), before + 1),
            ("the post unpublished", "UPDATE posts SET published_at = NULL WHERE id = ?", (post_id,),
             before - in_post),
            ("the post published", "UPDATE posts SET published_at = '2025-01-02T00:00:00.000Z' WHERE id = ?",
             (post_id,), before + 1),
            ("the post made private", "UPDATE posts SET availability = 'Private' WHERE id = ?", (post_id,),
             before - in_post),
            ("the post public", "UPDATE posts SET availability = 'Public' WHERE id = ?", (post_id,), before + 1),
            ("an image deleted", "DELETE FROM images WHERE id = 9000002", (), before),
            ("the version unpublished", "UPDATE model_versions SET status = 'Unpublished' WHERE id ="
             " (SELECT model_version_id FROM posts WHERE id = ?)", (post_id,), None),
            ("the version published", "UPDATE model_versions SET status = 'Published' WHERE id ="
             " (SELECT model_version_id FROM posts WHERE id = ?)", (post_id,), before),
            ("the model given to another user", "UPDATE models SET user_id = (SELECT min(id) FROM users WHERE id <> ?)"
             " WHERE id = ?", (user_id, model_id), 0),
            ("the model given back", "UPDATE models SET user_id = ? WHERE id = ?", (user_id, model_id), before),
            ("the post moved to another model's version", "UPDATE posts SET model_version_id ="
             " (SELECT min(v.id) FROM model_versions v WHERE v.model_id <> ?) WHERE id = ?", (model_id, post_id),
             before - in_post),
            ("the post moved back", "UPDATE posts SET model_version_id = (SELECT min(v.id) FROM model_versions v"
             " WHERE v.model_id = ? AND v.status = 'Published') WHERE id = ?", (model_id, post_id), None),
            ("the unscanned image deleted", "DELETE FROM images WHERE id = 9000001", (), None),
            ("a new post by the owner", "INSERT INTO posts (id, user_id, model_version_id, created_at, updated_at,"
             " published_at) SELECT 9000010, user_id, model_version_id, created_at, updated_at, published_at"
             " FROM posts WHERE id = ?", (post_id,), before + 0),
            ("its first image", "INSERT INTO images (id, user_id, post_id, post_position, type, url, nsfw_level,"
             " scanned_at, created_at) VALUES (9000011, ?, 9000010, 0, 'video', '/v.mp4', 8,"
             " '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z')", (user_id,), before + 1),
            ("its second image", "INSERT INTO images (id, user_id, post_id, post_position, type, url, nsfw_level,"
             " scanned_at, created_at) VALUES (9000012, ?, 9000010, 1, 'image', '/w.png', 2,"
             " '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z')", (user_id,), before + 2),
            ("an image moved to another post", "UPDATE images SET post_id = ? WHERE id = 9000012", (post_id,),
             None),
            ("the new post's owner changed", "UPDATE posts SET user_id = (SELECT min(id) FROM users WHERE id <> ?)"
             " WHERE id = 9000010", (user_id,), None),
            ("the images deleted", "DELETE FROM images WHERE id IN (9000011, 9000012)", (), None),
            ("the new post deleted", "DELETE FROM posts WHERE id = 9000010", (), None),
        ]
        for what, sql, args, expected in steps:
            db.execute(sql, args)
            assert reference_mismatches(db) == [], what
            if expected is not None:
                assert _image_count(db, model_id) == expected, (what, before, in_post)
        assert db.execute("SELECT count(*) FROM images WHERE id >= 9000000").fetchone()[0] == 0


def test_versions_and_new_models_keep_published_version_count(own_store: Store) -> None:
    with own_store.write() as db:
        model_id, user_id = db.execute("SELECT id, user_id FROM models WHERE published_version_count > 0"
                                       " ORDER BY id LIMIT 1").fetchone()
        versions = [r[0] for r in db.execute("SELECT id FROM model_versions WHERE model_id = ?", (model_id,))]
        db.execute("UPDATE model_versions SET availability = 'Private' WHERE model_id = ?", (model_id,))
        assert db.execute("SELECT published_version_count FROM models WHERE id = ?", (model_id,)).fetchone()[0] == 0
        assert reference_mismatches(db) == []
        db.execute("UPDATE model_versions SET availability = 'Public', status = 'Published' WHERE model_id = ?",
                   (model_id,))
        assert db.execute("SELECT published_version_count FROM models WHERE id = ?",
                          (model_id,)).fetchone()[0] == len(versions)
        assert reference_mismatches(db) == []
        # Rows in an import's order (children before their model, foreign keys checked at the end):
        # a version, a post and an image of a model that does not exist yet, then the model.
        db.execute("PRAGMA defer_foreign_keys = ON")
        columns = [r[1] for r in db.execute("PRAGMA table_info(model_versions)")]
        row = dict(zip(columns, db.execute("SELECT * FROM model_versions WHERE id = ?", (versions[0],)).fetchone()))
        row.update(id=8000001, model_id=8000001, status="Published", availability="Public")
        db.execute(f"INSERT INTO model_versions ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                   list(row.values()))
        db.execute("INSERT INTO images (id, user_id, post_id, post_position, type, url, nsfw_level, scanned_at,"
                   " created_at) VALUES (8000001, ?, 8000001, 0, 'image', '/z.png', 1, '2025-01-01T00:00:00.000Z',"
                   " '2025-01-01T00:00:00.000Z')", (user_id,))
        db.execute("INSERT INTO posts (id, user_id, model_version_id, created_at, updated_at, published_at) VALUES"
                   " (8000001, ?, 8000001, '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z',"
                   " '2025-01-01T00:00:00.000Z')", (user_id,))
        columns = [r[1] for r in db.execute("PRAGMA table_info(models)")]
        model = dict(zip(columns, db.execute("SELECT * FROM models WHERE id = ?", (model_id,)).fetchone()))
        model.update(id=8000001, image_count=0, published_version_count=0)
        db.execute(f"INSERT INTO models ({', '.join(model)}) VALUES ({', '.join('?' * len(model))})",
                   list(model.values()))
        assert tuple(db.execute("SELECT image_count, published_version_count FROM models WHERE id = 8000001"
                                ).fetchone()) == (1, 1)
        assert reference_mismatches(db) == []
        db.execute("DELETE FROM images WHERE id = 8000001")
        db.execute("DELETE FROM posts WHERE id = 8000001")
        db.execute("DELETE FROM model_versions WHERE id = 8000001")
        assert tuple(db.execute("SELECT image_count, published_version_count FROM models WHERE id = 8000001"
                                ).fetchone()) == (0, 0)
        db.execute("DELETE FROM models WHERE id = 8000001")
        assert reference_mismatches(db) == []


def test_import_and_reset_keep_the_counts_and_the_triggers(own_store: Store, tmp_path: Path) -> None:
    from blockkit.emulator import transfer

    with own_store.write() as db:  # a store that differs from the seed, in its counts too
        post_id, model_id, in_post = _counted_post(db)
        db.execute("UPDATE posts SET blocked = 1 WHERE id = ?", (post_id,))
        before = {r[0]: (r[1], r[2]) for r in db.execute("SELECT id, image_count, published_version_count FROM models")}
    transfer.export(own_store, tmp_path / "export")
    copy = Store.open(tmp_path / "copy")
    try:
        transfer.import_export(copy, tmp_path / "export")
        with copy.read() as db:
            assert reference_mismatches(db) == []
            assert {r[0]: (r[1], r[2]) for r in db.execute(
                "SELECT id, image_count, published_version_count FROM models")} == before
            triggers = db.execute("SELECT count(*) FROM sqlite_master WHERE type = 'trigger'").fetchone()[0]
        with copy.write() as db:  # the triggers are back: a write still moves the count
            db.execute("UPDATE posts SET blocked = 0 WHERE id = ?", (post_id,))
            assert _image_count(db, model_id) == before[model_id][0] + in_post
        transfer.import_export(copy, tmp_path / "export", replace=True)
        transfer.reset(copy, 1, "small")
        with copy.read() as db:
            assert reference_mismatches(db) == []
            assert db.execute("SELECT count(*) FROM sqlite_master WHERE type = 'trigger'").fetchone()[0] == triggers
            assert _image_count(db, model_id) == before[model_id][0] + in_post  # the seed's count again
    finally:
        copy.close()

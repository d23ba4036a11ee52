"""The seed: byte-for-byte determinism, and every state the spec names, found by querying the store."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from emulator_helpers import blockkit

from blockkit.emulator import facts
from blockkit.emulator.seed import ensure_seeded, landmarks, seed_store
from blockkit.emulator.store import Store
from blockkit.emulator.transfer import export


def _export_bytes(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_the_same_seed_gives_the_same_bytes_and_another_seed_does_not(tmp_path: Path) -> None:
    for name, seed in (("a", 3), ("b", 3), ("c", 4)):
        with Store.open(tmp_path / f"data-{name}") as store:
            seed_store(store, seed, "small")
            export(store, tmp_path / f"export-{name}")
    a, b, c = (_export_bytes(tmp_path / f"export-{n}") for n in "abc")
    assert a == b
    assert a["users.jsonl"] != c["users.jsonl"] and a["images.jsonl"] != c["images.jsonl"]
    assert len(a) == len(c)


def test_two_starts_of_the_cli_export_the_same_bytes(tmp_path: Path) -> None:
    for name in ("one", "two"):
        result = blockkit("emulator", "export", str(tmp_path / name), "--seed", "9")
        assert result.returncode == 0, result.stderr
    assert _export_bytes(tmp_path / "one") == _export_bytes(tmp_path / "two")


def test_seeding_uses_no_wall_clock(seeded_store: Store) -> None:
    # Every stored timestamp lies before the anchor, except early-access ends placed years ahead.
    with seeded_store.read() as db:
        latest = db.execute("SELECT max(created_at) FROM images").fetchone()[0]
        assert latest < "2026-01-01"
        ends = {row[0] for row in db.execute("SELECT DISTINCT early_access_ends_at FROM model_versions"
                                             " WHERE early_access_ends_at IS NOT NULL")}
    assert "2031-01-01T00:00:00.000Z" in ends and any(e < "2026" for e in ends)


def test_foreign_keys_hold(seeded_store: Store) -> None:
    with seeded_store.read() as db:
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []


def test_a_seeded_directory_keeps_its_data_when_asked_for_another_seed(tmp_path: Path) -> None:
    with Store.open(tmp_path) as store:
        assert ensure_seeded(store, 1, "small") == []
        first = landmarks(store)
        notes = ensure_seeded(store, 2, "small")
        assert len(notes) == 1 and "--seed 1" in notes[0] and "keeping it" in notes[0]
        assert landmarks(store) == first


# --- coverage: every state the spec names exists ------------------------------------------

def values(db: sqlite3.Connection, sql: str) -> set[Any]:
    return {row[0] for row in db.execute(sql)}


def test_users_cover_every_tier_status_and_kind(seeded_store: Store) -> None:
    with seeded_store.read() as db:
        active = "deleted_at IS NULL AND status = 'active'"
        assert values(db, f"SELECT tier FROM users WHERE {active}") == set(facts.USER_TIERS)
        assert values(db, "SELECT status FROM users") == set(facts.USER_STATUSES)
        assert db.execute("SELECT count(*) FROM users WHERE deleted_at IS NOT NULL").fetchone()[0] >= 1
        assert db.execute("SELECT username FROM users WHERE id = -1").fetchone()[0] == facts.SYSTEM_USERNAME
        assert db.execute("SELECT count(*) FROM users WHERE is_moderator = 1 AND id > 0").fetchone()[0] >= 1
        assert values(db, "SELECT email IS NULL FROM users") == {0, 1}
        assert values(db, "SELECT email_verified FROM users WHERE email IS NOT NULL") == {0, 1}
        assert values(db, "SELECT image IS NULL FROM users") == {0, 1}
        assert "Mature" in values(db, "SELECT avatar_nsfw FROM users")
        members = values(db, "SELECT user_id FROM subscriptions WHERE status = 'active'")
        assert members == values(db, "SELECT id FROM users WHERE tier <> 'free'")
        assert values(db, "SELECT status FROM subscriptions") >= {"active"}
        creators = values(db, "SELECT user_id FROM models WHERE status = 'Published'")
        assert creators and values(db, "SELECT id FROM users") - creators


def test_tags_cover_model_article_and_category_tags(seeded_store: Store) -> None:
    with seeded_store.read() as db:
        kinds = {(r[0], r[1]) for r in db.execute("SELECT kind, is_category FROM tags")}
        assert {("model", 0), ("model", 1), ("article", 0), ("article", 1), ("image", 0), ("post", 0)} <= kinds
        assert db.execute("SELECT count(*) FROM model_tags JOIN tags ON tags.id = tag_id"
                          " WHERE is_category = 1").fetchone()[0] > 0
        assert db.execute("SELECT count(*) FROM article_tags JOIN tags ON tags.id = tag_id"
                          " WHERE kind = 'article' AND is_category = 1").fetchone()[0] > 0


def test_models_cover_every_type_mode_and_status(seeded_store: Store) -> None:
    with seeded_store.read() as db:
        healthy = "status = 'Published' AND mode IS NULL"
        assert values(db, f"SELECT type FROM models WHERE {healthy}") == set(facts.MODEL_TYPES)
        assert values(db, "SELECT mode FROM models WHERE mode IS NOT NULL") == set(facts.MODEL_MODES)
        assert {"Published", "Draft", "Unpublished", "Deleted"} <= values(db, "SELECT status FROM models")
        assert values(db, "SELECT checkpoint_type FROM models WHERE type = 'Checkpoint'") >= {"Standard", "Merge"}
        for flag in ("poi", "minor", "sfw_only", "nsfw", "from_platform", "supports_generation"):
            assert values(db, f"SELECT {flag} FROM models") == {0, 1}, flag
        periods = db.execute("SELECT model_id, count(*) FROM model_metrics GROUP BY model_id").fetchall()
        assert {row[1] for row in periods} == {len(facts.METRIC_PERIODS)}
        # A shorter window never counts more than a longer one.
        assert db.execute(
            "SELECT count(*) FROM model_metrics d JOIN model_metrics y ON d.model_id = y.model_id"
            " WHERE d.period = 'Day' AND y.period = 'Week' AND d.download_count > y.download_count").fetchone()[0] == 0


def test_versions_cover_early_access_private_epochs_unpublished_and_training(seeded_store: Store) -> None:
    with seeded_store.read() as db:
        assert {"Public", "EarlyAccess", "Private"} <= values(db, "SELECT availability FROM model_versions")
        assert {"Published", "Unpublished"} <= values(db, "SELECT status FROM model_versions")
        assert values(db, "SELECT upload_type FROM model_versions") == {"Created", "Trained"}
        private_epochs = db.execute(
            "SELECT count(DISTINCT f.epoch) FROM model_files f JOIN model_versions v ON v.id = f.version_id"
            " WHERE v.availability = 'Private' AND f.epoch IS NOT NULL").fetchone()[0]
        assert private_epochs >= 2
        assert db.execute("SELECT count(*) FROM model_versions WHERE training_status IS NOT NULL"
                          " AND training_details IS NOT NULL").fetchone()[0] >= 1
        config = db.execute("SELECT early_access_config FROM model_versions WHERE availability = 'EarlyAccess'"
                            " LIMIT 1").fetchone()[0]
        assert json.loads(config)["timeframe"] > 0
        assert values(db, "SELECT usage_control FROM model_versions") >= {"Download", "Generation"}
        assert values(db, "SELECT additional_resource_charge FROM model_versions") == {0, 1}
        assert values(db, "SELECT require_auth FROM model_versions") == {0, 1}
        assert db.execute("SELECT count(*) FROM model_versions WHERE free_trial_limit IS NOT NULL").fetchone()[0]
        airs = db.execute("SELECT air_ecosystem, air_type, air_source FROM model_versions LIMIT 1").fetchone()
        assert all(airs) and airs[2] == "civitai"
        assert db.execute("SELECT count(*) FROM early_access_purchases").fetchone()[0] >= 1


def test_files_cover_every_file_type_hash_kind_scan_and_visibility(seeded_store: Store) -> None:
    with seeded_store.read() as db:
        assert values(db, "SELECT type FROM model_files") == set(facts.MODEL_FILE_TYPES)
        assert values(db, "SELECT kind FROM file_hashes") == set(facts.HASH_KINDS)
        assert values(db, "SELECT visibility FROM model_files") == {"Public", "Private"}
        assert values(db, "SELECT is_primary FROM model_files") == {0, 1}
        assert "Success" in values(db, "SELECT pickle_scan_result FROM model_files")
        assert values(db, "SELECT hash = upper(hash) FROM file_hashes") == {1}
        sha = db.execute("SELECT hash FROM file_hashes WHERE kind = 'SHA256' LIMIT 1").fetchone()[0]
        assert len(sha) == 64
        # Every version has exactly one primary file.
        assert values(db, "SELECT sum(is_primary) FROM model_files GROUP BY version_id") == {1}
        # Some files carry only a subset of the kinds, as older uploads do.
        assert 3 in values(db, "SELECT count(*) FROM file_hashes GROUP BY file_id")


def test_images_cover_every_nsfw_bit_type_thumbnail_and_meta(seeded_store: Store) -> None:
    with seeded_store.read() as db:
        assert set(facts.NSFW_LEVELS.values()) <= values(db, "SELECT nsfw_level FROM images")
        assert values(db, "SELECT type FROM images") == set(facts.IMAGE_TYPES)
        assert values(db, "SELECT thumbnail_url IS NULL FROM images WHERE type = 'video'") == {0, 1}
        # A custom thumbnail rated above the video (and above PG).
        assert db.execute("SELECT count(*) FROM images WHERE thumbnail_nsfw_level > nsfw_level"
                          " AND thumbnail_nsfw_level > 1").fetchone()[0] >= 1
        assert db.execute("SELECT count(*) FROM images WHERE scanned_at IS NULL").fetchone()[0] >= 1
        assert values(db, "SELECT meta IS NULL FROM images") == {0, 1}
        metas = [json.loads(r[0]) for r in db.execute("SELECT meta FROM images WHERE meta IS NOT NULL")]
        with_resources = [m for m in metas if m.get("civitaiResources")]
        assert with_resources
        for meta_obj in with_resources[:50]:
            for resource in meta_obj["civitaiResources"]:
                assert isinstance(resource["modelVersionId"], int) and isinstance(resource["type"], str)
        # image_resources mirror civitaiResources where meta has them.
        image_id, raw = db.execute("SELECT id, meta FROM images WHERE meta LIKE '%civitaiResources%'"
                                   " LIMIT 1").fetchone()
        mirrored = values(db, f"SELECT model_version_id FROM image_resources WHERE image_id = {image_id}")
        assert mirrored == {r["modelVersionId"] for r in json.loads(raw)["civitaiResources"]}
        assert values(db, "SELECT width IS NULL FROM images WHERE type = 'audio'") == {1}
        assert db.execute("SELECT count(*) FROM image_tags").fetchone()[0] > 0
        assert values(db, "SELECT count(*) FROM image_metrics GROUP BY image_id") == {5}


def test_posts_cover_availability_publication_scan_block_and_a_big_post(seeded_store: Store) -> None:
    with seeded_store.read() as db:
        assert values(db, "SELECT availability FROM posts") == set(facts.POST_AVAILABILITIES)
        assert values(db, "SELECT published_at IS NULL FROM posts") == {0, 1}
        assert values(db, "SELECT scanned FROM posts") == {0, 1}
        assert values(db, "SELECT blocked FROM posts") == {0, 1}
        assert db.execute("SELECT max(c) FROM (SELECT count(*) c FROM images GROUP BY post_id)").fetchone()[0] > 100
        for availability in ("Unlisted", "EarlyAccess"):
            assert db.execute("SELECT count(*) FROM images JOIN posts ON posts.id = post_id"
                              f" WHERE posts.availability = '{availability}'").fetchone()[0] > 0
        # A post's level is the OR of its images' levels.
        for post_id, level in db.execute("SELECT id, nsfw_level FROM posts LIMIT 40"):
            combined = 0
            for (image_level,) in db.execute("SELECT nsfw_level FROM images WHERE post_id = ?", (post_id,)):
                combined |= image_level
            assert combined == level


def test_articles_collections_hidden_and_vaults(seeded_store: Store) -> None:
    with seeded_store.read() as db:
        assert values(db, "SELECT status FROM articles") >= {"Published", "Draft", "Unpublished"}
        assert values(db, "SELECT availability FROM articles") >= {"Public", "Private"}
        assert values(db, "SELECT scanned_at IS NULL FROM articles") == {0, 1}
        assert values(db, "SELECT cover_image_id IS NULL FROM articles") == {0, 1}
        combos = {(r[0], r[1]) for r in db.execute("SELECT type, read FROM collections")}
        assert combos >= {(t, r) for t in facts.COLLECTION_TYPES for r in facts.COLLECTION_READ}
        assert db.execute("SELECT count(DISTINCT user_id) FROM collections WHERE mode = 'Bookmark'").fetchone()[0] >= 1
        assert values(db, "SELECT status FROM collection_items") == set(facts.COLLECTION_ITEM_STATUSES)
        assert values(db, "SELECT kind FROM collection_items") == {"model", "image", "article", "post"}
        assert db.execute("SELECT count(*) FROM hidden_models").fetchone()[0] >= 1
        assert values(db, "SELECT status FROM vault_items") == set(facts.VAULT_ITEM_STATUSES)
        owners = values(db, "SELECT tier FROM users JOIN vaults ON vaults.user_id = users.id")
        assert owners and owners <= set(facts.MEMBER_TIERS)
        # Stored items list files; pending ones have no cover yet.
        assert db.execute("SELECT count(*) FROM vault_item_files f JOIN vault_items i ON i.id = f.vault_item_id"
                          " WHERE i.status <> 'Stored'").fetchone()[0] == 0
        assert values(db, "SELECT cover_image_url IS NULL FROM vault_items WHERE status = 'Pending'") == {1}


# --- landmarks: named fixtures point at rows in the state they name --------------------------

def test_landmarks_name_rows_in_their_states(seeded_store: Store) -> None:
    marks = landmarks(seeded_store)
    json.dumps(marks)  # JSON-able
    with seeded_store.read() as db:
        def one(sql: str, *args: Any) -> Any:
            row = db.execute(sql, args).fetchone()
            assert row is not None, sql
            return tuple(row)

        assert one("SELECT is_moderator FROM users WHERE id = ?", marks["moderator"]["id"]) == (1,)
        assert one("SELECT tier FROM users WHERE id = ?", marks["free_user"]["id"]) == ("free",)
        assert one("SELECT count(*) FROM models WHERE user_id = ?", marks["free_user"]["id"]) == (0,)
        assert one("SELECT tier FROM users WHERE id = ?", marks["member"]["id"])[0] in facts.MEMBER_TIERS
        assert one("SELECT deleted_at IS NOT NULL FROM users WHERE id = ?", marks["deleted_user"]["id"]) == (1,)
        assert one("SELECT status FROM users WHERE id = ?", marks["banned_user"]["id"]) == ("banned",)
        assert one("SELECT email FROM users WHERE id = ?", marks["no_email_user"]["id"]) == (None,)
        for tier, user_id in marks["tier_users"].items():
            assert one("SELECT tier FROM users WHERE id = ?", user_id) == (tier,)
        assert one("SELECT mode FROM models WHERE id = ?", marks["archived_model"]["id"]) == ("Archived",)
        assert one("SELECT mode FROM models WHERE id = ?", marks["taken_down_model"]["id"]) == ("TakenDown",)
        for model_type, model_id in marks["models_by_type"].items():
            assert one("SELECT type, status, mode FROM models WHERE id = ?", model_id) == (model_type, "Published",
                                                                                           None)
        ea = marks["early_access_version"]
        assert one("SELECT availability, early_access_ends_at, status FROM model_versions WHERE id = ?",
                   ea["id"]) == ("EarlyAccess", ea["ends_at"], "Published")
        epoch = marks["private_epoch_version"]
        assert one("SELECT availability FROM model_versions WHERE id = ?", epoch["id"]) == ("Private",)
        assert [r[0] for r in db.execute("SELECT epoch FROM model_files WHERE version_id = ? ORDER BY epoch",
                                         (epoch["id"],))] == epoch["epochs"]
        assert one("SELECT epoch FROM model_files WHERE version_id = ? AND is_primary = 1",
                   epoch["id"]) == (epoch["last_epoch"],)
        assert one("SELECT status FROM model_versions WHERE id = ?", marks["unpublished_version"]["id"]) == (
            "Unpublished",)
        known = marks["known_hashes"]
        for kind in facts.HASH_KINDS:
            assert one("SELECT f.version_id FROM file_hashes h JOIN model_files f ON f.id = h.file_id"
                       " WHERE h.hash = upper(?) AND h.kind = ?", known[kind].lower(), kind)[0] is not None
        assert one("SELECT version_id FROM model_files WHERE id = ?", known["file_id"]) == (known["version_id"],)
        video = marks["video_with_custom_thumbnail"]
        assert one("SELECT type, thumbnail_nsfw_level FROM images WHERE id = ?", video["id"]) == ("video", 4)
        assert one("SELECT thumbnail_url FROM images WHERE id = ?", marks["video_without_thumbnail"]["id"]) == (
            None,)
        assert one("SELECT type FROM images WHERE id = ?", marks["audio"]["id"]) == ("audio",)
        assert one("SELECT meta IS NULL FROM images WHERE id = ?", marks["image_with_meta"]["id"]) == (0,)
        assert one("SELECT meta IS NULL FROM images WHERE id = ?", marks["image_without_meta"]["id"]) == (1,)
        assert one("SELECT scanned_at FROM images WHERE id = ?", marks["unscanned_image"]["id"]) == (None,)
        for level, image_id in marks["images_by_nsfw_level"].items():
            assert one("SELECT nsfw_level FROM images WHERE id = ?", image_id) == (int(level),)
        assert set(marks["images_by_nsfw_level"]) == {str(v) for v in facts.NSFW_LEVELS.values()}
        big = marks["big_post"]
        assert one("SELECT count(*) FROM images WHERE post_id = ?", big["id"]) == (big["image_count"],)
        assert one("SELECT availability FROM posts WHERE id = ?", marks["unlisted_post"]["id"]) == ("Unlisted",)
        assert one("SELECT availability FROM posts WHERE id = ?", marks["early_access_post"]["id"]) == (
            "EarlyAccess",)
        assert one("SELECT published_at FROM posts WHERE id = ?", marks["unpublished_post"]["id"]) == (None,)
        assert one("SELECT blocked FROM posts WHERE id = ?", marks["blocked_post"]["id"]) == (1,)
        assert one("SELECT scanned FROM posts WHERE id = ?", marks["unscanned_post"]["id"]) == (0,)
        assert one("SELECT status FROM articles WHERE id = ?", marks["draft_article"]["id"]) == ("Draft",)
        assert one("SELECT availability FROM articles WHERE id = ?", marks["private_article"]["id"]) == ("Private",)
        assert one("SELECT scanned_at FROM articles WHERE id = ?", marks["unscanned_article"]["id"]) == (None,)
        fav = marks["favorites_collection"]
        assert one("SELECT mode, user_id FROM collections WHERE id = ?", fav["id"]) == ("Bookmark", fav["user_id"])
        for key, collection_id in marks["collections"].items():
            kind, read = key.split("/")
            assert one("SELECT type, read FROM collections WHERE id = ?", collection_id) == (kind, read)
        hidden = marks["hidden_model"]
        assert one("SELECT count(*) FROM hidden_models WHERE user_id = ? AND model_id = ?", hidden["user_id"],
                   hidden["model_id"]) == (1,)
        for status in facts.VAULT_ITEM_STATUSES:
            item = marks["vault_items"][status]
            assert one("SELECT status, vault_id FROM vault_items WHERE id = ?", item["id"]) == (status,
                                                                                                item["user_id"])
        gone = marks["vault_items"]["deleted_original"]
        assert one("SELECT m.status FROM model_versions v JOIN models m ON m.id = v.model_id WHERE v.id = ?",
                   gone["model_version_id"]) == ("Deleted",)


@pytest.mark.parametrize("seed", [0, 2, 77, 123456])
def test_coverage_does_not_depend_on_the_seed(tmp_path: Path, seed: int) -> None:
    with Store.open(tmp_path) as store:
        seed_store(store, seed, "small")
        marks = landmarks(store)
        with store.read() as db:
            assert set(facts.NSFW_LEVELS.values()) <= values(db, "SELECT nsfw_level FROM images")
            assert values(db, "SELECT type FROM model_files") == set(facts.MODEL_FILE_TYPES)
            assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    for key in ("moderator", "member", "archived_model", "taken_down_model", "early_access_version",
                "private_epoch_version", "known_hashes", "video_with_custom_thumbnail", "big_post",
                "early_access_post", "favorites_collection", "hidden_model", "vault_items"):
        assert key in marks, key
    assert len(marks["models_by_type"]) == len(facts.MODEL_TYPES)

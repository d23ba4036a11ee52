"""The store: WAL, identity pragmas, migrations, per-thread connections, and one-line StoreErrors."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

import pytest
from emulator_helpers import blockkit, subprocess_env

from blockkit.emulator.errors import StoreError
from blockkit.emulator.store import APPLICATION_ID, DB_FILENAME, Store, migrate
from blockkit.emulator.store.migrate import Migration


def test_new_store_is_wal_ours_and_at_the_latest_schema(tmp_path: Path) -> None:
    with Store.open(tmp_path) as store:
        assert store.connection().execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store.pragma("application_id") == APPLICATION_ID
        assert store.schema_version == migrate.latest_version() >= 1
        assert store.pragma("busy_timeout") == store.busy_timeout_ms > 0
        assert store.pragma("foreign_keys") == 1
        names = {row[0] for row in store.connection().execute("SELECT name FROM sqlite_master WHERE type='table'")}
    # Every catalogue resource of the spec has its table.
    assert {"users", "subscriptions", "tags", "models", "model_metrics", "model_tags", "model_versions",
            "model_files", "file_hashes", "early_access_purchases", "hidden_models", "posts", "post_tags", "images",
            "image_metrics", "image_tags", "image_resources", "articles", "article_tags", "collections",
            "collection_items", "collection_tags", "vaults", "vault_items", "vault_item_files", "meta",
            "base_models"} <= names


def test_secondary_indexes_exist_after_open(tmp_path: Path) -> None:
    with Store.open(tmp_path) as store:
        indexes = {row[0] for row in store.connection().execute(
            "SELECT name FROM sqlite_master WHERE type='index' AND sql IS NOT NULL")}
    assert {"file_hashes_hash", "images_post", "model_versions_model"} <= indexes


def test_reopening_keeps_data_and_does_not_migrate_again(tmp_path: Path) -> None:
    with Store.open(tmp_path) as store, store.write() as db:
        db.execute("INSERT INTO tags (id, name, kind, created_at) VALUES (1, 'x', 'model', '2025-01-01T00:00:00.000Z')")
    with Store.open(tmp_path) as store, store.read() as db:
        assert db.execute("SELECT name FROM tags").fetchall()[0][0] == "x"


def test_a_new_migration_file_is_all_a_schema_change_takes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Store.open(tmp_path) as store:
        before = store.schema_version
    extra = Migration(before + 1, "test_extra", "CREATE TABLE extra (id INTEGER PRIMARY KEY) STRICT;\n"
                                                "INSERT INTO extra (id) VALUES (7);\n")
    shipped = migrate.migrations()
    monkeypatch.setattr(migrate, "migrations", lambda: (*shipped, extra))
    with Store.open(tmp_path) as store, store.read() as db:
        assert store.schema_version == before + 1
        assert db.execute("SELECT id FROM extra").fetchall()[0][0] == 7


def test_a_failing_migration_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shipped = migrate.migrations()
    broken = Migration(len(shipped) + 1, "broken", "CREATE TABLE half (id INTEGER);\nTHIS IS NOT SQL;\n")
    monkeypatch.setattr(migrate, "migrations", lambda: (*shipped, broken))
    with pytest.raises(StoreError):
        Store.open(tmp_path)
    monkeypatch.setattr(migrate, "migrations", lambda: shipped)
    with Store.open(tmp_path) as store:
        assert store.schema_version == 0 + len(shipped)
        tables = {r[0] for r in store.connection().execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "half" not in tables and "users" in tables


def test_statements_split_scripts_with_comments_and_semicolons_in_strings() -> None:
    script = "-- a comment; with a semicolon\nCREATE TABLE a (x TEXT DEFAULT 'a;b');\n\nINSERT INTO a VALUES ('c;d');\n"
    assert migrate.statements(script) == ["-- a comment; with a semicolon\nCREATE TABLE a (x TEXT DEFAULT 'a;b');",
                                          "INSERT INTO a VALUES ('c;d');"]


def test_shipped_migrations_are_numbered_without_gaps() -> None:
    versions = [m.version for m in migrate.migrations()]
    assert versions == list(range(1, len(versions) + 1))
    assert migrate.migrations()[0].name == "catalogue"


def test_each_thread_gets_its_own_connection(tmp_path: Path) -> None:
    with Store.open(tmp_path) as store:
        seen: list[sqlite3.Connection] = []

        def grab() -> None:
            seen.append(store.connection())
            seen.append(store.connection())

        threads = [threading.Thread(target=grab) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len({id(c) for c in seen}) == 3  # one per thread, reused within it
        assert store.connection() not in seen


def _descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts descriptors through /proc")
def test_a_finished_threads_connection_is_closed_with_it(tmp_path: Path) -> None:
    # Worker threads come and go (a new event loop per TestClient request, anyio's idle workers);
    # the store once kept every dead thread's connection open, two descriptors each.
    with Store.open(tmp_path) as store:
        def read_once() -> None:
            with store.read() as db:
                db.execute("SELECT 1").fetchone()

        read_once()
        before = _descriptors()
        for _ in range(40):
            thread = threading.Thread(target=read_once)
            thread.start()
            thread.join()
        assert _descriptors() - before <= 2, "connections of finished threads are still open"
        assert len(store._held) == 1  # only the main thread's
        read_once()  # the store still serves


def test_a_failed_write_rolls_back(tmp_path: Path) -> None:
    with Store.open(tmp_path) as store:
        with pytest.raises(sqlite3.IntegrityError), store.write() as db:
            db.execute("INSERT INTO tags (id, name, kind, created_at) VALUES (1, 'a', 'model', 't')")
            db.execute("INSERT INTO tags (id, name, kind, created_at) VALUES (1, 'b', 'model', 't')")
        with store.read() as db:
            assert db.execute("SELECT count(*) FROM tags").fetchone()[0] == 0


def test_check_constraints_guard_the_named_state_sets(tmp_path: Path) -> None:
    with Store.open(tmp_path) as store, pytest.raises(sqlite3.IntegrityError), store.write() as db:
        db.execute("INSERT INTO users (id, username, tier, created_at) VALUES (1, 'a', 'platinum', 't')")


# --- files that are not a usable store: StoreError in the library, one line and exit 2 in the CLI ---

def _bad_store(kind: str, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / DB_FILENAME
    if kind == "corrupt":
        path.write_bytes(b"this is not an SQLite file at all" * 100)
    elif kind == "damaged":
        with Store.open(folder) as store:
            with store.write() as db:
                db.execute("INSERT INTO tags (id, name, kind, created_at) VALUES (1, 'a', 'model', 't')")
            store.checkpoint()
        data = bytearray(path.read_bytes())
        # Keep the header (so it is still "an SQLite file") and garble the pages after it.
        data[4096:] = bytes(len(data) - 4096)
        data[5000:5400] = b"\xff" * 400
        path.write_bytes(bytes(data))
    elif kind == "foreign":
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE notes (body TEXT)")
        conn.commit()
        conn.close()
    elif kind == "foreign-id":
        conn = sqlite3.connect(path)
        conn.execute("PRAGMA application_id = 1234")
        conn.commit()
        conn.close()
    elif kind == "newer":
        with Store.open(folder) as store:
            store.connection().execute(f"PRAGMA user_version = {migrate.latest_version() + 5}")
    return path


@pytest.mark.parametrize("kind, words", [
    ("corrupt", "corrupt or not an SQLite database"),
    ("damaged", "corrupt"),
    ("foreign", "another application"),
    ("foreign-id", "another application"),
    ("newer", "newer than this blockkit"),
])
def test_unusable_files_raise_one_store_error(tmp_path: Path, kind: str, words: str) -> None:
    _bad_store(kind, tmp_path)
    with pytest.raises(StoreError) as caught:
        Store.open(tmp_path)
    assert words in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("kind", ["corrupt", "foreign", "newer"])
def test_the_cli_says_one_line_and_exits_2_for_an_unusable_store(tmp_path: Path, kind: str) -> None:
    original = _bad_store(kind, tmp_path / "data").read_bytes()
    for args in (["emulator", "users", "--data", str(tmp_path / "data")],
                 ["emulator", "start", "--data", str(tmp_path / "data"), "--port", "0"]):
        result = blockkit(*args)
        assert result.returncode == 2, result
        assert "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert str(tmp_path / "data") in result.stderr
    assert (tmp_path / "data" / DB_FILENAME).read_bytes() == original  # nothing touched


def test_a_locked_store_is_one_line_and_exit_2(tmp_path: Path) -> None:
    data = tmp_path / "data"
    Store.open(data).close()
    holder = sqlite3.connect(data / DB_FILENAME, isolation_level=None)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        result = blockkit("emulator", "users", "--data", str(data),
                          env=subprocess_env(BLOCKKIT_EMULATOR_BUSY_TIMEOUT_MS="200"))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result.returncode == 2
    assert "locked by another process" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr

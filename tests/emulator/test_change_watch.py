"""The fragment cache's change check: a memory read while nothing commits, and never stale after a commit."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from blockkit.emulator.store import Store
from blockkit.emulator.store.changes import ChangeWatch


def _store(tmp_path: Path) -> Store:
    store = Store.open(tmp_path / "data")
    with store.write() as db:
        db.execute("INSERT INTO meta (key, value) VALUES ('test.n', '0')")
    return store


def test_no_statement_while_nothing_commits(tmp_path: Path) -> None:
    store = _store(tmp_path)
    watch = ChangeWatch(store.path)
    assert watch.mapped, "the -shm file of a WAL store maps"
    first = watch.version()
    before = watch.statements
    for _ in range(1000):
        assert watch.version() == first
    assert watch.statements == before, "an unchanged database was asked with a statement"
    with store.read() as db:  # reads change nothing
        db.execute("SELECT count(*) FROM meta").fetchone()
    assert watch.version() == first and watch.statements == before


def test_every_commit_is_seen_by_the_next_check(tmp_path: Path) -> None:
    store = _store(tmp_path)
    watch = ChangeWatch(store.path)
    seen = {watch.version()}
    for n in range(50):
        with store.write() as db:
            db.execute("UPDATE meta SET value = ? WHERE key = 'test.n'", (f"v{n}",))
        version = watch.version()
        assert version not in seen, f"commit {n} was not seen"
        seen.add(version)
    store.checkpoint()  # a checkpoint, then a WAL restart on the next write
    version = watch.version()
    with store.write() as db:
        db.execute("UPDATE meta SET value = 'after' WHERE key = 'test.n'")
    assert watch.version() != version


def test_a_commit_from_another_process_is_seen(tmp_path: Path) -> None:
    store = _store(tmp_path)
    watch = ChangeWatch(store.path)
    version = watch.version()
    code = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1], isolation_level=None);"
            " c.execute(\"UPDATE meta SET value = 'other' WHERE key = 'test.n'\")")
    subprocess.run([sys.executable, "-c", code, str(store.path)], check=True)
    assert watch.version() != version


def test_without_a_shm_file_every_check_asks_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "rollback.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE t (n)")
    watch = ChangeWatch(path)
    assert not watch.mapped
    version = watch.version()
    conn.execute("INSERT INTO t VALUES (1)")
    assert watch.version() != version
    before = watch.statements
    watch.version()
    assert watch.statements == before + 1

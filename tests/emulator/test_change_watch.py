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


def _shm_locks_of_this_process(shm: Path) -> list[str]:
    """This process's POSIX locks on ``shm``, from /proc/locks (``major:minor:inode`` names the file)."""
    import os
    st = os.stat(shm)
    inode = f":{st.st_ino} "
    mine = f" {os.getpid()} "
    with open("/proc/locks") as f:
        return [line for line in f if "POSIX" in line and mine in line and inode in line + " "]


def test_a_watch_keeps_sqlites_lock_on_the_wal_index(tmp_path: Path) -> None:
    # R01 (reliability review 2): closing any descriptor of a file drops every POSIX lock this
    # process holds on it. SQLite's shared lock on the -shm must survive the watch opening it.
    if not Path("/proc/locks").exists():
        import pytest
        pytest.skip("no /proc/locks on this system to read the locks from")
    store = _store(tmp_path)
    with store.read() as db:
        db.execute("SELECT count(*) FROM meta").fetchone()
    shm = Path(f"{store.path}-shm")
    assert _shm_locks_of_this_process(shm), "SQLite holds a lock on its -shm before the watch"
    watches = [ChangeWatch(store.path) for _ in range(3)]
    assert all(w.mapped for w in watches)
    assert _shm_locks_of_this_process(shm), "opening a watch dropped SQLite's lock on the -shm"
    for w in watches:
        w.close()
    del watches
    import gc
    gc.collect()
    assert _shm_locks_of_this_process(shm), "closing the watches dropped SQLite's lock on the -shm"


SURVIVOR = r"""
import sqlite3, sys, time
from blockkit.emulator.store import Store
from blockkit.emulator.store.changes import ChangeWatch
store = Store.open(sys.argv[1])
watch = ChangeWatch(store.path)
print("ready", flush=True)
deadline = time.monotonic() + 20
while time.monotonic() < deadline:
    with store.write() as db:
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('test.n', ?)", (str(time.time()),))
    watch.version()
    if open(sys.argv[2]).read() == "stop":
        break
    time.sleep(0.005)
print("alive", flush=True)
"""


def test_a_serving_process_survives_other_processes_opening_the_store(tmp_path: Path) -> None:
    # R01's failure: another process opening the database (as `blockkit emulator token` does while
    # the emulator runs) found no lock on the -shm, rebuilt it, and the holder died of SIGBUS.
    data = tmp_path / "data"
    Store.open(data).close()
    flag = tmp_path / "flag"
    flag.write_text("")
    proc = subprocess.Popen([sys.executable, "-c", SURVIVOR, str(data), str(flag)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        db = data / "emulator.sqlite3"
        opener = ("import sqlite3, sys\n"
                  "for _ in range(15):\n"
                  "    c = sqlite3.connect(sys.argv[1]); c.execute('SELECT count(*) FROM meta').fetchone(); c.close()\n")
        for _ in range(8):
            subprocess.run([sys.executable, "-c", opener, str(db)], check=True, timeout=60)
        flag.write_text("stop")
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, f"the serving process died (exit {proc.returncode}: -7 is SIGBUS)"
    assert "alive" in out

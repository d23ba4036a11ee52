"""Checkpoints off the request path: a serving store's connections never checkpoint, a thread does."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from blockkit.emulator.store import Store
from blockkit.emulator.store.checkpointer import Checkpointer


def _wal_frames_left(path: Path) -> int:
    """Frames in the WAL not yet copied into the database file, read without copying any: the
    WAL-index (SQLite's file format, "WAL-Index Format") holds mxFrame at byte 16 of its header
    and nBackfill, the frames a checkpoint has copied, at byte 96."""
    import mmap
    import struct

    with open(f"{path}-shm", "rb") as handle, mmap.mmap(handle.fileno(), 100, access=mmap.ACCESS_READ) as shm:
        (max_frame,) = struct.unpack_from("=I", shm, 16)
        (backfilled,) = struct.unpack_from("=I", shm, 96)
    return int(max_frame) - int(backfilled)


def _writes(store: Store, count: int) -> None:
    for n in range(count):
        with store.write() as db:
            db.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET"
                       " value = excluded.value", (f"test.{n % 50}", "x" * 3000 + str(n)))


def test_request_connections_leave_checkpoints_to_the_thread(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "data")
    checkpointer = Checkpointer(store, interval=0.02).start()
    try:
        seen: list[int] = []

        def in_a_new_thread() -> None:  # a request thread's connection, made after start()
            seen.append(int(store.connection().execute("PRAGMA wal_autocheckpoint").fetchone()[0]))
            _writes(store, 400)

        thread = threading.Thread(target=in_a_new_thread)
        thread.start()
        thread.join()
        assert seen == [0], "a request connection would checkpoint inside a commit"
        deadline = time.monotonic() + 5
        while _wal_frames_left(store.path) > 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _wal_frames_left(store.path) == 0, "the thread did not copy the WAL back"
        assert checkpointer.passes > 0
    finally:
        checkpointer.stop()
    # Stopped: what is left is copied by the store's own checkpoint at close, and new connections
    # checkpoint by themselves again.
    assert store.auto_checkpoint
    store.close()


def test_without_the_thread_the_wal_would_keep_what_was_written(tmp_path: Path) -> None:
    """The control: with automatic checkpoints off and no checkpointer, frames pile up in the WAL."""
    store = Store.open(tmp_path / "data")
    store.auto_checkpoint = False

    def write() -> None:
        _writes(store, 1200)

    thread = threading.Thread(target=write)
    thread.start()
    thread.join()
    # Past SQLite's automatic threshold (1,000 pages) and still all in the WAL.
    time.sleep(0.2)
    assert _wal_frames_left(store.path) > 1000, "SQLite checkpointed although automatic checkpoints were off"
    store.close()


def test_the_emulator_runs_one_while_serving(tmp_path: Path) -> None:
    from blockkit.emulator.options import EmulatorOptions
    from blockkit.emulator.runtime import Emulator

    emulator = Emulator(EmulatorOptions(port=0, data=tmp_path / "data", scale="small")).start()
    try:
        assert emulator.checkpointer is not None and emulator.store is not None
        assert not emulator.store.auto_checkpoint
    finally:
        emulator.stop()

"""Copying the WAL back into the database file, on a thread of its own, while the emulator serves.

SQLite checkpoints by itself: the commit that takes the WAL past 1,000 pages copies them into
the database file and syncs it, inside that commit, while the request that made it waits (and,
in this process, while every other writer queues on the writer lock). On the large seed that
was a 10-35 ms stall every few hundred token requests, the whole p99 of the token endpoint at
one connection (issue 27). Turning the automatic checkpoint off is no answer alone: a WAL that
only grows makes every read search a longer WAL index.

So a serving emulator turns the automatic checkpoint off on its request connections
(``Store.auto_checkpoint = False``) and runs a :class:`Checkpointer`: every ``interval``
seconds, when something committed since its last pass (the WAL-index header moved: a memory
read, :mod:`blockkit.emulator.store.changes`), it runs ``PRAGMA wal_checkpoint(PASSIVE)`` on
a connection of its own. A passive checkpoint waits for no one: it copies what no reader still
needs and leaves the rest for the next pass, and writers go on appending meanwhile. The CLI's
own connections keep SQLite's automatic checkpoint, and a clean stop still checkpoints the
whole WAL and truncates it (``Store.checkpoint``).
"""

from __future__ import annotations

import sqlite3
import threading
from typing import TYPE_CHECKING

from blockkit.emulator.store.changes import ChangeWatch

if TYPE_CHECKING:
    from blockkit.emulator.store import Store

INTERVAL_S = 0.1


class Checkpointer:
    """A daemon thread that checkpoints ``store`` passively while it changes. ``start()``/``stop()``."""

    def __init__(self, store: Store, *, interval: float = INTERVAL_S) -> None:
        self.store = store
        self.interval = interval
        self.passes = 0          # checkpoints run (the tests read it)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> Checkpointer:
        self.store.auto_checkpoint = False
        self._thread = threading.Thread(target=self._run, name="blockkit-checkpointer", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        watch = ChangeWatch(self.store.path)
        conn = sqlite3.connect(self.store.path, check_same_thread=False, isolation_level=None)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.store.busy_timeout_ms)}")
            seen = watch.version()
            while not self._stop.wait(self.interval):
                version = watch.version()
                if version == seen:
                    continue
                try:
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                except sqlite3.Error:
                    continue  # busy or a full disk: the next pass tries again; requests report their own errors
                self.passes += 1
                seen = version
        finally:
            conn.close()
            watch.close()

    def stop(self) -> None:
        """Stop the thread (the store's own checkpoint at close copies what is left). Idempotent."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None
        self.store.auto_checkpoint = True

"""Has the database changed since I last looked? Asked on every cached read, answered from memory.

A cache of serialised catalogue objects (``catalogue/fragments.py``) must drop what it holds as
soon as anything commits: this process's request threads, or another process (the CLI minting a
token, ``blockkit emulator import`` while the emulator runs). SQLite's own answer,
``PRAGMA data_version``, is one statement on a connection: under load each statement hands the
interpreter lock over and waits to get it back, and a cache hit paid that on every request.

In WAL mode every connection of every process shares the WAL-index (the ``-shm`` file, mapped
into memory). Its header (SQLite's file format, "WAL-Index Format") holds a counter that every
committed write transaction increments, the last valid frame and that frame's checksum: a
commit, by anyone, always changes it. :class:`ChangeWatch` maps the same file read-only and
compares the header's 48 bytes with the copy it saw last. Equal bytes mean that nothing has
committed, and the check costs a memory read; different bytes (a commit, or a header caught
mid-update) are confirmed with ``PRAGMA data_version`` on the watch's own connection, which
stays authoritative. So the statement runs once per write, not once per read.

Where the file cannot be mapped (no ``-shm``: another journal mode, a VFS without one), every
check asks ``PRAGMA data_version``, as before.
"""

from __future__ import annotations

import mmap
import os
import sqlite3
import threading
import weakref
from pathlib import Path

# The first copy of the WAL-index header: iVersion, unused, iChange, isInit, bigEndCksum, szPage,
# mxFrame, nPage, aFrameCksum[2], aSalt[2], aCksum[2] (48 bytes).
HEADER_BYTES = 48


class ChangeWatch:
    """Tells whether the database at ``path`` has had a commit since the previous :meth:`version`."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        # A connection that never writes: data_version moves when any other connection commits.
        self._conn = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        version = self._data_version()  # opening the connection also makes sure -shm exists
        self._map: mmap.mmap | None = self._map_shm()
        # (the header as last read, the data_version read after it): one tuple, replaced whole, so a
        # reader never pairs a new header with an old version.
        self._seen: tuple[bytes | None, int] = (self._read_header(), version)
        self.statements = 1  # how many times data_version was asked (the tests read it)
        weakref.finalize(self, ChangeWatch._release, self._conn, self._map)

    def _map_shm(self) -> mmap.mmap | None:
        try:
            fd = os.open(f"{self.path}-shm", os.O_RDONLY)
        except OSError:
            return None
        try:
            if os.fstat(fd).st_size < HEADER_BYTES:
                return None
            return mmap.mmap(fd, HEADER_BYTES, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            return None
        finally:
            os.close(fd)

    def _read_header(self) -> bytes | None:
        if self._map is None:
            return None
        try:
            return self._map[:HEADER_BYTES]
        except (OSError, ValueError):  # the mapping went away (the file was truncated under it)
            self._map = None
            return None

    def _data_version(self) -> int:
        return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    def version(self) -> int:
        """A number that changes whenever the database has changed since the previous call."""
        header = self._read_header()
        seen = self._seen
        if header is not None and header == seen[0]:
            return seen[1]
        with self._lock:
            # The header is read before the statement: a commit after this read changes the header
            # again, so the next call looks again.
            header = self._read_header()
            self.statements += 1
            self._seen = (header, self._data_version())
            return self._seen[1]

    @property
    def mapped(self) -> bool:
        return self._map is not None

    def close(self) -> None:
        ChangeWatch._release(self._conn, self._map)
        self._map = None

    @staticmethod
    def _release(conn: sqlite3.Connection, shm: mmap.mmap | None) -> None:
        try:
            conn.close()
        except sqlite3.Error:
            pass
        if shm is not None:
            try:
                shm.close()
            except (OSError, ValueError):
                pass

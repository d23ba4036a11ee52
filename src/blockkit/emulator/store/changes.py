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

**Never close a descriptor of the ``-shm`` under SQLite.** POSIX record locks belong to the
process, not to the descriptor: closing *any* descriptor of a file drops every lock the process
holds on it, SQLite's included. SQLite keeps a shared lock on byte 128 of the ``-shm`` ("this
WAL-index is in use"); a process that sees no such lock believes it is the first user, truncates
the file and rebuilds it, and every process that has it mapped dies of SIGBUS. So the mapping
and its descriptor are shared per file (:class:`_SharedMaps`, keyed by device and inode), opened
once, and kept while any watch uses them. When the last watch lets go they are kept a while
longer (SQLite's own connections may still be open; SQLite itself defers closing its
descriptors for the same reason) and only the oldest of those idle ones is closed, once there
are more than :data:`IDLE_KEPT`. A file is never looked up by opening and closing it: ``os.stat``
finds its identity.
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

# Idle shared mappings (no watch uses them) kept open before the oldest is closed.
IDLE_KEPT = 32


class _SharedMaps:
    """One read-only mapping (and its descriptor) per ``-shm`` file in this process, counted by use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._maps: dict[tuple[int, int], list] = {}  # (dev, ino) -> [fd, mmap, users]
        self._idle: list[tuple[int, int]] = []        # keys with no user, oldest first

    def acquire(self, shm_path: str) -> tuple[tuple[int, int], mmap.mmap] | None:
        with self._lock:
            try:
                st = os.stat(shm_path)
            except OSError:
                return None
            key = (st.st_dev, st.st_ino)
            entry = self._maps.get(key)
            if entry is None:
                if st.st_size < HEADER_BYTES:
                    return None
                try:
                    fd = os.open(shm_path, os.O_RDONLY)
                except OSError:
                    return None
                # Whatever happens now, this descriptor is kept: closing it would drop SQLite's locks.
                fst = os.fstat(fd)
                key = (fst.st_dev, fst.st_ino)
                entry = self._maps.get(key)
                if entry is None:
                    try:
                        shm = mmap.mmap(fd, HEADER_BYTES, access=mmap.ACCESS_READ)
                    except (OSError, ValueError):
                        self._maps[key] = entry = [fd, None, 0]
                    else:
                        self._maps[key] = entry = [fd, shm, 0]
                else:
                    self._keep_spare(fd)
            if entry[1] is None:
                return None
            entry[2] += 1
            if key in self._idle:
                self._idle.remove(key)
            return key, entry[1]

    def _keep_spare(self, fd: int) -> None:
        # A second descriptor of a file already held (the path was replaced between stat and open):
        # it is not closed while the file's entry lives; it is closed with the entry.
        for entry in self._maps.values():
            if os.path.samestat(os.fstat(entry[0]), os.fstat(fd)):
                entry.append(fd)
                return

    def release(self, key: tuple[int, int]) -> None:
        with self._lock:
            entry = self._maps.get(key)
            if entry is None:
                return
            entry[2] = max(0, entry[2] - 1)
            if entry[2] == 0 and key not in self._idle:
                self._idle.append(key)
            while len(self._idle) > IDLE_KEPT:
                self._close(self._idle.pop(0))

    def _close(self, key: tuple[int, int]) -> None:
        entry = self._maps.pop(key)
        if entry[1] is not None:
            try:
                entry[1].close()
            except (OSError, ValueError):
                pass
        for fd in [entry[0], *entry[3:]]:
            try:
                os.close(fd)
            except OSError:
                pass

    def held(self) -> int:
        """How many ``-shm`` files this process holds open (the tests read it)."""
        with self._lock:
            return len(self._maps)


SHARED = _SharedMaps()


class ChangeWatch:
    """Tells whether the database at ``path`` has had a commit since the previous :meth:`version`."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        # A connection that never writes: data_version moves when any other connection commits.
        self._conn = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        version = self._data_version()  # opening the connection also makes sure -shm exists
        held = SHARED.acquire(f"{self.path}-shm")
        self._key: tuple[int, int] | None = held[0] if held else None
        self._map: mmap.mmap | None = held[1] if held else None
        # (the header as last read, the data_version read after it): one tuple, replaced whole, so a
        # reader never pairs a new header with an old version.
        self._seen: tuple[bytes | None, int] = (self._read_header(), version)
        self.statements = 1  # how many times data_version was asked (the tests read it)
        self._finalizer = weakref.finalize(self, ChangeWatch._release, self._conn, self._key)

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
        self._map = None
        self._finalizer()  # once: a later close or the collector does nothing

    @staticmethod
    def _release(conn: sqlite3.Connection, key: tuple[int, int] | None) -> None:
        try:
            conn.close()
        except sqlite3.Error:
            pass
        if key is not None:
            SHARED.release(key)

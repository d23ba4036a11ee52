"""The SQLite store: one file in the data directory, WAL mode, one connection per thread.

Starlette runs sync endpoints in a thread pool, so each thread gets its own
connection (``Store.connection()``); WAL lets those readers run while the CLI or
a request writes, and ``busy_timeout`` makes a writer wait for another instead
of failing at once. A thread's connection is closed when the thread ends (the
thread-local holder is dropped then): worker threads come and go with each event
loop, and a store that kept every dead thread's connection held two descriptors
(the file and its WAL) per thread until ``close()``. Every problem with the file itself (not SQLite, corrupt,
locked, another application's database, a schema newer than this blockkit) is
raised as one :class:`StoreError` with a one-line message.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from blockkit.emulator.errors import StoreError

DB_FILENAME = "emulator.sqlite3"
# PRAGMA application_id marks the file as ours ("BKem"); a database with another id is
# some other program's and is never touched.
APPLICATION_ID = 0x424B656D
DEFAULT_BUSY_TIMEOUT_MS = 5000
# How long a writer waits for another one; the tests shorten it to see "locked" quickly.
BUSY_TIMEOUT_VARIABLE = "BLOCKKIT_EMULATOR_BUSY_TIMEOUT_MS"


def default_busy_timeout_ms() -> int:
    try:
        return max(0, int(os.environ.get(BUSY_TIMEOUT_VARIABLE, DEFAULT_BUSY_TIMEOUT_MS)))
    except ValueError:
        return DEFAULT_BUSY_TIMEOUT_MS


# SQLite's primary result codes for a store that cannot take writes now (the disk, the file's
# permissions, the device); a running server answers these 503 instead of a 500 with a traceback.
UNAVAILABLE_CODES = {"SQLITE_FULL": "the disk is full", "SQLITE_READONLY": "the database file is read-only",
                     "SQLITE_IOERR": "an I/O error on the database file", "SQLITE_BUSY": "the database is busy",
                     "SQLITE_LOCKED": "the database is busy", "SQLITE_CANTOPEN": "cannot open the database file"}


def unavailable_reason(exc: BaseException) -> str | None:
    """Why the store cannot serve now (full disk, read-only file, I/O error, busy), or None for any other error.

    Reads SQLite's result code (``sqlite_errorname``, e.g. ``SQLITE_IOERR_WRITE``), not the message text.
    """
    if isinstance(exc, StoreError):
        return str(exc)
    if not isinstance(exc, sqlite3.Error):
        return None
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    for code, reason in UNAVAILABLE_CODES.items():
        if name == code or name.startswith(code + "_"):
            return reason
    lowered = str(exc).lower()
    if "disk" in lowered and "full" in lowered:
        return UNAVAILABLE_CODES["SQLITE_FULL"]
    if "readonly" in lowered:
        return UNAVAILABLE_CODES["SQLITE_READONLY"]
    return None


def describe_sqlite_error(path: Path, exc: sqlite3.Error, busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS) -> str:
    """One line that says what is wrong with the database file, for a person."""
    text = str(exc)
    lowered = text.lower()
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    if name == "SQLITE_FULL" or ("disk" in lowered and "full" in lowered):
        return f"{path}: the disk is full (free some space and start again; nothing was lost)"
    if name.startswith("SQLITE_READONLY") or "readonly" in lowered or "read-only" in lowered:
        return f"{path}: the database file is read-only (give this user write access to it, or use another --data)"
    if "locked" in lowered or "busy" in lowered:
        return (f"{path}: the database is locked by another process (waited {busy_timeout_ms / 1000:g} s);"
                " stop the other emulator or command using this data directory and try again")
    if "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
        return f"{path}: the database file is corrupt or not an SQLite database ({text})"
    if "unable to open" in lowered:
        return f"{path}: cannot open the database file (is the directory writable?)"
    if name.startswith("SQLITE_IOERR"):
        return f"{path}: an I/O error on the database file ({text})"
    return f"{path}: {text}"


def link_into_place(tmp: Path, path: Path) -> bool:
    """Give the finished file ``tmp`` the name ``path`` unless ``path`` exists; True when ours took it.

    A hard link never replaces a file another process put there first. A filesystem without hard
    links falls back to a rename after a look (a narrower window, but no worse than no check).
    """
    try:
        os.link(tmp, path)
        return True
    except FileExistsError:
        return False
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
            raise
    if path.exists():
        return False
    os.rename(tmp, path)
    return True


class _Held:
    """One thread's connection; closing it when the holder is dropped (the thread ended) frees its descriptors."""

    __slots__ = ("__weakref__", "conn")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def close(self) -> None:
        try:
            self.conn.close()
        except sqlite3.Error:  # a connection mid-statement in a dying thread: nothing to save
            pass

    def __del__(self) -> None:
        self.close()


class Store:
    """The data directory's database. Open with :meth:`open`; close with :meth:`close`."""

    def __init__(self, path: Path, *, busy_timeout_ms: int | None = None) -> None:
        self.path = path
        self.busy_timeout_ms = default_busy_timeout_ms() if busy_timeout_ms is None else busy_timeout_ms
        self._local = threading.local()
        self._lock = threading.Lock()
        self._writer = threading.Lock()  # one writer of this process at a time (see write())
        # Only the living threads' holders: a holder leaves this set when its thread ends.
        self._held: weakref.WeakSet[_Held] = weakref.WeakSet()
        self._closed = False
        # SQLite's automatic checkpoint on the connections made from now on; a serving emulator
        # turns it off and checkpoints from a thread of its own instead (store/checkpointer.py).
        self.auto_checkpoint = True

    # --- opening ----------------------------------------------------------------------

    @classmethod
    def open(cls, data_dir: Path, *, busy_timeout_ms: int | None = None, check: bool = True) -> Store:
        """Open (creating if needed) the store in ``data_dir``: validate, migrate, index.

        ``check`` runs SQLite's quick integrity check, which catches a damaged file
        before a request trips over it.
        """
        from blockkit.emulator.store import migrate

        data_dir = Path(data_dir)
        try:
            data_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"{data_dir}: cannot create the data directory: {exc.strerror or exc}") from None
        path = data_dir / DB_FILENAME
        if path.exists() and not path.is_file():
            raise StoreError(f"{path}: not a file")
        existed = path.is_file()
        if existed and path.stat().st_size == 0:
            # Never ours: a new store is made whole under a temporary name and linked into place
            # (_create), so an empty file is someone else's (a `touch`, a failed copy). Refused, not seeded.
            raise StoreError(f"{path}: an empty (zero-byte) file, not an emulator database; blockkit leaves it"
                             " alone: remove it to start with fresh data, or use another --data directory")
        if not existed:
            cls._create(path, busy_timeout_ms)
        store = cls(path, busy_timeout_ms=busy_timeout_ms)
        try:
            with store.guard():
                migrate.prepare(store)
                if check and existed:  # a file made just now has nothing to check
                    store._quick_check()
                migrate.apply_indexes(store)
        except BaseException:
            store.close()
            raise
        return store

    @classmethod
    def _create(cls, path: Path, busy_timeout_ms: int | None) -> None:
        """Make an empty store file (our application_id, WAL) under a temporary name, then link it into place.

        A crash here leaves at most a stray ``.emulator.sqlite3.new-*`` file, never a half-made
        ``emulator.sqlite3``; if another process linked its own first, that one is used.
        """
        tmp = path.with_name(f".{path.name}.new-{os.getpid()}-{threading.get_ident()}")
        for leftover in (tmp, tmp.with_name(tmp.name + "-wal"), tmp.with_name(tmp.name + "-shm")):
            leftover.unlink(missing_ok=True)
        try:
            conn = sqlite3.connect(tmp, isolation_level=None)
            try:
                conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                conn.execute("PRAGMA journal_mode = WAL")
            finally:
                conn.close()
            with open(tmp, "rb") as handle:
                os.fsync(handle.fileno())
            link_into_place(tmp, path)
        except sqlite3.Error as exc:
            raise StoreError(describe_sqlite_error(path, exc, busy_timeout_ms or DEFAULT_BUSY_TIMEOUT_MS)) from None
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                raise StoreError(f"{path}: the disk is full (free some space and start again)") from None
            raise StoreError(f"{path}: cannot create the database file: {exc.strerror or exc}") from None
        finally:
            tmp.unlink(missing_ok=True)

    def check_writable(self) -> None:
        """Raise a one-line StoreError unless a write can be made (a 0444 file in a writable directory opens
        read-only and would fail only at the first write). The probe row is rolled back."""
        conn = self.connection()
        with self.guard():
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute("INSERT INTO meta (key, value) VALUES ('blockkit.write-probe', 'null')"
                             " ON CONFLICT (key) DO UPDATE SET value = excluded.value")
            finally:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")

    def _quick_check(self) -> None:
        rows = self.connection().execute("PRAGMA quick_check").fetchall()
        problems = [row[0] for row in rows if row[0] != "ok"]
        if problems:
            raise StoreError(f"{self.path}: the database file is corrupt ({problems[0]})")

    # --- connections ------------------------------------------------------------------

    def connection(self) -> sqlite3.Connection:
        """This thread's connection (made on first use)."""
        held = getattr(self._local, "held", None)
        if held is None:
            if self._closed:
                raise StoreError(f"{self.path}: the store is closed")
            held = _Held(self._connect())
            with self._lock:
                self._held.add(held)
            self._local.held = held
        return held.conn

    def _connect(self) -> sqlite3.Connection:
        try:
            # isolation_level=None: no implicit transactions; read() and write() say BEGIN.
            # check_same_thread=False only so close() can close every thread's connection;
            # each connection is still used by the one thread that made it.
            conn = sqlite3.connect(self.path, timeout=self.busy_timeout_ms / 1000, isolation_level=None,
                                   check_same_thread=False)
        except sqlite3.Error as exc:
            raise StoreError(describe_sqlite_error(self.path, exc, self.busy_timeout_ms)) from None
        conn.row_factory = sqlite3.Row
        try:
            for pragma in (
                f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}",
                "PRAGMA foreign_keys = ON",
                # Safe with WAL: a crash can lose the last commits, never corrupt the file; a
                # clean stop checkpoints (see checkpoint()).
                "PRAGMA synchronous = NORMAL",
                "PRAGMA temp_store = MEMORY",
                "PRAGMA cache_size = -16000",
            ):
                conn.execute(pragma)
            if not self.auto_checkpoint:
                conn.execute("PRAGMA wal_autocheckpoint = 0")
        except sqlite3.Error as exc:
            conn.close()
            raise StoreError(describe_sqlite_error(self.path, exc, self.busy_timeout_ms)) from None
        return conn

    # --- transactions -----------------------------------------------------------------

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: every query inside sees one snapshot."""
        conn = self.connection()
        if conn.in_transaction:  # nested inside read()/write(): share the outer one
            yield conn
            return
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            if conn.in_transaction:  # an error inside may already have ended it
                conn.execute("COMMIT")

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (BEGIN IMMEDIATE: take the write lock now, waiting up to busy_timeout).

        Writers of this process queue on one in-process lock before they ask SQLite for its
        write lock. SQLite makes a waiting writer sleep and poll (1, 2, 5, ... up to 100 ms a
        try), so under concurrent writes the waits, not the work, set the latency; a lock
        hands over the moment the writer before it commits. Another process (the CLI) still
        meets SQLite's own lock and busy_timeout. Readers never wait for it (WAL).
        """
        conn = self.connection()
        if conn.in_transaction:
            yield conn
            return
        with self._writer:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    @contextmanager
    def guard(self) -> Iterator[None]:
        """Turn SQLite errors about the file into one-line StoreErrors (for the CLI and start-up)."""
        try:
            yield
        except sqlite3.Error as exc:
            raise StoreError(describe_sqlite_error(self.path, exc, self.busy_timeout_ms)) from None

    # --- facts about the file ---------------------------------------------------------

    def pragma(self, name: str) -> int:
        return int(self.connection().execute(f"PRAGMA {name}").fetchone()[0])

    @property
    def schema_version(self) -> int:
        return self.pragma("user_version")

    # --- stopping ---------------------------------------------------------------------

    def checkpoint(self) -> None:
        """Copy the WAL into the main file and truncate it, so the file alone holds everything."""
        with self.guard():
            self.connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        """Close every thread's connection. Idempotent."""
        with self._lock:
            held, self._held = list(self._held), weakref.WeakSet()
            self._closed = True
        for one in held:
            one.close()
        self._local = threading.local()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

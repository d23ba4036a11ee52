"""The one clock of the emulator: real UTC time plus an offset kept in the store.

Every origin (catalogue, OAuth, orchestration) and the CLI read time here, so
``POST {base_url}/__emulator/clock {"advance": N}`` moves code and token expiry,
rate-limit windows, fund expiry and purchase ceilings together. The offset is
persisted in the ``meta`` table, so it survives a restart; the clock never runs
backwards (advance takes only finite numbers >= 0).

The store holds the offset; a Clock keeps a copy in memory. The serving
process's clock follows the store (``follow=True``): when anything commits
(``store/changes.py`` tells, from memory) it reads the offset again, so an
``emulator import --replace`` or ``reset`` while it runs moves its clock to the
imported one at once, and an advance adds to the offset the store holds, never
to a stale copy. Another process (the CLI) reads the offset when it constructs
its Clock.
"""

from __future__ import annotations

import math
import sqlite3
import threading
import time
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Callable

from blockkit.emulator.errors import StoreError
from blockkit.emulator.store import meta
from blockkit.emulator.store.changes import ChangeWatch

if TYPE_CHECKING:
    from blockkit.emulator.store import Store


def format_timestamp(moment: datetime) -> str:
    """The one timestamp form of the emulator: UTC, milliseconds, 'Z' (as JavaScript's toISOString)."""
    moment = moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_timestamp(text: str) -> datetime:
    """Read a stored timestamp (or any ISO-8601 form with an offset) as an aware datetime."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


class ClockError(ValueError):
    """An advance that is not a finite number of seconds >= 0."""


class Clock:
    """Real time plus a persisted offset. Thread-safe."""

    def __init__(self, store: Store | None = None, *, wall: Callable[[], float] = time.time,
                 follow: bool = False) -> None:
        self._store = store
        self._wall = wall
        self._lock = threading.Lock()
        self._offset = 0.0
        self._watch: ChangeWatch | None = None
        self._seen = -1
        if store is not None:
            if follow:
                self._watch = ChangeWatch(store.path)
                self._seen = self._watch.version()
            with store.read() as db:
                self._offset = _stored_offset(db)

    @property
    def offset(self) -> float:
        """Seconds the emulated clock runs ahead of real time."""
        self._follow()
        return self._offset

    def timestamp(self) -> float:
        """Now, as POSIX seconds."""
        self._follow()
        return self._wall() + self._offset

    def _follow(self) -> None:
        # A memory read while nothing commits; after a commit (anyone's) the offset is read again.
        watch = self._watch
        if watch is None:
            return
        try:
            version = watch.version()
            if version == self._seen:
                return
            with self._lock:
                assert self._store is not None
                with self._store.read() as db:
                    self._offset = _stored_offset(db)
                self._seen = version
        except (sqlite3.Error, StoreError):
            pass  # the store is closing or unavailable: keep the offset last read

    def close(self) -> None:
        """Stop following the store (the serving process's clock, at stop or when a reset replaces it)."""
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.close()

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.timestamp(), tz=timezone.utc)

    def iso(self) -> str:
        return format_timestamp(self.now())

    def after(self, seconds: float) -> datetime:
        return self.now() + timedelta(seconds=seconds)

    def advance(self, seconds: object) -> datetime:
        """Move the clock forward by ``seconds`` (finite, >= 0) and persist the new offset."""
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
            raise ClockError("advance must be a number of seconds")
        if not math.isfinite(seconds) or seconds < 0:
            raise ClockError("advance must be a finite number of seconds, 0 or more")
        with self._lock:
            offset = self._offset + float(seconds)
            if not math.isfinite(offset) or not _representable(self._wall() + offset):
                raise ClockError("advance would move the clock past the year 9999")
            if self._store is not None:
                with self._store.write() as db:
                    # Onto the offset the store holds: an import since may have brought another one.
                    offset = _stored_offset(db) + float(seconds)
                    if not math.isfinite(offset) or not _representable(self._wall() + offset):
                        raise ClockError("advance would move the clock past the year 9999")
                    meta.put(db, meta.CLOCK_OFFSET, offset)
            self._offset = offset
        return self.now()


def _stored_offset(db: sqlite3.Connection) -> float:
    value = meta.get(db, meta.CLOCK_OFFSET, 0.0)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _representable(timestamp: float) -> bool:
    try:
        datetime.fromtimestamp(timestamp, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return False
    return True

"""The one clock of the emulator: real UTC time plus an offset kept in the store.

Every origin (catalogue, OAuth, orchestration) and the CLI read time here, so
``POST {base_url}/__emulator/clock {"advance": N}`` moves code and token expiry,
rate-limit windows, fund expiry and purchase ceilings together. The offset is
persisted in the ``meta`` table, so it survives a restart; the clock never runs
backwards (advance takes only finite numbers >= 0).

The serving process owns the offset and keeps it in memory; another process
(the CLI writing while the server runs) reads the persisted value when it
constructs its Clock.
"""

from __future__ import annotations

import math
import threading
import time
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Callable

from blockkit.emulator.store import meta

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

    def __init__(self, store: Store | None = None, *, wall: Callable[[], float] = time.time) -> None:
        self._store = store
        self._wall = wall
        self._lock = threading.Lock()
        self._offset = 0.0
        if store is not None:
            with store.read() as db:
                self._offset = float(meta.get(db, meta.CLOCK_OFFSET, 0.0))

    @property
    def offset(self) -> float:
        """Seconds the emulated clock runs ahead of real time."""
        return self._offset

    def timestamp(self) -> float:
        """Now, as POSIX seconds."""
        return self._wall() + self._offset

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
                    meta.put(db, meta.CLOCK_OFFSET, offset)
            self._offset = offset
        return self.now()


def _representable(timestamp: float) -> bool:
    try:
        datetime.fromtimestamp(timestamp, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return False
    return True

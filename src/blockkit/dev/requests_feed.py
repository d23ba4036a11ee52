"""The block's own web requests to the local platform, for the host page's trace panel.

The block's frame calls the emulated catalogue directly (``fetch`` with its token, from its own
origin or an opaque one): the host page never sees those requests. The emulator's
:class:`~blockkit.dev.platform.BlockCors` tells each one to the session, which writes it to the
trace as a ``call`` event (``via: "http"``) and adds it here. The host page asks for what is new
with a long poll (``POST /api/requests``): the answer comes as soon as a request is recorded, or
empty after :data:`WAIT_S`, or at once when the run stops (so a stop never waits on an open poll).

Requests are recorded on the emulator's event loop; pollers wait on the host server's. A waiter
is woken with ``call_soon_threadsafe`` on its own loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from typing import Any

# How long one poll waits for a request before answering empty (the page asks again at once).
WAIT_S = 20.0
# The newest requests kept for pages that poll late; the trace file has all of them.
KEEP = 500


class RequestFeed:
    """The recorded requests of one run, newest :data:`KEEP`, each a trace event with its ``seq``."""

    def __init__(self, keep: int = KEEP) -> None:
        self._lock = threading.Lock()
        self._requests: deque[dict[str, Any]] = deque(maxlen=keep)
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
        self._last_seq = 0
        self.closed = False

    @property
    def last_seq(self) -> int:
        """The trace ``seq`` of the newest request (0 before any): a new page asks for what follows it."""
        with self._lock:
            return self._last_seq

    def add(self, event: dict[str, Any]) -> None:
        """A request as the trace recorded it (``seq`` and ``at`` stamped)."""
        with self._lock:
            self._requests.append(event)
            self._last_seq = max(self._last_seq, int(event.get("seq") or 0))
            waiters, self._waiters = self._waiters, []
        _wake(waiters)

    def after(self, seq: int) -> list[dict[str, Any]]:
        with self._lock:
            return [event for event in self._requests if int(event.get("seq") or 0) > seq]

    async def wait_after(self, seq: int, timeout: float = WAIT_S) -> list[dict[str, Any]]:
        """The requests recorded after ``seq``: at once if there are any, else the first to come, else none
        after ``timeout`` seconds or when the feed closes."""
        ready = asyncio.Event()
        with self._lock:
            found = [event for event in self._requests if int(event.get("seq") or 0) > seq]
            if found or self.closed:
                return found
            waiter = (asyncio.get_running_loop(), ready)
            self._waiters.append(waiter)
        try:
            await asyncio.wait_for(ready.wait(), timeout)
        except asyncio.TimeoutError:
            pass
        finally:
            with self._lock:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
        return self.after(seq)

    def close(self) -> None:
        """The run stops: every open poll answers now, and later ones at once."""
        with self._lock:
            self.closed = True
            waiters, self._waiters = self._waiters, []
        _wake(waiters)


def _wake(waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]]) -> None:
    for loop, ready in waiters:
        try:
            loop.call_soon_threadsafe(ready.set)
        except RuntimeError:
            pass  # that loop has closed: nobody is waiting there any more

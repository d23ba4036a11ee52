"""Connections that send nothing, or send their headers slowly, must not starve a loopback server.

uvicorn closes a kept-alive connection that stays idle after a response (``timeout_keep_alive``),
but it waits forever for the first request of a connection, and for the rest of a request's
headers once a few bytes of them came. Each such connection holds a file descriptor; under the
common limit of 1,024 descriptors a thousand of them leave none for anyone else, and the
server logs ``accept()`` EMFILE errors until they go.

:class:`ConnectionPool` (one per process: the limit is the process's) fixes both, through the
HTTP protocol class that :func:`uvicorn_settings` hands to uvicorn:

- a header deadline: a connection whose request headers are not complete within
  ``HEADER_TIMEOUT_S`` of it opening (or, on a kept-alive connection, of the first byte of its
  next request) is closed, as nginx's ``client_header_timeout`` and Apache's ``mod_reqtimeout`` do;
- a kept-alive connection idle after an answer is closed after ``KEEP_ALIVE_S``, well above the
  clients' own pool expiry (httpx 5 s, Node's undici 4 s, aiohttp 15 s, Go 90 s): a client
  reuses a connection it believes alive, and a server that closes at the same moment closes it
  under the client's request ("Server disconnected without sending a response"). Neither the
  keep-alive timeout nor the header deadline closes a connection with unread bytes: those are a
  request on its way in (they arrived after the loop looked, before the timer ran);
- a cap on open connections below the descriptor limit (``cap_for``): a connection over the
  cap closes the connection that has waited longest for its headers, or, when every connection
  is busy with a request, is closed itself. The descriptors never run out, and a client that
  sends its request at once is served even while others hold connections open.

Every server of the process shares the one pool: the three emulator origins and, under
``blockkit dev``, its host and block servers too.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import socket
import threading
from collections import OrderedDict
from typing import Any

HEADER_TIMEOUT_S = 10.0     # from opening (or the previous answer) to the end of the request's headers
# Set: another header deadline in seconds (the slow-client tests use a short one).
HEADER_TIMEOUT_ENV = "BLOCKKIT_HEADER_TIMEOUT_S"
KEEP_ALIVE_S = 120          # idle after an answer: above every common client's pool expiry (see above)
UNREAD_GRACE_S = 1.0        # a header deadline that finds bytes unread waits this much more, once
MAX_CONNECTIONS = 4096      # a ceiling when descriptors are plentiful
# How many connections may be accepted before their protocol has taken them (asyncio accepts a
# burst in one go, before any protocol runs): the most the cap can be overshot by.
ACCEPT_BURST = 32
RESERVED_FDS = 256
# The longest request target (path and query) served: httptools.parse_url keeps offsets in 16 bits.
# A longer one is answered 414 (the platform's own server, Node, refuses far shorter ones: its
# request line and headers together may not pass 16 KiB).
TARGET_LIMIT = 65535          # for the store (3 per thread), files being sent, the listening sockets, ...


def cap_for(soft_limit: int) -> int:
    """How many connections a process with ``soft_limit`` descriptors may hold open."""
    if soft_limit <= 0 or soft_limit == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    reserve = max(RESERVED_FDS, soft_limit // 4)
    return max(16, min(MAX_CONNECTIONS, soft_limit - reserve))


def configured_header_timeout() -> float:
    value = os.environ.get(HEADER_TIMEOUT_ENV)
    try:
        seconds = float(value) if value else HEADER_TIMEOUT_S
    except ValueError:
        return HEADER_TIMEOUT_S
    return seconds if 0 < seconds < 3600 else HEADER_TIMEOUT_S


def descriptor_limit() -> int:
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return int(soft)


class ConnectionPool:
    """The open connections of every server in this process, and the ones still waiting for headers."""

    def __init__(self, cap: int | None = None, header_timeout: float | None = None) -> None:
        self.cap = cap if cap is not None else cap_for(descriptor_limit())
        self.header_timeout = header_timeout if header_timeout is not None else configured_header_timeout()
        self._lock = threading.Lock()
        self._open: set[Any] = set()
        # Connections waiting for (the rest of) a request's headers, oldest first.
        self._waiting: OrderedDict[Any, None] = OrderedDict()
        self.closed_for_deadline = 0
        self.closed_for_cap = 0
        self._pending = 0  # accepted sockets no protocol has taken yet

    def guard_socket(self, sock: socket.socket) -> socket.socket:
        """``sock`` (listening) as a socket whose accept() stops a burst at ``ACCEPT_BURST`` untaken connections."""
        guarded = _BurstLimitedSocket(sock.family, sock.type, sock.proto, fileno=sock.detach())
        guarded.pool = self
        guarded.setblocking(False)
        return guarded

    def may_accept(self) -> bool:
        with self._lock:
            if self._pending >= ACCEPT_BURST:
                return False
            self._pending += 1
            return True

    def accept_failed(self) -> None:
        with self._lock:
            self._pending = max(0, self._pending - 1)

    @property
    def open_count(self) -> int:
        with self._lock:
            return len(self._open)

    def opened(self, conn: Any) -> None:
        with self._lock:
            self._pending = max(0, self._pending - 1)
            self._open.add(conn)
            self._waiting[conn] = None
            over = len(self._open) > self.cap
            victim = None
            if over:
                victim = next(iter(self._waiting)) if self._waiting else conn
                self._forget(victim)
                self.closed_for_cap += 1
        if victim is not None:
            victim.close_from_pool()

    def waiting(self, conn: Any) -> None:
        with self._lock:
            if conn in self._open:
                self._waiting[conn] = None
                self._waiting.move_to_end(conn)

    def busy(self, conn: Any) -> None:
        with self._lock:
            self._waiting.pop(conn, None)

    def closed(self, conn: Any) -> None:
        with self._lock:
            self._forget(conn)

    def deadline_passed(self) -> None:
        with self._lock:
            self.closed_for_deadline += 1

    def _forget(self, conn: Any) -> None:
        self._open.discard(conn)
        self._waiting.pop(conn, None)


class _BurstLimitedSocket(socket.socket):
    """A listening socket that reports "nothing to accept" while ``ACCEPT_BURST`` connections wait
    for their protocol: asyncio then ends the burst and runs those protocols (which enforce the cap)
    before it accepts more, so the descriptors in use stay near the cap."""

    pool: ConnectionPool

    def accept(self) -> tuple[socket.socket, Any]:
        if not self.pool.may_accept():
            raise BlockingIOError("the connection cap's accept burst is full")
        try:
            return super().accept()
        except BaseException:
            self.pool.accept_failed()
            raise


_PROCESS_POOL: ConnectionPool | None = None
_PROCESS_POOL_LOCK = threading.Lock()


def process_pool() -> ConnectionPool:
    """The pool every server of this process shares (made on first use)."""
    global _PROCESS_POOL
    with _PROCESS_POOL_LOCK:
        if _PROCESS_POOL is None:
            _PROCESS_POOL = ConnectionPool()
        return _PROCESS_POOL


class _PoolGuarded:
    """The header deadline and the pool's cap, for either of uvicorn's HTTP protocols.

    A protocol class mixes this in before uvicorn's own and says, through
    :meth:`_awaiting_headers`, whether the connection is waiting for a request's headers.
    """

    _pool: ConnectionPool
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport

    def _awaiting_headers(self) -> bool:  # pragma: no cover - each protocol says
        raise NotImplementedError

    def _opened(self) -> None:
        self._header_timer: asyncio.TimerHandle | None = None
        self._counted = True
        self._idle = False  # kept alive after an answer, no byte of the next request yet
        self._graced = False
        self._arm_header_deadline()
        self._pool.opened(self)

    def _bytes_in(self) -> None:
        """Bytes came: on an idle kept-alive connection they start the next request's header deadline."""
        if self._idle:
            self._idle = False
            if self._counted and self._awaiting_headers() and not self.transport.is_closing():
                self._arm_header_deadline()

    def _headers_in(self) -> None:
        """The request line and headers are in: the rest is the app's business."""
        self._idle = False
        self._graced = False
        if self._counted:
            self._cancel_header_deadline()
            self._pool.busy(self)

    def _answered(self) -> None:
        # Idle now: the keep-alive timeout (uvicorn's) closes it if nothing comes; the header deadline
        # starts with the next request's first byte. It counts as waiting for the cap's choice.
        if self._counted and not self.transport.is_closing() and self._awaiting_headers():
            self._cancel_header_deadline()
            self._idle = True
            self._pool.waiting(self)

    def timeout_keep_alive_handler(self) -> None:
        if unread_bytes(self.transport):
            return  # a request arrived as the timer ran: it is read next, and answered
        super().timeout_keep_alive_handler()  # type: ignore[misc]

    def _arm_header_deadline(self, seconds: float | None = None) -> None:
        self._cancel_header_deadline()
        self._header_timer = self.loop.call_later(self._pool.header_timeout if seconds is None else seconds,
                                                  self._header_deadline)

    def _cancel_header_deadline(self) -> None:
        timer = getattr(self, "_header_timer", None)
        if timer is not None:
            timer.cancel()
            self._header_timer = None

    def _header_deadline(self) -> None:
        self._header_timer = None
        if self._awaiting_headers() and not self.transport.is_closing():
            if not self._graced and unread_bytes(self.transport):
                self._graced = True  # bytes the loop has not read yet: read them first (once per request)
                self._arm_header_deadline(UNREAD_GRACE_S)
                return
            self._pool.deadline_passed()
            self.transport.close()

    def send_400_response(self, msg: str) -> None:
        """A request the parser refused: answered in JSON, as every route of the local platform answers,
        and closed. A request target longer than the parser takes is a 414."""
        if getattr(self, "_target_too_long", False):
            status, reason, text = 414, b"URI Too Long", f"URI Too Long: the request target is over {TARGET_LIMIT} bytes"
        else:
            status, reason, text = 400, b"Bad Request", msg
        body = json.dumps({"error": text}).encode()
        head = [b"HTTP/1.1 %d %s\r\n" % (status, reason)]
        head += [name + b": " + value + b"\r\n" for name, value in self.server_state.default_headers]  # type: ignore[attr-defined]
        head += [b"content-type: application/json\r\n", b"content-length: %d\r\n" % len(body),
                 b"connection: close\r\n\r\n"]
        self.transport.write(b"".join(head) + body)
        self.transport.close()

    def _release(self) -> None:
        if getattr(self, "_counted", False):
            self._counted = False
            self._cancel_header_deadline()
            self._pool.closed(self)

    def close_from_pool(self) -> None:
        """Close this connection (called from any thread)."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            self._close_now()
        else:
            self.loop.call_soon_threadsafe(self._close_now)

    def _close_now(self) -> None:
        self._cancel_header_deadline()
        if not self.transport.is_closing():
            self.transport.abort()  # nothing to flush: it has not sent a request


def unread_bytes(transport: Any) -> int:
    """How many bytes wait in the connection's socket, not yet read by the loop (0 when unknown)."""
    sock = transport.get_extra_info("socket") if transport is not None else None
    if sock is None:
        return 0
    try:
        import fcntl
        import struct
        import termios

        answer = fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0\0\0\0")
        return int(struct.unpack("i", answer)[0])
    except (ImportError, OSError, ValueError):
        return 0


def h11_protocol_class(pool: ConnectionPool) -> type[Any]:
    """uvicorn's h11 protocol (pure Python), with the header deadline and the pool's cap."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11Protocol(_PoolGuarded, H11Protocol):
        _pool = pool

        def _awaiting_headers(self) -> bool:
            return bool(self.conn.their_state is h11.IDLE)

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._opened()

        def connection_lost(self, exc: Exception | None) -> None:
            self._release()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            self._bytes_in()
            super().data_received(data)
            if not self._awaiting_headers():
                self._headers_in()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._answered()

        def handle_websocket_upgrade(self, event: Any) -> None:
            # The WebSocket protocol takes the transport over; it is no longer this pool's to count.
            self._release()
            super().handle_websocket_upgrade(event)

    return GuardedH11Protocol


def httptools_protocol_class(pool: ConnectionPool) -> type[Any]:
    """uvicorn's httptools protocol (llhttp, in C), with the header deadline and the pool's cap.

    httptools parses a request in callbacks: a connection waits for headers while every request
    whose headers came (pipelined ones included) has been answered.
    """
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class GuardedHttpToolsProtocol(_PoolGuarded, HttpToolsProtocol):
        _pool = pool

        def _awaiting_headers(self) -> bool:
            return self._unanswered == 0

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            self._unanswered = 0
            super().connection_made(transport)
            self._opened()

        def connection_lost(self, exc: Exception | None) -> None:
            self._release()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            self._bytes_in()
            super().data_received(data)

        def on_message_begin(self) -> None:
            self._target_too_long = False
            super().on_message_begin()

        def on_url(self, url: bytes) -> None:
            super().on_url(url)
            if len(self.url) > TARGET_LIMIT:
                self._target_too_long = True

        def on_headers_complete(self) -> None:
            self._unanswered += 1
            self._headers_in()
            super().on_headers_complete()

        def on_response_complete(self) -> None:
            self._unanswered = max(0, self._unanswered - 1)
            super().on_response_complete()
            self._answered()

        def handle_websocket_upgrade(self) -> None:
            self._release()
            super().handle_websocket_upgrade()

    return GuardedHttpToolsProtocol


def protocol_class(pool: ConnectionPool) -> type[Any]:
    """The guarded HTTP protocol: httptools when it is installed (the server extra has it), else h11.

    httptools parses in C; issue 27 measured uvicorn 1.72x faster with it on a cached catalogue
    read at 16 connections, with no other change.
    """
    try:
        import httptools  # noqa: F401
    except ImportError:
        return h11_protocol_class(pool)
    return httptools_protocol_class(pool)


def uvicorn_settings(pool: ConnectionPool | None = None, *, keep_alive: float = KEEP_ALIVE_S) -> dict[str, Any]:
    """The uvicorn.Config arguments every blockkit server takes: the guarded protocol and the limits."""
    pool = pool or process_pool()
    return {
        "http": protocol_class(pool),
        "timeout_keep_alive": keep_alive,
        # uvicorn answers 503 past this many connections or requests in progress on one server; the
        # pool's cap (plus the moment between a connection over the cap and its victim's close)
        # comes first, so this is the backstop for requests, which the pool does not count.
        "limit_concurrency": pool.cap + 64,
    }

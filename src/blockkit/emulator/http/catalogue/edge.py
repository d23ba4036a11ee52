"""The platform's edge cache, in front of the catalogue: a repeat of an anonymous GET that the
catalogue served from its own cache is answered here, before the middleware and the router.

The platform's anonymous catalogue answers are cached at its CDN (``Cache-Control: public,
s-maxage=300``); the emulator keeps them until the store changes instead (``fragments.py``),
and until now still ran every such repeat through Starlette's stack: the region and block-token
middleware, the exception handlers, the router, the endpoint. That stack was most of a cached
read's time (issue 27: half the rate of a bare Starlette app).

Only answers the catalogue itself marks are kept (:func:`mark`, called where it caches a body
or serves one from its cache), under the generation of the data they were built from: an
answer whose data changed since is never sent. The key holds everything those answers depend
on (path, query, every Host value, scheme, the listening address, the region as the clamp reads it) and the Origin header
besides; a request with an Authorization header always goes through.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from blockkit.emulator.http.catalogue import fragments
from blockkit.emulator.http.region import restricted_by_headers

if TYPE_CHECKING:
    from starlette.requests import Request

    from blockkit.emulator.store import Store

STATE_KEY = "blockkit.edge"   # in the request's scope["state"]: the generation a marked answer belongs to
# Of kept answers, keys and headers included (security review 2, S07); cleared whole when full.
# A request whose key is longer than fragments.MAX_KEY_BYTES (a query padded with made-up
# parameters) is answered but not kept.
MAX_BYTES = 64 * 1024 * 1024


def mark(request: Request, generation: int) -> None:
    """Let the edge keep this request's answer (a 200 built from, or cached under, ``generation``)."""
    request.scope.setdefault("state", {})[STATE_KEY] = generation


class EdgeCache:
    """Pure ASGI, the catalogue's outermost middleware (see the module docstring)."""

    def __init__(self, app: Any, store: Store) -> None:
        self.app = app
        self.store = store
        # key -> (generation, start message, body message, bytes counted)
        self._entries: dict[tuple[Any, ...], tuple[int, dict[str, Any], dict[str, Any], int]] = {}
        self._bytes = 0
        self._generation: int | None = None  # of every kept answer
        self.hits = 0  # answers sent from here (the tests read it)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "GET":
            await self.app(scope, receive, send)
            return
        # Every value of a repeated Host or Origin header, and the region as the clamp reads it (any
        # value saying restricted): the key holds what the answer was built from, not the last value.
        host: tuple[bytes, ...] = ()
        origin: tuple[bytes, ...] = ()
        for name, value in scope["headers"]:
            if name == b"authorization":
                await self.app(scope, receive, send)
                return
            if name == b"host":
                host += (value,)
            elif name == b"origin":
                origin += (value,)
        region = restricted_by_headers(scope["headers"])
        server = scope.get("server")
        key = (scope["path"], scope.get("query_string", b""), host, origin, region, scope.get("scheme"),
               tuple(server) if server else None)
        _cache, generation = fragments.cache_for(self.store)
        entry = self._entries.get(key)
        if entry is not None and entry[0] == generation:
            self.hits += 1
            await send(entry[1])
            await send(entry[2])
            return
        sent: list[dict[str, Any]] = []

        async def keeping(message: dict[str, Any]) -> None:
            sent.append(message)
            await send(message)

        await self.app(scope, receive, keeping)
        marked = (scope.get("state") or {}).get(STATE_KEY)
        if (marked is None or len(sent) != 2 or sent[0].get("type") != "http.response.start"
                or sent[0].get("status") != 200 or sent[1].get("more_body")):
            return
        _cache, now = fragments.cache_for(self.store)
        if marked != now:
            return  # built from data that has changed since
        held = fragments.key_bytes(key)
        if held > fragments.MAX_KEY_BYTES:
            return
        size = (len(sent[1].get("body", b"")) + held + fragments.ENTRY_OVERHEAD
                + sum(len(name) + len(value) for name, value in sent[0].get("headers", ())))
        if now != self._generation or self._bytes + size > MAX_BYTES:
            self._entries.clear()  # answers of older data, or full
            self._bytes = 0
            self._generation = now
        previous = self._entries.get(key)
        if previous is not None:
            self._bytes -= previous[3]
        self._entries[key] = (marked, sent[0], sent[1], size)
        self._bytes += size

    @property
    def bytes_held(self) -> int:
        """What the kept answers hold, keys and headers included (the tests read it)."""
        return self._bytes

"""Host and Origin checks for servers on loopback: DNS rebinding and cross-site requests.

A server on 127.0.0.1 is out of reach of other machines, but not of the web
pages the developer's browser opens:

- DNS rebinding: a page on ``attacker.example`` makes that name resolve to
  127.0.0.1, and the browser then treats the loopback server as part of the
  attacker's own origin, free to read. The request still says
  ``Host: attacker.example:PORT``, so a server that answers only its own names
  is out of reach. (Vite's ``server.allowedHosts`` exists for the same reason.)
- Cross-site writes: a form post, or a ``text/plain`` fetch, from any page
  reaches the server without a CORS preflight. It carries the page's
  ``Origin``, so a server that takes writes only from its own origin refuses it.
- WebSockets: CORS does not apply to them at all; the handshake's ``Origin`` is
  the only thing that tells a page on another site apart.

:class:`HostGuard` is plain ASGI middleware: it wraps any Starlette (or other
ASGI) app, so the dev host, the block origin and the emulator share one
implementation. It imports nothing beyond the standard library.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# Every loopback server answers to these names, on its own port only.
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
# The origin of a document with no origin of its own, such as a frame sandboxed
# without allow-same-origin. Any page can make one, so it is allowed only where
# a server must serve such a frame.
OPAQUE_ORIGIN = "null"
# Methods a page may send cross-site that change nothing (RFC 9110 §9.2.1).
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
REFUSED_STATUS = 403

_LABEL = r"[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?"
_HOST_NAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*|\[[0-9a-f:.]+\]")
# An allowlist entry may start with a dot: the name and every name below it.
_ENTRY_NAME = re.compile(rf"\.?{_LABEL}(?:\.{_LABEL})*|\[[0-9a-f:.]+\]")
_PORT = re.compile(r"[0-9]{1,5}")
# How much of a refused header a refusal quotes.
_QUOTE_LIMIT = 80


def split_host(value: str, *, entry: bool = False) -> tuple[str, int | None] | None:
    """``(name, port)`` of a ``Host`` value (``name``, ``name:port``, ``[v6]:port``).

    Names are lower-cased; ``port`` is None when the value has none. Returns None
    for anything else (a bare IPv6 address, userinfo, a trailing dot, an empty
    or out-of-range port). With ``entry``, a leading dot is allowed (see
    :class:`HostAllowlist`).
    """
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[: end + 1], value[end + 1 :]
    else:
        name, colon, port_text = value.partition(":")
        rest = colon + port_text
    if not (_ENTRY_NAME if entry else _HOST_NAME).fullmatch(name):
        return None
    if not rest:
        return name, None
    port_text = rest[1:]
    if rest[0] != ":" or not _PORT.fullmatch(port_text) or not 0 < int(port_text) < 65536:
        return None
    return name, int(port_text)


def check_entry(entry: str) -> str:
    """``entry`` normalised for :class:`HostAllowlist`, or ValueError saying what is wrong."""
    parsed = split_host(entry, entry=True)
    if parsed is None:
        raise ValueError(
            f"{entry!r} is not a host name: give a name such as my-box.local, "
            "my-box.local:5173, or .example.test for that name and every name below it"
        )
    name, port = parsed
    return name if port is None else f"{name}:{port}"


@dataclass(frozen=True)
class HostAllowlist:
    """The names one server answers to.

    The loopback names on the server's own ``port``, plus each ``extra`` entry:
    ``name`` (any port: a tunnel or a proxy in front may use another),
    ``name:port`` (that port only) or ``.name`` (the name and every name below it).
    """

    port: int
    extra: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "extra", tuple(check_entry(entry) for entry in self.extra))

    def allows(self, host: str | None, default_port: int = DEFAULT_PORTS["http"]) -> bool:
        """Whether a request whose ``Host`` is ``host`` is for this server."""
        parsed = split_host(host) if host else None
        if parsed is None:
            return False
        name, port = parsed
        port = default_port if port is None else port
        if name in LOOPBACK_NAMES:
            return port == self.port
        return any(_entry_matches(entry, name, port) for entry in self.extra)

    def allows_origin(self, origin: str) -> bool:
        """Whether ``origin`` (``scheme://host[:port]``) is one of this server's own origins."""
        try:
            parts = urlsplit(origin)
        except ValueError:
            return False
        if parts.scheme not in ("http", "https") or parts.path or parts.query or parts.fragment:
            return False
        return self.allows(parts.netloc, DEFAULT_PORTS[parts.scheme])

    def describe(self) -> str:
        names = [f"{name}:{self.port}" for name in LOOPBACK_NAMES] + list(self.extra)
        return ", ".join(names)


def _entry_matches(entry: str, name: str, port: int) -> bool:
    parsed = split_host(entry, entry=True)
    if parsed is None:
        return False
    entry_name, entry_port = parsed
    if entry_port is not None and entry_port != port:
        return False
    if entry_name.startswith("."):
        return name == entry_name[1:] or name.endswith(entry_name)
    return name == entry_name


@dataclass(frozen=True)
class OriginPolicy:
    """The page origins a server takes requests from.

    The origins of the sites in ``sites`` (each an allowlist of one server's
    names), and the opaque origin ``null`` when ``opaque`` is set.
    """

    sites: tuple[HostAllowlist, ...]
    opaque: bool = False

    def allows(self, origin: str | None) -> bool:
        if origin is None:
            return False
        if origin == OPAQUE_ORIGIN:
            return self.opaque
        return any(site.allows_origin(origin) for site in self.sites)


class HostGuard:
    """ASGI middleware: refuse requests that are not for this server, or not from its pages.

    - Every HTTP request and WebSocket handshake must carry one ``Host`` that
      ``hosts`` allows.
    - A WebSocket handshake that carries an ``Origin`` must be from
      ``websocket_origins`` (default: this server's own origins). Browsers always
      send one; a client that sends none is not a web page, so no page can use it.
    - With ``write_origins``, every request but GET, HEAD, OPTIONS and TRACE must
      carry an ``Origin`` from it. Browsers send one with every such request,
      same-origin ones included.

    A refused request gets 403 and a one-line plain-text body ending with
    ``hint``. Lifespan and other scope types pass through.
    """

    def __init__(
        self,
        app: ASGIApp,
        hosts: HostAllowlist,
        *,
        websocket_origins: OriginPolicy | None = None,
        write_origins: OriginPolicy | None = None,
        hint: str = "",
    ) -> None:
        self.app = app
        self.hosts = hosts
        self.websocket_origins = websocket_origins or OriginPolicy((hosts,))
        self.write_origins = write_origins
        self.hint = hint
        # Host values already judged: a server sees a handful of distinct ones (its names and
        # ports), and parsing one is a regex match per request. Bounded: cleared when full.
        self._judged: dict[tuple[HostAllowlist, str], bool] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind in ("http", "websocket"):
            reason = self.refusal(kind, scope.get("method", "GET"), scope.get("headers") or [])
            if reason is not None:
                await _refuse(scope, receive, send, reason)
                return
        await self.app(scope, receive, send)

    def refusal(self, kind: str, method: str, headers: Iterable[tuple[bytes, bytes]]) -> str | None:
        """Why a request with these headers is refused, or None to let it through."""
        hosts = _values(headers, b"host")
        origins = _values(headers, b"origin")
        if len(hosts) != 1 or not self._host_allowed(hosts[0]):
            shown = _show(hosts[0]) if len(hosts) == 1 else f"({len(hosts)} Host headers)"
            return (
                f"Host {shown} is not a name of this server, which answers to "
                f"{self.hosts.describe()} only{self.hint}"
            )
        if len(origins) > 1:
            return f"{len(origins)} Origin headers: send one"
        origin = origins[0] if origins else None
        if kind == "websocket":
            if origin is not None and not self.websocket_origins.allows(origin):
                return f"a WebSocket from Origin {_show(origin)} is not taken here"
        elif self.write_origins is not None and method.upper() not in SAFE_METHODS and not self.write_origins.allows(origin):
            sent = "no Origin" if origin is None else f"Origin {_show(origin)}"
            return f"a {method.upper()} with {sent} is not taken here: only this server's own pages may write"
        return None


    def _host_allowed(self, host: str) -> bool:
        key = (self.hosts, host)  # the allowlist in the key: one assigned later is judged afresh
        allowed = self._judged.get(key)
        if allowed is None:
            allowed = self.hosts.allows(host)
            if len(self._judged) >= 256:
                self._judged.clear()
            self._judged[key] = allowed
        return allowed


def _values(headers: Iterable[tuple[bytes, bytes]], name: bytes) -> list[str]:
    return [value.decode("latin-1") for key, value in headers if key.lower() == name]


def _show(value: str) -> str:
    # Quoted with every unprintable character escaped, so a refusal can be
    # printed or logged as it is.
    shown = value if len(value) <= _QUOTE_LIMIT else value[:_QUOTE_LIMIT] + "..."
    return repr(shown)


async def _refuse(scope: Scope, receive: Receive, send: Send, reason: str) -> None:
    body = (reason + "\n").encode("utf-8", "backslashreplace")
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"cache-control", b"no-store"),
    ]
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": REFUSED_STATUS, "headers": headers})
        await send({"type": "http.response.body", "body": body})
        return
    await receive()  # websocket.connect
    if "websocket.http.response" in (scope.get("extensions") or {}):
        # The ASGI denial-response extension: the same status and line as over HTTP.
        await send({"type": "websocket.http.response.start", "status": REFUSED_STATUS, "headers": headers})
        await send({"type": "websocket.http.response.body", "body": body})
    else:
        await send({"type": "websocket.close", "code": 1008})  # the server answers 403

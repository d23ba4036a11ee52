"""``--proxy URL``: forward the block origin's requests to a running dev server.

HTTP requests always. WebSockets (Vite's hot reload) when the ``websockets``
package is installed: uvicorn needs it to accept a WebSocket at all. Without
it, Vite's client cannot connect through the block origin and says so in the
console, which ``--check`` reports.

Requests get here only past the block origin's Host and Origin checks
(:mod:`blockkit.emulator.http.hostcheck`). The dev server then sees the path as the
browser sent it and the page's own ``Origin``, and its answers, CORS headers
included, come back untouched: its own protections (Vite's, CVE-2025-24010) stand.
"""

from __future__ import annotations

import asyncio
import json
import http.client
import socket
from collections.abc import Awaitable, Callable
from importlib.util import find_spec
from typing import Any
from urllib.parse import quote, urlsplit

from blockkit.dev.errors import DevError
from blockkit.emulator.http.hostcheck import OriginPolicy

# Headers that describe one hop, not the message (RFC 9110 §7.6.1), plus the
# ones the proxy sets itself.
_HOP_HEADERS = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    }
)
PROXY_TIMEOUT_S = 30
# A dev server on this machine accepts a connection at once; a dead one refuses it at once.
PROBE_TIMEOUT_S = 3


def parse_proxy_url(url: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, base path) of ``url``, or a DevError saying what is wrong."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise DevError(f"--proxy {url!r}: give the dev server's URL, like http://localhost:5173")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise DevError(f"--proxy {url!r}: the port is not a number") from None
    return parts.scheme, parts.hostname, port, parts.path.rstrip("/")


def require_dev_server(url: str) -> None:
    """Raise a DevError unless something accepts connections where ``url`` points.

    Without this, a dead dev server shows only as a block that never sends
    BLOCK_READY, and ``--check`` takes the page's whole 37 s schedule to say so.
    """
    _, host, port, _ = parse_proxy_url(url)
    try:
        socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S).close()
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise DevError(
            f"--proxy {url}: nothing answers at {host}:{port} ({reason}); "
            "start the dev server first (e.g. npm run dev)"
        ) from None


def upstream_target(base: str, scope: Any) -> str:
    """The request target to send upstream: the path exactly as the browser sent it.

    ``raw_path`` keeps ``%2f`` and ``%2e%2e`` encoded, so the dev server sees the
    request it would see without the proxy and applies its own path checks to it
    (the decoded path would turn ``/%2e%2e/x`` into ``/../x``). Bytes outside
    ASCII are percent-encoded, as http.client sends ASCII only.
    """
    raw = scope.get("raw_path") or scope["path"].encode("utf-8")
    path = quote(raw.decode("latin-1"), safe=_PATH_SAFE, encoding="latin-1")
    query = scope.get("query_string") or b""
    return base + path + (f"?{quote(query.decode('latin-1'), safe=_PATH_SAFE, encoding='latin-1')}" if query else "")


# Everything printable in ASCII stays as sent; quote() only touches what http.client would refuse.
_PATH_SAFE = "".join(chr(c) for c in range(0x21, 0x7F))


def build_proxy_endpoint(
    url: str,
    *,
    frame_origins: OriginPolicy | None = None,
    on_note: Callable[[str], None] | None = None,
) -> Callable[[Any], Awaitable[Any]]:
    """The HTTP half of the proxy.

    Responses pass through as the dev server sent them, CORS headers included:
    the dev server decides which pages may read its files. When it refuses the
    block frame's own origin (``frame_origins``), ``on_note`` hears it once,
    because the block then cannot load its module scripts.
    """
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse, Response

    scheme, host, port, base = parse_proxy_url(url)
    host_header = host if port in (80, 443) else f"{host}:{port}"
    noted: list[str] = []

    def forward(method: str, target: str, headers: dict[str, str], body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
        connection_type = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
        connection = connection_type(host, port, timeout=PROXY_TIMEOUT_S)
        try:
            connection.request(method, target, body=body or None, headers=headers)
            response = connection.getresponse()
            return response.status, response.getheaders(), response.read()
        finally:
            connection.close()

    def note_refused_frame(origin: str | None, upstream_headers: list[tuple[str, str]]) -> None:
        if noted or on_note is None or frame_origins is None or not frame_origins.allows(origin):
            return
        if any(name.lower() == "access-control-allow-origin" for name, _ in upstream_headers):
            return
        noted.append(origin or "")
        on_note(
            f"the dev server at {url} does not allow the block frame's origin {origin!r} by CORS, "
            "so the frame cannot load its module scripts; allow that origin in the dev server "
            "(Vite: list 'null' in server.cors.origin, as the vite.config.ts of `blockkit new` does)"
        )

    async def endpoint(request: Request) -> Response:
        target = upstream_target(base, request.scope)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_HEADERS}
        # The block origin has checked Host against its own names already (hostcheck);
        # the dev server is sent a name it answers to, so --allowed-host needs no
        # second allowlist there. Origin goes through as sent: its CORS decides.
        headers["host"] = host_header
        body = await request.body()
        try:
            status, upstream_headers, content = await run_in_threadpool(
                forward, request.method, target, headers, body
            )
        except (OSError, http.client.HTTPException) as exc:
            return PlainTextResponse(
                f"blockkit dev: the dev server at {url} did not answer ({exc}). Is it running?",
                status_code=502,
            )
        note_refused_frame(request.headers.get("origin"), upstream_headers)
        response = Response(content=content, status_code=status)
        for name, value in upstream_headers:
            if name.lower() not in _HOP_HEADERS:
                response.headers.append(name, value)
        return response

    return endpoint


def websockets_available() -> bool:
    return find_spec("websockets") is not None


def is_full_reload(data: str) -> bool:
    """Whether a dev server's HMR message tells the page to reload itself (Vite's ``full-reload``)."""
    if "full-reload" not in data:
        return False
    try:
        message = json.loads(data)
    except ValueError:
        return False
    return isinstance(message, dict) and message.get("type") == "full-reload"


def build_websocket_endpoint(url: str, on_full_reload: Callable[[], None] | None = None
                             ) -> Callable[[Any], Awaitable[None]]:
    from starlette.websockets import WebSocket, WebSocketDisconnect
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed, WebSocketException
    from websockets.typing import Origin, Subprotocol

    scheme, host, port, base = parse_proxy_url(url)
    ws_scheme = "wss" if scheme == "https" else "ws"

    async def endpoint(websocket: WebSocket) -> None:
        # The block origin's HostGuard has checked the handshake's Host and Origin.
        target = f"{ws_scheme}://{host}:{port}" + upstream_target(base, websocket.scope)
        offered = list(websocket.scope.get("subprotocols") or [])
        origin = websocket.headers.get("origin")
        try:
            upstream = await connect(
                target,
                # Plain strings on the wire; websockets types them as NewTypes.
                subprotocols=[Subprotocol(p) for p in offered] or None,
                origin=Origin(origin) if origin else None,
                open_timeout=PROXY_TIMEOUT_S,
            )
        except (OSError, WebSocketException, asyncio.TimeoutError):
            await websocket.close(code=1011)
            return
        async with upstream:
            await websocket.accept(subprotocol=upstream.subprotocol)

            async def browser_to_dev_server() -> None:
                try:
                    while True:
                        message = await websocket.receive()
                        if message["type"] == "websocket.disconnect":
                            return
                        text = message.get("text")
                        await upstream.send(text if text is not None else message.get("bytes") or b"")
                except (WebSocketDisconnect, ConnectionClosed):
                    return

            async def dev_server_to_browser() -> None:
                try:
                    async for data in upstream:
                        if isinstance(data, str):
                            if on_full_reload is not None and is_full_reload(data):
                                on_full_reload()  # before the page hears it: the host must know first
                            await websocket.send_text(data)
                        else:
                            await websocket.send_bytes(data)
                except ConnectionClosed:
                    pass

            pumps = [asyncio.ensure_future(browser_to_dev_server()), asyncio.ensure_future(dev_server_to_browser())]
            _, pending = await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
            for pump in pending:
                pump.cancel()
        try:
            await websocket.close()
        except (RuntimeError, WebSocketDisconnect):
            pass  # the browser closed it first

    return endpoint

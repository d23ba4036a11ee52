"""The block's origin: its files (built ``outputDir`` or static source) or a proxy.

Its pages run in the host's iframe. When the sandbox leaves out
``allow-same-origin``, the frame's origin is opaque (``null``), so its module
scripts and fetches to its own server are cross-origin requests: the block's
files must allow that origin, or no built block would load (the platform's block
hosting allows it too). They allow it and nothing else: a page on another site
reads no file of the block folder.

Behind ``--proxy``, the dev server's own CORS answers pass through untouched:
Vite (since 6.0.9, CVE-2025-24010) allows only local origins, so a page on
another site cannot read the source or the hot-reload token. Both kinds answer
only their own host names and take WebSockets only from the host page and the
frame (:mod:`blockkit.emulator.http.hostcheck`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from blockkit.emulator.http.hostcheck import HostAllowlist, HostGuard, OriginPolicy

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

BLOCK_RESPONSE_HEADERS = (
    # Always the file on disk: a cached old bundle is the classic dev-loop lie.
    (b"cache-control", b"no-store"),
)


def build_block_app(
    root: Path | None,
    proxy_url: str | None,
    *,
    hosts: HostAllowlist,
    frame_origins: OriginPolicy,
    websocket_origins: OriginPolicy,
    hint: str = "",
    on_note: Callable[[str], None] | None = None,
    on_full_reload: Callable[[], None] | None = None,
) -> ASGIApp:
    """The block origin's app.

    ``hosts``: the names it answers to. ``frame_origins``: the origins the block's
    frame can have, which the static files allow by CORS. ``websocket_origins``:
    the pages whose WebSockets the proxy forwards. ``on_note`` is told once when
    the dev server behind ``--proxy`` refuses the frame's origin; ``on_full_reload`` each time
    it tells the frame to reload itself (an edit Vite cannot hot-swap).
    """
    from starlette.applications import Starlette
    from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute
    from starlette.staticfiles import StaticFiles

    if proxy_url is not None:
        from blockkit.dev.proxy import (
            build_proxy_endpoint,
            build_websocket_endpoint,
            websockets_available,
        )

        endpoint = build_proxy_endpoint(proxy_url, frame_origins=frame_origins, on_note=on_note)
        routes: list[BaseRoute] = [Route("/{path:path}", endpoint, methods=_ALL_METHODS)]
        if websockets_available():
            routes.append(WebSocketRoute("/{path:path}", build_websocket_endpoint(proxy_url, on_full_reload)))
        app = _hide_dot_paths(Starlette(routes=routes))
    else:
        assert root is not None
        static = Starlette(routes=[Mount("/", app=StaticFiles(directory=root, html=True))])
        app = _allow_frame_origins(_hide_dot_paths(static), frame_origins)
    guarded = HostGuard(_with_block_headers(app), hosts, websocket_origins=websocket_origins, hint=hint)
    return guarded


_ALL_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


def _with_block_headers(app: ASGIApp) -> ASGIApp:
    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name for name, _ in BLOCK_RESPONSE_HEADERS}
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
                message["headers"] = kept + list(BLOCK_RESPONSE_HEADERS)
            await send(message)

        await app(scope, receive, send_with_headers)

    return wrapped


def _allow_frame_origins(app: ASGIApp, origins: OriginPolicy) -> ASGIApp:
    """CORS for the static files: the frame's own origin may read them, no other page."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        sent = [v.decode("latin-1") for k, v in scope.get("headers") or [] if k.lower() == b"origin"]
        allowed = sent[0] if len(sent) == 1 and origins.allows(sent[0]) else None

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"access-control-allow-origin"]
                # The answer depends on the Origin: a cache must not hand one page's answer to another.
                headers.append((b"vary", b"origin"))
                if allowed is not None:
                    headers.append((b"access-control-allow-origin", allowed.encode("latin-1")))
                message["headers"] = headers
            await send(message)

        await app(scope, receive, send_with_cors)

    return wrapped


def _hide_dot_paths(app: ASGIApp) -> ASGIApp:
    # The source folder of a static block also holds .git, .blockkit (the trace)
    # and the like; the platform serves none of that.
    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and any(
            part.startswith(".") and part not in (".", "..") for part in scope["path"].split("/")
        ):
            from starlette.responses import PlainTextResponse

            await PlainTextResponse("Not Found", status_code=404)(scope, receive, send)
            return
        await app(scope, receive, send)

    return wrapped

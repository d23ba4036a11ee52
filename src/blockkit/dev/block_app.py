"""The block's origin: its files (built ``outputDir`` or static source) or a proxy.

Every response allows any origin: a block in a sandbox without
``allow-same-origin`` has an opaque origin, so its module scripts and fetches
to its own server are cross-origin requests. The platform's block hosting has
to allow that too, or no built block would load.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

BLOCK_RESPONSE_HEADERS = (
    (b"access-control-allow-origin", b"*"),
    # Always the file on disk: a cached old bundle is the classic dev-loop lie.
    (b"cache-control", b"no-store"),
)


def build_block_app(root: Path | None, proxy_url: str | None) -> ASGIApp:
    from starlette.applications import Starlette
    from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute
    from starlette.staticfiles import StaticFiles

    if proxy_url is not None:
        from blockkit.dev.proxy import (
            build_proxy_endpoint,
            build_websocket_endpoint,
            websockets_available,
        )

        routes: list[BaseRoute] = [Route("/{path:path}", build_proxy_endpoint(proxy_url), methods=_ALL_METHODS)]
        if websockets_available():
            routes.append(WebSocketRoute("/{path:path}", build_websocket_endpoint(proxy_url)))
    else:
        assert root is not None
        routes = [Mount("/", app=StaticFiles(directory=root, html=True))]
    return _with_block_headers(_hide_dot_paths(Starlette(routes=routes)))


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

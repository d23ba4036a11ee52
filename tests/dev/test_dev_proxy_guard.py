"""``--proxy`` keeps the dev server's own protections (review rows 46 and 48, CVE-2025-24010).

The stand-in behaves like Vite since 6.0.9: CORS only for local origins (and
``null``, as the vite.config.ts of ``blockkit new`` allows), a token in
``/@vite/client`` that its hot-reload WebSocket requires.
"""

from __future__ import annotations

import asyncio
import http.client
import re
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from blockkit.dev.servers import bind_loopback
from blockkit.dev.session import DevOptions, DevSession

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dev"
TOKEN = "hmr-token-1234"
EVIL = "https://evil.example"
# Vite's default server.cors.origin since 6.0.9.
LOCAL_ORIGIN = re.compile(r"^https?://(?:(?:[^:]+\.)?localhost|127\.0\.0\.1|\[::1\])(?::\d+)?$")


class FakeVite:
    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        self.allow_null = True
        self.url = ""

    def app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import PlainTextResponse, Response
        from starlette.routing import Route, WebSocketRoute
        from starlette.websockets import WebSocket

        async def files(request: Request) -> Response:
            self.seen.append({"raw_path": request.scope["raw_path"].decode(), "query": request.scope["query_string"].decode(),
                              "host": request.headers.get("host"), "origin": request.headers.get("origin")})
            body = f"const wsToken = '{TOKEN}';" if request.url.path == "/@vite/client" else "export const secret = 1;"
            response = PlainTextResponse(body, media_type="text/javascript")
            origin = request.headers.get("origin")
            if origin and (LOCAL_ORIGIN.match(origin) or (self.allow_null and origin == "null")):
                response.headers["access-control-allow-origin"] = origin
                response.headers["vary"] = "Origin"
            return response

        async def hot_reload(websocket: WebSocket) -> None:
            if websocket.query_params.get("token") != TOKEN:
                await websocket.close()
                return
            await websocket.accept(subprotocol="vite-hmr")
            await websocket.send_text("connected")

        return Starlette(routes=[WebSocketRoute("/", hot_reload), Route("/{path:path}", files)])


@pytest.fixture
def vite() -> Iterator[FakeVite]:
    pytest.importorskip("websockets", reason="the stand-in's hot reload needs the websockets package")
    import uvicorn

    fake = FakeVite()
    sock = bind_loopback(0, "fake vite")
    server = uvicorn.Server(uvicorn.Config(fake.app(), log_level="warning", lifespan="off"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    while not server.started:
        threading.Event().wait(0.01)
    fake.url = f"http://localhost:{sock.getsockname()[1]}"
    try:
        yield fake
    finally:
        server.should_exit = True
        thread.join(5)
        sock.close()


@pytest.fixture
def notes() -> list[str]:
    return []


@pytest.fixture
def session(vite: FakeVite, tmp_path: Path, notes: list[str]) -> Iterator[DevSession]:
    options = DevOptions(block_dir=FIXTURES / "handshake", proxy=vite.url, trace_path=tmp_path / "t.jsonl", on_note=notes.append)
    with DevSession(options) as running:
        yield running


def get(session: DevSession, target: str, *, host: str | None = None, **headers: str) -> tuple[int, dict[str, str], bytes]:
    port = urlsplit(session.block_url).port
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.putrequest("GET", target, skip_host=True, skip_accept_encoding=True)
        connection.putheader("Host", host or f"127.0.0.1:{port}")
        for name, value in headers.items():
            connection.putheader(name, value)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def test_a_foreign_host_never_reaches_the_dev_server(session: DevSession, vite: FakeVite) -> None:
    status, _, body = get(session, "/src/main.ts", host="evil.example", origin=EVIL)
    assert status == 403 and b"is not a name of this server" in body
    assert vite.seen == []


def test_the_dev_servers_cors_passes_through_untouched(session: DevSession, vite: FakeVite) -> None:
    # The review's reproduction (with the forged Host now refused, the plain cross-site read):
    for path in ("/src/main.ts", "/@vite/client"):
        status, headers, _ = get(session, path, origin=EVIL)
        assert status == 200 and "access-control-allow-origin" not in headers, headers
    local = "http://localhost:5173"
    assert get(session, "/src/main.ts", origin=local)[1]["access-control-allow-origin"] == local
    assert get(session, "/@vite/client", origin="null")[1]["access-control-allow-origin"] == "null"
    assert [seen["origin"] for seen in vite.seen] == [EVIL, EVIL, local, "null"]


@pytest.mark.parametrize(
    "target, raw_path, query",
    [
        ("/a%2fb", "/a%2fb", ""),
        ("/%2e%2e/%2e%2e/etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", ""),
        ("/src/x.ts?import&t=%2f1", "/src/x.ts", "import&t=%2f1"),
        ("/caf%C3%A9.js", "/caf%C3%A9.js", ""),
    ],
)
def test_the_path_goes_upstream_as_sent(session: DevSession, vite: FakeVite, target: str, raw_path: str, query: str) -> None:
    assert get(session, target)[0] == 200
    assert vite.seen[-1]["raw_path"] == raw_path and vite.seen[-1]["query"] == query


def ws_connect(session: DevSession, *, origin: str | None, host: str | None = None) -> Any:
    from websockets.sync.client import connect
    from websockets.typing import Origin, Subprotocol

    port = urlsplit(session.block_url).port
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    uri = f"ws://{host or f'127.0.0.1:{port}'}/?token={TOKEN}"
    return connect(uri, sock=sock, origin=Origin(origin) if origin else None,
                   subprotocols=[Subprotocol("vite-hmr")], open_timeout=10)


@pytest.mark.parametrize("origin", ["null", "host-page", None])
def test_the_frame_and_the_host_page_get_hot_reload(session: DevSession, origin: str | None) -> None:
    # The fixture's sandbox has no allow-same-origin: the frame's socket says Origin: null.
    sent = session.host_url.rstrip("/") if origin == "host-page" else origin
    with ws_connect(session, origin=sent) as connection:
        assert connection.recv(timeout=10) == "connected"


@pytest.mark.parametrize("origin, host", [(EVIL, None), ("http://localhost:5173", None), (None, "evil.example")])
def test_a_websocket_from_another_page_is_refused_even_with_the_token(session: DevSession, origin: str | None, host: str | None) -> None:
    from websockets.exceptions import InvalidStatus

    with pytest.raises(InvalidStatus) as refused:
        ws_connect(session, origin=origin, host=host)
    assert refused.value.response.status_code == 403


def test_with_allow_same_origin_the_frame_is_still_opaque_and_its_socket_opens(vite: FakeVite, make_block: Any,
                                                                                tmp_path: Path) -> None:
    # The frame never gets allow-same-origin beside allow-scripts (the spec; docs/dev.md, "What
    # differs from the platform"), so its origin is "null" whatever the manifest asks: that origin
    # must get the hot-reload socket. Before, the manifest's allow-same-origin was used as given.
    block = make_block("handshake", iframe={"sandbox": "allow-scripts allow-same-origin"})
    with DevSession(DevOptions(block_dir=block, proxy=vite.url, trace_path=tmp_path / "t.jsonl")) as running:
        with ws_connect(running, origin="null") as connection:
            assert connection.recv(timeout=10) == "connected"
        with ws_connect(running, origin=running.block_url.rstrip("/")) as connection:
            assert connection.recv(timeout=10) == "connected"


def test_a_dev_server_that_refuses_the_frame_says_so_once(session: DevSession, vite: FakeVite, notes: list[str]) -> None:
    vite.allow_null = False
    # A page on another site being refused is the dev server doing its job: no note.
    get(session, "/src/main.ts", origin=EVIL)
    assert notes == []
    for _ in range(3):
        assert "access-control-allow-origin" not in get(session, "/src/main.ts", origin="null")[1]
    [note] = notes
    assert "does not allow the block frame's origin 'null'" in note and "server.cors.origin" in note

"""``--proxy`` forwards WebSockets (a dev server's hot reload) as well as HTTP."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blockkit.dev.servers import bind_loopback
from blockkit.dev.session import DevOptions, DevSession

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dev"


@pytest.fixture
def echo_server() -> Iterator[str]:
    """A dev server stand-in whose WebSocket echoes what it gets, with what it saw."""
    pytest.importorskip("websockets", reason="WebSocket forwarding needs the websockets package")
    import uvicorn
    from starlette.applications import Starlette
    from starlette.routing import WebSocketRoute
    from starlette.websockets import WebSocket

    async def echo(websocket: WebSocket) -> None:
        await websocket.accept(subprotocol="vite-hmr")
        seen = f"query={websocket.url.query} protocols={websocket.scope.get('subprotocols')}"
        await websocket.send_text(seen)
        async for text in websocket.iter_text():
            await websocket.send_text("echo:" + text)

    sock = bind_loopback(0, "echo server")
    server = uvicorn.Server(uvicorn.Config(Starlette(routes=[WebSocketRoute("/{path:path}", echo)]), log_level="warning", lifespan="off"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    while not server.started:
        threading.Event().wait(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(5)
        sock.close()


def test_a_websocket_is_forwarded_with_its_query_and_subprotocol(echo_server: str, tmp_path: Path) -> None:
    from websockets.sync.client import connect
    from websockets.typing import Subprotocol

    options = DevOptions(block_dir=FIXTURES / "handshake", proxy=echo_server, trace_path=tmp_path / "t.jsonl")
    with DevSession(options) as session:
        url = session.block_url.replace("http://", "ws://") + "?token=abc"
        with connect(url, subprotocols=[Subprotocol("vite-hmr")], open_timeout=10) as socket:
            assert socket.subprotocol == "vite-hmr"
            assert socket.recv(timeout=10) == "query=token=abc protocols=['vite-hmr']"
            socket.send("ping")
            assert socket.recv(timeout=10) == "echo:ping"


def test_a_websocket_to_a_dead_dev_server_is_refused(tmp_path: Path, unused_port: int) -> None:
    pytest.importorskip("websockets", reason="WebSocket forwarding needs the websockets package")
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    options = DevOptions(
        block_dir=FIXTURES / "handshake", proxy=f"http://127.0.0.1:{unused_port}", trace_path=tmp_path / "t.jsonl"
    )
    refused = (InvalidStatus, ConnectionError, EOFError, OSError)
    with (
        DevSession(options) as session,
        pytest.raises(refused),
        connect(session.block_url.replace("http://", "ws://"), open_timeout=10) as socket,
    ):
        socket.recv(timeout=5)


@pytest.fixture
def unused_port() -> int:
    sock = bind_loopback(0, "probe")
    port: int = sock.getsockname()[1]
    sock.close()
    return port


def test_without_websockets_the_proxy_says_hot_reload_is_not_forwarded(
    monkeypatch: Any, tmp_path: Path
) -> None:
    monkeypatch.setattr("blockkit.dev.proxy.websockets_available", lambda: False)
    session = DevSession(DevOptions(block_dir=FIXTURES / "handshake", proxy="http://127.0.0.1:5173"))
    assert any("websockets" in note for note in session.notes)

"""Reliability row 7 and security E19: connections that send nothing, or send headers slowly.

A real ``blockkit emulator start`` with 512 descriptors (the review used 1,024 and 1,100
connections; the counts here are halved to stay fast) and a 2 s header deadline: silent
connections past the descriptors starve no one, and a slowloris connection is closed. Loopback
only, bounded counts.
"""

from __future__ import annotations

import json
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from emulator_helpers import subprocess_env

SOFT_FDS = 512
SILENT = 600                 # more connections than the server has descriptors
HEADER_TIMEOUT_S = 2.0


def _limit_fds() -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (SOFT_FDS, hard))


@pytest.fixture
def limited(tmp_path: Path) -> Iterator[dict[str, Any]]:
    ready = tmp_path / "ready.json"
    env = subprocess_env(BLOCKKIT_HEADER_TIMEOUT_S=str(HEADER_TIMEOUT_S))
    process = subprocess.Popen([sys.executable, "-m", "blockkit", "emulator", "start", "--port", "0", "--no-access-key",
                                "--ready-file", str(ready)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env=env, preexec_fn=_limit_fds)
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert process.poll() is None and time.monotonic() < deadline, "the emulator did not start"
            time.sleep(0.05)
        yield json.loads(ready.read_text())
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return str(parts.hostname), int(parts.port or 80)


def probe(url: str, timeout: float = 5.0) -> bytes:
    host, port = address(url)
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(f"GET /api/v1/enums HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode())
        return sock.recv(64)


def closed_by_server(sock: socket.socket, within: float) -> bool:
    sock.settimeout(within)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_silent_connections_past_the_descriptors_starve_no_one_and_are_closed(limited: dict[str, Any]) -> None:
    host, port = address(limited["base_url"])
    silent = []
    try:
        for _ in range(SILENT):
            silent.append(socket.create_connection((host, port), timeout=5))
        time.sleep(0.3)
        started = time.monotonic()
        assert probe(limited["base_url"]).startswith(b"HTTP/1.1 200"), "a client was starved"
        assert probe(limited["auth_url"].replace("/login", "")).startswith(b"HTTP/1.1")
        assert time.monotonic() - started < 5
        # None is kept past the header deadline.
        assert all(closed_by_server(sock, HEADER_TIMEOUT_S + 3) for sock in silent[-20:])
    finally:
        for sock in silent:
            sock.close()


def test_a_slowloris_connection_is_closed_at_the_header_deadline(limited: dict[str, Any]) -> None:
    host, port = address(limited["auth_url"])
    with socket.create_connection((host, port), timeout=5) as sock:
        sock.sendall(f"GET /login HTTP/1.1\r\nHost: {host}:{port}\r\n".encode())
        started = time.monotonic()
        closed = False
        while time.monotonic() - started < HEADER_TIMEOUT_S + 4:
            try:
                sock.sendall(b"X-Slow: 1\r\n")
            except OSError:
                closed = True
                break
            if closed_by_server(sock, 0.5):
                closed = True
                break
        assert closed, "the server kept a connection whose headers never ended"
        assert time.monotonic() - started < HEADER_TIMEOUT_S + 3


def test_blockkit_dev_servers_close_slow_headers_too(monkeypatch: pytest.MonkeyPatch) -> None:
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    from blockkit.dev.servers import ServerPair
    from blockkit.emulator.http import connlimit

    monkeypatch.setattr(connlimit, "_PROCESS_POOL", connlimit.ConnectionPool(cap=64, header_timeout=1.0))
    app = Starlette(routes=[Route("/", lambda request: PlainTextResponse("ok"))])
    pair = ServerPair()
    pair.start(app, app)
    try:
        for port in (pair.block_port, pair.host_port):
            with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                sock.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode())
                assert closed_by_server(sock, 4.0)
            assert probe(f"http://127.0.0.1:{port}").startswith(b"HTTP/1.1 404")
    finally:
        pair.stop()

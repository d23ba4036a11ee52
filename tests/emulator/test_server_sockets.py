"""The origins' listening sockets say TCP, so asyncio sets TCP_NODELAY on every accepted connection.

Without it a small answer on a kept-alive connection waits about 40 ms (Nagle's algorithm
against the client's delayed ACK): measured with wrk at 1 connection, 22 req/s instead of
hundreds. The figure belongs in benchmarks/bench_emulator.py; this pins the cause.
"""

from __future__ import annotations

import socket

from blockkit.emulator.http.server import bind_origins


def test_listening_sockets_are_tcp_so_accepted_ones_get_nodelay() -> None:
    sockets = bind_origins("127.0.0.1", 0)
    try:
        assert [s.proto for s in sockets] == [socket.IPPROTO_TCP] * 3
        client = socket.create_connection(sockets[0].getsockname(), timeout=5)
        try:
            sockets[0].setblocking(True)
            accepted, _ = sockets[0].accept()
            with accepted:
                assert accepted.proto == socket.IPPROTO_TCP  # what asyncio's _set_nodelay checks
        finally:
            client.close()
    finally:
        for s in sockets:
            s.close()

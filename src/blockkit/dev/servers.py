"""Run the block app and the host app with uvicorn, on loopback only.

Both sockets are bound before the apps are built, so the host page can be told
the block's origin (with a port the OS chose, when asked for port 0). Both
servers run in one event loop on a background thread, so the caller's thread
stays free to drive a browser or wait for Ctrl-C.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Any

from blockkit.dev.errors import DevError

LOOPBACK = "127.0.0.1"
# The block and the host differ in host name as well as port, so they are
# different sites and not only different origins, as on the platform.
BLOCK_HOST_NAME = "127.0.0.1"
HOST_HOST_NAME = "localhost"
STARTUP_TIMEOUT_S = 10
SHUTDOWN_TIMEOUT_S = 5


def bind_loopback(port: int, what: str) -> socket.socket:
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets whose proto says
    # TCP, and accepted connections inherit it. Without it, Nagle's algorithm and
    # delayed ACKs hold each reply on a kept-alive connection for about 40 ms.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((LOOPBACK, port))
    except OSError as exc:
        sock.close()
        raise DevError(f"cannot listen on {LOOPBACK}:{port} for the {what}: {exc.strerror or exc}") from None
    sock.listen(128)
    sock.setblocking(False)
    return sock


class ServerPair:
    """The block server and the host server, started and stopped together."""

    def __init__(self, block_port: int = 0, host_port: int = 0) -> None:
        self.block_socket = bind_loopback(block_port, "block")
        try:
            self.host_socket = bind_loopback(host_port, "host page")
        except DevError:
            self.block_socket.close()
            raise
        self._servers: list[Any] = []
        self._thread: threading.Thread | None = None
        self._started = threading.Event()
        self._error: Exception | None = None

    @property
    def block_port(self) -> int:
        port: int = self.block_socket.getsockname()[1]
        return port

    @property
    def host_port(self) -> int:
        port: int = self.host_socket.getsockname()[1]
        return port

    @property
    def block_origin(self) -> str:
        return f"http://{BLOCK_HOST_NAME}:{self.block_port}"

    @property
    def host_origin(self) -> str:
        return f"http://{HOST_HOST_NAME}:{self.host_port}"

    def addresses(self) -> list[tuple[str, int]]:
        """Where the two servers listen: (address, port) of the block, then the host."""
        return [sock.getsockname()[:2] for sock in (self.block_socket, self.host_socket)]

    def start(self, block_app: Any, host_app: Any) -> None:
        import uvicorn

        from blockkit.emulator.http import connlimit

        # A header deadline and a cap on open connections, shared with the emulator's origins.
        pool = connlimit.process_pool()
        limits = connlimit.uvicorn_settings(pool)
        self.block_socket = pool.guard_socket(self.block_socket)
        self.host_socket = pool.guard_socket(self.host_socket)

        def make(app: Any) -> Any:
            config = uvicorn.Config(
                app,
                log_level="warning",
                access_log=False,
                lifespan="off",
                timeout_graceful_shutdown=1,
                # Nothing sits in front of these servers: X-Forwarded-* from a client is not to be believed.
                proxy_headers=False,
                **limits,
            )
            return uvicorn.Server(config)

        self._servers = [make(block_app), make(host_app)]
        self._thread = threading.Thread(target=self._run, name="blockkit-dev-servers", daemon=True)
        self._thread.start()
        if not self._started.wait(STARTUP_TIMEOUT_S) or self._error is not None:
            self.stop()
            raise DevError(f"the dev servers did not start: {self._error or 'timed out'}")

    def _run(self) -> None:
        async def serve_both() -> None:
            tasks = [
                asyncio.ensure_future(server.serve(sockets=[sock]))
                for server, sock in zip(self._servers, (self.block_socket, self.host_socket))
            ]
            while not all(server.started for server in self._servers):
                if any(task.done() for task in tasks):
                    failed = next(t for t in tasks if t.done())
                    raise failed.exception() or RuntimeError("a server stopped while starting")
                await asyncio.sleep(0.01)
            self._started.set()
            await asyncio.gather(*tasks)

        try:
            asyncio.run(serve_both())
        except Exception as exc:  # noqa: BLE001 - handed to the starting thread, which reports it
            self._error = exc
            self._started.set()

    def stop(self) -> None:
        for server in self._servers:
            server.should_exit = True
        if self._thread is not None:
            self._thread.join(SHUTDOWN_TIMEOUT_S)
        for sock in (self.block_socket, self.host_socket):
            sock.close()

    def wait(self) -> None:
        """Block until the servers stop (they stop only when told to)."""
        while self._thread is not None and self._thread.is_alive():
            self._thread.join(0.5)

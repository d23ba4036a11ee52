"""The three origins: build the apps, bind the sockets, serve them with uvicorn.

``build_apps`` makes the catalogue, auth and orchestration apps (starlette) over
one store and one clock. :class:`EmulatorServer` binds the three loopback sockets
first (so a busy port fails before any work, and ``--port 0`` knows its URLs),
then serves all three with uvicorn in one event loop on a background thread:
the caller's thread stays free to wait for signals (the CLI) or to drive a
browser (``blockkit dev`` runs the emulator in-process).
"""

from __future__ import annotations

import asyncio
import importlib
import ipaddress
import socket
import threading
from typing import TYPE_CHECKING, Any, Callable

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Mount, Route

# Imported for its side effect before anything serves: it registers the block-token verifier with
# auth (without it every block token is refused as unknown).
from blockkit.emulator.http.blocks import verifier as _block_verifier  # noqa: F401

from blockkit.emulator.http.errors import EXCEPTION_HANDLERS, error_body, json_response
from blockkit.emulator.errors import EmulatorError
from blockkit.emulator.http.region import RegionMiddleware
from blockkit.emulator.state import EmulatorState, NoteOnce, Urls

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from blockkit.emulator.store.clock import Clock
    from blockkit.emulator.options import EmulatorOptions
    from blockkit.emulator.store import Store

WORKER_THREADS = 4
WORKER_THREADS_VARIABLE = "BLOCKKIT_EMULATOR_THREADS"


def worker_threads() -> int:
    """How many threads run the emulator's sync endpoints (BLOCKKIT_EMULATOR_THREADS, default 4)."""
    import os

    try:
        return max(1, min(64, int(os.environ.get(WORKER_THREADS_VARIABLE, WORKER_THREADS))))
    except ValueError:
        return WORKER_THREADS


ORIGINS = ("base_url", "auth_url", "orchestration_url")
ORIGIN_ROLES_SHORT = {"base_url": "catalogue", "auth_url": "auth", "orchestration_url": "orchestration"}
ORIGIN_ROLES = {"base_url": "catalogue", "auth_url": "OAuth", "orchestration_url": "orchestration"}
STARTUP_TIMEOUT_S = 15
SHUTDOWN_TIMEOUT_S = 5


def build_catalogue_app(state: EmulatorState) -> Starlette:
    """The catalogue origin: /api/v1 (the catalogue's families, then the block routes), /__emulator, downloads."""
    from blockkit.emulator.http import blocks, catalogue
    from blockkit.emulator.http.blocks.blockroutes import BlockScopeMiddleware
    from blockkit.emulator.http.catalogue import downloads
    from blockkit.emulator.http.catalogue.edge import EdgeCache
    from blockkit.emulator.http.console import build_routes as console_routes
    from blockkit.emulator.http.control import callbacks as control_callbacks
    from blockkit.emulator.http.control import clock as control
    from blockkit.emulator.http.control import faults as fault_routes
    from blockkit.emulator.http.control import submissions as review_routes
    from blockkit.emulator.http.control.media import media_routes
    from blockkit.emulator.http.journal import control_routes as control_journal
    from blockkit.emulator.http.oauth import legacy

    api_routes = []
    for name in (*catalogue.ROUTE_MODULES, *blocks.ROUTE_MODULES):
        api_routes.extend(importlib.import_module(name).routes)
    app = Starlette(
        routes=[Mount(catalogue.API_PREFIX, routes=api_routes),
                Mount(control.PREFIX, routes=[*control.routes, *fault_routes.routes, *control_callbacks.routes,
                                              *review_routes.routes, *control_journal(),
                                              *media_routes, *downloads.file_routes, *console_routes()]),
                *downloads.routes,  # /api/download/models/{id}: outside /api/v1, as on the platform
                *legacy.routes],
        # The edge cache first: a repeat it answers skips the rest (catalogue/edge.py).
        middleware=[Middleware(EdgeCache, store=state.store),
                    Middleware(RegionMiddleware, sfw_only=state.options.sfw_only),
                    Middleware(BlockScopeMiddleware)],
        exception_handlers=EXCEPTION_HANDLERS,
    )
    app.state.emulator = state
    return app


def build_apps(store: Store, clock: Clock, options: EmulatorOptions, urls: Urls | None = None,
               note: Callable[[str], None] | None = None, journal: Any = None,
               data_ops: Any = None) -> tuple[Starlette, Starlette, Starlette]:
    """(catalogue_app, auth_app, orchestration_app) sharing one store and clock; ``note`` hears
    the lines worth telling whoever runs them, each once (a video asked for without PyAV);
    ``journal`` is the run's request journal, read by ``/__emulator/journal`` (None: no journal);
    ``data_ops`` is the building's transfer module (the console's export, import and reset)."""
    if urls is None:
        urls = urls_for(options.host, [options.port, options.port + 1, options.port + 2])
    state = EmulatorState(store=store, clock=clock, options=options, urls=urls, note_once=NoteOnce(note),
                          journal=journal, data_ops=data_ops)
    from blockkit.emulator.http.oauth import build_auth_app

    from blockkit.emulator.http.orchestration import build_orchestration_app

    return build_catalogue_app(state), build_auth_app(state), build_orchestration_app(state)


def _placeholder_app(state: EmulatorState, name: str) -> Starlette:
    """An origin whose routes come with a later task: JSON 404 for every path."""

    def nothing_here(request: Request) -> Response:
        return json_response(error_body("Not found"), status_code=404)

    from starlette.middleware import Middleware

    app = Starlette(
        routes=[Route("/{path:path}", nothing_here, methods=["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])],
        middleware=[Middleware(RegionMiddleware, sfw_only=state.options.sfw_only)],
        exception_handlers=EXCEPTION_HANDLERS,
    )
    app.state.emulator = state
    app.state.origin = name
    return app


# --- sockets ------------------------------------------------------------------------------

def _bind_address(host: str) -> tuple[int, str]:
    if host.lower() == "localhost":
        return socket.AF_INET, "127.0.0.1"
    address = ipaddress.ip_address(host.strip("[]"))
    return (socket.AF_INET6 if address.version == 6 else socket.AF_INET), str(address)


def bind_origins(host: str, port: int) -> list[socket.socket]:
    """Three listening sockets: on PORT, PORT+1, PORT+2, or (port 0) on three free ports."""
    family, address = _bind_address(host)
    sockets: list[socket.socket] = []
    try:
        for index, origin in enumerate(ORIGINS):
            wanted = 0 if port == 0 else port + index
            # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets whose proto says TCP,
            # and accepted sockets inherit it. Without it a small answer on a kept-alive
            # connection waits ~40 ms (Nagle's algorithm against the client's delayed ACK).
            sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
            try:
                # SO_REUSEADDR lets a restart reuse a port in TIME_WAIT; it does not let two
                # listeners share a port on Linux, so a busy port still fails here.
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind((address, wanted))
                sock.listen(1024)
            except OSError as exc:
                sock.close()
                shown = f"[{address}]" if family == socket.AF_INET6 else address
                raise EmulatorError(f"cannot listen on {shown}:{wanted} for the {ORIGIN_ROLES[origin]} origin"
                                    f" ({origin}): {exc.strerror or exc}") from None
            sock.setblocking(False)
            sockets.append(sock)
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    return sockets


def urls_for(host: str, ports: list[int]) -> Urls:
    _family, address = _bind_address(host)
    shown = f"[{address}]" if ":" in address else address
    base, auth, orchestration = (f"http://{shown}:{port}" for port in ports)
    return Urls(base_url=base, auth_url=auth, orchestration_url=orchestration)


# --- serving ------------------------------------------------------------------------------

class _Swappable:
    """An ASGI app that forwards to ``self.app``, which a reset may replace between requests.

    It also keeps a connection alive after a 500: Starlette sends the 500 and then raises the error
    again, and uvicorn closes a connection whose app raised after it answered, so the client's next
    request on it was reset (reliability review 2, R18). An error after the answer was sent whole is
    logged here and goes no further; one before or during the answer still reaches uvicorn (which
    answers 500 or, mid-answer, has nothing to do but close).
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        answered = False

        async def tracking(message: Any) -> None:
            nonlocal answered
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                answered = True

        try:
            await self.app(scope, receive, tracking)
        except Exception:
            if not answered:
                raise
            import logging

            logging.getLogger("blockkit.emulator").exception(
                "error after a complete answer to %s %s (the connection stays open)", scope.get("method"),
                scope.get("path"))


class EmulatorServer:
    """Three uvicorn servers on pre-bound sockets, in one event loop on a background thread."""

    def __init__(self, options: EmulatorOptions) -> None:
        self.options = options
        self.sockets = bind_origins(options.host, options.port)
        self.urls = urls_for(options.host, [sock.getsockname()[1] for sock in self.sockets])
        self._servers: list[Any] = []
        self._routers: list[_Swappable] = []
        self._thread: threading.Thread | None = None
        self._started = threading.Event()
        self._error: BaseException | None = None

    def start(self, apps: tuple[Starlette, Starlette, Starlette], journal: Any = None) -> None:
        """Serve ``apps``; return once all three accept connections.

        Each app is served behind ``access.guard`` (Host names, control routes, sign-in forms,
        the access key), and every connection through ``connlimit`` (a header deadline and a
        cap on open connections below the descriptor limit). With a ``journal`` (journal.py),
        its middleware is outermost: every request, the guards' refusals too, is recorded.
        """
        import uvicorn

        from blockkit.emulator.http import access, connlimit

        _family, bound = _bind_address(self.options.host)
        pool = connlimit.process_pool()
        limits = connlimit.uvicorn_settings(pool)
        self.sockets = [pool.guard_socket(sock) for sock in self.sockets]

        def make(app: Starlette, origin: str, sock: socket.socket) -> Any:
            guarded = access.guard(app, ORIGIN_ROLES_SHORT[origin], sock.getsockname()[1], self.urls,
                                   access_key=self.options.access_key, allowed_hosts=self.options.allowed_hosts,
                                   bound=bound)
            if journal is not None and journal.enabled:
                from blockkit.emulator.http.journal import JournalMiddleware

                guarded = JournalMiddleware(guarded, journal, ORIGIN_ROLES_SHORT[origin])
            config = uvicorn.Config(guarded, log_level="warning", access_log=False, lifespan="off",
                                    timeout_graceful_shutdown=2, server_header=False, proxy_headers=False,
                                    **limits)
            return uvicorn.Server(config)

        self._routers = [_Swappable(app) for app in apps]
        self._servers = [make(router, origin, sock)  # type: ignore[arg-type]
                         for router, origin, sock in zip(self._routers, ORIGINS, self.sockets)]
        self._thread = threading.Thread(target=self._run, name="blockkit-emulator", daemon=True)
        self._thread.start()
        if not self._started.wait(STARTUP_TIMEOUT_S) or self._error is not None:
            error = self._error
            self.stop()
            raise EmulatorError(f"the emulator did not start: {error or 'timed out'}")

    def _run(self) -> None:
        async def serve_all() -> None:
            # The sync endpoints run in this loop's thread pool. Python threads share one
            # interpreter lock, so past a few threads more of them only fight over it between
            # SQLite rows (issue 27: /images at 16 connections, 160 req/s with anyio's 40
            # threads, 663 with one). A few threads keep that contention low while a slow
            # request (an image drawn, a writer waiting its turn) does not hold up the rest.
            import anyio.to_thread

            anyio.to_thread.current_default_thread_limiter().total_tokens = worker_threads()
            tasks = [asyncio.ensure_future(server.serve(sockets=[sock]))
                     for server, sock in zip(self._servers, self.sockets)]
            while not all(server.started for server in self._servers):
                for task in tasks:
                    if task.done():
                        raise task.exception() or EmulatorError("a server stopped while starting")
                await asyncio.sleep(0.005)
            self._started.set()
            await asyncio.gather(*tasks)

        try:
            asyncio.run(serve_all())
        except BaseException as exc:  # noqa: BLE001 - handed to the starting thread, which reports it
            self._error = exc
        finally:
            self._started.set()

    def swap(self, apps: tuple[Starlette, Starlette, Starlette]) -> None:
        """Serve ``apps`` from now on, on the same sockets (a reset's fresh apps: no in-memory state survives)."""
        for router, app in zip(self._routers, apps):
            router.app = app

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self) -> None:
        """Stop serving (in-flight requests get up to 2 s) and close the sockets. Idempotent."""
        for server in self._servers:
            server.should_exit = True
        if self._thread is not None:
            self._thread.join(SHUTDOWN_TIMEOUT_S)
        for sock in self.sockets:
            sock.close()

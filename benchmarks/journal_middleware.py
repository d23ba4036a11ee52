"""What the journal's middleware itself costs a request, without a server (issue 36).

    python benchmarks/journal_middleware.py [--requests N] [--profile]

Calls :class:`~blockkit.emulator.http.journal.JournalMiddleware` in one event loop around a
trivial ASGI app (a 200 with a small JSON body, and a 404), N times each, with the journal on
and off (``Journal(0)``), and prints the microseconds per request each adds. ``--profile`` prints
cProfile's top functions for the "on" case. Figures only: nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import time
from typing import Any

from blockkit.emulator.http.journal import JournalMiddleware
from blockkit.emulator.journal import Journal

BODY = b'{"items":[],"metadata":{"totalItems":0}}'
HEADERS = [(b"host", b"127.0.0.1:8080"), (b"user-agent", b"wrk"), (b"accept", b"*/*")]


def app_for(status: int) -> Any:
    start = {"type": "http.response.start", "status": status,
             "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(BODY)).encode())]}
    body = {"type": "http.response.body", "body": BODY}

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await send(start)
        await send(body)

    return app


async def run(middleware: Any, n: int, path: str) -> float:
    scope = {"type": "http", "method": "GET", "path": path, "query_string": b"limit=20", "headers": HEADERS}
    message = {"type": "http.request", "body": b"", "more_body": False}

    async def receive() -> Any:
        return message

    async def send(_message: Any) -> None:
        return None

    began = time.perf_counter_ns()
    for _ in range(n):
        await middleware(scope, receive, send)
    return (time.perf_counter_ns() - began) / n / 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200_000)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    print(f"journal middleware: {args.requests} requests per case; load average"
          f" {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for name, status, path in (("200", 200, "/api/v1/models"), ("404", 404, "/api/v1/models/987654321")):
        app = app_for(status)
        bare = asyncio.run(run(app, args.requests, path))
        off = asyncio.run(run(JournalMiddleware(app, Journal(0), "catalogue"), args.requests, path))
        on = asyncio.run(run(JournalMiddleware(app, Journal(2000), "catalogue"), args.requests, path))
        print(f"{name}: bare app {bare:.2f} us, journal off +{off - bare:.2f} us, journal on +{on - bare:.2f} us"
              " a request")
    if args.profile:
        profiler = cProfile.Profile()
        middleware = JournalMiddleware(app_for(404), Journal(2000), "catalogue")
        profiler.enable()
        asyncio.run(run(middleware, args.requests // 4, "/api/v1/models/987654321"))
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(14)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""``{base_url}/__emulator``: controls of the emulator itself (not platform API).

``GET /__emulator/clock`` -> ``{"now": ISO-8601}``; ``POST /__emulator/clock`` with
``{"advance": SECONDS}`` (a finite number >= 0) moves the one clock of every origin
and answers the new ``{"now"}``; anything else is 400 ``{"error": ...}``.
"""

from __future__ import annotations

import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from blockkit.emulator.http.bodies import read_limited
from blockkit.emulator.http.errors import bad_request, json_response
from blockkit.emulator.store.clock import ClockError
from blockkit.emulator.state import emulator

PREFIX = "/__emulator"
MAX_BODY_BYTES = 1024  # {"advance": SECONDS} is a few dozen bytes


def clock_endpoint(request: Request) -> Response:
    return json_response({"now": emulator(request).clock.iso()})


async def advance_endpoint(request: Request) -> Response:
    body = await read_limited(request, MAX_BODY_BYTES)
    try:
        payload = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise bad_request('send a JSON object: {"advance": SECONDS}') from None
    if not isinstance(payload, dict) or "advance" not in payload:
        raise bad_request('send a JSON object: {"advance": SECONDS}')
    clock = emulator(request).clock
    try:
        # A store write: off the event loop, like every store access.
        from starlette.concurrency import run_in_threadpool

        await run_in_threadpool(clock.advance, payload["advance"])
    except ClockError as exc:
        raise bad_request(str(exc)) from None
    return json_response({"now": clock.iso()})


routes = [
    Route("/clock", clock_endpoint, methods=["GET"]),
    Route("/clock", advance_endpoint, methods=["POST"]),
]

"""``/__emulator/faults``: arm the local platform's failure switches over HTTP (``services/faults.py``).

``GET`` lists them ``{faults: [{kind, userId, times}]}``; ``POST {kind, times?, userId?}`` arms the
next ``times`` (default 1; 0 disarms) uses of ``kind`` for ``userId`` (absent or null: anyone);
``DELETE`` disarms every switch. Each answers the list. A bad body is 400 ``{"error": ...}``.
"""

from __future__ import annotations

import orjson
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from blockkit.emulator.http.bodies import read_limited
from blockkit.emulator.http.errors import bad_request, json_response
from blockkit.emulator.services import faults
from blockkit.emulator.state import emulator

MAX_BODY_BYTES = 1024
USAGE = 'send a JSON object: {"kind": "workflow-fails" or "storage-write-fails", "times"?: N, "userId"?: ID}'


async def list_endpoint(request: Request) -> Response:
    store = emulator(request).store
    return json_response({"faults": await run_in_threadpool(faults.armed, store)})


async def arm_endpoint(request: Request) -> Response:
    body = await read_limited(request, MAX_BODY_BYTES)
    try:
        payload = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise bad_request(USAGE) from None
    if not isinstance(payload, dict) or not isinstance(payload.get("kind"), str) or set(payload) - {"kind", "times", "userId"}:
        raise bad_request(USAGE)
    user = payload.get("userId")
    if user is not None and (type(user) is not int or user < 1):
        raise bad_request("userId must be a user id (a whole number from 1) or null")
    store = emulator(request).store
    try:
        await run_in_threadpool(faults.arm, store, payload["kind"], payload.get("times", 1), user)
    except faults.FaultError as exc:
        raise bad_request(str(exc)) from None
    return json_response({"faults": await run_in_threadpool(faults.armed, store)})


async def disarm_endpoint(request: Request) -> Response:
    store = emulator(request).store
    await run_in_threadpool(faults.disarm_all, store)
    return json_response({"faults": []})


routes = [
    Route("/faults", list_endpoint, methods=["GET"]),
    Route("/faults", arm_endpoint, methods=["POST"]),
    Route("/faults", disarm_endpoint, methods=["DELETE"]),
]

"""``{base_url}/__emulator/submissions``: the moderator's review of publish requests (not platform API).

``POST /__emulator/submissions/{id}/approve`` with ``{"notes"?: str}`` and
``POST /__emulator/submissions/{id}/reject`` with ``{"reason": str}`` (3 to 2000 characters)
answer the request as ``GET /api/v1/blocks/submissions`` shows it; a request that is not pending
is a 409, an unknown id a 404, a bad body a 400, each ``{"message"}``. Like every control write
they take JSON only and, with an access key, the key (``http/access.py``).
"""

from __future__ import annotations

import orjson
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from blockkit.emulator.http.bodies import read_limited
from blockkit.emulator.http.errors import json_response
from blockkit.emulator.services import publish_requests as service
from blockkit.emulator.services.publish_requests import SubmissionError
from blockkit.emulator.state import emulator

MAX_BODY_BYTES = 8 * 1024


async def _body(request: Request) -> dict[str, object]:
    raw = await read_limited(request, MAX_BODY_BYTES)
    try:
        payload = orjson.loads(raw or b"{}")
    except orjson.JSONDecodeError:
        payload = None
    if not isinstance(payload, dict):
        raise SubmissionError(400, "send a JSON object")
    return payload


async def approve_endpoint(request: Request) -> Response:
    payload = await _body(request)
    notes = payload.get("notes")
    if notes is not None and not isinstance(notes, str):
        raise SubmissionError(400, "notes must be a string")
    state = emulator(request)
    shaped = await run_in_threadpool(service.approve, state.store, state.clock, request.path_params["id"], notes)
    return json_response({"submission": shaped})


async def reject_endpoint(request: Request) -> Response:
    payload = await _body(request)
    reason = payload.get("reason")
    if not isinstance(reason, str):
        raise SubmissionError(400, 'send {"reason": "..."}: a rejection needs its reason')
    state = emulator(request)
    shaped = await run_in_threadpool(service.reject, state.store, state.clock, request.path_params["id"], reason)
    return json_response({"submission": shaped})


routes = [
    Route("/submissions/{id}/approve", approve_endpoint, methods=["POST"]),
    Route("/submissions/{id}/reject", reject_endpoint, methods=["POST"]),
]

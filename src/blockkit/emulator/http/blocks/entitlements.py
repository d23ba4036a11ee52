"""The goods routes a block calls with its token (the platform's digital-goods rail).

- ``GET {base_url}/api/v1/blocks/entitlements`` (``goods:read:self``): ``{"entitlements":
  [{goodId, kind, payload, grantedAt}]}``, what the viewer owns from the token's app, refunded
  goods left out. An anonymous token is 403 ``Anonymous block tokens hold no entitlements``.
  With an OAuth access token (blockkit's extension) the app is the required ``appId`` query
  parameter; no token is 401.
- ``POST {base_url}/api/v1/blocks/goods/purchase`` (``goods:purchase:self``), body (at most
  4 KB) ``{goodId, expectedPriceBuzz?, idempotencyKey?}``, unknown members ignored: buys one
  good of the app's registered catalogue (``goods.register_catalogue``) for the token's viewer.
  200 ``{ok: true, purchase: {id, goodId, priceBuzz}, entitlement}``; a refusal is ``{ok: false,
  error, reason}`` with the service's status (``reason`` left out on the 404 and the daily-cap
  400, as the platform leaves it out); a bad body is 400 ``{error: "Invalid request body",
  details}``. An ``idempotencyKey`` (``[A-Za-z0-9_-]{1,64}``) replays the first answer for the
  same payload and is 422 for another payload; the key and its answer are kept in the store for 10 minutes
  of the emulator clock (``goods.purchase_once``).

Shapes and statuses: civitai/civitai ``src/pages/api/v1/blocks/entitlements.ts`` and
``src/pages/api/v1/blocks/goods/purchase.ts`` (see docs/platform-shapes.md).
"""

from __future__ import annotations

import re
from typing import Any

import orjson
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from blockkit.emulator.http import auth
from blockkit.emulator.services import goods
from blockkit.emulator.http.bodies import BodyTooLarge, read_limited
from blockkit.emulator.http.errors import ApiError, error_body, json_response
from blockkit.emulator.services.errors import ServiceError
from blockkit.emulator.state import emulator

PRIVATE = {"Cache-Control": "private, no-store"}
MAX_PURCHASE_BODY = 4 * 1024
GOOD_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}", re.ASCII)
IDEMPOTENCY_KEY = re.compile(r"[A-Za-z0-9_-]{1,64}", re.ASCII)
# Refusals the platform's endpoint answers itself, without a `reason`.
NO_REASON = frozenset({"good_not_found", "daily_ceiling"})


def entitlements_endpoint(request: Request) -> Response:
    caller = auth.caller_of(request, required=True)
    if caller.kind == "block":
        if caller.anonymous:
            raise ApiError(403, error_body("Anonymous block tokens hold no entitlements"))
        app_id = str(caller.token_ctx.get("appId", ""))
    else:
        values = request.query_params.getlist("appId")
        if len(values) != 1 or not values[0] or len(values[0]) > 128:
            raise ApiError(400, error_body("appId is required (one value) with an OAuth token"))
        app_id = values[0]
    state = emulator(request)
    assert caller.user_id is not None
    return json_response(goods.entitlements(state.store, state.clock, caller.user_id, app_id), 200, PRIVATE)


def _body_problem(body: Any) -> str | None:
    if not isinstance(body, dict):
        return "the body is a JSON object {goodId, expectedPriceBuzz?, idempotencyKey?}"
    good_id = body.get("goodId")
    if not isinstance(good_id, str) or not GOOD_ID.fullmatch(good_id):
        return "goodId: a good id (lowercase letters, digits, '_' and '-', 1-64 characters)"
    price = body.get("expectedPriceBuzz")
    if price is not None and (isinstance(price, bool) or not isinstance(price, int)
                              or not 1 <= price <= goods.MAX_PRICE):
        return f"expectedPriceBuzz: a whole number from 1 to {goods.MAX_PRICE}"
    key = body.get("idempotencyKey")
    if key is not None and (not isinstance(key, str) or not IDEMPOTENCY_KEY.fullmatch(key)):
        return "idempotencyKey: 1-64 letters, digits, '_' or '-'"
    return None


async def purchase_endpoint(request: Request) -> Response:
    caller = auth.caller_of(request, required=True)
    if caller.kind != "block":
        raise ApiError(401, error_body("Block token required"))
    if caller.anonymous:
        return json_response({"error": "Anonymous block tokens may not buy items"}, 403, PRIVATE)
    try:
        raw = await read_limited(request, MAX_PURCHASE_BODY)
    except BodyTooLarge:
        return json_response({"error": "Request body too large (at most 4 KB)"}, 413, PRIVATE)
    try:
        body = orjson.loads(raw) if raw.strip() else {}
    except orjson.JSONDecodeError:
        body = None
    problem = _body_problem(body)
    if problem:
        return json_response({"error": "Invalid request body", "details": problem}, 400, PRIVATE)
    status, answer = await run_in_threadpool(_purchase, request, caller, body)
    return json_response(answer, status, PRIVATE)


def _refusal(exc: ServiceError) -> tuple[int, dict[str, Any]]:
    if exc.code == "daily_ceiling":
        return exc.status, {"error": exc.detail}
    if exc.code in NO_REASON:
        return exc.status, {"ok": False, "error": exc.detail}
    return exc.status, {"ok": False, "error": exc.detail, "reason": exc.code}


def _purchase(request: Request, caller: auth.Caller, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    # The idempotency key and its first answer live in the store (goods.purchase_once), written in the
    # purchase's own transaction: they survive a restart and a concurrent retry gets the one stored answer.
    state = emulator(request)
    key = body.get("idempotencyKey")
    return goods.purchase_once(state.store, state.clock, goods.GoodsCaller.from_claims(caller.token_ctx),
                               body["goodId"], expected_price=body.get("expectedPriceBuzz"),
                               idempotency_key=key if isinstance(key, str) else None, refusal=_refusal)


routes = [
    Route("/blocks/entitlements", entitlements_endpoint, methods=["GET"]),
    Route("/blocks/goods/purchase", purchase_endpoint, methods=["POST"]),
]

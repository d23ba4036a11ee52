"""The submission routes on the catalogue origin (the platform's ``/api/v1/blocks/*`` for its CLI).

- ``POST /blocks/submit-version`` ``{"bundleBase64"}`` -> ``{publishRequestId, slug, version, status}``;
- ``GET /blocks/submissions[?id=&blockId=]`` -> ``{submissions: [...]}`` or ``{submission}`` (404 when
  the id is not the caller's);
- ``POST /blocks/withdraw`` ``{"publishRequestId"}`` -> ``{ok: true}`` (404 not yours, 409 not pending);
- ``POST /blocks/dev-token`` ``{appBlockId|slug, scopes?, buzzBudget?, requestBudgetedSpend?}`` -> a page
  token for the caller's own app (``services/devtokens.py``).

Each takes ``Authorization: Bearer`` with a personal API key (``blockkit emulator apikey add``) or
an OAuth access token carrying the Apps-submit bit, then the author gate and a rate limit, in the
platform's order; errors are ``{"message"}``. The rules are ``services/publish_requests.py``'s.
The submit route refuses a declared body over 72 MB (413) before it reads anything.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import orjson
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from blockkit.emulator.http.auth import TokenRejected, bearer_token, verify_access_token
from blockkit.emulator.http.bodies import BodyTooLarge, read_limited
from blockkit.emulator.http.errors import json_response
from blockkit.emulator.services import publish_requests as service
from blockkit.emulator.services.publish_requests import SubmissionError, Submitter
from blockkit.emulator.state import EmulatorState, emulator

NO_STORE = {"Cache-Control": "no-store"}


def _submitter(request: Request, state: EmulatorState) -> Submitter:
    """The caller of a submission route, or 401 ``{message}`` (the platform's two sentences)."""
    from blockkit.emulator.store import orchestration as orch_store
    from blockkit.emulator.store import tokens as tokens_store

    try:
        raw = bearer_token(request)
    except TokenRejected:
        raw = None
    if raw is None:
        raise SubmissionError(401, "Missing or malformed Bearer token")
    with state.store.read() as db:
        user_id = orch_store.api_key_user(db, raw)
        user = tokens_store.token_user(db, user_id) if user_id is not None else None
    if user is not None and not user.deleted:
        return Submitter(user.id, user.username, user.status, user.is_moderator, "apiKey",
                         tokens_store.hash_token(raw)[:16])
    try:
        caller = verify_access_token(raw, state)
    except TokenRejected:
        raise SubmissionError(401, "Invalid API key") from None
    assert caller.user_id is not None and caller.username is not None
    return Submitter(caller.user_id, caller.username, caller.status, caller.is_moderator, "oauth",
                     str(caller.token_ctx.get("token_id")), caller.scope)


def _gates(request: Request, action: service.Action) -> tuple[EmulatorState, Submitter]:
    state = emulator(request)
    submitter = _submitter(request, state)
    service.authorize(submitter, action)
    return state, submitter


def _gated_and_counted(request: Request, action: service.Action) -> tuple[EmulatorState, Submitter]:
    state, submitter = _gates(request, action)
    service.rate_limit(state.store, state.clock, submitter, action)
    return state, submitter


def _json(body: bytes) -> Any:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return None


async def submit_version(request: Request) -> Response:
    declared = (request.headers.get("content-length") or "").strip()
    if declared.isdigit() and int(declared) > service.SUBMIT_BODY_LIMIT_BYTES:
        raise SubmissionError(413, "Body exceeded 72mb limit")
    state, submitter = await run_in_threadpool(_gated_and_counted, request, "submit")
    try:
        body = await read_limited(request, service.SUBMIT_BODY_LIMIT_BYTES)
    except BodyTooLarge:
        raise SubmissionError(413, "Body exceeded 72mb limit") from None
    payload = _json(body)
    encoded = payload.get("bundleBase64") if isinstance(payload, dict) else None
    if not isinstance(encoded, str) or not 1 <= len(encoded) <= service.MAX_BUNDLE_BASE64_CHARS:
        raise SubmissionError(400, "Invalid bundle payload")
    try:
        bundle = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise SubmissionError(400, f"bundleBase64 is not valid base64: {exc}") from None
    result = await run_in_threadpool(service.submit_version, state.store, state.clock, submitter, bundle)
    return json_response(result, headers=NO_STORE)


def list_submissions(request: Request) -> Response:
    state, submitter = _gates(request, "read")
    request_id = request.query_params.get("id")
    block_id = request.query_params.get("blockId")
    for value in (request_id, block_id):
        if value is not None and not 1 <= len(value) <= 128:
            raise SubmissionError(422, "Invalid query")
    service.rate_limit(state.store, state.clock, submitter, "read")
    rows = service.submissions(state.store, submitter, request_id=request_id, block_id=block_id)
    if request_id is not None:
        if not rows:
            raise SubmissionError(404, "Submission not found", headers=NO_STORE)
        return json_response({"submission": rows[0]}, headers=NO_STORE)
    return json_response({"submissions": rows}, headers=NO_STORE)


async def withdraw(request: Request) -> Response:
    state, submitter = await run_in_threadpool(_gates, request, "withdraw")
    try:
        body = await read_limited(request, service.SMALL_BODY_LIMIT_BYTES)
    except BodyTooLarge:
        raise SubmissionError(413, "Body exceeded 8kb limit") from None
    payload = _json(body)
    request_id = payload.get("publishRequestId") if isinstance(payload, dict) else None
    if not isinstance(request_id, str) or not 1 <= len(request_id) <= 128:
        raise SubmissionError(400, "Invalid body")
    await run_in_threadpool(service.rate_limit, state.store, state.clock, submitter, "withdraw")
    await run_in_threadpool(service.withdraw, state.store, state.clock, submitter, request_id)
    return json_response({"ok": True}, headers=NO_STORE)


async def dev_token(request: Request) -> Response:
    """The developer's own page token (services/devtokens.py); the gates before the body, as the platform."""
    from blockkit.emulator.services import devtokens

    state = emulator(request)
    submitter = await run_in_threadpool(_submitter, request, state)
    await run_in_threadpool(devtokens.authorize, submitter)
    try:
        body = await read_limited(request, devtokens.BODY_LIMIT_BYTES)
    except BodyTooLarge:
        raise SubmissionError(413, "Body exceeded 8kb limit") from None
    payload = _json(body) if body.strip() else {}
    result = await run_in_threadpool(devtokens.mint_dev_token, state, submitter, payload)
    return json_response(result, headers=NO_STORE)


routes = [
    Route("/blocks/submit-version", submit_version, methods=["POST"]),
    Route("/blocks/submissions", list_submissions, methods=["GET"]),
    Route("/blocks/withdraw", withdraw, methods=["POST"]),
    Route("/blocks/dev-token", dev_token, methods=["POST"]),
]

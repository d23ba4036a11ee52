"""The REST twins of the bridge procedures: what a block calls with its bearer token instead of postMessage.

Newer platform versions serve, under ``/api/v1/blocks/``, one route per bridge procedure (civitai/civitai
``src/pages/api/v1/blocks/{app-storage,workflows,buzz,shared-storage,user-checkpoint}/*.ts``). Each is a thin adapter over
the procedure the host bridge calls, so here each calls the same emulator service the bridge calls
(``appstorage``, ``workflows``, ``buzz``, ``usersettings``) and answers what the bridge procedure answers, without the bridge's
``{result}`` wrapper where the platform's route has none. The block-token checks (signature, audience,
expiry, revocation of the instance, the route's scope, every scope's binding, ``Cache-Control: private``)
are ``BlockScopeMiddleware``'s: the paths and scopes are ``blockroutes.REST_TWINS``.

The platform's error contract, kept here:

- a body or query the route's schema refuses: 400 ``{"error": "Invalid request body", "details": {formErrors,
  fieldErrors}}`` (zod's ``flatten()``); the shared-storage GETs say ``"Invalid query"``; the buzz GETs answer
  ``{"error": ZodError}`` (``{issues, name}``);
- a refusal inside the procedure (a thrown tRPC error): its status and ``{"message": sentence}``;
- a procedure that resolves: 200 with its answer, refusal-shaped snapshots included (a budget refusal is a
  200 failed snapshot quoting the cost, so a block can offer a top-up);
- a body over the route's parser limit (4 KB, or 256 KB for the bodies carrying a value or a workflow): 413.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime
from typing import Any

import orjson
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from blockkit.emulator import journal
from blockkit.emulator.services import appstorage, buzz
from blockkit.emulator.http import auth
from blockkit.emulator.services.orchestration import workflows
from blockkit.emulator.http.blocks.blockroutes import PRIVATE
from blockkit.emulator.http.bodies import BodyTooLarge, read_limited
from blockkit.emulator.services.blocktokens import viewer_id
from blockkit.emulator.http.errors import json_response, validation_body
from blockkit.emulator.services.errors import ServiceError
from blockkit.emulator.state import emulator
from blockkit.emulator.store.buzz import POOLS

SMALL_BODY = 4 * 1024      # the platform's bodyParser sizeLimit '4kb'
LARGE_BODY = 256 * 1024    # '256kb': app-storage/set, workflows/submit and estimate
APP_WORKFLOWS_DEFAULT, APP_WORKFLOWS_MAX = 20, 50
WORKFLOW_ID_MAX = 64
WAIT_SECONDS_MAX = 60
QUERY_CURSOR_MAX = 256
COMPENSATION_SOURCES = ("compensation", "licenseFee")

# Service sentences that are size refusals (the platform's PAYLOAD_TOO_LARGE, 413).
TOO_LARGE = frozenset({appstorage.TOO_LARGE, appstorage.QUOTA_EXCEEDED, appstorage.ROWS_EXCEEDED,
                       appstorage.SHARED_TOO_LARGE})


class Refused(Exception):
    """A finished answer raised from inside a handler (a bad body, a refusal)."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(status)
        self.status = status
        self.body = body


def _invalid(field: str | None, message: str, *, title: str = "Invalid request body") -> Refused:
    """zod's ``error.flatten()``: form-level problems, and per-field ones."""
    details = ({"formErrors": [], "fieldErrors": {field: [message]}} if field
               else {"formErrors": [message], "fieldErrors": {}})
    return Refused(400, {"error": title, "details": details})


def _message(status: int, message: str) -> Refused:
    return Refused(status, {"message": message})


async def _json_body(request: Request, limit: int) -> Any:
    try:
        raw = await read_limited(request, limit)
    except BodyTooLarge:
        raise Refused(413, {"error": f"Body exceeded {limit // 1024}kb limit"}) from None
    if not raw.strip():
        return {}  # a bodiless POST is an empty object (the platform's routes treat it so)
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise _invalid(None, "Expected object, received string") from None


def _object(body: Any, allowed: tuple[str, ...] | None = None) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise _invalid(None, f"Expected object, received {_kind(body)}")
    if allowed is not None:
        extra = [k for k in body if k not in allowed]
        if extra:
            raise _invalid(None, "Unrecognized key(s) in object: " + ", ".join(repr(k) for k in extra))
    return body


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array"}.get(type(value), "object")


def _string(body: dict[str, Any], name: str, low: int, high: int, *, optional: bool = False,
            nullable: bool = False) -> str | None:
    value = body.get(name)
    if value is None and (optional and name not in body or nullable and name in body):
        return None
    if not isinstance(value, str):
        raise _invalid(name, "Required" if name not in body else f"Expected string, received {_kind(value)}")
    if not low <= len(value) <= high:
        raise _invalid(name, f"String must contain at {'least' if len(value) < low else 'most'}"
                             f" {low if len(value) < low else high} character(s)")
    return value


def _integer(body: dict[str, Any], name: str, low: int, high: int) -> int | None:
    if name not in body:
        return None
    value = body[name]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        raise _invalid(name, "Expected integer, received " + _kind(value))
    if not low <= value <= high:
        raise _invalid(name, f"Number must be {'greater' if value < low else 'less'} than or equal to"
                             f" {low if value < low else high}")
    return int(value)


def _claims(request: Request) -> dict[str, Any]:
    caller = auth.caller_of(request)
    if caller.kind != "block":  # the middleware lets no other caller through; kept as the platform's guard
        raise Refused(401, {"error": "Block token required"})
    return caller.token_ctx


def _signed_in(claims: dict[str, Any], message: str) -> int:
    user = viewer_id(claims)
    if user is None:
        raise Refused(403, {"error": message})
    return user


def _endpoint(run: Callable[[Request, dict[str, Any], Any], Any], *, limit: int | None = SMALL_BODY
              ) -> Callable[[Request], Any]:
    """A route: read the body (POST) or nothing (GET), then run the handler off the event loop."""

    async def endpoint(request: Request) -> Response:
        try:
            claims = _claims(request)
            body = await _json_body(request, limit) if limit is not None else None
            answer = await run_in_threadpool(run, request, claims, body)
        except Refused as exc:
            return json_response(exc.body, exc.status, PRIVATE)
        return json_response(answer, 200, PRIVATE)

    return endpoint


def _service(request: Request) -> tuple[Any, Any]:
    state = emulator(request)
    return state.store, state.clock


# --- app-storage (apps:storage:read / apps:storage:write) ----------------------------------------

def _storage_answer(answer: dict[str, Any]) -> dict[str, Any]:
    """The service's refusal as the platform's thrown error; its answer otherwise."""
    problem = answer.get("error")
    if isinstance(problem, str):
        if problem in TOO_LARGE:
            raise _message(413, problem)
        if problem in (appstorage.SIGNED_OUT, appstorage.SHARED_SIGNED_OUT):
            raise _message(401, problem)
        if problem == appstorage.NOT_FOUND:
            raise _message(404, problem)
        if problem in (appstorage.NOT_AUTHOR, appstorage.TOO_MANY_ENTRIES):
            raise _message(403, problem)
        raise _message(400, problem)
    return answer


def _key(body: Any) -> str:
    key = _string(_object(body), "key", 1, appstorage.MAX_KEY)
    assert key is not None
    return key


def storage_get(request: Request, claims: dict[str, Any], body: Any) -> dict[str, Any]:
    store, clock = _service(request)
    return _storage_answer(appstorage.storage_get(store, clock, str(claims["blockId"]), viewer_id(claims), _key(body)))


def storage_set(request: Request, claims: dict[str, Any], body: Any) -> dict[str, Any]:
    store, clock = _service(request)
    key = _key(body)
    return _storage_answer(appstorage.storage_set(store, clock, str(claims["blockId"]), viewer_id(claims), key,
                                                  body.get("value")))


def storage_delete(request: Request, claims: dict[str, Any], body: Any) -> dict[str, Any]:
    store, clock = _service(request)
    return _storage_answer(appstorage.storage_delete(store, clock, str(claims["blockId"]), viewer_id(claims),
                                                     _key(body)))


def storage_list(request: Request, claims: dict[str, Any], body: Any) -> dict[str, Any]:
    store, clock = _service(request)
    body = _object(body)
    prefix = _string(body, "prefix", 0, appstorage.MAX_PREFIX, optional=True)
    limit = _integer(body, "limit", 1, appstorage.LIST_MAX)
    cursor = _string(body, "cursor", 0, appstorage.MAX_CURSOR, optional=True)
    return _storage_answer(appstorage.storage_list(store, clock, str(claims["blockId"]), viewer_id(claims), prefix,
                                                   cursor, appstorage.LIST_DEFAULT if limit is None else limit))


def storage_quota(request: Request, claims: dict[str, Any], body: Any) -> dict[str, Any]:
    store, clock = _service(request)  # the body is ignored, as the platform ignores it
    return _storage_answer(appstorage.storage_quota(store, clock, str(claims["blockId"]), viewer_id(claims)))


# --- workflows (ai:write:budgeted) ----------------------------------------------------------------

def _workflow_refusal(exc: ServiceError) -> Refused:
    if exc.status == 400:  # the service's checks of the body stand for the route's schema
        return _invalid("body", exc.detail)
    return _message(exc.status, exc.detail)


def _run_snapshot(run: Callable[[], dict[str, Any]], *, quote: bool = False) -> dict[str, Any]:
    try:
        result = run()
    except ServiceError as exc:
        if isinstance(getattr(exc, "quote", None), int):
            # The procedure resolves a budget refusal with a failed snapshot quoting the cost: 200 (the
            # journal still shows why).
            journal.note_resolved_refusal()
            return {"snapshot": workflows.failure_snapshot(exc)}
        raise _workflow_refusal(exc) from None
    return {"snapshot": workflows.estimate_snapshot(result) if quote else workflows.snapshot(result)}


def _workflow_body(request: Request, body: Any) -> Any:
    body = _object(body)
    if not isinstance(body.get("body"), dict):
        raise _invalid("body", "Required" if "body" not in body else f"Expected object, received {_kind(body['body'])}")
    try:
        return workflows.template_of(body["body"], emulator(request).store)
    except ServiceError as exc:
        raise _workflow_refusal(exc) from None


def _caller(claims: dict[str, Any]) -> workflows.WorkflowCaller:
    try:
        return workflows.WorkflowCaller.from_claims(claims)
    except ServiceError as exc:
        raise _message(exc.status, exc.detail) from None


def workflow_submit(request: Request, claims: dict[str, Any], body: Any) -> dict[str, Any]:
    state = emulator(request)
    template = _workflow_body(request, body)
    key = body.get("idempotencyKey")
    if key is not None and (not isinstance(key, str) or not workflows.BLOCK_IDEMPOTENCY_KEY.fullmatch(key)):
        raise _invalid("idempotencyKey", "Invalid")
    caller = _caller(claims)
    # A retry with the same key answers the first workflow, charged once (the platform's externalId dedupe).
    template = workflows.keyed(template, claims.get("appBlockId"), key)
    return _run_snapshot(lambda: workflows.submit(state.store, state.clock, state.urls, caller, template))


def workflow_estimate(request: Request, claims: dict[str, Any], body: Any) -> dict[str, Any]:
    state = emulator(request)
    template = _workflow_body(request, body)
    caller = _caller(claims)
    return _run_snapshot(lambda: workflows.estimate(state.store, state.clock, state.urls, caller, template), quote=True)


def _workflow_id(body: Any) -> str:
    body = _object(body)
    workflow_id = _string(body, "workflowId", 1, WORKFLOW_ID_MAX)
    assert workflow_id is not None
    return workflow_id


def _ownership(request: Request, caller: workflows.WorkflowCaller, workflow_id: str) -> None:
    # The platform's gates (workflows.owned): the id must name this viewer (403, before any lookup),
    # the workflow must exist (404), and carry this app's tag (403).
    try:
        with emulator(request).store.read() as db:
            workflows.owned(db, caller, workflow_id)
    except ServiceError as exc:
        raise _message(exc.status, "workflow not found" if exc.status == 404 else exc.detail) from None


def workflow_poll(request: Request, claims: dict[str, Any], body: Any) -> dict[str, Any]:
    state = emulator(request)
    workflow_id = _workflow_id(body)
    _integer(body, "waitSeconds", 0, WAIT_SECONDS_MAX)  # accepted, not held: the emulator's time is its clock
    caller = _caller(claims)
    _ownership(request, caller, workflow_id)
    return _run_snapshot(lambda: workflows.poll(state.store, state.clock, state.urls, caller, workflow_id))


def workflow_cancel(request: Request, claims: dict[str, Any], body: Any) -> dict[str, Any]:
    state = emulator(request)
    workflow_id = _workflow_id(body)
    caller = _caller(claims)
    _ownership(request, caller, workflow_id)

    def run() -> dict[str, Any]:
        try:
            return workflows.cancel(state.store, state.clock, state.urls, caller, workflow_id)
        except ServiceError as exc:
            if exc.code != "already_finished":
                raise
            # The platform's cancel of a finished workflow does not fail: it answers the terminal state.
            return workflows.poll(state.store, state.clock, state.urls, caller, workflow_id)

    return _run_snapshot(run)


def workflow_query(request: Request, claims: dict[str, Any], body: Any) -> dict[str, Any]:
    state = emulator(request)
    body = _object(body, allowed=("cursor", "limit"))  # a strict schema: `tags` and the like are refused
    _string(body, "cursor", 1, QUERY_CURSOR_MAX, optional=True, nullable=True)
    limit = _integer(body, "limit", 1, APP_WORKFLOWS_MAX)
    caller = _caller(claims)
    page = workflows.query(state.store, state.clock, state.urls, caller,
                           APP_WORKFLOWS_DEFAULT if limit is None else limit)
    # QUERY_APP_WORKFLOWS's answer without the bridge's `result` wrapper; one page, so `cursor` is null.
    return {"workflows": [workflows.app_workflow(w) for w in page["items"]], "cursor": None}


# --- buzz (buzz:read:self; GET) -------------------------------------------------------------------

def _zod(path: str, message: str, code: str = "custom") -> Refused:
    return Refused(400, validation_body([{"code": code, "message": message, "path": [path]}]))


def _query(request: Request) -> dict[str, str]:
    params: dict[str, str] = {}
    for name, value in request.query_params.multi_items():
        if name in params:
            raise _zod(name, "Expected a single value", "invalid_type")
        params[name] = value
    return params


def buzz_balance(request: Request, claims: dict[str, Any], body: Any) -> dict[str, Any]:
    store, clock = _service(request)
    user = _signed_in(claims, "Anonymous block tokens may not read a balance")
    # GET_BUZZ_BALANCE's {balance} without its wrapper: {blue, green, yellow}.
    return buzz.balance(store, clock, user)


def buzz_accounts(request: Request, claims: dict[str, Any], body: Any) -> dict[str, Any]:
    store, clock = _service(request)
    user = _signed_in(claims, "Anonymous block tokens may not read balances")
    return {"accounts": [{"accountType": pool, "balance": amount}
                         for pool, amount in buzz.balance(store, clock, user).items()]}


def buzz_transactions(request: Request, claims: dict[str, Any], body: Any) -> dict[str, Any]:
    store, clock = _service(request)
    user = _signed_in(claims, "Anonymous block tokens may not read transactions")
    params = _query(request)
    pool = _pool(params)
    limit = _query_int(params, "limit", 1, 200, 50)
    cursor = _query_int(params, "cursor", 1, 2**62, None)
    for name in ("start", "end"):
        if name in params and _iso(params[name]) is None:
            raise _zod(name, "Invalid date", "invalid_date")
    page = buzz.transactions(store, clock, user, limit, cursor, pool=pool)
    return {"cursor": page["nextCursor"], "transactions": page["items"]}


def _pool(params: dict[str, str]) -> str | None:
    """The ``accountType`` query parameter: a Buzz pool, or None when absent."""
    pool = params.get("accountType")
    if pool is not None and pool not in POOLS:
        raise _zod("accountType", f"Invalid enum value. Expected {' | '.join(repr(p) for p in POOLS)}",
                   "invalid_enum_value")
    return pool


def _query_int(params: dict[str, str], name: str, low: int, high: int, default: int | None) -> int | None:
    if name not in params:
        return default
    text = params[name]
    if not (text.isascii() and text.isdigit()) or not low <= int(text) <= high:
        raise _zod(name, f"{name} must be a whole number from {low} to {high}", "invalid_type")
    return int(text)


def _iso(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def buzz_daily_compensation(request: Request, claims: dict[str, Any], body: Any) -> dict[str, Any]:
    store, clock = _service(request)
    user = _signed_in(claims, "Anonymous block tokens may not read compensation")
    params = _query(request)
    if "date" not in params:
        raise _zod("date", "Required", "invalid_type")
    if _iso(params["date"]) is None:
        raise _zod("date", "Invalid date", "invalid_date")
    if params.get("source", "compensation") not in COMPENSATION_SOURCES:
        raise _zod("source", "Invalid enum value. Expected 'compensation' | 'licenseFee'", "invalid_enum_value")
    _pool(params)  # checked as the route checks it; the answer covers every pool
    # GET_DAILY_COMPENSATION's {result} without its wrapper.
    return buzz.daily_compensation(store, clock, user)


# --- shared-storage (apps:storage:shared:read: GET; apps:storage:shared:write: POST) ---------------

SHARED_BODY = 128 * 1024  # append and update: '128kb', room for a 64 KB value's escaping


def _shared_query(request: Request) -> dict[str, list[str]]:
    params: dict[str, list[str]] = {}
    for name, value in request.query_params.multi_items():
        params.setdefault(name, []).append(value)
    return params


def _one(params: dict[str, list[str]], name: str) -> str | None:
    values = params.get(name)
    if values is None:
        return None
    if len(values) != 1:
        raise _invalid(name, "Expected string, received array", title="Invalid query")
    return values[0]


def _bounded(name: str, value: str | None, high: int, *, low: int = 0, title: str = "Invalid query") -> None:
    if value is not None and not low <= len(value) <= high:
        raise _invalid(name, f"String must contain at {'least' if len(value) < low else 'most'}"
                             f" {low if len(value) < low else high} character(s)", title=title)


def shared_list(request: Request, claims: dict[str, Any], body: Any) -> dict[str, Any]:
    store, clock = _service(request)
    params = _shared_query(request)
    prefix, cursor = _one(params, "prefix"), _one(params, "cursor")
    _bounded("prefix", prefix, appstorage.SHARED_PREFIX_MAX)
    _bounded("cursor", cursor, appstorage.MAX_CURSOR)
    limit_text = _one(params, "limit")
    limit = appstorage.LIST_DEFAULT
    if limit_text is not None:
        try:
            number = float(limit_text)
        except ValueError:
            number = float("nan")
        if not math.isfinite(number) or number != int(number) or not 1 <= number <= appstorage.SHARED_LIST_MAX:
            raise _invalid("limit", f"limit must be a whole number from 1 to {appstorage.SHARED_LIST_MAX}",
                           title="Invalid query")
        limit = int(number)
    mine = _one(params, "mine")
    if mine not in (None, "true", "false"):
        raise _invalid("mine", "Invalid literal value, expected \"true\" or \"false\"", title="Invalid query")
    page = _storage_answer(appstorage.shared_list(store, clock, str(claims["blockId"]), viewer_id(claims), prefix,
                                                  cursor, limit, mine=mine == "true"))
    # SHARED_LIST's page in the platform's house envelope: {items, metadata: {nextCursor, nextPage}}; both
    # are left out on the last page (the platform's undefined).
    metadata: dict[str, Any] = {}
    if "nextCursor" in page:
        metadata = {"nextCursor": page["nextCursor"],
                    "nextPage": str(request.url.include_query_params(cursor=page["nextCursor"]))}
    return {"items": page["items"], "metadata": metadata}


def shared_item(request: Request, claims: dict[str, Any], body: Any) -> dict[str, Any]:
    store, clock = _service(request)
    key = _one(_shared_query(request), "key")
    if key is None:
        raise _invalid("key", "Required", title="Invalid query")
    _bounded("key", key, appstorage.SHARED_KEY_MAX, low=1)
    return _storage_answer(appstorage.shared_get(store, clock, str(claims["blockId"]), viewer_id(claims), key))


def shared_counts(request: Request, claims: dict[str, Any], body: Any) -> dict[str, Any]:
    store, clock = _service(request)
    keys = _shared_query(request).get("keys")  # ?keys=a&keys=b; a comma is part of a key, never a separator
    if not keys or len(keys) > appstorage.SHARED_COUNTS_MAX:
        journal.note_reason(appstorage.counts_reason(keys or []))
        raise _invalid("keys", "Required" if not keys else
                       f"Array must contain at most {appstorage.SHARED_COUNTS_MAX} element(s)", title="Invalid query")
    for key in keys:
        _bounded("keys", key, appstorage.SHARED_KEY_MAX, low=1)
    return _storage_answer(appstorage.shared_counts(store, clock, str(claims["blockId"]), viewer_id(claims), keys))


def _shared_key(body: dict[str, Any]) -> str:
    key = _string(body, "key", 1, appstorage.SHARED_KEY_MAX)
    assert key is not None
    return key


def _shared_value(body: dict[str, Any]) -> Any:
    value = body.get("value")
    _text, problem = appstorage.shared_value(value)
    if problem is not None and problem != appstorage.SHARED_TOO_LARGE:  # the size cap is the procedure's 413
        raise _invalid("value", "Required" if "value" not in body else problem)
    return value


def shared_append(request: Request, claims: dict[str, Any], body: Any) -> dict[str, Any]:
    store, clock = _service(request)
    value = _shared_value(_object(body))
    return _storage_answer(appstorage.shared_append(store, clock, str(claims["blockId"]), viewer_id(claims), value))


def shared_update(request: Request, claims: dict[str, Any], body: Any) -> dict[str, Any]:
    store, clock = _service(request)
    body = _object(body)
    key = _shared_key(body)
    value = _shared_value(body)
    return _storage_answer(appstorage.shared_update(store, clock, str(claims["blockId"]), viewer_id(claims), key,
                                                    value))


def _shared_key_op(name: str) -> Callable[[Request, dict[str, Any], Any], dict[str, Any]]:
    def run(request: Request, claims: dict[str, Any], body: Any) -> dict[str, Any]:
        store, clock = _service(request)
        key = _shared_key(_object(body))
        return _storage_answer(getattr(appstorage, name)(store, clock, str(claims["blockId"]), viewer_id(claims), key))

    return run


def shared_report(request: Request, claims: dict[str, Any], body: Any) -> dict[str, Any]:
    store, clock = _service(request)
    body = _object(body)
    key = _shared_key(body)
    reason = _string(body, "reason", 0, appstorage.REASON_MAX, optional=True)
    return _storage_answer(appstorage.shared_report(store, clock, str(claims["blockId"]), viewer_id(claims), key,
                                                    reason))


# --- user-checkpoint/set (any valid block token) --------------------------------------------------

def user_checkpoint_set(request: Request, claims: dict[str, Any], body: Any) -> dict[str, Any]:
    from blockkit.emulator.services import usersettings

    body = _object(body)
    if "versionId" not in body:
        raise _invalid("versionId", "Required")
    version = body["versionId"]
    if version is not None and (isinstance(version, bool) or not isinstance(version, int) or version <= 0):
        raise _invalid("versionId", "Expected a positive integer or null")
    user = viewer_id(claims)
    if user is None:  # the procedure's refusal (the route requires no scope), 401 as the platform answers
        raise _message(401, "anon viewers cannot persist block settings")
    state = emulator(request)
    usersettings.set_checkpoint(state.store.path.parent, state.clock, str(claims["blockId"]), user, version)
    return {"ok": True}


routes = [
    Route("/blocks/app-storage/get", _endpoint(storage_get), methods=["POST"]),
    Route("/blocks/app-storage/set", _endpoint(storage_set, limit=LARGE_BODY), methods=["POST"]),
    Route("/blocks/app-storage/delete", _endpoint(storage_delete), methods=["POST"]),
    Route("/blocks/app-storage/list", _endpoint(storage_list), methods=["POST"]),
    Route("/blocks/app-storage/quota", _endpoint(storage_quota), methods=["POST"]),
    Route("/blocks/workflows/submit", _endpoint(workflow_submit, limit=LARGE_BODY), methods=["POST"]),
    Route("/blocks/workflows/estimate", _endpoint(workflow_estimate, limit=LARGE_BODY), methods=["POST"]),
    Route("/blocks/workflows/poll", _endpoint(workflow_poll), methods=["POST"]),
    Route("/blocks/workflows/cancel", _endpoint(workflow_cancel), methods=["POST"]),
    Route("/blocks/workflows/query", _endpoint(workflow_query), methods=["POST"]),
    Route("/blocks/buzz", _endpoint(buzz_balance, limit=None), methods=["GET"]),
    Route("/blocks/buzz/accounts", _endpoint(buzz_accounts, limit=None), methods=["GET"]),
    Route("/blocks/buzz/transactions", _endpoint(buzz_transactions, limit=None), methods=["GET"]),
    Route("/blocks/buzz/daily-compensation", _endpoint(buzz_daily_compensation, limit=None), methods=["GET"]),
    Route("/blocks/shared-storage/list", _endpoint(shared_list, limit=None), methods=["GET"]),
    Route("/blocks/shared-storage/item", _endpoint(shared_item, limit=None), methods=["GET"]),
    Route("/blocks/shared-storage/counts", _endpoint(shared_counts, limit=None), methods=["GET"]),
    Route("/blocks/shared-storage/append", _endpoint(shared_append, limit=SHARED_BODY), methods=["POST"]),
    Route("/blocks/shared-storage/update", _endpoint(shared_update, limit=SHARED_BODY), methods=["POST"]),
    Route("/blocks/shared-storage/vote", _endpoint(_shared_key_op("shared_vote")), methods=["POST"]),
    Route("/blocks/shared-storage/unvote", _endpoint(_shared_key_op("shared_unvote")), methods=["POST"]),
    Route("/blocks/shared-storage/withdraw", _endpoint(_shared_key_op("shared_withdraw")), methods=["POST"]),
    Route("/blocks/shared-storage/report", _endpoint(shared_report), methods=["POST"]),
    Route("/blocks/user-checkpoint/set", _endpoint(user_checkpoint_set), methods=["POST"]),
]

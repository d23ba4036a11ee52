"""The orchestration origin (``{orchestration_url}``): funds, the imageUpscaler recipe, blobs.

Routes (Bearer API key, ``blockkit emulator apikey add``; errors are ProblemDetails, a 403 a
plain JSON string, as the spec gives CreateFund):

====================================================  ===========================================
``POST /v2/consumer/funds``                           CreateFund: FundTemplate -> 201 FundResponse
``POST /v2/consumer/recipes/imageUpscaler``           ImageUpscalerInput -> 200 ImageUpscalerOutput
``POST /v2/consumer/workflows``                       SubmitWorkflow: WorkflowTemplate -> 200 Workflow
                                                      (``?whatif=true``: the Workflow it would be, no id,
                                                      nothing runs; ``?wait=N``: held up to N s, 202
                                                      when it has not finished by then)
``GET  /v2/consumer/workflows``                       QueryWorkflows: ``{next, items: [Workflow]}``
                                                      (cursor, take, tags, query, fromDate, toDate,
                                                      ascending, excludeFailed, hideMatureContent)
``GET  /v2/consumer/workflows/{workflowId}``          GetWorkflow: 200 Workflow, 404 ProblemDetails
``PUT  /v2/consumer/workflows/{workflowId}``          UpdateWorkflow ``{status?: "canceled", metadata?, tags?,
                                                      allowMatureContent?}`` -> 204
``PATCH /v2/consumer/workflows/{workflowId}``         PatchWorkflow: a JSON Patch (RFC 6902) -> 204
``DELETE /v2/consumer/workflows/{workflowId}``        DeleteWorkflow -> 204 (an unfinished one is refunded)
``POST /v2/consumer/workflows/{workflowId}/tags``     AddWorkflowTag: a JSON string -> 204
``DELETE .../workflows/{workflowId}/tags[/{tag}]``    RemoveAllWorkflowTags / RemoveWorkflowTag -> 204
``GET|PUT|PATCH .../workflows/{id}/steps/{stepName}`` GetWorkflowStep (200 WorkflowStep), UpdateWorkflowStep
                                                      ``{metadata}``, PatchWorkflowStep (JSON Patch) -> 204
``GET  /__emulator/funds/{id}``                       the fund (404 once expired); emulator operation
``POST /__emulator/funds/{id}/deposits``              ``{accountType, amount}`` from the key owner
``GET  /__emulator/blobs/{id}.{ext}``                 a stored blob (public, as a signed URL would be)
====================================================  ===========================================

The services behind them (``funds``, ``upscaler``, ``blockkit.emulator.services.orchestration.workflows``) take
(store, clock, ...) and are what ``blockkit dev`` calls in-process; the routes parse,
authenticate and serialise. The workflow routes are @civitai/client's operations, for a
block's own backend holding an API key (the bridge's SUBMIT/POLL/CANCEL_WORKFLOW reach the
same service with the block token's claims); the key's owner pays, with no per-generation
budget, and sees only their own workflows.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from blockkit.emulator.http import auth
from blockkit.emulator.http.control import media as media_routes
from blockkit.emulator.services.orchestration import workflow_edits, workflows
from blockkit.emulator.http.errors import EXCEPTION_HANDLERS, json_response
from blockkit.emulator.store.clock import format_timestamp
from blockkit.emulator.services.orchestration import funds, media, upscaler
from blockkit.emulator.services.errors import (
    ServiceError,
    bad_request,
    invalid,
    not_found,
    unauthorized,
)
from blockkit.emulator.http.bodies import BodyTooLarge, read_limited
from blockkit.emulator.http.region import RegionMiddleware
from blockkit.emulator.state import emulator

from blockkit.emulator.state import EmulatorState

MAX_BODY_BYTES = 48 * 1024 * 1024  # a base64 2048 x 2048 PNG fits
JSON_TYPES = ("application/json", "text/json")


def key_owner(request: Request) -> int:
    """The user id of the request's API key, or ServiceError 401 (ProblemDetails)."""
    try:
        raw = auth.bearer_token(request)
    except auth.TokenRejected as exc:
        raise unauthorized(f"the Authorization header is not a bearer API key ({exc.detail})") from None
    if raw is None:
        raise unauthorized()
    user_id = funds.api_key_user(emulator(request).store, raw)
    if user_id is None:
        raise unauthorized("the API key is not valid")
    from blockkit.emulator import journal

    journal.note_who(user=user_id)
    return user_id


async def read_json(request: Request, *, optional: bool) -> Any:
    """The JSON body (None when absent and ``optional``); 400 ProblemDetails when unreadable."""
    try:
        body = await read_limited(request, MAX_BODY_BYTES)
    except BodyTooLarge:
        raise ServiceError(413, "body_too_large", "the request body is larger than 48 MB") from None
    if not body.strip():
        if optional:
            return None
        raise bad_request("bad_body", "a JSON body is required")
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype not in JSON_TYPES and not (ctype.startswith("application/") and ctype.endswith("+json")):
        raise bad_request("bad_content_type", "send the body as application/json, text/json or application/*+json")
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        raise bad_request("bad_json", "the body is not valid JSON") from None


def flag(request: Request, name: str) -> bool:
    values = request.query_params.getlist(name)
    if not values:
        return False
    if len(values) > 1 or values[0].lower() not in ("true", "false", "1", "0", ""):
        raise bad_request("bad_query", f"{name} must be true or false")
    return values[0].lower() in ("true", "1", "")


async def create_fund_endpoint(request: Request) -> Response:
    state = emulator(request)
    user_id = await run_in_threadpool(key_owner, request)
    template = await read_json(request, optional=True)
    fund = await run_in_threadpool(funds.create_fund, state.store, state.clock, user_id, template)
    return json_response(fund, status_code=201)


async def get_fund_endpoint(request: Request) -> Response:
    state = emulator(request)
    await run_in_threadpool(key_owner, request)
    return json_response(await run_in_threadpool(funds.get_fund, state.store, state.clock, request.path_params["id"]))


async def deposit_endpoint(request: Request) -> Response:
    state = emulator(request)
    user_id = await run_in_threadpool(key_owner, request)
    body = await read_json(request, optional=False)
    if not isinstance(body, dict):
        raise bad_request("bad_body", "send {\"accountType\": \"yellow|blue|green\", \"amount\": N}")
    fund = await run_in_threadpool(funds.deposit, state.store, state.clock, request.path_params["id"], user_id,
                                   body.get("accountType"), body.get("amount"))
    return json_response(fund, status_code=201)


async def upscaler_endpoint(request: Request) -> Response:
    state = emulator(request)
    user_id = await run_in_threadpool(key_owner, request)
    flags = {name: flag(request, name) for name in ("experimental", "allowMatureContent", "whatif", "ephemeral")}
    payload = await read_json(request, optional=False)
    out = await run_in_threadpool(upscaler.invoke, state.store, state.clock, state.urls, user_id, payload,
                                  whatif=flags["whatif"], ephemeral=flags["ephemeral"],
                                  allow_mature_content=flags["allowMatureContent"])
    return json_response(out)


MAX_TAKE = 100


async def submit_workflow_endpoint(request: Request) -> Response:
    state = emulator(request)
    user_id = await run_in_threadpool(key_owner, request)
    whatif = flag(request, "whatif")
    wait = _wait(request)
    template = await read_json(request, optional=False)
    caller = workflows.WorkflowCaller.api_key(user_id)
    try:
        if whatif:  # a Workflow (SubmitWorkflow's 200), with no id: nothing is stored, run or charged
            return json_response(await run_in_threadpool(workflows.estimate, state.store, state.clock, state.urls,
                                                          caller, template))
        workflow = await run_in_threadpool(workflows.submit, state.store, state.clock, state.urls, caller, template)
    except ServiceError as exc:
        raise with_messages(exc) from None
    return await _held(state, caller, workflow, wait)


def with_messages(exc: ServiceError) -> ServiceError:
    """A submission's 400 carries ``errors.messages`` whichever check refused it (a step's input checks
    are shared with the recipe routes, whose 400 is plain ProblemDetails)."""
    if exc.status == 400 and isinstance(exc.body, dict) and "errors" not in exc.body:
        return workflows.bad_request(exc.code, exc.detail)
    return exc


MAX_WAIT = 60  # our bound on `wait` (seconds)


def _wait(request: Request) -> int:
    """``wait``: seconds to hold the answer until the workflow finishes (0 or absent: do not hold)."""
    values = request.query_params.getlist("wait")
    if values and (len(values) > 1 or not values[0].isdigit() or int(values[0]) > MAX_WAIT):
        raise bad_request("bad_query", f"wait must be a whole number of seconds from 0 to {MAX_WAIT}")
    return int(values[0]) if values else 0


async def _held(state: EmulatorState, caller: workflows.WorkflowCaller, workflow: dict[str, Any],
                wait: int) -> Response:
    """Hold the answer up to ``wait`` seconds (wall time; the emulator clock moves with it) for the
    workflow to finish: 200 with the finished Workflow, else 202 with it as it stands (the client
    then polls), as the orchestrator answers a ``wait`` it could not meet."""
    if wait <= 0 or workflow["status"] in workflows.FINISHED:
        return json_response(workflow)
    deadline = asyncio.get_running_loop().time() + wait
    while asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(min(0.25, max(0.0, deadline - asyncio.get_running_loop().time())))
        workflow = await run_in_threadpool(workflows.poll, state.store, state.clock, state.urls, caller,
                                           workflow["id"])
        if workflow["status"] in workflows.FINISHED:
            return json_response(workflow)
    return json_response(workflow, status_code=202)


async def get_workflow_endpoint(request: Request) -> Response:
    state = emulator(request)
    user_id = await run_in_threadpool(key_owner, request)
    wait = _wait(request)
    caller = workflows.WorkflowCaller.api_key(user_id)
    workflow = await run_in_threadpool(workflows.poll, state.store, state.clock, state.urls, caller,
                                       request.path_params["workflowId"])
    return await _held(state, caller, workflow, wait)


def _edit(operation: str, *names: str, body: bool = False) -> Any:
    """The endpoint for ``workflow_edits.<operation>``: the key owner's workflow (path ``workflowId``),
    then the path parameters ``names`` and, with ``body``, the JSON body; 204 when it is done.
    (The function is looked up per request: workflow_edits may be half imported when this module is.)"""

    async def endpoint(request: Request) -> Response:
        state = emulator(request)
        user_id = await run_in_threadpool(key_owner, request)
        args = [request.path_params[name] for name in names]
        if body:
            args.append(await read_json(request, optional=False))
        await run_in_threadpool(getattr(workflow_edits, operation), state.store, state.clock,
                                workflows.WorkflowCaller.api_key(user_id), request.path_params["workflowId"], *args)
        return Response(status_code=204)

    return endpoint


update_workflow_endpoint = _edit("update", body=True)
patch_workflow_endpoint = _edit("patch", body=True)
delete_workflow_endpoint = _edit("delete")
remove_tag_endpoint = _edit("remove_tag", "tag")
remove_all_tags_endpoint = _edit("remove_all_tags")
update_step_endpoint = _edit("update_step", "stepName", body=True)
patch_step_endpoint = _edit("patch_step", "stepName", body=True)


async def add_tag_endpoint(request: Request) -> Response:
    state = emulator(request)
    user_id = await run_in_threadpool(key_owner, request)
    try:
        tag = await read_json(request, optional=False)  # the body is the tag, a JSON string
    except ServiceError as exc:  # this operation's 400 is a ValidationProblemDetails
        raise invalid(exc.code, "tag", exc.detail) from None
    await run_in_threadpool(workflow_edits.add_tag, state.store, state.clock, workflows.WorkflowCaller.api_key(user_id),
                            request.path_params["workflowId"], tag)
    return Response(status_code=204)


async def get_step_endpoint(request: Request) -> Response:
    state = emulator(request)
    user_id = await run_in_threadpool(key_owner, request)
    return json_response(await run_in_threadpool(
        workflow_edits.get_step, state.store, state.clock, workflows.WorkflowCaller.api_key(user_id),
        request.path_params["workflowId"], request.path_params["stepName"]))


def query_date(request: Request, name: str, *, end_of_day: bool) -> str | None:
    """fromDate/toDate as a store timestamp: ISO 8601 date or date-time; no offset means UTC.

    A bare date is the whole day: fromDate from its first millisecond, toDate to its last.
    """
    values = request.query_params.getlist(name)
    if not values:
        return None
    text = values[0].strip()
    try:
        if len(values) > 1:
            raise ValueError
        moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise bad_request("bad_query", f"{name} must be one ISO 8601 date or date-time") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    if end_of_day and len(text) == 10:
        moment += timedelta(days=1, milliseconds=-1)
    return format_timestamp(moment)


async def query_workflows_endpoint(request: Request) -> Response:
    state = emulator(request)
    user_id = await run_in_threadpool(key_owner, request)
    take = request.query_params.get("take", "20")
    if not take.isdigit() or not 1 <= int(take) <= MAX_TAKE:
        raise bad_request("bad_query", f"take must be a whole number from 1 to {MAX_TAKE}")
    tags = tuple(request.query_params.getlist("tags"))
    for tag in tags:
        workflows.check_tag(tag, "tags")
    flag(request, "hideMatureContent")  # checked; every emulated blob is rated pg, so nothing is hidden
    filters = workflows.WorkflowFilter(
        tags=tags, text=request.query_params.get("query") or None,
        from_date=query_date(request, "fromDate", end_of_day=False),
        to_date=query_date(request, "toDate", end_of_day=True),
        ascending=flag(request, "ascending"), exclude_failed=flag(request, "excludeFailed"),
        cursor=request.query_params.get("cursor") or None)
    page = await run_in_threadpool(workflows.query, state.store, state.clock, state.urls,
                                   workflows.WorkflowCaller.api_key(user_id), int(take), filters)
    return json_response({"next": page["next"], "items": page["items"]})


def nothing_here(request: Request) -> Response:
    raise not_found(f"no route {request.method} {request.url.path} on the orchestration origin")


routes = [
    Route("/v2/consumer/funds", create_fund_endpoint, methods=["POST"]),
    Route("/v2/consumer/recipes/imageUpscaler", upscaler_endpoint, methods=["POST"]),
    Route("/v2/consumer/workflows", submit_workflow_endpoint, methods=["POST"]),
    Route("/v2/consumer/workflows", query_workflows_endpoint, methods=["GET"]),
    Route("/v2/consumer/workflows/{workflowId}", get_workflow_endpoint, methods=["GET"]),
    Route("/v2/consumer/workflows/{workflowId}", update_workflow_endpoint, methods=["PUT"]),
    Route("/v2/consumer/workflows/{workflowId}", patch_workflow_endpoint, methods=["PATCH"]),
    Route("/v2/consumer/workflows/{workflowId}", delete_workflow_endpoint, methods=["DELETE"]),
    Route("/v2/consumer/workflows/{workflowId}/tags", add_tag_endpoint, methods=["POST"]),
    Route("/v2/consumer/workflows/{workflowId}/tags", remove_all_tags_endpoint, methods=["DELETE"]),
    # {tag:path}: a tag may hold "/" (sent as %2F, which the router sees decoded)
    Route("/v2/consumer/workflows/{workflowId}/tags/{tag:path}", remove_tag_endpoint, methods=["DELETE"]),
    Route("/v2/consumer/workflows/{workflowId}/steps/{stepName}", get_step_endpoint, methods=["GET"]),
    Route("/v2/consumer/workflows/{workflowId}/steps/{stepName}", update_step_endpoint, methods=["PUT"]),
    Route("/v2/consumer/workflows/{workflowId}/steps/{stepName}", patch_step_endpoint, methods=["PATCH"]),
    Route("/__emulator/funds/{id}", get_fund_endpoint, methods=["GET"]),
    Route("/__emulator/funds/{id}/deposits", deposit_endpoint, methods=["POST"]),
    *media_routes.blob_routes,
]


def build_orchestration_app(state: EmulatorState) -> Starlette:
    app = Starlette(
        routes=[*routes, Route("/{path:path}", nothing_here,
                               methods=["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])],
        middleware=[Middleware(RegionMiddleware, sfw_only=state.options.sfw_only)],
        exception_handlers=EXCEPTION_HANDLERS,
    )
    app.state.emulator = state
    app.state.origin = "orchestration"
    return app

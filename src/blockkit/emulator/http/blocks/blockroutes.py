"""The catalogue's block-token routes and the scope middleware (PLATFORM.md section 8).

Routes (under /api/v1): ``POST /block-tokens`` (the host page mints), ``GET
/block-tokens/jwks``, ``GET /blocks/models`` and ``GET /blocks/images`` (public data,
clamped by the token's signed maxBrowsingLevel; any valid block token), ``GET /blocks/me``
(deprecated; ``user:read:self``). The REST twins of the bridge procedures (``/blocks/app-storage/*``,
``/blocks/workflows/*``, ``/blocks/buzz*``, ``/blocks/shared-storage/*``, ``/blocks/user-checkpoint/set``) are in ``blockrest.py``; their scopes are ``REST_TWINS``. The goods routes (``/blocks/entitlements``,
``/blocks/goods/purchase``) are in ``catalogue/entitlements.py``; their scopes are checked here.

``BlockScopeMiddleware`` plays the platform's block-scope wrapper on the routes that take
a block token (``BLOCK_ROUTES``): a bearer that looks like a JWT is verified (401
``invalid block token``), its instance must not be revoked (403), the route's scope must
be in the token and every scope's binding must hold (403): ``models:read:self`` binds the
requested model id to ``ctx.modelId``, the ``:self`` scopes need a signed-in subject,
``ai:write:budgeted`` a positive buzzBudget, ``block:settings:*`` the query's
blockInstanceId. The verified caller is left where ``auth.caller_of`` finds it; answers
get ``Cache-Control: private, no-store``. Without a block token, /models/{id} is the
ordinary public route and /blocks/* answer 401 ``Block token required``.
"""

from __future__ import annotations

import re
from typing import Any

import orjson
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from blockkit.emulator import journal
from blockkit.emulator.http import auth
from blockkit.emulator.http.blocks import verifier
from blockkit.emulator.services import blocktokens
from blockkit.emulator import facts
from blockkit.emulator.http.bodies import BodyTooLarge, read_limited
from blockkit.emulator.http.errors import ApiError, error_body, json_response
from blockkit.emulator.http.region import region_restricted
from blockkit.emulator.state import emulator

MAX_BODY_BYTES = 8 * 1024
MINT_LIMIT_PER_MINUTE = 120
PRIVATE = {"Cache-Control": "private, no-store, no-cache, must-revalidate, max-age=0"}
ANY_TOKEN = ""  # a block route that takes any valid block token

# path pattern (under the app root) -> the scope the route requires (ANY_TOKEN: none); and
# whether it also serves requests without a block token.
BLOCK_ROUTES: tuple[tuple[re.Pattern[str], str, bool], ...] = (
    (re.compile(r"/api/v1/models/[^/]+"), "models:read:self", True),
    (re.compile(r"/api/v1/blocks/models"), ANY_TOKEN, False),
    (re.compile(r"/api/v1/blocks/images"), ANY_TOKEN, False),
    (re.compile(r"/api/v1/blocks/me"), "user:read:self", False),
    (re.compile(r"/api/v1/blocks/entitlements"), "goods:read:self", True),  # also OAuth tokens
    (re.compile(r"/api/v1/blocks/goods/purchase"), "goods:purchase:self", False),
)

# The REST twins of the bridge procedures (``blockrest``): path under /api/v1/blocks/ -> the scope the
# platform's route requires (civitai/civitai src/pages/api/v1/blocks/*, each route's requiredScope).
REST_TWINS: tuple[tuple[str, str], ...] = (
    ("app-storage/get", "apps:storage:read"),
    ("app-storage/list", "apps:storage:read"),
    ("app-storage/quota", "apps:storage:read"),
    ("app-storage/set", "apps:storage:write"),
    ("app-storage/delete", "apps:storage:write"),
    ("workflows/submit", "ai:write:budgeted"),
    ("workflows/estimate", "ai:write:budgeted"),
    ("workflows/poll", "ai:write:budgeted"),
    ("workflows/cancel", "ai:write:budgeted"),
    ("workflows/query", "ai:write:budgeted"),
    ("buzz", "buzz:read:self"),
    ("buzz/accounts", "buzz:read:self"),
    ("buzz/transactions", "buzz:read:self"),
    ("buzz/daily-compensation", "buzz:read:self"),
    ("shared-storage/list", "apps:storage:shared:read"),
    ("shared-storage/item", "apps:storage:shared:read"),
    ("shared-storage/counts", "apps:storage:shared:read"),
    ("shared-storage/append", "apps:storage:shared:write"),
    ("shared-storage/update", "apps:storage:shared:write"),
    ("shared-storage/vote", "apps:storage:shared:write"),
    ("shared-storage/unvote", "apps:storage:shared:write"),
    ("shared-storage/withdraw", "apps:storage:shared:write"),
    ("shared-storage/report", "apps:storage:shared:write"),
    ("user-checkpoint/set", ANY_TOKEN),  # the platform's route requires no scope: any valid block token
)
BLOCK_ROUTES += tuple((re.compile("/api/v1/blocks/" + re.escape(path)), scope, False) for path, scope in REST_TWINS)


def _denied(status: int, message: str) -> Response:
    return json_response(error_body(message), status, PRIVATE)


def binding_error(claims: dict[str, Any], request: Request) -> str | None:
    """Why the token's scopes do not hold for this request (the platform's runtime binding), or None."""
    for scope in claims["scopes"]:
        if scope not in blocktokens.KNOWN_SCOPES:
            return f"unknown scope: {scope}"
        if scope == "models:read:self":
            values = request.path_params.get("id") or _last_segment(request)
            if not (values.isascii() and values.isdigit()) or int(values) != claims["ctx"].get("modelId"):
                return "models:read:self bound to different modelId"
        elif scope in ("block:settings:read", "block:settings:write"):
            wanted = request.query_params.getlist("blockInstanceId")
            if wanted and (len(wanted) != 1 or wanted[0] != claims["blockInstanceId"]):
                return f"{scope} bound to a different blockInstanceId"
        elif scope == blocktokens.BUDGET_SCOPE:
            if not isinstance(claims.get("buzzBudget"), int) or claims["buzzBudget"] <= 0:
                return "ai:write:budgeted requires positive buzzBudget claim"
        elif scope in blocktokens.SELF_SCOPES and claims["sub"] == "anon":
            return f"{scope} requires authenticated subject"
    return None


def _last_segment(request: Request) -> str:
    return request.url.path.rstrip("/").rsplit("/", 1)[-1]


class BlockScopeMiddleware:
    """Pure ASGI: block-token checks ahead of the block routes (see the module docstring)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        route = next(((scope_name, open_) for pattern, scope_name, open_ in BLOCK_ROUTES
                      if pattern.fullmatch(scope["path"])), None)
        if route is None:
            await self.app(scope, receive, send)
            return
        required, open_without_token = route
        request = Request(scope)
        header = request.headers.get("authorization", "")
        raw = header[7:].strip() if header[:7].lower() == "bearer " else ""
        if not raw or not blocktokens.looks_like_jwt(raw):
            if open_without_token:
                await self.app(scope, receive, send)
                return
            await _denied(401, "Block token required")(scope, receive, send)
            return
        token = verifier.ON_BLOCK_ROUTE.set(True)
        try:
            answer = await run_in_threadpool(self._check, request, raw, required)
            if answer is not None:
                await answer(scope, receive, send)
                return

            async def private_send(message: dict[str, Any]) -> None:
                if message["type"] == "http.response.start":
                    headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"cache-control"]
                    headers.append((b"cache-control", PRIVATE["Cache-Control"].encode()))
                    message = {**message, "headers": headers}
                await send(message)

            await self.app(scope, receive, private_send)
        finally:
            verifier.ON_BLOCK_ROUTE.reset(token)

    @staticmethod
    def _check(request: Request, raw: str, required: str) -> Response | None:
        state = emulator(request)
        try:
            caller = auth.resolve_token(raw, state)
        except auth.TokenRejected:
            return _denied(401, "invalid block token")
        claims = caller.token_ctx
        with state.store.read() as db:
            refused = blocktokens.refusal(db, claims)
        if refused is not None:
            return _denied(*refused)
        if required:
            if required not in claims["scopes"]:
                journal.note_reason(_scope_reason(state, claims, required))
                return _denied(403, f"missing required scope: {required}")
            problem = binding_error(claims, request)
            if problem is not None:
                return _denied(403, problem)
        request.scope["blockkit.caller"] = caller
        return None


def _scope_reason(state: Any, claims: dict[str, Any], required: str) -> str:
    """Why a block token lacks ``required``, in words: a scope the block declares that the viewer has not
    consented to (or consented to after the token was minted), or one the block never declared."""
    from blockkit.emulator.services import consent

    held = journal.described(sorted(claims["scopes"]))
    with state.store.read() as db:
        instance = blocktokens.find_instance(db, str(claims.get("blockInstanceId") or ""))
    subject = str(claims.get("sub") or "")
    app_block = str(claims.get("appBlockId") or "")
    if instance is None or required not in instance.scopes:
        return f"this route needs the block scope {required}; the block token holds {held}"
    if not subject.startswith("user:"):
        return (f"this route needs the block scope {required}, which block {app_block} declares but a signed-out"
                f" viewer's token never holds; the block token holds {held}")
    user_id = int(subject[5:])
    granted = consent.granted(state.store, user_id, app_block)
    if required in granted:
        return (f"this route needs the block scope {required}: user {user_id} consented to it after this block"
                f" token was minted; mint a new token (the block token holds {held})")
    return (f"consent missing: this route needs the block scope {required}, which block {app_block} declares but"
            f" user {user_id} has not consented to (user {user_id} granted {journal.described(sorted(granted))});"
            f" the block token holds {held}")


# --- routes ---------------------------------------------------------------------------------------

def _same_origin(request: Request) -> bool:
    """The host page's origin: the catalogue origin itself, or one a host registered (blockkit dev)."""
    origin = request.headers.get("origin")
    if not origin:
        return False
    allowed = {emulator(request).urls.base_url.lower(), *host_origins(request)}
    return origin.lower() in allowed


_HOST_ORIGINS: dict[str, set[str]] = {}  # data directory -> extra host page origins


def add_host_origin(store: Any, origin: str) -> None:
    """Let a host page on ``origin`` (blockkit dev's) mint block tokens from this store's emulator."""
    _HOST_ORIGINS.setdefault(str(store.path), set()).add(origin.rstrip("/").lower())


def host_origins(request: Request) -> set[str]:
    return _HOST_ORIGINS.get(str(emulator(request).store.path), set())


async def mint_endpoint(request: Request) -> Response:
    if not _same_origin(request):
        return json_response({"error": "cross-origin POST rejected"}, 403)
    try:
        body = await read_limited(request, MAX_BODY_BYTES)
    except BodyTooLarge:
        return json_response({"error": "Request body too large (at most 8 KB)"}, 413)
    return await run_in_threadpool(_mint, request, body)


def _mint(request: Request, body: bytes) -> Response:
    from blockkit.emulator.http.oauth import web
    from blockkit.emulator.store import oauth as oauth_store

    try:
        payload = orjson.loads(body)
    except orjson.JSONDecodeError:
        return json_response({"error": "Invalid request body", "details": "not JSON"}, 400)
    problem = _body_problem(payload)
    if problem:
        return json_response({"error": "Invalid request body", "details": problem}, 400)
    state = emulator(request)
    with state.store.write() as db:
        count, left = oauth_store.hit(db, "block-tokens", web.client_ip(request), now=state.clock.timestamp(),
                                      window=60)
    if count > MINT_LIMIT_PER_MINUTE:
        journal.note_reason(f"block-token minting is limited to {MINT_LIMIT_PER_MINUTE} a minute per address: this"
                            f" is request {count} from {web.client_ip(request)} in the 60 s window, which ends in"
                            f" {max(1, left)} s")
        return json_response({"error": "Rate limit exceeded"}, 429, {"Retry-After": str(max(1, left))})
    session = web.session_of(request)
    slot = payload["slotContext"]
    with state.store.read() as db:
        instance = blocktokens.find_instance(db, payload["blockInstanceId"])
    if instance is not None:
        on_page = slot.get("entityType") == "none"
        if on_page != (instance.model_id is None) or slot["slotId"] != instance.slot_id \
                or (not on_page and int(slot["modelId"]) != instance.model_id):
            instance = None  # the claimed slot is not where this instance is installed
    if instance is None:
        return json_response({"error": "Block install not found"}, 404)
    try:
        minted = blocktokens.mint_block_token(state, instance_id=instance.id,
                                              user_id=session.user_id if session else None,
                                              restricted=region_restricted(request))
    except blocktokens.MintRefused as exc:
        return json_response({"error": str(exc)}, exc.status)
    return json_response(minted.as_dict(), 200, {"Cache-Control": "no-store"})


def _body_problem(payload: Any) -> str | None:
    if not isinstance(payload, dict):
        return "the body is a JSON object {blockInstanceId, slotContext}"
    instance = payload.get("blockInstanceId")
    if not isinstance(instance, str) or not 1 <= len(instance) <= 64:
        return "blockInstanceId: a string of 1-64 characters"
    slot = payload.get("slotContext")
    if not isinstance(slot, dict):
        return "slotContext: an object"
    slot_id = slot.get("slotId")
    if not isinstance(slot_id, str) or not 1 <= len(slot_id) <= 64:
        return "slotContext.slotId: a string of 1-64 characters"
    if slot.get("entityType") == "none":
        return None
    if slot.get("entityType") not in (None, "model"):
        return "slotContext.entityType: 'none' or 'model'"
    model_id = slot.get("modelId")
    if isinstance(model_id, str) and model_id.isascii() and model_id.isdigit():
        model_id = int(model_id)
    if type(model_id) is not int or not 1 <= model_id <= 2_147_483_647:
        return "slotContext.modelId: a positive integer"
    slot["modelId"] = model_id
    return None


def jwks_endpoint(request: Request) -> Response:
    return json_response(blocktokens.jwks(emulator(request).store), 200,
                         {"Cache-Control": "public, max-age=60", "Access-Control-Allow-Origin": "*"})


def _ceiling(request: Request) -> int:
    caller = auth.caller_of(request)
    level = caller.clamp(facts.ALL_BROWSING_LEVELS)
    return level & facts.SFW_BROWSING_LEVEL if region_restricted(request) else level


def block_models(request: Request) -> Response:
    from blockkit.emulator.http.catalogue import models
    from blockkit.emulator.http.catalogue.params import parse_query, raw_params

    query = parse_query(request, models.ModelsQuery)
    if query.query is not None and query.page is not None:
        raise ApiError(400, error_body("query cannot be combined with page: search uses cursor pagination"))
    # Maturity comes only from the token's ceiling; the viewer's favorites and hidden lists are not read.
    query = query.model_copy(update={"nsfw": True, "favorites": False, "hidden": False})
    level = _ceiling(request)
    viewer = auth.Caller(kind="block", max_browsing_level=level)
    raw = [(k, v) for k, values in raw_params(request).items() for v in values if isinstance(v, str)]
    from blockkit.emulator.http.catalogue import fragments, links

    cache, generation = fragments.cache_for(emulator(request).store)
    page = models.list_models(emulator(request), query, viewer, restricted=False, raw_query=raw, cache=cache,
                              generation=generation, base_url=links.request_origin(request))
    out = orjson.loads(page.render())
    _rebase(out, "/api/v1/models?", "/api/v1/blocks/models?")
    out["maturity"] = {"browsingLevel": level, "sfwOnly": level & ~facts.SFW_BROWSING_LEVEL == 0}
    return json_response(out)


def block_images(request: Request) -> Response:
    from blockkit.emulator.http.catalogue import images
    from blockkit.emulator.http.catalogue.query import Shape, known_pairs, read_query

    query = read_query(request, images.ImagesQuery, Shape.ENVELOPE)
    query = query.model_copy(update={"nsfw": None, "browsing_level": None})
    from blockkit.emulator.http.catalogue import links

    feed = images.FeedRequest(query=query, ceiling=_ceiling(request), restricted=region_restricted(request),
                              params=known_pairs(request, images.ImagesQuery), base_url=links.request_origin(request))
    out = orjson.loads(json_response(images.list_images(emulator(request), feed)).body)
    _rebase(out, "/api/v1/images?", "/api/v1/blocks/images?")
    return json_response(out)


def _rebase(out: dict[str, Any], old: str, new: str) -> None:
    meta = out.get("metadata") or {}
    if isinstance(meta.get("nextPage"), str):
        meta["nextPage"] = meta["nextPage"].replace(old, new, 1)


def block_me(request: Request) -> Response:
    caller = auth.caller_of(request)
    if caller.anonymous:
        return _denied(403, "Anonymous block tokens may not call /blocks/me")
    if caller.status == "banned":
        return _denied(403, "banned")
    return json_response({"id": caller.user_id, "username": caller.username,
                          "status": "muted" if caller.status == "muted" else "active",
                          "buzzBudget": caller.token_ctx.get("buzzBudget")}, 200, PRIVATE)


routes = [
    Route("/block-tokens", mint_endpoint, methods=["POST"]),
    Route("/block-tokens/jwks", jwks_endpoint, methods=["GET"]),
    Route("/blocks/models", block_models, methods=["GET"]),
    Route("/blocks/images", block_images, methods=["GET"]),
    Route("/blocks/me", block_me, methods=["GET"]),
]

"""``GET {base_url}/api/v1/blocks/entitlements``: the viewer's entitlements for goods bought in an app.

- With a block token (``goods:read:self``, checked by ``blockroutes.BlockScopeMiddleware``): the
  token's subject and ``appId``; an anonymous token is 403.
- With an OAuth access token: the token's user; the app is the required ``appId`` query parameter.
- No token: 401 ``{"error": "Unauthorized"}``.

Answer (our shape; the spec gives none): ``{"items": [{id, goodId, kind, title, priceBuzz,
payload, appId, blockId, purchasedAt}]}``, oldest first, refunded purchases left out; a good's
``justification`` is never there.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from blockkit.emulator import auth, goods
from blockkit.emulator.catalogue.errors import ApiError, error_body, json_response
from blockkit.emulator.state import emulator

PRIVATE = {"Cache-Control": "private, no-store"}


def entitlements_endpoint(request: Request) -> Response:
    caller = auth.caller_of(request, required=True)
    if caller.kind == "block":
        if caller.anonymous:
            raise ApiError(403, error_body("an anonymous viewer has no entitlements"))
        app_id = str(caller.token_ctx.get("appId", ""))
    else:
        values = request.query_params.getlist("appId")
        if len(values) != 1 or not values[0] or len(values[0]) > 128:
            raise ApiError(400, error_body("appId is required (one value) with an OAuth token"))
        app_id = values[0]
    state = emulator(request)
    assert caller.user_id is not None
    return json_response(goods.entitlements(state.store, state.clock, caller.user_id, app_id), 200, PRIVATE)


routes = [Route("/blocks/entitlements", entitlements_endpoint, methods=["GET"])]

"""GET /api/v1/me: the caller of a bearer token (Authenticated).

401 ``{"error": "Unauthorized"}`` for a missing, malformed, unknown, expired or revoked
token alike (the spec's error row); the reason is never told apart in the body.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from blockkit.emulator.auth import Caller, caller_of
from blockkit.emulator.catalogue.errors import json_response

# A response for one token's owner: never stored by a shared cache.
PRIVATE = {"Cache-Control": "private, no-store"}


def current_user(caller: Caller) -> dict[str, Any]:
    return {
        "id": caller.user_id,
        "username": caller.username,
        "tier": caller.tier,
        "status": caller.status,
        "isMember": caller.tier != "free",  # the spec: true when tier is not free
        "subscriptions": list(caller.subscriptions),
    }


def me_endpoint(request: Request) -> Response:
    caller = caller_of(request, required=True)
    return json_response(current_user(caller), headers=PRIVATE)


routes = [Route("/me", me_endpoint, methods=["GET"])]

"""GET /api/v1/me: the caller of a bearer token (Authenticated).

401 ``{"error": "Unauthorized"}`` for a missing, malformed, unknown, expired or revoked
token alike (the spec's error row); the reason is never told apart in the body.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from blockkit.emulator.http.auth import Caller, caller_of
from blockkit.emulator.http.errors import json_response

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


USER_READ = 1  # the OAuth scope bit that releases the email, as on userinfo


def profile_and_token_fields(request: Request, caller: Caller) -> dict[str, Any]:
    """What the platform's /me adds (me.ts:33-40): email and emailVerified when the token may read the
    profile (UserRead) and the user has an email; the token's tokenScope, buzzLimit and subject.

    Every bearer token on the platform has a subject (bearer-token.ts): an OAuth token's is
    ``{type: "oauth", id: <clientId>}`` with the consent's Buzz limit, a user's own API key's
    ``{type: "apiKey", id: <the key's row id>}`` with the key's limit. A token the CLI minted (no
    client) is the emulator's API key: its subject is ``apiKey`` with the token's row id, and its
    buzzLimit null (the emulator sets no limit on those)."""
    from blockkit.emulator.state import emulator
    from blockkit.emulator.store import oauth as oauth_store

    client_id = caller.token_ctx.get("client_id")
    with emulator(request).store.read() as db:
        row = db.execute("SELECT email, email_verified FROM users WHERE id = ?", (caller.user_id,)).fetchone()
        consent = (oauth_store.get_consent(db, user_id=caller.user_id, client_id=client_id)
                   if client_id is not None else None)
    out: dict[str, Any] = {}
    if row is not None and row[0] and caller.scope & USER_READ:
        out["email"] = row[0]
        out["emailVerified"] = bool(row[1])
    if client_id is not None:
        out["tokenScope"] = caller.scope
        out["buzzLimit"] = consent.buzz_limit if consent is not None else None
        out["subject"] = {"type": "oauth", "id": client_id}
    elif caller.kind == "oauth" and caller.token_ctx.get("token_id") is not None:
        out["tokenScope"] = caller.scope
        out["buzzLimit"] = None
        out["subject"] = {"type": "apiKey", "id": caller.token_ctx["token_id"]}
    return out


def me_endpoint(request: Request) -> Response:
    caller = caller_of(request, required=True)
    return json_response({**current_user(caller), **profile_and_token_fields(request, caller)}, headers=PRIVATE)


routes = [Route("/me", me_endpoint, methods=["GET"])]

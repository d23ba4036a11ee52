"""Token, revocation and userinfo (``{auth_url}/api/auth/oauth/...``): called by programs.

- ``POST /token`` (form body): oauthlib's token endpoint with our validator; 20 requests a
  minute per client_id; a public client calling from a browser must be on its allowed
  origins (403 ``origin_not_allowed``, as the platform does); ``Cache-Control: no-store``.
- ``POST /revoke`` (RFC 7009): the caller is a session (its user's tokens) or a
  confidential client (tokens issued to it); anything else, or a token of someone else,
  changes nothing; always ``200 {}`` once the request is well-formed. A refresh token
  takes its family with it (every refresh token of the grant and the access tokens they
  minted). 20 a minute per IP.
- ``GET /userinfo``: OIDC claims of the bearer token's user; 401 ``invalid_token`` (with
  ``WWW-Authenticate``), 403 ``insufficient_scope`` without UserRead.
"""

from __future__ import annotations

import hmac
from typing import Any

import orjson
from oauthlib.oauth2.rfc6749 import errors
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from blockkit.emulator import auth
from blockkit.emulator.catalogue.errors import json_response
from blockkit.emulator.oauth import scopes, web
from blockkit.emulator.oauth.validator import GRANT_PARAMS, parse_basic
from blockkit.emulator.state import emulator
from blockkit.emulator.store import oauth as store
from blockkit.emulator.store.tokens import hash_token

TOKEN_CORS = "POST, OPTIONS"
USERINFO_CORS = "GET, OPTIONS"


def _error(status: int, error: str, description: str, headers: dict[str, str] | None = None) -> Response:
    return json_response({"error": error, "error_description": description}, status, {**web.NO_STORE,
                                                                                      **(headers or {})})


class _Creds:
    """A form's client credentials, from the body or ``Authorization: Basic``."""

    def __init__(self, request: Request, pairs: list[tuple[str, str]]) -> None:
        self.client_id = web.single(pairs, "client_id")
        self.client_secret = web.single(pairs, "client_secret")
        basic = parse_basic(request.headers.get("authorization") or "")
        if basic is not None:
            self.client_id = self.client_id or basic[0]
            self.client_secret = self.client_secret if self.client_secret is not None else basic[1]


# --- token ------------------------------------------------------------------------------------

async def token(request: Request) -> Response:
    if request.method == "OPTIONS":
        return web.preflight(request, credentials=True, methods=TOKEN_CORS)
    cors = web.cors_headers(request, credentials=True, methods=TOKEN_CORS)
    try:
        body, pairs = await web.read_form(request)
    except web.FormError as exc:
        response = _error(400, "invalid_request", str(exc))
    else:
        response = await run_in_threadpool(_token, request, body, pairs)
    if response.status_code != 403:  # a refused origin gets no CORS: its page cannot read the answer
        response.headers.update(cors)
    return response


def _token(request: Request, body: str, pairs: list[tuple[str, str]]) -> Response:
    creds = _Creds(request, pairs)
    limited = web.over_limit(request, "token", creds.client_id or "-")
    if limited is not None:
        return limited
    grant_types = [v for k, v in pairs if k == "grant_type"]
    if len(grant_types) != 1 or not grant_types[0]:
        return _error(400, "invalid_request", "grant_type is required (once)")
    if grant_types[0] not in GRANT_PARAMS:
        return _error(400, "unsupported_grant_type",
                      "grant_type must be authorization_code, refresh_token or client_credentials")
    state = emulator(request)
    origin = request.headers.get("origin")
    if origin and creds.client_id:
        with state.store.read() as db:
            client = store.get_client(db, creds.client_id)
        if client is not None and not client.confidential and origin not in client.allowed_origins:
            return _error(403, "origin_not_allowed", "Origin is not one of this public client's allowed origins")
    provider = request.app.state.provider
    headers = {"Content-Type": web.FORM_TYPE}
    if "authorization" in request.headers:
        headers["Authorization"] = request.headers["authorization"]
    uri = str(request.url)
    try:
        with state.store.write():
            out_headers, out_body, status = provider.token.create_token_response(uri, "POST", body, headers)
    except errors.OAuth2Error as exc:
        return _error(exc.status_code, exc.error, exc.description or exc.error)
    except ValueError as exc:  # oauthlib refuses a body it cannot decode
        return _error(400, "invalid_request", str(exc) or "malformed form body")
    payload = orjson.loads(out_body)
    if status == 200:
        payload = {key: payload[key] for key in ("access_token", "token_type", "expires_in", "refresh_token",
                                                 "scope") if key in payload}
    elif "error_description" not in payload:
        payload["error_description"] = payload.get("error", "")
    extra = {k: v for k, v in out_headers.items() if k.lower() == "www-authenticate"}
    return json_response(payload, status, {**web.NO_STORE, **extra})


# --- revoke -----------------------------------------------------------------------------------

async def revoke(request: Request) -> Response:
    if request.method == "OPTIONS":
        return web.preflight(request, credentials=False, methods=TOKEN_CORS)
    cors = web.cors_headers(request, credentials=False, methods=TOKEN_CORS)
    try:
        _body, pairs = await web.read_form(request)
    except web.FormError as exc:
        response = _error(400, "invalid_request", str(exc))
    else:
        response = await run_in_threadpool(_revoke, request, pairs)
    response.headers.update(cors)
    return response


def _revoke(request: Request, pairs: list[tuple[str, str]]) -> Response:
    limited = web.over_limit(request, "revoke", web.client_ip(request))
    if limited is not None:
        return limited
    raw = web.single(pairs, "token")
    if not raw:
        return _error(400, "invalid_request", "token is required (once)")
    state = emulator(request)
    session = web.session_of(request)
    creds = _Creds(request, pairs)
    caller_user: int | None = session.user_id if session else None
    caller_client: str | None = None
    if caller_user is None and creds.client_id and creds.client_secret is not None:
        with state.store.read() as db:
            client = store.get_client(db, creds.client_id)
        if client is not None and client.confidential and client.secret_hash is not None \
                and hmac.compare_digest(hash_token(creds.client_secret), client.secret_hash):
            caller_client = client.id
    if caller_user is None and caller_client is None:
        return json_response({}, 200, web.NO_STORE)  # unauthenticated: nothing happens, nothing is told

    def mine(user_id: int, client_id: str | None) -> bool:
        return user_id == caller_user if caller_user is not None else client_id == caller_client

    now = state.clock.now()
    order = ("refresh_token", "access_token") if web.single(pairs, "token_type_hint") == "refresh_token" \
        else ("access_token", "refresh_token")
    with state.store.write() as db:
        for kind in order:
            if kind == "access_token":
                row = db.execute("SELECT id, user_id, client_id FROM oauth_access_tokens WHERE token_hash = ?",
                                 (hash_token(raw),)).fetchone()
                if row is not None:
                    if mine(row[1], row[2]):
                        db.execute("UPDATE oauth_access_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                                   (state.clock.iso(), row[0]))
                    break
            else:
                refresh = store.find_refresh_token(db, raw)
                if refresh is not None:
                    if mine(refresh.user_id, refresh.client_id):
                        store.revoke_family(db, refresh.family_id, now=now)
                    break
    return json_response({}, 200, web.NO_STORE)


# --- userinfo ---------------------------------------------------------------------------------

def _invalid_token(description: str) -> Response:
    return _error(401, "invalid_token", description,
                  {"WWW-Authenticate": f'Bearer error="invalid_token", error_description="{description}"'})


async def userinfo(request: Request) -> Response:
    if request.method == "OPTIONS":
        return web.preflight(request, credentials=True, methods=USERINFO_CORS)
    response = await run_in_threadpool(_userinfo, request)
    response.headers.update(web.cors_headers(request, credentials=True, methods=USERINFO_CORS))
    return response


def _userinfo(request: Request) -> Response:
    try:
        raw = auth.bearer_token(request)
        if raw is None:
            return _invalid_token("Missing bearer token")
        caller = auth.verify_access_token(raw, emulator(request))
    except auth.TokenRejected as exc:
        return _invalid_token("Invalid or expired token" if exc.reason != "malformed" else "Malformed bearer token")
    if not caller.scope & scopes.USER_READ:
        return _error(403, "insufficient_scope", "The token does not carry the UserRead scope",
                      {"WWW-Authenticate": 'Bearer error="insufficient_scope", scope="1"'})
    return json_response(claims_of(request, caller.user_id or 0), 200, web.NO_STORE)


def claims_of(request: Request, user_id: int) -> dict[str, Any]:
    """The OIDC claims of a user; a claim whose value is absent is left out."""
    with emulator(request).store.read() as db:
        row = db.execute("SELECT id, username, image, email, email_verified FROM users WHERE id = ?",
                         (user_id,)).fetchone()
    user_id, username, image, email, verified = row
    claims: dict[str, Any] = {"sub": str(user_id), "id": user_id}
    if username:
        claims.update(username=username, preferred_username=username, name=username)
    if image:
        # Avatars the seed stores as paths are served by the catalogue origin.
        url = emulator(request).urls.base_url + image if image.startswith("/") else image
        claims.update(picture=url, image=url)
    if email:
        claims.update(email=email, email_verified=bool(verified))
    return claims

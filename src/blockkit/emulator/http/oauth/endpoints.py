"""Token, revocation and userinfo (``{auth_url}/api/auth/oauth/...``): called by programs.

- ``POST /token`` (form or JSON body, as the platform's ``parseBody``): oauthlib's token
  endpoint with our validator. A public client calling from a browser must be on its
  allowed origins (403 ``origin_not_allowed``, no CORS). Client authentication failures
  are 400 ``invalid_client`` for body credentials and 401 with ``WWW-Authenticate: Basic``
  when the client used Basic (RFC 6749 5.2). 20 proven requests a minute per client_id
  (see ``validator``). An exchange of a code sent to authorize with a ``nonce`` also
  returns an ES256 ``id_token`` (``oidc``). ``Cache-Control: no-store``.
- ``POST /revoke`` (RFC 7009; form or JSON): a public client's Origin must be allowed (403
  ``origin_not_allowed``); the caller is a session (its user) or a confidential client,
  which acts as its owner's account, as on the platform; a token of another user is left
  alone. Always ``200 {}`` once the request is well-formed; when nothing was revoked the
  emulator says why on stderr. A refresh token takes its family with it. 20 a minute per IP.
- ``GET /userinfo``: the claims of the bearer token's user; 401 ``invalid_token``, 403
  ``insufficient_scope`` without UserRead.

CORS: ``*`` without credentials (the platform's ``setWildcardCors``), the caller's origin for
a public client on its allowed origins.
"""

from __future__ import annotations

import asyncio
import hmac
import sys
import weakref
from typing import Any

import orjson
from oauthlib.oauth2.rfc6749 import errors
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from blockkit.emulator.http import auth
from blockkit.emulator.http.errors import json_response
from blockkit.emulator.http.oauth import oidc, web
from blockkit.emulator.services.oauth import scopes
from blockkit.emulator.http.oauth.device import DEVICE_GRANT
from blockkit.emulator.services.oauth.validator import GRANT_PARAMS, PEER_HEADER, parse_basic
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

def _cors_for(origin: str | None, client: store.Client | None, methods: str) -> dict[str, str]:
    if origin and client is not None and not client.confidential and origin in client.allowed_origins:
        return web.public_client_cors(origin, methods)
    return web.wildcard_cors(methods)


async def token(request: Request) -> Response:
    if request.method == "OPTIONS":
        return web.preflight(TOKEN_CORS)
    try:
        body, pairs = await web.read_form(request, json_ok=True)
    except web.FormError as exc:
        response = _error(400, "invalid_request", str(exc))
        response.headers.update(web.wildcard_cors(TOKEN_CORS))
        return response
    # Token requests take turns here, on the event loop, before they take a worker thread: each is
    # one write transaction, which would queue on the store's writer lock anyway, and a queue of
    # coroutines costs nothing where a queue of threads costs a wake-up and a hand-over of the
    # interpreter lock each (issue 27: the token endpoint's p99 at 16 connections). The threads stay
    # free for other requests meanwhile.
    async with _token_turns(request):
        return await run_in_threadpool(_token, request, body, pairs)


def _token_turns(request: Request) -> asyncio.Lock:
    """The queue of token requests on the event loop running this one. An asyncio lock belongs to
    one loop, and in-process test clients may serve the same app from several: one lock per loop
    (correctness never rests on it: the store's writer lock still orders the writes)."""
    state = request.app.state
    locks = getattr(state, "token_turns", None)
    if locks is None:
        locks = state.token_turns = weakref.WeakKeyDictionary()
    loop = asyncio.get_running_loop()
    turns = locks.get(loop)
    if turns is None:
        turns = locks[loop] = asyncio.Lock()
    return turns


def _client_and_origin(request: Request, state: Any,
                       pairs: list[tuple[str, str]]) -> tuple[store.Client | None, str | None, Response | None]:
    """The client the request names (None when it names none, or an unknown one), its Origin, and a 403
    when a public client is called from an origin it did not register (no CORS on that answer: the
    page that sent it cannot read it)."""
    creds = _Creds(request, pairs)
    client = None
    if creds.client_id:  # one statement: its own snapshot, no transaction to open
        client = store.get_client(state.store.connection(), creds.client_id)
    origin = request.headers.get("origin")
    if origin and client is not None and not client.confidential and origin not in client.allowed_origins:
        return client, origin, _error(403, "origin_not_allowed",
                                      "Origin is not in the registered allowedOrigins for this client.")
    return client, origin, None


def _token(request: Request, body: str, pairs: list[tuple[str, str]]) -> Response:
    state = emulator(request)
    client, origin, refused = _client_and_origin(request, state, pairs)
    if refused is not None:
        return refused
    response = _grant(request, state, body, pairs, client)
    response.headers.update(_cors_for(origin, client, TOKEN_CORS))
    return response


def _grant(request: Request, state: Any, body: str, pairs: list[tuple[str, str]],
           client: store.Client | None = None) -> Response:
    grant_types = [v for k, v in pairs if k == "grant_type"]
    if len(grant_types) != 1 or not grant_types[0]:
        return _error(400, "invalid_request", "grant_type is required (once)")
    grant_type = grant_types[0]
    if grant_type not in GRANT_PARAMS:
        hint = " (poll /api/auth/oauth/device-token for the device grant)" if grant_type == DEVICE_GRANT else ""
        return _error(400, "unsupported_grant_type",
                      f"Unsupported grant type {grant_type!r}: use authorization_code, refresh_token or"
                      f" client_credentials{hint}")
    provider = request.app.state.provider
    headers = {"Content-Type": web.FORM_TYPE, PEER_HEADER: web.client_ip(request)}
    used_basic = parse_basic(request.headers.get("authorization") or "") is not None
    if "authorization" in request.headers:
        headers["Authorization"] = request.headers["authorization"]
    uri = str(request.url.replace(query=""))
    try:
        with provider.validator.one_request(*([client] if client is not None else [])), state.store.write():
            out_headers, out_body, status = provider.token.create_token_response(uri, "POST", body, headers)
    except errors.OAuth2Error as exc:
        return _error(exc.status_code, exc.error, exc.description or exc.error)
    except ValueError as exc:  # oauthlib refuses a body it cannot decode
        return _error(400, "invalid_request", str(exc) or "malformed form body")
    payload = orjson.loads(out_body)
    extra = {k: v for k, v in out_headers.items() if k.lower() == "retry-after"}
    if status == 200:
        payload = {key: payload[key] for key in ("access_token", "token_type", "expires_in", "refresh_token",
                                                 "scope") if key in payload}
        if grant_type == "authorization_code":
            id_token = oidc.id_token_for(request, provider.validator.memory, web.single(pairs, "code") or "")
            if id_token is not None:
                payload["id_token"] = id_token
    elif payload.get("error") == "invalid_client":
        # RFC 6749 5.2: 401 with the scheme the client used when it used Authorization; else 400.
        payload["error_description"] = payload.get("error_description") or (
            "Invalid client: unknown client_id, or a wrong or missing client_secret")
        if used_basic:
            status, extra = 401, {"WWW-Authenticate": 'Basic realm="blockkit", charset="UTF-8"'}
        else:
            status = 400
    elif not payload.get("error_description"):
        payload["error_description"] = DESCRIPTIONS.get(payload.get("error", ""), "the request was refused")
    return json_response(payload, status, {**web.NO_STORE, **extra})


# oauthlib errors that carry no description of their own.
DESCRIPTIONS = {
    "invalid_grant": "Invalid grant: the code or refresh token is unknown, used, expired or not this client's",
    "unauthorized_client": "Unauthorized client: this client may not use this grant type",
    "invalid_scope": "Invalid scope: the scope asks for more than this client or grant allows",
    "invalid_request": "Invalid request: a required parameter is missing or malformed",
}


# --- revoke -----------------------------------------------------------------------------------

async def revoke(request: Request) -> Response:
    if request.method == "OPTIONS":
        return web.preflight(TOKEN_CORS)
    try:
        _body, pairs = await web.read_form(request, json_ok=True)
    except web.FormError as exc:
        response = _error(400, "invalid_request", str(exc))
        response.headers.update(web.wildcard_cors(TOKEN_CORS))
        return response
    return await run_in_threadpool(_revoke, request, pairs)


def _note(message: str) -> None:
    print(f"blockkit emulator: revoke: {message}", file=sys.stderr, flush=True)


def _revoke(request: Request, pairs: list[tuple[str, str]]) -> Response:
    limited = web.over_limit(request, "revoke", web.client_ip(request))
    if limited is not None:
        limited.headers.update(web.wildcard_cors(TOKEN_CORS))
        return limited
    state = emulator(request)
    client, origin, refused = _client_and_origin(request, state, pairs)
    if refused is not None:
        return refused
    creds = _Creds(request, pairs)
    cors = _cors_for(origin, client, TOKEN_CORS)
    raw = web.single(pairs, "token")
    if not raw:
        response = _error(400, "invalid_request", "Missing token parameter (send it once)")
        response.headers.update(cors)
        return response
    session = web.session_of(request)
    caller: int | None = session.user_id if session else None
    if caller is None and client is not None and client.confidential and client.secret_hash is not None \
            and creds.client_secret is not None \
            and hmac.compare_digest(hash_token(creds.client_secret), client.secret_hash):
        caller = client.owner_user_id  # a confidential client acts as its owner's account
    done = json_response({}, 200, {**web.NO_STORE, **cors})
    if caller is None:
        _note("nothing revoked: no session and no valid confidential-client credentials"
              " (a public client cannot revoke without a session; the answer is 200 {} all the same)")
        return done
    now = state.clock.now()
    order = ("refresh_token", "access_token") if web.single(pairs, "token_type_hint") == "refresh_token" \
        else ("access_token", "refresh_token")
    with state.store.write() as db:
        for kind in order:
            if kind == "access_token":
                row = db.execute("SELECT id, user_id FROM oauth_access_tokens WHERE token_hash = ?",
                                 (hash_token(raw),)).fetchone()
                if row is not None:
                    if row[1] == caller:
                        db.execute("UPDATE oauth_access_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                                   (state.clock.iso(), row[0]))
                        return done
                    break
            else:
                refresh = store.find_refresh_token(db, raw)
                if refresh is not None:
                    if refresh.user_id == caller:
                        store.revoke_family(db, refresh.family_id, now=now)
                        return done
                    break
    _note("nothing revoked: the token is unknown, or belongs to another user than the caller"
          " (RFC 7009 answers 200 {} all the same)")
    return done


# --- userinfo ---------------------------------------------------------------------------------

def _invalid_token(description: str) -> Response:
    return _error(401, "invalid_token", description,
                  {"WWW-Authenticate": f'Bearer error="invalid_token", error_description="{description}"'})


async def userinfo(request: Request) -> Response:
    if request.method == "OPTIONS":
        return web.preflight(USERINFO_CORS)
    if request.method != "GET":
        response = _error(405, "invalid_request", "userinfo answers GET only")
        response.headers["Allow"] = "GET, OPTIONS"
    else:
        # On the event loop, with no hop to a worker thread: two one-row reads by primary key, which
        # WAL never makes wait for a writer, cost less than handing the request to a thread and
        # back (issue 27: userinfo served fewer requests at 16 connections than at 1).
        response = _userinfo(request)
    response.headers.update(web.wildcard_cors(USERINFO_CORS))
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
        from blockkit.emulator import journal
        from blockkit.emulator.services.oauth.validator import scope_names

        journal.note_reason(f"userinfo needs the UserRead scope (1); the access token holds scope {caller.scope}"
                            f" ({scope_names(caller.scope)})")
        return _error(403, "insufficient_scope", "The token does not carry the UserRead scope",
                      {"WWW-Authenticate": 'Bearer error="insufficient_scope", scope="1"'})
    return json_response(claims_of(request, caller.user_id or 0), 200, web.NO_STORE)


def claims_of(request: Request, user_id: int) -> dict[str, Any]:
    """The OIDC claims of a user; a claim whose value is absent is left out."""
    db = emulator(request).store.connection()  # one statement: no transaction to open
    row = db.execute("SELECT id, username, image, email, email_verified, is_moderator, tier FROM users"
                     " WHERE id = ?", (user_id,)).fetchone()
    user_id, username, image, email, verified, moderator, tier = row
    claims: dict[str, Any] = {"sub": str(user_id), "id": user_id}
    if username:
        claims.update(username=username, preferred_username=username, name=username)
    if image:
        # Avatars the seed stores as paths are served by the catalogue origin.
        url = emulator(request).urls.base_url + image if image.startswith("/") else image
        claims.update(picture=url, image=url)
    # The platform's role claims: roles (UserRole grants; the seed has none), isModerator, tier.
    claims.update(roles=[], isModerator=bool(moderator))
    if tier:
        claims["tier"] = tier
    if email:
        claims.update(email=email, email_verified=bool(verified))
    return claims

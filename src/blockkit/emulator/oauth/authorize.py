"""Sign-in and the authorization endpoint (``{auth_url}``): pages a person uses in a browser.

- ``GET /login?returnUrl=URL`` lists the seeded users; ``POST /login`` (username, returnUrl)
  starts a session (cookie ``bk_session``: HttpOnly, SameSite=Lax) and answers 302 to
  returnUrl, which must be on one of the emulator's origins or a registered client's.
- ``GET /api/auth/oauth/authorize``: no session, 302 to /login; then, in the platform's
  order, the rate limit (10 a minute per user), the client, the exact redirect_uri and
  oauthlib's validation (response_type, PKCE S256, state, scope). A remembered consent
  with the same scope issues the code at once (302 ``redirect_uri?code=&state=``);
  otherwise the consent page.
- ``POST /api/auth/oauth/authorize`` is the consent form: CSRF token, ``approved``,
  ``remember``, ``buzz_limit``. Deny answers ``error=access_denied`` to the (registered)
  redirect_uri.

No error is ever sent to an unchecked redirect_uri: every validation error is the
spec's 400 (or 429) with the OAuth envelope, as a page for a browser.
"""

from __future__ import annotations

import hmac
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import orjson
from oauthlib.oauth2.rfc6749 import errors
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from blockkit.emulator.oauth import buzz, scopes, web
from blockkit.emulator.state import emulator
from blockkit.emulator.store import oauth as store

AUTHORIZE_PATH = "/api/auth/oauth/authorize"
CONSENT_FIELDS = ("response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge",
                  "code_challenge_method")
CORS_METHODS = "GET, POST, OPTIONS"


def provider(request: Request) -> Any:
    return request.app.state.provider


# --- sign-in ----------------------------------------------------------------------------------

def login_page(request: Request) -> Response:
    return_url = request.query_params.get("returnUrl", "")
    if web.safe_return_url(request, return_url) is None:
        return web.oauth_error(request, 400, "invalid_request", "returnUrl is not on this platform's origins"
                               " or a registered client's")
    with emulator(request).store.read() as db:
        rows = db.execute("SELECT username, tier, status, is_moderator FROM users"
                          " WHERE id > 0 AND deleted_at IS NULL ORDER BY id").fetchall()
    users = [{"username": r[0], "tier": r[1], "status": r[2], "moderator": bool(r[3]), "banned": r[2] == "banned"}
             for r in rows]
    session = web.session_of(request)
    current = web.username_of(request, session.user_id) if session else None
    return web.page("login.html", title="Sign in", users=users, return_url=return_url, current=current)


async def login_submit(request: Request) -> Response:
    try:
        _text, pairs = await web.read_form(request)
    except web.FormError as exc:
        return web.oauth_error(request, 400, "invalid_request", str(exc))
    return await run_in_threadpool(_login, request, pairs)


def _login(request: Request, pairs: list[tuple[str, str]]) -> Response:
    username = web.single(pairs, "username")
    target = web.safe_return_url(request, web.single(pairs, "returnUrl"))
    if target is None:
        return web.oauth_error(request, 400, "invalid_request", "returnUrl is not on this platform's origins"
                               " or a registered client's")
    if not username:
        return web.oauth_error(request, 400, "invalid_request", "username is required")
    state = emulator(request)
    with state.store.write() as db:
        row = db.execute("SELECT id, status FROM users WHERE username = ? AND deleted_at IS NULL AND id > 0",
                         (username,)).fetchone()
        if row is None or row[1] == "banned":
            return web.oauth_error(request, 400, "invalid_request", f"no user {username!r} can sign in")
        raw = store.start_session(db, int(row[0]), now=state.clock.now())
    response = RedirectResponse(target, status_code=302)
    response.set_cookie(web.SESSION_COOKIE, raw, max_age=store.SESSION_TTL_SECONDS, path="/", httponly=True,
                        samesite="lax")
    return response


async def logout(request: Request) -> Response:
    raw = request.cookies.get(web.SESSION_COOKIE)
    if raw:
        state = emulator(request)

        def end() -> None:
            with state.store.write() as db:
                store.end_session(db, raw, now=state.clock.now())

        await run_in_threadpool(end)
    response = RedirectResponse("/", status_code=302)
    response.delete_cookie(web.SESSION_COOKIE, path="/", httponly=True, samesite="lax")
    return response


def home(request: Request) -> Response:
    session = web.session_of(request)
    name = web.username_of(request, session.user_id) if session else None
    return web.page("home.html", title="Local platform", username=name)


# --- authorize ---------------------------------------------------------------------------------

async def authorize(request: Request) -> Response:
    if request.method == "OPTIONS":
        return web.preflight(request, credentials=True, methods=CORS_METHODS)
    body = ""
    pairs: list[tuple[str, str]] = list(request.query_params.multi_items())
    if request.method == "POST":
        try:
            body, pairs = await web.read_form(request)
        except web.FormError as exc:
            return web.oauth_error(request, 400, "invalid_request", str(exc))
    response = await run_in_threadpool(_authorize, request, body, pairs)
    response.headers.update(web.cors_headers(request, credentials=True, methods=CORS_METHODS))
    return response


def _authorize(request: Request, body: str, pairs: list[tuple[str, str]]) -> Response:
    session = web.session_of(request)
    if session is None:
        back = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        # 303 so a POSTed consent form is fetched again with GET after signing in.
        return RedirectResponse(f"/login?returnUrl={quote(back, safe='')}", status_code=303)
    limited = web.over_limit(request, "authorize", str(session.user_id))
    if limited is not None:
        return limited
    client_id = web.single(pairs, "client_id")
    if not client_id:
        return web.oauth_error(request, 400, "invalid_request", "client_id is required (once)")
    with emulator(request).store.read() as db:
        client = store.get_client(db, client_id)
    if client is None:
        return web.oauth_error(request, 400, "invalid_client", "unknown client_id")
    redirect_uri = web.single(pairs, "redirect_uri")
    if not redirect_uri or redirect_uri not in client.redirect_uris:
        return web.oauth_error(request, 400, "invalid_request",
                               "redirect_uri must equal one of the client's registered redirect URIs")
    uri = str(request.url) if request.method == "GET" else str(request.url.replace(query=""))
    headers = {"Content-Type": web.FORM_TYPE} if request.method == "POST" else {}
    prov = provider(request)
    try:
        scope_list, info = prov.authorization.validate_authorization_request(uri, request.method, body, headers)
    except errors.InvalidClientIdError:
        return web.oauth_error(request, 400, "invalid_client", "unknown client_id")
    except (errors.FatalClientError, errors.OAuth2Error) as exc:
        return web.oauth_error(request, 400, exc.error, exc.description or exc.error)
    # validate_scopes left the granted form (UserRead added) in the request it checked.
    requested = int(info["request"].scopes[0])

    if request.method == "POST":
        csrf = web.single(pairs, "csrf_token") or ""
        if not hmac.compare_digest(csrf.encode(), session.csrf_token.encode()):
            return web.oauth_error(request, 403, "invalid_request", "the consent form expired or came from"
                                   " elsewhere (CSRF check failed); start again")
        if web.single(pairs, "approved") != "true":
            return _redirect(redirect_uri, {"error": "access_denied", "error_description": "the user denied access",
                                            "state": info["state"]})
        try:
            limit = buzz.parse_limit(web.single(pairs, "buzz_limit"))
        except buzz.LimitError as exc:
            return web.oauth_error(request, 400, "invalid_request", f"buzz_limit: {exc}")
        if web.single(pairs, "remember") == "true":
            state = emulator(request)
            with state.store.write() as db:
                store.save_consent(db, user_id=session.user_id, client_id=client.id, scope=requested,
                                   buzz_limit=limit, now=state.clock.now())
        return _issue(request, uri, body, headers, requested, session.user_id)

    with emulator(request).store.read() as db:
        consent = store.get_consent(db, session.user_id, client.id)
    if consent is not None and consent.scope == requested:
        return _issue(request, uri, body, headers, requested, session.user_id)
    return _consent_page(request, client, pairs, requested, session, consent)


def _issue(request: Request, uri: str, body: str, headers: dict[str, str], scope: int, user_id: int) -> Response:
    prov = provider(request)
    with emulator(request).store.write():
        out_headers, _body, status = prov.authorization.create_authorization_response(
            uri, request.method, body, headers, scopes=[str(scope)], credentials={"user": user_id})
    location = out_headers.get("Location", "")
    if status != 302 or "error=" in urlsplit(location).query:  # oauthlib re-validated and refused
        return web.oauth_error(request, 400, "invalid_request", "the request could not be authorized")
    return RedirectResponse(location, status_code=302, headers={"Cache-Control": "no-store"})


def _redirect(redirect_uri: str, params: dict[str, str]) -> Response:
    separator = "&" if urlsplit(redirect_uri).query else "?"
    return RedirectResponse(redirect_uri + separator + urlencode(params), status_code=302,
                            headers={"Cache-Control": "no-store"})


def _consent_page(request: Request, client: store.Client, pairs: list[tuple[str, str]], requested: int,
                  session: store.Session, consent: store.Consent | None) -> Response:
    params = [(name, web.single(pairs, name) or "") for name in CONSENT_FIELDS]
    params = [(k, str(requested) if k == "scope" else v) for k, v in params]
    redirect_host = urlsplit(web.single(pairs, "redirect_uri") or "").netloc
    stored = consent.buzz_limit if consent is not None else None
    return web.page("consent.html", title=f"Allow {client.name}", client=client,
                    username=web.username_of(request, session.user_id), redirect_host=redirect_host,
                    params=params, csrf_token=session.csrf_token, bits=scopes.bits_of(requested),
                    buzz_options=buzz.options(stored), spends=bool(requested & scopes.AI_SERVICES_WRITE))


def consent_value(limit: Any) -> str:
    return "" if limit is None else orjson.dumps(limit).decode()

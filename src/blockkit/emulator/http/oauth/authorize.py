"""Sign-in and the authorization endpoint (``{auth_url}``): pages a person uses in a browser.

- ``GET /login?returnUrl=URL`` lists the seeded users; ``POST /login`` (username, returnUrl)
  starts a session (cookie ``bk_session``: HttpOnly, SameSite=Lax) and answers 302 to
  returnUrl, which must be on one of the emulator's origins or a registered client's.
- ``GET /api/auth/oauth/authorize``: no session, 303 to /login (a POST's return URL is
  rebuilt from its body); then, in the platform's order, the rate limit (10 a minute per
  user), client_id, the client, redirect_uri (exact, or RFC 8252 loopback: any port,
  ``localhost``/``127.0.0.1``/``[::1]``), PKCE present, S256, ``state``, then oauthlib's checks
  (response_type, scope, the challenge's form). A remembered consent that covers the
  requested scope issues the code at once (302 ``redirect_uri?code=&state=``); otherwise 303 to
  the consent page, ``GET /login/oauth/authorize`` (the same parameters).
- ``POST /api/auth/oauth/authorize`` is the consent form: ``approved``, ``remember``,
  ``buzz_limit`` and a CSRF token bound to this one authorization request; a POST from
  another origin or site (``Origin``/``Sec-Fetch-Site``) is refused. Deny answers 303
  ``error=access_denied`` to the redirect_uri.

CORS: none, on any method (the platform's authorize has none): no other origin can read the
consent form or its token. Errors before the client and redirect_uri are known are the
spec's 400 (a page for a browser), never a redirect. After them, a browser (``Accept:
text/html``) is sent back to the redirect_uri with ``error``, ``error_description`` and
``state`` (RFC 6749 4.1.2.1); a program gets the spec's 400 JSON.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import orjson
from oauthlib.oauth2.rfc6749 import errors
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from blockkit.emulator.services.oauth import buzz_limit, scopes
from blockkit.emulator.http.oauth import web
from blockkit.emulator.services.oauth.clients import redirect_uri_matches
from blockkit.emulator.state import emulator
from blockkit.emulator.store import oauth as store

AUTHORIZE_PATH = "/api/auth/oauth/authorize"
CONSENT_FIELDS = ("response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge",
                  "code_challenge_method", "nonce")


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

CONSENT_PAGE = "/login/oauth/authorize"


async def authorize(request: Request) -> Response:
    if request.method == "OPTIONS":  # no CORS here: a preflight gets nothing a browser would accept
        return Response(status_code=204, headers={"Allow": "GET, POST, OPTIONS"})
    body = ""
    pairs: list[tuple[str, str]] = list(request.query_params.multi_items())
    if request.method == "POST":
        try:
            body, pairs = await web.read_form(request)
        except web.FormError as exc:
            return web.oauth_error(request, 400, "invalid_request", str(exc))
    return await run_in_threadpool(_authorize, request, body, pairs, False)


def consent_page(request: Request) -> Response:
    """``GET /login/oauth/authorize``: the consent page for the request in its query."""
    return _authorize(request, "", list(request.query_params.multi_items()), True)


class _Refused(Exception):
    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error, self.description = error, description


def _precheck(pairs: list[tuple[str, str]]) -> None:
    """The platform's checks after the redirect_uri, in its order: PKCE, S256, state."""
    challenge, method = web.single(pairs, "code_challenge"), web.single(pairs, "code_challenge_method")
    if not challenge or not method:
        raise _Refused("invalid_request", "PKCE required: provide code_challenge and code_challenge_method=S256")
    if method != "S256":
        raise _Refused("invalid_request", "Only S256 code_challenge_method is supported")
    if not web.single(pairs, "state"):
        raise _Refused("invalid_request", "state parameter is required")


def _back_to_client(request: Request, redirect_uri: str, state: str | None, error: str, description: str,
                    status: int = 400) -> Response:
    """An error after the redirect_uri is known: to the client for a browser, else the spec's JSON."""
    if not web.wants_html(request):
        return web.oauth_error(request, status, error, description)
    params = {"error": error, "error_description": description}
    if state:
        params["state"] = state
    return _redirect(redirect_uri, params, status=302)


def _authorize(request: Request, body: str, pairs: list[tuple[str, str]], page_only: bool) -> Response:
    session = web.session_of(request)
    if session is None:
        if request.method == "POST":  # rebuilt from the body, as the platform does
            back = AUTHORIZE_PATH + "?" + urlencode([(k, v) for k, v in pairs if k in CONSENT_FIELDS])
        else:
            back = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        # 303 so a POSTed consent form is fetched again with GET after signing in.
        return RedirectResponse(f"/login?returnUrl={quote(back, safe='')}", status_code=303)
    if not page_only:
        limited = web.over_limit(request, "authorize", str(session.user_id))
        if limited is not None:
            return limited
    client_id = web.single(pairs, "client_id")
    if not client_id:
        return web.oauth_error(request, 400, "invalid_request", "Missing client_id (send it once)")
    with emulator(request).store.read() as db:
        client = store.get_client(db, client_id)
    if client is None:
        return web.oauth_error(request, 400, "invalid_client", "Unknown client_id")
    redirect_uri = web.single(pairs, "redirect_uri")
    if not redirect_uri or not redirect_uri_matches(client.redirect_uris, redirect_uri):
        from blockkit.emulator import journal
        from blockkit.emulator.services.oauth.validator import redirect_reason

        journal.note_reason(redirect_reason(client, redirect_uri))
        return web.oauth_error(request, 400, "invalid_request", "redirect_uri does not match any registered URI")
    state_value = web.single(pairs, "state")
    try:
        _precheck(pairs)
    except _Refused as exc:
        return _back_to_client(request, redirect_uri, state_value, exc.error, exc.description)
    uri = (str(request.url.replace(path=AUTHORIZE_PATH)) if request.method == "GET"
           else str(request.url.replace(query="")))
    headers = {"Content-Type": web.FORM_TYPE} if request.method == "POST" else {}
    prov = provider(request)
    try:
        scope_list, info = prov.authorization.validate_authorization_request(uri, request.method, body, headers)
    except errors.InvalidClientIdError:
        return web.oauth_error(request, 400, "invalid_client", "Unknown client_id")
    except errors.FatalClientError as exc:
        return web.oauth_error(request, 400, exc.error, exc.description or exc.error)
    except errors.OAuth2Error as exc:
        return _back_to_client(request, redirect_uri, state_value, exc.error, _describe(exc, pairs))
    # validate_scopes left the granted form (UserRead added) in the request it checked.
    requested = int(info["request"].scopes[0])
    nonce = web.single(pairs, "nonce") or None
    bound = _csrf_for(session, client.id, redirect_uri, requested, pairs)

    if request.method == "POST":
        refusal = web.cross_origin_refusal(request)
        csrf = web.single(pairs, "csrf_token") or ""
        if refusal is not None or not hmac.compare_digest(csrf.encode(), bound.encode()):
            return web.oauth_error(request, 403, "invalid_request", refusal or "the consent form expired, was for"
                                   " another request or came from elsewhere (CSRF check failed); start again")
        if web.single(pairs, "approved") != "true":
            return _redirect(redirect_uri, {"error": "access_denied",
                                            "error_description": "The user denied the authorization request",
                                            "state": info["state"]}, status=303)
        try:
            limit = buzz_limit.parse_limit(web.single(pairs, "buzz_limit"))
        except buzz_limit.LimitError as exc:
            return web.oauth_error(request, 400, "invalid_request", f"buzz_limit: {exc}")
        if web.single(pairs, "remember") == "true":
            state = emulator(request)
            with state.store.write() as db:
                store.save_consent(db, user_id=session.user_id, client_id=client.id, scope=requested,
                                   buzz_limit=limit, now=state.clock.now())
        return _issue(request, uri, body, headers, requested, session.user_id, nonce)

    with emulator(request).store.read() as db:
        consent = store.get_consent(db, session.user_id, client.id)
    if page_only:
        return _consent_page(request, client, pairs, requested, session, consent, bound)
    if consent is not None and scopes.within(requested, consent.scope):  # the stored grant covers it
        return _issue(request, uri, body, headers, requested, session.user_id, nonce)
    return RedirectResponse(CONSENT_PAGE + "?" + request.url.query, status_code=303,
                            headers={"Cache-Control": "no-store"})


def _describe(exc: errors.OAuth2Error, pairs: list[tuple[str, str]]) -> str:
    if exc.error == "invalid_scope":
        return "Invalid scope value: a decimal bitmask from 0 to Full, within the client's allowed scopes"
    if exc.error == "unsupported_response_type":
        return "response_type must be code"
    return exc.description or exc.error


def _csrf_for(session: store.Session, client_id: str, redirect_uri: str, scope: int,
              pairs: list[tuple[str, str]]) -> str:
    """The consent form's token: the session's secret bound to this one authorization request."""
    fields = [client_id, redirect_uri, str(scope)] + [web.single(pairs, n) or "" for n in
                                                      ("state", "code_challenge", "nonce")]
    message = "\x1f".join(fields).encode()
    return hmac.new(session.csrf_token.encode(), message, hashlib.sha256).hexdigest()


def _issue(request: Request, uri: str, body: str, headers: dict[str, str], scope: int, user_id: int,
           nonce: str | None) -> Response:
    prov = provider(request)
    credentials: dict[str, Any] = {"user": user_id}
    if nonce:
        credentials["oidc_nonce"] = nonce
    with emulator(request).store.write():
        out_headers, _body, status = prov.authorization.create_authorization_response(
            uri, request.method, body, headers, scopes=[str(scope)], credentials=credentials)
    location = out_headers.get("Location", "")
    if status != 302 or "error=" in urlsplit(location).query:  # oauthlib re-validated and refused
        return web.oauth_error(request, 400, "invalid_request", "the request could not be authorized")
    return RedirectResponse(location, status_code=302, headers={"Cache-Control": "no-store"})


def _redirect(redirect_uri: str, params: dict[str, str], *, status: int) -> Response:
    separator = "&" if urlsplit(redirect_uri).query else "?"
    return RedirectResponse(redirect_uri + separator + urlencode(params), status_code=status,
                            headers={"Cache-Control": "no-store"})


def _consent_page(request: Request, client: store.Client, pairs: list[tuple[str, str]], requested: int,
                  session: store.Session, consent: store.Consent | None, csrf_token: str) -> Response:
    params = [(name, web.single(pairs, name) or "") for name in CONSENT_FIELDS]
    params = [(k, str(requested) if k == "scope" else v) for k, v in params]
    redirect_host = urlsplit(web.single(pairs, "redirect_uri") or "").netloc
    stored = consent.buzz_limit if consent is not None else None
    return web.page("consent.html", title=f"Allow {client.name}", client=client,
                    username=web.username_of(request, session.user_id), redirect_host=redirect_host,
                    params=params, csrf_token=csrf_token, bits=scopes.bits_of(requested),
                    buzz_options=buzz_limit.options(stored), spends=scopes.spends_buzz(requested))


def consent_value(limit: Any) -> str:
    return "" if limit is None else orjson.dumps(limit).decode()

"""The device authorization grant (RFC 8628) as the platform serves it, on ``{auth_url}``.

- ``POST /api/auth/oauth/device`` (form): ``client_id``, ``scope`` (a decimal bitmask; absent
  means UserRead) → ``{device_code, user_code, verification_uri, verification_uri_complete,
  expires_in: 900, interval: 5}``.
- ``POST /api/auth/oauth/device-token`` (form or JSON): ``grant_type``
  ``urn:ietf:params:oauth:grant-type:device_code``, ``device_code``, ``client_id`` → 400
  ``authorization_pending`` until a person decides, ``slow_down`` when polled sooner than the
  interval (which then grows by 5 s), ``access_denied``, ``expired_token`` (after 15 minutes on
  the emulator's clock, or once used), ``invalid_grant`` (another client's code); then the
  token pair ``{access_token, token_type, expires_in, refresh_token, scope}`` once.
- ``POST /api/auth/oauth/device-info`` and ``/device-approve`` (signed in; JSON or form
  ``user_code``): the app and scope labels of a pending code; approve it.
- ``GET /login/oauth/device[?code=XXXX-XXXX]``: the page a person opens (sign-in first), which
  shows the app and what it asks, with Approve and Deny; ``POST`` is its form.

The grant's rules (which scope a code may ask, pending / slow_down / denied / expired, issuing
the tokens) are ``services/oauth/device_grant.py``; these routes read the forms and answer.
CORS on device and device-token: ``*`` without credentials. The session routes send none and
refuse a request from another origin (``Sec-Fetch-Site``/``Origin``), so a page on another
port cannot approve a code it started.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from blockkit.emulator.http.errors import json_response
from blockkit.emulator.http.oauth import web
from blockkit.emulator.services.oauth import device_grant, scopes
from blockkit.emulator.services.oauth.device_grant import DEVICE_GRANT
from blockkit.emulator.services.oauth.memory import DEVICE_CODE_TTL_SECONDS, DeviceCode, Memory
from blockkit.emulator.state import emulator
from blockkit.emulator.store import oauth as store

CORS = "POST, OPTIONS"
PAGE = "/login/oauth/device"


def memory(request: Request) -> Memory:
    return request.app.state.provider.validator.memory


def _answer(status: int, error: str, description: str) -> Response:
    return json_response({"error": error, "error_description": description}, status,
                         {**web.NO_STORE, **web.wildcard_cors(CORS)})


# --- the device's calls ----------------------------------------------------------------------------

def _known_client(request: Request, client_id: str) -> bool:
    """Whether ``client_id`` is registered: looked up before a request is counted, so made-up ids
    (any page may post them, CORS is ``*``) never reach the rate-limit table (review 2, S01)."""
    with emulator(request).store.read() as db:
        return store.get_client(db, client_id) is not None


async def device(request: Request) -> Response:
    if request.method == "OPTIONS":
        return web.preflight(CORS)
    try:
        _text, pairs = await web.read_form(request)
    except web.FormError as exc:
        return _answer(400, "invalid_request", str(exc))
    return await run_in_threadpool(_device, request, pairs)


def _device(request: Request, pairs: list[tuple[str, str]]) -> Response:
    client_id = web.single(pairs, "client_id")
    if not client_id:
        return _answer(400, "invalid_request", "Missing client_id")
    if not _known_client(request, client_id):
        return _answer(400, "invalid_client", "Unknown client")
    limited = web.over_limit(request, "token", f"device:{client_id}:{web.client_ip(request)}")
    if limited is not None:
        limited.headers.update(web.wildcard_cors(CORS))
        return limited
    state = emulator(request)
    try:
        entry = device_grant.start(state.store, memory(request), client_id, web.single(pairs, "scope"))
    except device_grant.DeviceRefused as exc:
        return _answer(400, exc.error, exc.description)
    page = state.urls.auth_url + PAGE
    return json_response({"device_code": entry.device_code, "user_code": entry.user_code,
                          "verification_uri": page, "verification_uri_complete": f"{page}?code={entry.user_code}",
                          "expires_in": DEVICE_CODE_TTL_SECONDS, "interval": entry.interval}, 200,
                         {**web.NO_STORE, **web.wildcard_cors(CORS)})


async def device_token(request: Request) -> Response:
    if request.method == "OPTIONS":
        return web.preflight(CORS)
    try:
        _text, pairs = await web.read_form(request, json_ok=True)
    except web.FormError as exc:
        return _answer(400, "invalid_request", str(exc))
    return await run_in_threadpool(_device_token, request, pairs)


def _device_token(request: Request, pairs: list[tuple[str, str]]) -> Response:
    if web.single(pairs, "grant_type") != DEVICE_GRANT:
        return _answer(400, "unsupported_grant_type", f"grant_type must be {DEVICE_GRANT}")
    device_code, client_id = web.single(pairs, "device_code"), web.single(pairs, "client_id")
    if not device_code or not client_id:
        return _answer(400, "invalid_request", "device_code and client_id are required")
    if not _known_client(request, client_id):
        return _answer(400, "invalid_client", "Unknown client")
    limited = web.over_limit(request, "token", f"device:{client_id}:{web.client_ip(request)}")
    if limited is not None:
        limited.headers.update(web.wildcard_cors(CORS))
        return limited
    try:
        tokens = device_grant.poll(emulator(request), memory(request), device_code, client_id)
    except device_grant.DeviceRefused as exc:
        return _answer(400, exc.error, exc.description)
    return json_response(tokens, 200, {**web.NO_STORE, **web.wildcard_cors(CORS)})


# --- the person's side (signed in) -------------------------------------------------------------------

def _client_info(request: Request, entry: DeviceCode) -> store.Client | None:
    with emulator(request).store.read() as db:
        return store.get_client(db, entry.client_id)


async def device_info(request: Request) -> Response:
    return await _session_json(request, approve=False)


async def device_approve(request: Request) -> Response:
    return await _session_json(request, approve=True)


async def _session_json(request: Request, *, approve: bool) -> Response:
    session = web.session_of(request)
    if session is None:
        return json_response({"error": "unauthorized", "error_description": "Sign in first"}, 401, web.NO_STORE)
    refusal = web.cross_origin_refusal(request)
    if refusal is not None:
        return json_response({"error": "invalid_request", "error_description": refusal}, 403, web.NO_STORE)
    try:
        _text, pairs = await web.read_form(request, json_ok=True)
    except web.FormError as exc:
        return json_response({"error": "invalid_request", "error_description": str(exc)}, 400, web.NO_STORE)
    user_code = web.single(pairs, "user_code")
    if not user_code:
        return json_response({"error": "invalid_request", "error_description": "Missing user_code"}, 400,
                             web.NO_STORE)
    entry, why = memory(request).pending_by_user_code(user_code)
    client = _client_info(request, entry) if entry is not None else None
    if entry is None or client is None:
        return json_response({"error": "invalid_code", "error_description": why or "Unknown application"}, 400,
                             web.NO_STORE)
    if approve:
        memory(request).decide(entry, user_id=session.user_id, approved=True)
        return json_response({"success": True}, 200, web.NO_STORE)
    return json_response({"client": {"name": client.name, "description": None, "logoUrl": None,
                                     "isVerified": False},
                          "scopes": [bit.words for bit in scopes.bits_of(entry.scope)]}, 200, web.NO_STORE)


def _sign_in_first(request: Request) -> Response:
    back = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/login?returnUrl={quote(back, safe='')}", status_code=303)


def device_page(request: Request) -> Response:
    session = web.session_of(request)
    if session is None:
        return _sign_in_first(request)
    username = web.username_of(request, session.user_id)
    code = request.query_params.get("code", "").strip()
    common: dict[str, Any] = {"title": "Connect a device", "username": username}
    if not code:
        return web.page("device.html", step="enter", user_code="", error="", **common)
    entry, why = memory(request).pending_by_user_code(code)
    client = _client_info(request, entry) if entry is not None else None
    if entry is None or client is None:
        return web.page("device.html", 400, step="enter", user_code=code, error=f"{why or 'Unknown application'}."
                        " Check the code on your device.", **common)
    return web.page("device.html", step="review", user_code=entry.user_code, client=client,
                    bits=scopes.bits_of(entry.scope), csrf_token=_csrf_for(session, entry.user_code), **common)


def _csrf_for(session: store.Session, user_code: str) -> str:
    """The device form's token: the session's secret bound to this one user code (security review 2,
    S16), as the consent form's is bound to its request; a token read for one code approves no other."""
    return hmac.new(session.csrf_token.encode(), b"device\x1f" + user_code.encode(), hashlib.sha256).hexdigest()


async def device_page_submit(request: Request) -> Response:
    session = web.session_of(request)
    if session is None:
        return _sign_in_first(request)
    refusal = web.cross_origin_refusal(request)
    if refusal is not None:
        return web.oauth_error(request, 403, "invalid_request", refusal)
    try:
        _text, pairs = await web.read_form(request)
    except web.FormError as exc:
        return web.oauth_error(request, 400, "invalid_request", str(exc))
    csrf = web.single(pairs, "csrf_token") or ""
    entry, why = memory(request).pending_by_user_code(web.single(pairs, "user_code") or "")
    expected = _csrf_for(session, entry.user_code) if entry is not None else session.csrf_token
    if not hmac.compare_digest(csrf.encode(), expected.encode()):
        return web.oauth_error(request, 403, "invalid_request", "the form expired, was for another code or came"
                               " from elsewhere (CSRF check failed); open the device page again")
    if entry is None:
        return web.page("device.html", 400, title="Connect a device", step="enter", username=web.username_of(
            request, session.user_id), user_code="", error=f"{why}. Start again on your device.")
    approved = web.single(pairs, "decision") == "approve"
    memory(request).decide(entry, user_id=session.user_id, approved=approved)
    heading, message = (("Device approved", "You can return to your device; it signs in on its next poll.")
                        if approved else ("Device denied", "The device was told no. You can close this page."))
    return web.page("device.html", title=heading, step="done", heading=heading, message=message, username="")

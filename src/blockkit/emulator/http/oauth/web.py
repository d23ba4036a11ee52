"""What the OAuth routes share: pages (Jinja), error answers, CORS, forms, sessions, rate limits.

Errors: the spec's envelope ``{error, error_description}`` with its status. A browser
(an ``Accept`` that prefers ``text/html``, as top-level navigation sends) gets the same
error as a page, with the same status, so a bad ``redirect_uri`` is never followed.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import jinja2
import orjson
from starlette.responses import HTMLResponse, Response

from blockkit.emulator.http.bodies import read_limited
from blockkit.emulator.http.errors import json_response
from blockkit.emulator.services.oauth.limits import RATE_LIMITS, RATE_WINDOW_SECONDS, rate_limited_body
from blockkit.emulator.state import emulator
from blockkit.emulator.store import oauth as store

if TYPE_CHECKING:
    from starlette.requests import Request

SESSION_COOKIE = "bk_session"
MAX_FORM_BYTES = 64 * 1024
FORM_TYPE = "application/x-www-form-urlencoded"
JSON_TYPE = "application/json"
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}



@functools.lru_cache(maxsize=1)
def templates() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader("blockkit.emulator.http.oauth", "templates"),
                              autoescape=True, undefined=jinja2.StrictUndefined)


def page(name: str, code: int = 200, headers: dict[str, str] | None = None, **context: Any) -> HTMLResponse:
    html = templates().get_template(name).render(**context)
    merged = {"Cache-Control": "no-store", "X-Frame-Options": "DENY",
              "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' http:"
                                         " https:; frame-ancestors 'none'"}
    merged.update(headers or {})
    return HTMLResponse(html, status_code=code, headers=merged)


def wants_html(request: Request) -> bool:
    accept = request.headers.get("accept", "")
    return "text/html" in accept


def oauth_error(request: Request, status: int, error: str, description: str,
                headers: dict[str, str] | None = None) -> Response:
    """The OAuth error envelope (JSON), or the same error as a page for a browser."""
    if wants_html(request):
        return page("error.html", status, headers, title="Cannot continue", heading="The request cannot continue",
                    error=error, description=description, status=status,
                    hint="Nothing was sent back to the app. Check the link that brought you here.")
    return json_response({"error": error, "error_description": description}, status, {**NO_STORE, **(headers or {})})


# --- forms ----------------------------------------------------------------------------------

class FormError(ValueError):
    pass


async def read_form(request: Request, *, json_ok: bool = False) -> tuple[str, list[tuple[str, str]]]:
    """The body as form text and its pairs; FormError unless it is a small UTF-8 form.

    With ``json_ok`` a JSON object of strings (or numbers) is accepted too, as the platform's
    ``parseBody`` does on token, revoke and the device routes; its members become the pairs
    and the returned text is their form encoding (what oauthlib reads).
    """
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    is_json = json_ok and content_type == JSON_TYPE
    if content_type != FORM_TYPE and not is_json:
        raise FormError(f"send the parameters as {FORM_TYPE}" + (" or application/json" if json_ok else ""))
    # Over MAX_FORM_BYTES: BodyTooLarge, answered 413 by the app's handler.
    body = await read_limited(request, MAX_FORM_BYTES)
    if is_json:
        return _json_pairs(body)
    try:
        text = body.decode("utf-8")
        pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=False)
    except (UnicodeDecodeError, ValueError):
        raise FormError("the form is not UTF-8 application/x-www-form-urlencoded") from None
    return text, pairs


def _json_pairs(body: bytes) -> tuple[str, list[tuple[str, str]]]:
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise FormError("the body is not valid JSON") from None
    if not isinstance(value, dict):
        raise FormError("the JSON body must be an object of parameters")
    pairs: list[tuple[str, str]] = []
    for key, item in value.items():
        if isinstance(item, bool) or not isinstance(item, (str, int)):
            raise FormError(f"the JSON member {key!r} must be a string")
        pairs.append((key, str(item)))
    return urlencode(pairs), pairs


def single(pairs: list[tuple[str, str]], name: str) -> str | None:
    values = [v for k, v in pairs if k == name]
    return values[0] if len(values) == 1 else None


# --- CORS -------------------------------------------------------------------------------------
#
# As the platform does it (apps/auth/src/lib/server/oauth/http.ts, hooks.server.ts): the
# authorization endpoint and the pages send no CORS at all, so no other origin can read a consent
# form or its CSRF token. The machine endpoints (token, revoke, userinfo, device*) answer
# ``Access-Control-Allow-Origin: *`` without credentials: they take no cookies, so a browser app
# calls them with a bearer token or its client_id. A public client calling from one of its
# registered origins gets that origin echoed (still without credentials).

def wildcard_cors(methods: str) -> dict[str, str]:
    return {"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": methods,
            "Access-Control-Allow-Headers": "*"}


def public_client_cors(origin: str, methods: str) -> dict[str, str]:
    return {"Access-Control-Allow-Origin": origin, "Vary": "Origin", "Access-Control-Allow-Methods": methods,
            "Access-Control-Allow-Headers": "*"}


def preflight(methods: str) -> Response:
    return Response(status_code=204, headers=wildcard_cors(methods))


def cross_origin_refusal(request: Request) -> str | None:
    """Why a state-changing browser request did not come from auth_url's own pages, or None.

    Browsers send ``Sec-Fetch-Site`` and ``Origin`` on every POST; a request with neither is a
    program (curl, a test), which the session cookie already has to prove.
    """
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return f"the request came from another site or origin (Sec-Fetch-Site: {site})"
    origin = request.headers.get("origin")
    if origin is not None and origin.lower() != origin_of(emulator(request).urls.auth_url):
        return f"the request came from another origin ({origin})"
    return None


# --- sessions ---------------------------------------------------------------------------------

def session_of(request: Request) -> store.Session | None:
    raw = request.cookies.get(SESSION_COOKIE)
    if not raw or len(raw) > 128:
        return None
    state = emulator(request)
    with state.store.read() as db:
        session = store.find_session(db, raw, now=state.clock.iso())
    if session is not None:
        from blockkit.emulator import journal

        journal.note_who(user=session.user_id)
    return session


def username_of(request: Request, user_id: int) -> str:
    with emulator(request).store.read() as db:
        row = db.execute("SELECT username FROM users WHERE id = ?", (user_id,)).fetchone()
    return str(row[0]) if row else f"user {user_id}"


def own_origins(request: Request) -> set[str]:
    urls = emulator(request).urls
    return {origin_of(u) for u in (urls.base_url, urls.auth_url, urls.orchestration_url)}


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def safe_return_url(request: Request, value: str | None) -> str | None:
    """``value`` made absolute on auth_url when it stays on the emulator's origins or a registered one."""
    if not value:
        return emulator(request).urls.auth_url + "/"
    if any(ch in value for ch in "\\\r\n\t") or value.startswith("//"):
        return None
    auth_url = emulator(request).urls.auth_url
    absolute = auth_url + value if value.startswith("/") else value
    parts = urlsplit(absolute)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    origin = origin_of(absolute)
    if origin in own_origins(request):
        return absolute
    with emulator(request).store.read() as db:
        allowed = store.registered_origins(db)
    return absolute if origin in allowed else None


# --- rate limits --------------------------------------------------------------------------------

def count_hit(request: Request, bucket: str, key: str) -> tuple[bool, int]:
    """Count this request in its bucket; (over the limit?, seconds left in the window)."""
    state = emulator(request)
    with state.store.write() as db:
        count, left = store.hit(db, bucket, key, now=state.clock.timestamp(), window=RATE_WINDOW_SECONDS)
    if count > RATE_LIMITS[bucket]:
        from blockkit.emulator import journal
        from blockkit.emulator.services.oauth.limits import limit_reason

        journal.note_reason(limit_reason(bucket, key, count, max(1, left)))
    return count > RATE_LIMITS[bucket], max(1, left)


def over_limit(request: Request, bucket: str, key: str) -> Response | None:
    """Count this request; a 429 answer when it is over the bucket's limit, else None."""
    over, left = count_hit(request, bucket, key)
    if not over:
        return None
    return json_response(rate_limited_body(bucket), 429,
                         {"Retry-After": str(left), "X-RateLimit-Limit": str(RATE_LIMITS[bucket]), **NO_STORE})


def client_ip(request: Request) -> str:
    return request.client.host if request.client else "unknown"

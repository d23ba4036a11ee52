"""What the OAuth routes share: pages (Jinja), error answers, CORS, forms, sessions, rate limits.

Errors: the spec's envelope ``{error, error_description}`` with its status. A browser
(an ``Accept`` that prefers ``text/html``, as top-level navigation sends) gets the same
error as a page, with the same status, so a bad ``redirect_uri`` is never followed.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

import jinja2
from starlette.responses import HTMLResponse, Response

from blockkit.emulator.bodies import read_limited
from blockkit.emulator.catalogue.errors import json_response
from blockkit.emulator.state import emulator
from blockkit.emulator.store import oauth as store

if TYPE_CHECKING:
    from starlette.requests import Request

SESSION_COOKIE = "bk_session"
MAX_FORM_BYTES = 64 * 1024
FORM_TYPE = "application/x-www-form-urlencoded"
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}

# The spec's fixed-window limits (per minute): authorize per user, token per client_id,
# revoke per IP.
RATE_LIMITS = {"authorize": 10, "token": 20, "revoke": 20}
RATE_WINDOW_SECONDS = 60


@functools.lru_cache(maxsize=1)
def templates() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader("blockkit.emulator.oauth", "templates"),
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


async def read_form(request: Request) -> tuple[str, list[tuple[str, str]]]:
    """The raw body (as text) and its pairs; FormError unless it is a small UTF-8 form."""
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != FORM_TYPE:
        raise FormError(f"send the parameters as {FORM_TYPE}")
    # Over MAX_FORM_BYTES: BodyTooLarge, answered 413 by the app's handler.
    body = await read_limited(request, MAX_FORM_BYTES)
    try:
        text = body.decode("utf-8")
        pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=False)
    except (UnicodeDecodeError, ValueError):
        raise FormError("the form is not UTF-8 application/x-www-form-urlencoded") from None
    return text, pairs


def single(pairs: list[tuple[str, str]], name: str) -> str | None:
    values = [v for k, v in pairs if k == name]
    return values[0] if len(values) == 1 else None


# --- CORS -------------------------------------------------------------------------------------

def cors_headers(request: Request, *, credentials: bool, methods: str) -> dict[str, str]:
    """Permissive CORS: echo the caller's Origin (with credentials when asked)."""
    origin = request.headers.get("origin")
    if not origin:
        return {}
    headers = {"Access-Control-Allow-Origin": origin, "Vary": "Origin", "Access-Control-Allow-Methods": methods,
               "Access-Control-Allow-Headers": request.headers.get("access-control-request-headers")
               or "Authorization, Content-Type", "Access-Control-Max-Age": "600"}
    if credentials:
        headers["Access-Control-Allow-Credentials"] = "true"
    return headers


def preflight(request: Request, *, credentials: bool, methods: str) -> Response:
    return Response(status_code=204, headers=cors_headers(request, credentials=credentials, methods=methods))


# --- sessions ---------------------------------------------------------------------------------

def session_of(request: Request) -> store.Session | None:
    raw = request.cookies.get(SESSION_COOKIE)
    if not raw or len(raw) > 128:
        return None
    state = emulator(request)
    with state.store.read() as db:
        return store.find_session(db, raw, now=state.clock.iso())


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

def over_limit(request: Request, bucket: str, key: str) -> Response | None:
    """Count this request; a 429 answer when it is over the bucket's limit, else None."""
    state = emulator(request)
    with state.store.write() as db:
        count, left = store.hit(db, bucket, key, now=state.clock.timestamp(), window=RATE_WINDOW_SECONDS)
    limit = RATE_LIMITS[bucket]
    if count <= limit:
        return None
    return json_response({"error": "rate_limit_exceeded",
                          "error_description": f"Too many requests: at most {limit} a minute. Try again later."},
                         429, {"Retry-After": str(max(1, left)), "X-RateLimit-Limit": str(limit), **NO_STORE})


def client_ip(request: Request) -> str:
    return request.client.host if request.client else "unknown"

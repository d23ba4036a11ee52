"""Who may use a running emulator: Host names, the access key, and cross-site writes.

The emulator listens on loopback, which keeps other machines out but not the web pages the
developer's browser opens, nor the other accounts and processes of the machine. Each origin
is therefore served behind two layers of ASGI middleware (``guard``; the in-process
TestClient apps of the tests are left bare):

- :class:`~blockkit.emulator.http.hostcheck.HostGuard`: every request must name the origin itself in
  ``Host`` (its own port on 127.0.0.1, localhost or [::1], the bound address, and any
  ``allowed_hosts``): a page that rebinds its own name to 127.0.0.1 gets 403.
- :class:`LocalGuard`, per origin:

  - ``/__emulator/*`` writes (the control routes): ``Content-Type: application/json`` only
    (415 otherwise), so no CORS "simple request" (a form post, a ``no-cors`` fetch) can
    change state, and an ``Origin``, when sent, must be one of the emulator's own (403).
  - ``POST /login`` and ``POST /logout`` (auth origin): an ``Origin`` other than auth_url,
    or a ``Sec-Fetch-Site`` other than same-origin or none, is refused (403): no page on
    another origin signs the developer in as someone else, or out.
  - With an access key (``EmulatorOptions.access_key``; ``blockkit emulator start`` makes
    one per run unless ``--no-access-key``): ``/login`` (GET and POST), the catalogue's
    ``/__emulator/*`` writes and ``POST /api/v1/block-tokens`` ask for it (401 otherwise).
    The key travels as the ``X-Blockkit-Access-Key`` header (scripts). A browser holds a cookie
    per origin instead, which the sign-in link ``{auth_url}/login?key=KEY`` sets: named
    ``bk_access_<port>`` and holding ``HMAC-SHA256(key, "bk_access:<port>")``
    (:func:`access_cookie`), never the key. Cookies are not port-scoped (RFC 6265 §8.5): every
    server on 127.0.0.1 receives them. What another server receives is therefore worth nothing
    anywhere but the one origin of this run it names (not the key, not another origin, not
    another run), and a write it carries must come from one of the emulator's own pages
    (``Origin``, or ``Sec-Fetch-Site: same-origin``; 403 otherwise). The design follows
    Jupyter's per-run token; see docs/platform-shapes.md.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from blockkit.emulator.http.hostcheck import SAFE_METHODS, HostAllowlist, HostGuard


def is_console_path(path: str) -> bool:
    """A page, file or action of the web console (``http/console``): every method asks for the key."""
    return path == "/__emulator/" or path.startswith(CONSOLE_PREFIXES)


CONSOLE_PREFIXES = ("/__emulator/people", "/__emulator/apps", "/__emulator/work", "/__emulator/storage",
                    "/__emulator/requests", "/__emulator/console/")

if TYPE_CHECKING:
    from blockkit.emulator.http.hostcheck import ASGIApp, Receive, Scope, Send
    from blockkit.emulator.state import Urls

KEY_HEADER = b"x-blockkit-access-key"
KEY_COOKIE = "bk_access"  # the prefix: each origin's cookie is bk_access_<port> (access_cookie)
KEY_PARAM = "key"
CONTROL_PREFIX = "/__emulator/"
MINT_PATH = "/api/v1/block-tokens"
CALLBACKS_PATH = "/__emulator/callbacks"  # lists callback URLs: read with the key only
# The request journal (journal.py): read with the key only, and by no other origin's page.
JOURNAL_PATH = "/__emulator/journal"
KEYED_READS = frozenset({CALLBACKS_PATH, JOURNAL_PATH})
JSON_TYPE = "application/json"
ZIP_TYPE = "application/zip"
CONSOLE_IMPORT_PATH = "/__emulator/console/import"
# The methods a route of the emulator can change state with. Any other method (a made-up one such as
# QUERY, TRACE) reaches the app, which answers 405: the checks guard writes, not the method table.
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# Sec-Fetch-Site values a sign-in or sign-out may come with: the auth origin's own page, or
# the user typing or bookmarking (no initiator).
OWN_FETCH_SITES = ("same-origin", "none")
HOST_HINT = "; name the origin as the emulator printed it (blockkit dev: add --allowed-host NAME)"


def new_access_key() -> str:
    return secrets.token_urlsafe(24)


def sign_in_url(auth_url: str, key: str) -> str:
    return f"{auth_url}/login?{urlencode({KEY_PARAM: key})}"


def console_url(base_url: str, key: str | None = None) -> str:
    """The web console (``http/console``); with ``key``, the link that also signs this browser in."""
    return f"{base_url}/__emulator/" + (f"?{urlencode({KEY_PARAM: key})}" if key is not None else "")


def access_cookie(key: str, port: int) -> tuple[str, str]:
    """The browser's cookie for the origin on ``port``: its name and value, an HMAC of the key.

    The value proves the key was shown to the sign-in link, for that port only; it does not hold
    the key, and no other port's (nor another run's) guard takes it.
    """
    mac = hmac.new(key.encode(), f"{KEY_COOKIE}:{port}".encode(), hashlib.sha256).hexdigest()
    return f"{KEY_COOKIE}_{port}", mac


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def guard(app: ASGIApp, role: str, port: int, urls: Urls, *, access_key: str | None,
          allowed_hosts: Iterable[str] = (), bound: str | None = None) -> ASGIApp:
    """``app`` (the origin ``role``: catalogue, auth or orchestration, on ``port``) behind both layers."""
    extra = list(allowed_hosts)
    if bound is not None and bound not in ("127.0.0.1", "::1", "localhost"):
        extra.append(f"{bound}:{port}")  # another loopback address (127.0.0.2): its own name
    hosts = HostAllowlist(port, tuple(extra))
    inner = LocalGuard(app, role, urls, access_key=access_key, port=port)
    return HostGuard(inner, hosts, hint=HOST_HINT)


class LocalGuard:
    """ASGI middleware: control-route, sign-in and access-key checks for one origin (see the module)."""

    def __init__(self, app: ASGIApp, role: str, urls: Urls, *, access_key: str | None,
                 port: int | None = None) -> None:
        self.app = app
        self.role = role
        self.access_key = access_key
        self.own_origins = {origin_of(url) for url in urls.as_dict().values()}
        self.auth_origin = origin_of(urls.auth_url)
        # The ports of the three origins: the sign-in link sets each one's cookie.
        self.ports = sorted({p for p in (urlsplit(url).port for url in urls.as_dict().values()) if p is not None})
        own_url = {"catalogue": urls.base_url, "auth": urls.auth_url,
                   "orchestration": urls.orchestration_url}.get(role, urls.base_url)
        self.port = port if port is not None else (urlsplit(own_url).port or 80)
        self.cookie = access_cookie(access_key, self.port) if access_key is not None else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = str(scope.get("method", "GET")).upper()
        path = str(scope.get("path", ""))
        headers: list[tuple[bytes, bytes]] = list(scope.get("headers") or [])
        refusal: tuple[int, str] | None = None
        if path.startswith(CONTROL_PREFIX) and method in WRITE_METHODS:
            refusal = self._control(headers, path)
        elif self.role == "auth" and path in ("/login", "/logout") and method == "POST":
            refusal = self._same_origin_form(headers)
        elif self.role == "catalogue" and path.rstrip("/") == JOURNAL_PATH:
            refusal = self._own_reader(headers)
        if refusal is None and self.access_key is not None:
            if self.role == "auth" and path == "/login":
                if method == "GET" and KEY_PARAM in _query(scope):
                    await self._sign_in_link(scope, send)
                    return
                refusal = self._key(headers, method)
            elif self.role == "catalogue" and is_console_path(path):
                if method == "GET" and KEY_PARAM in _query(scope):
                    await self._sign_in_link(scope, send, then=path)
                    return
                refusal = self._key(headers, method)
            elif self.role == "catalogue" and ((method in WRITE_METHODS and (
                    path.startswith(CONTROL_PREFIX) or path.rstrip("/") == MINT_PATH))
                    or path.rstrip("/") in KEYED_READS):
                refusal = self._key(headers, method)
        if refusal is not None:
            # The API origins answer in their own error shape ({"error": ...}); sign-in pages in text,
            # or, to a browser that came to sign in without the key, a page that says what to do.
            if self.role == "auth" and path == "/login" and method == "GET" and _wants_html(headers):
                await _key_page(send, scope, wrong_key=False)
                return
            if self.role == "catalogue" and method == "GET" and refusal[0] == 401 and _wants_html(headers) \
                    and is_console_path(path):
                await _key_page(send, scope, wrong_key=False, action=path)
                return
            await _answer(send, refusal[0], refusal[1], as_json=self.role != "auth")
            return
        await self.app(scope, receive, send)

    # --- the checks ---------------------------------------------------------------------------
    def _control(self, headers: list[tuple[bytes, bytes]], path: str = "") -> tuple[int, str] | None:
        origin = _header(headers, b"origin")
        if origin is not None and origin.lower() not in self.own_origins:
            return 403, f"a control route takes writes from the emulator's own origins only, not from {origin!r}"
        content_type = (_header(headers, b"content-type") or "").split(";")[0].strip().lower()
        if content_type == ZIP_TYPE and self.role == "catalogue" and path == CONSOLE_IMPORT_PATH:
            return None  # the console's import: a zip body (no more a CORS simple request than JSON is)
        if content_type != JSON_TYPE:
            return 415, f"send the control request as {JSON_TYPE}"
        return None

    def _own_reader(self, headers: list[tuple[bytes, bytes]]) -> tuple[int, str] | None:
        """A read of the journal: not from another origin's page (it shows who asked what, and why not)."""
        origin = _header(headers, b"origin")
        if origin is not None and origin != "null" and origin.lower() not in self.own_origins:
            return 403, f"the request journal is read by the emulator's own pages only, not from {origin!r}"
        site = _header(headers, b"sec-fetch-site")
        if site is not None and site.lower() not in OWN_FETCH_SITES:
            return 403, f"the request journal is read by the emulator's own pages only (Sec-Fetch-Site: {site})"
        return None

    def _same_origin_form(self, headers: list[tuple[bytes, bytes]]) -> tuple[int, str] | None:
        origin = _header(headers, b"origin")
        site = _header(headers, b"sec-fetch-site")
        if origin is not None and origin != "null":
            if origin.lower() != self.auth_origin:
                return 403, f"sign-in and sign-out take forms from {self.auth_origin} only, not from {origin!r}"
            return None
        # No Origin (not a browser page), or "null": a page with Referrer-Policy no-referrer sends
        # that even to its own origin, so Sec-Fetch-Site decides (it must then be present).
        if (site is None and origin == "null") or (site is not None and site.lower() not in OWN_FETCH_SITES):
            return 403, f"sign-in and sign-out take forms from {self.auth_origin} only (Sec-Fetch-Site: {site})"
        return None

    def _key(self, headers: list[tuple[bytes, bytes]], method: str = "GET") -> tuple[int, str] | None:
        assert self.access_key is not None and self.cookie is not None
        offered = _header(headers, KEY_HEADER)
        if offered is not None and hmac.compare_digest(offered.encode("latin-1"), self.access_key.encode()):
            return None
        held = _cookie(headers, self.cookie[0])
        if offered is None and held is not None and hmac.compare_digest(held.encode("latin-1"), self.cookie[1].encode()):
            # The browser's cookie: every local server receives it, so a write it carries must come
            # from one of the emulator's own pages, as a browser says (a program sends the header).
            if method in WRITE_METHODS:
                return self._own_page(headers)
            return None
        return 401, ("this emulator asks for its access key: open the sign-in link it printed at start"
                     " (sign_in_url in the ready file), or send the key (access_key in the ready file) as"
                     " X-Blockkit-Access-Key; start it with --no-access-key to turn this off")

    def _own_page(self, headers: list[tuple[bytes, bytes]]) -> tuple[int, str] | None:
        origin = _header(headers, b"origin")
        site = (_header(headers, b"sec-fetch-site") or "").lower()
        if origin is not None and origin != "null":
            if origin.lower() in self.own_origins:
                return None
            return 403, f"the access cookie takes writes from the emulator's own pages only, not from {origin!r}"
        if site == "same-origin":  # Origin: null from its own page under Referrer-Policy: no-referrer
            return None
        return 403, ("the access cookie takes writes from the emulator's own pages only (no Origin, Sec-Fetch-Site:"
                     f" {site or 'none'}); a program sends the key as X-Blockkit-Access-Key")

    async def _sign_in_link(self, scope: Scope, send: Send, then: str = "/login") -> None:
        """``GET /login?key=KEY`` (or the console's ``/__emulator/?key=KEY``, ``then``): keep the key in a
        cookie and show the page without it in the URL."""
        assert self.access_key is not None
        pairs = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        offered = next((value for name, value in pairs if name == KEY_PARAM), "")
        if not hmac.compare_digest(offered.encode(), self.access_key.encode()):
            if _wants_html(list(scope.get("headers") or [])):
                await _key_page(send, scope, wrong_key=True, action=then)
                return
            await _answer(send, 401, "this sign-in link holds another run's access key: use the link the emulator"
                                     " printed at this start (sign_in_url in the ready file)")
            return
        rest = urlencode([(name, value) for name, value in pairs if name != KEY_PARAM])
        location = then + (f"?{rest}" if rest else "")
        # One cookie per origin of this run (cookies ignore ports, so this origin can set the others'),
        # each an HMAC bound to its port, never the key. HttpOnly: no script reads it. SameSite=Lax: a
        # top-level navigation (an OAuth client sending the browser to /authorize, then /login) carries
        # it; no cross-site POST does. The old key-holding bk_access cookie of earlier versions is removed.
        cookies = [f"{name}={value}; Path=/; HttpOnly; SameSite=Lax"
                   for name, value in (access_cookie(self.access_key, port) for port in self.ports or [self.port])]
        cookies.append(f"{KEY_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax")
        await send({"type": "http.response.start", "status": 303,
                    "headers": [(b"location", location.encode()),
                                *[(b"set-cookie", cookie.encode()) for cookie in cookies],
                                (b"cache-control", b"no-store"), (b"referrer-policy", b"no-referrer"),
                                (b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})


def _header(headers: list[tuple[bytes, bytes]], name: bytes) -> str | None:
    for key, value in headers:
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def _cookie(headers: list[tuple[bytes, bytes]], name: str) -> str | None:
    """The value of cookie ``name``; None when absent or sent more than once (then none is trusted).

    Parsed by hand, leniently: other servers on 127.0.0.1 set cookies of their own, and one that
    ``http.cookies`` cannot parse must not hide ours.
    """
    found: list[str] = []
    for key, value in headers:
        if key.lower() != b"cookie":
            continue
        for pair in value.decode("latin-1").split(";"):
            cookie_name, sep, cookie_value = pair.strip().partition("=")
            if sep and cookie_name.strip() == name:
                found.append(cookie_value.strip().strip('"'))
    return found[0] if len(found) == 1 else None


def _wants_html(headers: list[tuple[bytes, bytes]]) -> bool:
    """A browser's page load (it asks for HTML), not a script (curl, httpx: */* or nothing)."""
    accept = (_header(headers, b"accept") or "").lower()
    return "text/html" in accept


KEY_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Sign in with this run's access key · blockkit local platform</title>
<style>
  :root {{ color-scheme: light dark; --accent: #1c7ed6; --muted: #6b7280; --border: #d0d7de; }}
  body {{ font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; padding: 2rem 1rem; }}
  main {{ max-width: 34rem; margin: 0 auto; border: 1px solid var(--border); border-radius: 12px; padding: 1.5rem 1.75rem; }}
  h1 {{ font-size: 1.35rem; margin: 0 0 .75rem; }}
  p.why, footer {{ color: var(--muted); }}
  code {{ font-size: .95em; }}
  label {{ display: block; margin: 1rem 0 .35rem; }}
  input[type=password] {{ font: inherit; padding: .35rem; width: 100%; }}
  button {{ font: inherit; margin-top: .75rem; padding: .5rem 1.1rem; border-radius: 8px; border: 1px solid var(--accent);
           background: var(--accent); color: #fff; cursor: pointer; }}
  footer {{ margin-top: 1.5rem; font-size: .8rem; }}
</style>
</head>
<body>
<main>
<h1 id="title">{title}</h1>
<p id="what">Open the <strong>sign in</strong> link that <code>blockkit emulator start</code> (or
<code>blockkit dev</code>) printed in its terminal when it started, <code>{link}</code>; it is also
<code>sign_in_url</code> in the ready file. Then reload this page{again}.</p>
<p class="why" id="why">The local platform acts for its seeded users, so each run has an access key that only
whoever started it holds: other accounts on this machine, and web pages you visit, cannot sign in as you.</p>
<form method="get" action="{action}">
  <label for="key">Or paste the key (<code>access_key</code> in the ready file)</label>
  <input type="password" id="key" name="key" autocomplete="off" required>
  {hidden}<button type="submit">Sign in</button>
</form>
<footer>blockkit local platform: an emulator on this machine; no real account is involved.</footer>
</main>
</body>
</html>
"""


async def _key_page(send: Send, scope: Scope, *, wrong_key: bool, action: str = "/login") -> None:
    """The 401 a browser gets at ``/login`` without the key (or with another run's): what to open, and why."""
    from html import escape

    pairs = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    hidden = "".join(f'<input type="hidden" name="{escape(name)}" value="{escape(value)}">\n  '
                     for name, value in pairs if name != KEY_PARAM)
    title = ("This sign-in link holds another run's access key" if wrong_key
             else "Sign in with this run's access key")
    body = KEY_PAGE.format(
        title=title, link=escape(f"{_own_origin(scope)}{action}?key=..."),
        again=" (the app's sign-in carries on from here)" if any(n == "returnUrl" for n, _v in pairs) else "",
        hidden=hidden, action=escape(action)).encode("utf-8")
    await send({"type": "http.response.start", "status": 401,
                "headers": [(b"content-type", b"text/html; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()),
                            (b"x-content-type-options", b"nosniff"), (b"cache-control", b"no-store"),
                            (b"referrer-policy", b"no-referrer"), (b"x-frame-options", b"DENY"),
                            (b"content-security-policy",
                             b"default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")]})
    await send({"type": "http.response.body", "body": body})


def _own_origin(scope: Scope) -> str:
    host = _header(list(scope.get("headers") or []), b"host") or ""
    return f"{scope.get('scheme', 'http')}://{host}"


def _query(scope: Scope) -> set[str]:
    return {name for name, _value in parse_qsl(scope.get("query_string", b"").decode("latin-1"),
                                               keep_blank_values=True)}


async def _answer(send: Send, status: int, message: str, *, as_json: bool = False) -> None:
    if as_json:
        import orjson

        body: Any = orjson.dumps({"error": message})
        content_type = b"application/json"
    else:
        body = (message + "\n").encode("utf-8", "backslashreplace")
        content_type = b"text/plain; charset=utf-8"
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", content_type),
                            (b"content-length", str(len(body)).encode()),
                            (b"x-content-type-options", b"nosniff"), (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": body})

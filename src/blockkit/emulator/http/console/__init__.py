"""The web console: ``{base_url}/__emulator/``, pages of the local platform's state and actions on it.

Server-rendered (Jinja, ``templates/``) with one small script of our own (``static/console.js``) that
sends each action. Every page and action sits behind the run's access key (``http/access.py``: the
``bk_access_<port>`` cookie, or ``X-Blockkit-Access-Key``); a browser that opens
``/__emulator/?key=KEY`` gets the cookies, as with the sign-in link.

The actions are ``POST /__emulator/console/<action>`` with a JSON body, so the control routes'
rules hold for them (``LocalGuard``: JSON only, an ``Origin`` of the emulator's own, and a write
the cookie carries must come from its own page); the console adds a CSRF token of its own
(``X-Blockkit-Console-Token``, an HMAC of the run's key that each page carries). Pages are never
framed (``frame-ancestors 'none'``), carry no CORS headers, and run only the console's own script
(``script-src 'self'``).

The data comes from the store layer (``store/console.py`` and the other store modules) and every
change goes through a service (``services/console.py``, ``services/oauth``, ``transfer``).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import secrets
from importlib import resources
from typing import TYPE_CHECKING, Any, Callable

import jinja2
import orjson
from starlette.concurrency import run_in_threadpool
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from blockkit.emulator.errors import ApiError, EmulatorError
from blockkit.emulator.http.bodies import read_limited
from blockkit.emulator.services.errors import ServiceError
from blockkit.emulator.state import EmulatorState, emulator

if TYPE_CHECKING:
    from starlette.requests import Request

TOKEN_HEADER = "x-blockkit-console-token"
MAX_ACTION_BYTES = 64 * 1024
IMPORT_PATH = "/__emulator/console/import"
SECURITY_HEADERS = {
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Content-Security-Policy": ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: http:;"
                                " connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
}
NAV = (("overview", "/__emulator/", "Overview"), ("people", "/__emulator/people", "People and money"),
       ("apps", "/__emulator/apps", "Apps and access"), ("work", "/__emulator/work", "Orchestration and goods"),
       ("storage", "/__emulator/storage", "Storage"), ("requests", "/__emulator/requests", "Requests"))


@functools.lru_cache(maxsize=1)
def templates() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("blockkit.emulator.http.console", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters["when"] = lambda text: (text or "")[:19].replace("T", " ")
    return env


def csrf_token(state: EmulatorState) -> str:
    """The console's CSRF token for this run: an HMAC of the access key (or of a secret of this build)."""
    secret = state.options.access_key or state.kept("console-secret", lambda: secrets.token_urlsafe(32))
    return hmac.new(secret.encode(), b"blockkit-console-csrf", hashlib.sha256).hexdigest()


def page(request: Request, name: str, section: str, **context: Any) -> HTMLResponse:
    state = emulator(request)
    html = templates().get_template(name).render(
        nav=NAV, section=section, token=csrf_token(state), now=state.clock.iso(), **context)
    return HTMLResponse(html, headers=SECURITY_HEADERS)


def refusal(status: int, message: str) -> Response:
    return Response(orjson.dumps({"error": message}), status_code=status, media_type="application/json",
                    headers=SECURITY_HEADERS)


def done(message: str, **extra: Any) -> Response:
    return Response(orjson.dumps({"ok": True, "message": message, **extra}), media_type="application/json",
                    headers=SECURITY_HEADERS)


def _message_of(exc: ApiError) -> str:
    if isinstance(exc, ServiceError):
        return exc.detail
    body = exc.body
    if isinstance(body, dict):
        for key in ("detail", "error", "message"):
            if isinstance(body.get(key), str):
                return str(body[key])
    return str(body)


Action = Callable[["Request", EmulatorState, dict[str, Any]], Response]
ACTIONS: dict[str, Action] = {}


def action(name: str) -> Callable[[Action], Action]:
    def register(function: Action) -> Action:
        ACTIONS[name] = function
        return function
    return register


def checked_token(request: Request) -> bool:
    offered = request.headers.get(TOKEN_HEADER, "")
    return hmac.compare_digest(offered.encode("latin-1", "replace"), csrf_token(emulator(request)).encode())


async def action_endpoint(request: Request) -> Response:
    name = request.path_params["action"]
    function = ACTIONS.get(name)
    if function is None:
        return refusal(404, f"the console has no action {name!r}")
    if not checked_token(request):
        return refusal(403, "the console's token is missing or wrong: reload the console page and try again")
    body = await read_limited(request, MAX_ACTION_BYTES)
    try:
        payload = orjson.loads(body or b"{}")
    except orjson.JSONDecodeError:
        return refusal(400, "send the action as a JSON object")
    if not isinstance(payload, dict):
        return refusal(400, "send the action as a JSON object")
    return await _run(function, request, payload)


async def _run(function: Action, request: Request, payload: dict[str, Any]) -> Response:
    state = emulator(request)
    try:
        return await run_in_threadpool(function, request, state, payload)
    except ApiError as exc:
        return refusal(exc.status if 400 <= exc.status < 500 else 400, _message_of(exc))
    except EmulatorError as exc:
        return refusal(400, str(exc))


def static_endpoint(request: Request) -> Response:
    name = request.path_params["name"]
    kinds = {"console.js": "text/javascript; charset=utf-8", "console.css": "text/css; charset=utf-8"}
    if name not in kinds:
        return refusal(404, "no such file")
    data = resources.files(__package__).joinpath("static", name).read_bytes()
    return Response(data, media_type=kinds[name], headers={**SECURITY_HEADERS, "Cache-Control": "no-cache"})


def integer(payload: dict[str, Any], name: str) -> int:
    value = payload.get(name)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise ServiceError(400, "bad_field", f"{name} must be a whole number")


def text(payload: dict[str, Any], name: str, *, required: bool = True) -> str:
    value = payload.get(name, "")
    if not isinstance(value, str) or (required and not value.strip()):
        raise ServiceError(400, "bad_field", f"{name} is required")
    return value.strip()


def build_routes() -> list[Route]:
    routes: list[Route] = [Route("/console/static/{name}", static_endpoint, methods=["GET"])]
    for module in PAGES:
        routes.extend(module.routes)
    routes.append(Route("/console/{action}", action_endpoint, methods=["POST"]))
    return routes


# The pages (each registers its actions above as it is imported): last, as they import this module.
from blockkit.emulator.http.console import apps, overview, people, requests, storage, work  # noqa: E402

PAGES = (overview, people, apps, work, storage, requests)
__all__ = ["ACTIONS", "IMPORT_PATH", "PAGES", "build_routes", "page"]

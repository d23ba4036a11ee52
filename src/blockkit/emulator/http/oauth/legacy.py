"""``{base_url}/api/auth/oauth/*``: the legacy OAuth paths answer 308 to the same path on auth_url.

308 keeps the method and the body (a POST stays a POST) and the query. The hazard the
spec warns about is real here too: a client that follows a redirect to another origin
drops the ``Authorization`` header, so userinfo answers 401. Call ``{auth_url}`` directly.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from blockkit.emulator.state import emulator

PREFIX = "/api/auth/oauth"


def moved(request: Request) -> Response:
    raw_path = request.scope.get("raw_path") or request.url.path.encode()
    target = emulator(request).urls.auth_url + raw_path.decode("latin-1")
    query = request.scope.get("query_string", b"")
    if query:
        target += "?" + query.decode("latin-1")
    return RedirectResponse(target, status_code=308)


METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
routes = [Route(PREFIX, moved, methods=METHODS), Route(PREFIX + "/{path:path}", moved, methods=METHODS)]

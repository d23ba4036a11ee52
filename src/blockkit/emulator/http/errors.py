"""JSON responses and the exception handlers every origin shares (starlette lives here).

The error *bodies* and :class:`~blockkit.emulator.errors.ApiError` are on the ground floor
(``emulator/errors.py``), so a service can raise them without importing starlette; they are
named here again for the routes, which import everything HTTP from this one module.

A route either returns ``json_response(...)`` or raises :class:`ApiError` (or
one of its shorthands); the app's exception handlers turn it into the response.
Unknown paths answer 404 ``{"error": "Not found"}`` and a bug answers 500
``{"error": "Internal server error"}``, never an HTML page.
"""


from __future__ import annotations

import errno
import sqlite3
import sys
from collections.abc import Mapping
from typing import Any

import orjson
from pydantic import BaseModel
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from blockkit.emulator.errors import (  # noqa: F401 (the routes' names, kept here for them)
    ApiError,
    StoreError,
    bad_request,
    error_body,
    invalid_params,
    issue,
    message_body,
    not_found,
    oauth_body,
    oauth_error,
    too_many_requests,
    validation_body,
    zod_error,
)


def _default(value: Any) -> Any:
    if isinstance(value, BaseModel):
        # Response models omit the fields a service never set (the spec's "omitted when"
        # fields: mode, earlyAccessEndsAt, ...); a field set to None goes out as null.
        return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    raise TypeError(f"cannot encode {type(value).__name__} as JSON")


def dumps(content: Any) -> bytes:
    """JSON bytes via orjson (pydantic models included)."""
    return orjson.dumps(content, default=_default)


class JSONResponse(Response):
    """A JSON response rendered by orjson (several times faster than the stdlib on big lists)."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return dumps(content)


def json_response(content: Any, status_code: int = 200, headers: Mapping[str, str] | None = None) -> JSONResponse:
    return JSONResponse(content, status_code=status_code, headers=dict(headers) if headers else None)


# --- handlers (installed by every emulator app) ---------------------------------------------

async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return JSONResponse(exc.body, status_code=exc.status, headers=exc.headers or None)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    messages = {404: "Not found", 405: "Method not allowed"}
    return JSONResponse(error_body(messages.get(exc.status_code, str(exc.detail))), status_code=exc.status_code,
                        headers=getattr(exc, "headers", None))


async def _server_error(request: Request, exc: Exception) -> Response:
    # Starlette re-raises after this answer, so uvicorn prints the traceback for the
    # developer running the emulator; the client gets JSON.
    return JSONResponse(error_body("Internal server error"), status_code=500)


async def _store_unavailable(request: Request, exc: Exception) -> Response:
    # A store that cannot take the request now (full disk, read-only file, I/O error, busy): one line on
    # stderr and a 503 the client can retry, not a 500 with a traceback. Any other error goes on to
    # _server_error (raised again here).
    from blockkit.emulator.store.connection import unavailable_reason

    reason = unavailable_reason(exc)
    if reason is None and isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS):
        reason = "the disk is full" if exc.errno != errno.EROFS else "the data directory is read-only"
    if reason is None:
        raise exc
    print(f"blockkit emulator: {request.method} {request.url.path}: 503, {reason}", file=sys.stderr, flush=True)
    return JSONResponse(error_body(f"Service unavailable: {reason}"), status_code=503,
                        headers={"Retry-After": "5", "Cache-Control": "no-store"})


EXCEPTION_HANDLERS: dict[Any, Any] = {
    ApiError: _api_error,
    HTTPException: _http_error,
    sqlite3.Error: _store_unavailable,
    StoreError: _store_unavailable,
    OSError: _store_unavailable,
    Exception: _server_error,
}

"""JSON responses and the spec's error bodies, shared by every route.

The spec's error table uses four body shapes; each has one helper here:

============================  =====================================================
``error_body(msg)``           ``{"error": msg}`` (404s, posts, /me 401, permissions)
``message_body(msg, error)``  ``{"message": msg, "error": detail}`` (500s of users, permissions)
``validation_body(issues)``   ``{"error": {"name": "ZodError", "message": "<issues as JSON>"}}``:
                              invalid parameters, as the platform's zod 4 error
                              serialises (``issues`` is not enumerable there, so only
                              ``name`` and ``message``, the issues array as indented
                              JSON, go out); each issue has zod 4's code, path, message
``oauth_body(err, desc)``     ``{"error": err, "error_description": desc}`` (RFC 6749)
============================  =====================================================

A route either returns ``json_response(...)`` or raises :class:`ApiError` (or
one of its shorthands); the app's exception handlers turn it into the response.
Unknown paths answer 404 ``{"error": "Not found"}`` and a bug answers 500
``{"error": "Internal server error"}``, never an HTML page.
"""

from __future__ import annotations

import errno
import json
import sqlite3
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import orjson
from pydantic import BaseModel
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from blockkit.emulator.errors import StoreError


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


# --- bodies -------------------------------------------------------------------------------

def error_body(message: str) -> dict[str, Any]:
    return {"error": message}


def message_body(message: str, error: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"message": message}
    if error is not None:
        body["error"] = error
    return body


def issue(message: str, path: Sequence[str | int], code: str = "custom", **extra: Any) -> dict[str, Any]:
    """One validation issue, as the platform's validator (zod 4) reports it: code, path, message.

    ``code`` is one of zod 4's issue codes (invalid_type, too_small, too_big, invalid_value,
    invalid_format, custom, ...); ``extra`` carries the code's own keys (expected, origin,
    minimum, maximum, inclusive, values), which zod places before ``path``.
    """
    return {**extra, "code": code, "path": list(path), "message": message}


def zod_error(issues: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A ZodError as JSON.stringify writes it under zod 4: ``name`` and ``message`` only.

    zod 4 defines ``issues`` as a non-enumerable property and sets ``message`` to
    ``JSON.stringify(issues, null, 2)`` (zod ``v4/core/errors.ts``), so the issues reach a
    client only as that text: parse ``message`` to read them.
    """
    text = json.dumps([dict(i) for i in issues], indent=2, ensure_ascii=False)
    return {"name": "ZodError", "message": text}


def validation_body(issues: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``{error: ZodError}``: the 400 of models, images, articles, collections (``res.json({error})``)."""
    return {"error": zod_error(issues)}


def oauth_body(error: str, description: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"error": error}
    if description is not None:
        body["error_description"] = description
    return body


# --- raising ------------------------------------------------------------------------------

class ApiError(Exception):
    """Raise from a route (or a service) to answer with ``status`` and ``body``."""

    def __init__(self, status: int, body: Any, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(status, body)
        self.status = status
        self.body = body
        self.headers = dict(headers) if headers else {}


def not_found(message: str = "Not found") -> ApiError:
    return ApiError(404, error_body(message))


def bad_request(message: str) -> ApiError:
    return ApiError(400, error_body(message))


def invalid_params(issues: Sequence[Mapping[str, Any]]) -> ApiError:
    return ApiError(400, validation_body(issues))


def too_many_requests(message: str, retry_after: int | None = None) -> ApiError:
    return ApiError(429, error_body(message), {"Retry-After": str(retry_after)} if retry_after else None)


def oauth_error(status: int, error: str, description: str | None = None) -> ApiError:
    return ApiError(status, oauth_body(error, description), {"Cache-Control": "no-store"})


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

"""The emulator's errors, on the ground floor: every layer may raise them, none needs HTTP.

- :class:`EmulatorError` (and :class:`StoreError`): the emulator cannot do what was asked;
  each is a single line the CLI prints before exiting 2.
- :class:`ApiError` and the spec's error bodies: an answer a request gets instead of its
  result. The spec's error table uses four body shapes; each has one helper here:

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

The HTTP side (JSON responses, the exception handlers that turn an ``ApiError`` into an
answer) is ``http/errors.py``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any


class EmulatorError(Exception):
    """The emulator cannot do what was asked (bad option, busy port, unusable store): exit 2."""


class StoreError(EmulatorError):
    """The data directory's database cannot be used: corrupt, locked, foreign, or too new."""


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

"""Request bodies read with a limit: the one reader every body-taking route uses.

``await read_limited(request, limit)`` refuses a body whose ``Content-Length`` is over
``limit`` before reading a byte of it, and otherwise reads the stream chunk by chunk,
stopping as soon as more than ``limit`` bytes have come (a chunked body, or a client
that sends more than it declared). Either way it raises :class:`BodyTooLarge`, which
each route answers in its own error shape (413 Content Too Large, RFC 9110 §15.5.14).
Memory per request is therefore bounded by ``limit`` plus one chunk.

Routes that answer in the catalogue's ``{"error": ...}`` shape can let the exception go:
it is an :class:`~blockkit.emulator.http.errors.ApiError` (413 ``{"error": "Request
body too large (at most N KB)"}``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from blockkit.emulator.http.errors import ApiError, error_body

if TYPE_CHECKING:
    from starlette.requests import Request

TOO_LARGE = 413


def describe(limit: int) -> str:
    if limit >= 1 << 20 and limit % (1 << 20) == 0:
        return f"{limit >> 20} MB"
    if limit >= 1024 and limit % 1024 == 0:
        return f"{limit >> 10} KB"
    return f"{limit} bytes"


class BodyTooLarge(ApiError):
    """The body is over ``limit`` bytes (declared or sent)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(TOO_LARGE, error_body(f"Request body too large (at most {describe(limit)})"))


async def read_limited(request: Request, limit: int) -> bytes:
    """The whole body, or :class:`BodyTooLarge` once it is known to be over ``limit`` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None:
        declared = declared.strip()
        if declared.isdigit() and int(declared) > limit:
            raise BodyTooLarge(limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(limit)
        chunks.append(chunk)
    return b"".join(chunks)

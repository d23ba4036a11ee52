"""Errors of the platform-side services, usable in-process and over HTTP.

A service raises :class:`ServiceError`; it is an ``ApiError``, so a route lets it
through and the app answers with its body. Over the orchestration origin the body is
the spec's ProblemDetails; a 403 there is a plain JSON string (the spec's CreateFund
403). ``blockkit dev`` (in-process) reads ``status``, ``code`` and ``detail``.
"""

from __future__ import annotations

from typing import Any

from blockkit.emulator.errors import ApiError

TITLES = {400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found",
          409: "Conflict", 413: "Payload Too Large", 429: "Too Many Requests"}


def problem(status: int, detail: str, title: str | None = None) -> dict[str, Any]:
    """A ProblemDetails body (RFC 9457 fields, as the spec lists them)."""
    return {"type": f"https://httpstatuses.io/{status}", "title": title or TITLES.get(status, "Error"),
            "status": status, "detail": detail}


class ServiceError(ApiError):
    """A refused operation: ``status`` (HTTP), ``code`` (stable, for callers) and ``detail`` (a sentence)."""

    def __init__(self, status: int, code: str, detail: str, *, plain: bool = False,
                 errors: dict[str, list[str]] | None = None) -> None:
        body: Any = detail if plain else problem(status, detail)
        if errors is not None and not plain:
            body["errors"] = errors  # ValidationProblemDetails: ProblemDetails plus {member: [messages]}
        super().__init__(status, body)
        self.code = code
        self.detail = detail

    def as_dict(self) -> dict[str, Any]:
        return {"status": self.status, "code": self.code, "detail": self.detail}

    def __str__(self) -> str:
        return f"{self.code}: {self.detail}"


def bad_request(code: str, detail: str) -> ServiceError:
    return ServiceError(400, code, detail)


def invalid(code: str, member: str, detail: str) -> ServiceError:
    """A 400 ValidationProblemDetails (the tag operations' 400), naming the offending member."""
    return ServiceError(400, code, detail, errors={member: [detail]})


def unauthorized(detail: str = "a valid API key is required (Authorization: Bearer <API_KEY>)") -> ServiceError:
    return ServiceError(401, "unauthorized", detail)


def forbidden(detail: str) -> ServiceError:
    """The spec's 403: a plain JSON string body."""
    return ServiceError(403, "forbidden", detail, plain=True)


def not_found(detail: str) -> ServiceError:
    return ServiceError(404, "not_found", detail)

"""The restricted-region (safe-for-work) clamp, as a per-request value.

The platform clamps results to safe-for-work content in restricted regions and on
its SFW-only domain, whatever the ``nsfw``/``browsingLevel`` parameters ask. The
emulator treats a request as restricted when it carries ``X-Emulator-Region:
restricted``, or always when started with ``--sfw-only``. Routes read
``request.state.region_restricted`` (or call :func:`clamp_browsing_level`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from blockkit.emulator.facts import SFW_BROWSING_LEVEL

if TYPE_CHECKING:
    from starlette.requests import Request

REGION_HEADER = b"x-emulator-region"
RESTRICTED = b"restricted"


class RegionMiddleware:
    """Pure ASGI (no per-request task, unlike BaseHTTPMiddleware): sets state.region_restricted."""

    def __init__(self, app: Any, *, sfw_only: bool = False) -> None:
        self.app = app
        self.sfw_only = sfw_only

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            restricted = self.sfw_only or restricted_by_headers(scope.get("headers", ()))
            scope.setdefault("state", {})["region_restricted"] = restricted
        await self.app(scope, receive, send)


def restricted_by_headers(headers: Any) -> bool:
    """Whether a request's headers ask for the clamp: any ``X-Emulator-Region: restricted`` among them
    (a repeated header counts when any of its values says so; the edge keys its answers on this too)."""
    for name, value in headers:
        if name == REGION_HEADER and value.strip().lower() == RESTRICTED:
            return True
    return False


def region_restricted(request: Request) -> bool:
    return bool(getattr(request.state, "region_restricted", False))


def clamp_browsing_level(request: Request, level: int) -> int:
    """The browsing level a request may see: ``level``, clamped to SFW in a restricted region."""
    return level & SFW_BROWSING_LEVEL if region_restricted(request) else level

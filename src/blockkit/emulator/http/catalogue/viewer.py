"""How much a request may see: the browsing level served to it.

Two kinds of route:

- Mixed-level routes (``/images``): an authenticated caller sees up to their
  configured browsing level (and a block token's signed ceiling), an anonymous one
  the public level (PG). A presented token that is not acceptable is served as
  anonymous: /images is Public and documents no 401.
- Routes that always evaluate as anonymous (posts, articles, collections; spec
  general behaviour 5): the token is never read; the region alone sets the ceiling.

In both, a restricted region (``X-Emulator-Region: restricted`` or ``--sfw-only``)
clamps to safe-for-work (spec general behaviour 4). Blocked content (the Blocked
bit) is never served.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from blockkit.emulator import facts
from blockkit.emulator.http.region import region_restricted

if TYPE_CHECKING:
    from starlette.requests import Request

PUBLIC_LEVEL = facts.NSFW_LEVELS["PG"]
SFW_LEVEL = facts.SFW_BROWSING_LEVEL
ALL_LEVELS = facts.ALL_BROWSING_LEVELS  # every rating but Blocked


def region_ceiling(request: Request) -> int:
    """What an anonymous-evaluated route serves: everything but Blocked, or SFW when restricted."""
    return SFW_LEVEL if region_restricted(request) else ALL_LEVELS


def caller_ceiling(request: Request) -> int:
    """The most the caller of a Mixed-level route may see (before the region clamp)."""
    from blockkit.emulator.http.auth import TokenRejected, caller_of

    try:
        caller = caller_of(request)
    except TokenRejected:
        return PUBLIC_LEVEL
    if caller.anonymous:
        return PUBLIC_LEVEL
    return caller.clamp(caller.browsing_level) & ALL_LEVELS


def carries_token(request: Request) -> bool:
    """Whether the request presents a token at all (good or bad): such answers are not edge-cached."""
    return "authorization" in request.headers

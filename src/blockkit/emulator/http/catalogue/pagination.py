"""What every paginated list shares: the nextPage link, the page window limit, absolute URLs.

The cursor formats differ by endpoint (opaque for models, ``feed:...`` for images,
``<v>|<id>`` for articles, an id for collections), so each family encodes its own;
this module holds only what is the same everywhere.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request

from blockkit.emulator.http.errors import ApiError, error_body

# Page pagination on models and images: page * limit may not exceed this (else 429).
MAX_PAGED_ITEMS = 1000


def next_page_url(request: Request, **changes: Any) -> str:
    """The request's own URL with some parameters replaced (None removes one), others kept in order."""
    params = [(k, v) for k, v in request.query_params.multi_items() if k not in changes]
    params.extend((k, str(v)) for k, v in changes.items() if v is not None)
    base = str(request.url.replace(query=""))
    return f"{base}?{urlencode(params)}" if params else base


def check_page_window(page: int | None, limit: int) -> None:
    """Refuse pages past the window page pagination allows (the spec's 429)."""
    if page is not None and page * limit > MAX_PAGED_ITEMS:
        raise ApiError(429, error_body("Too many pages requested: page * limit may not exceed"
                                       f" {MAX_PAGED_ITEMS}; use cursor pagination (metadata.nextCursor)"))


def absolute_url(request: Request, path_or_url: str | None) -> str | None:
    """A stored URL made absolute: paths ('/__emulator/media/...') are relative to this origin."""
    if path_or_url is None or not path_or_url.startswith("/"):
        return path_or_url
    from blockkit.emulator.http.catalogue.links import request_origin

    return request_origin(request) + path_or_url


def metadata(**fields: Any) -> dict[str, Any]:
    """A ``metadata`` object without the keys whose value is None (absent on the last page)."""
    return {k: v for k, v in fields.items() if v is not None}

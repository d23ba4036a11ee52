"""Absolute URLs in responses: stored URLs starting with '/' are relative to the catalogue origin.

The store keeps media and vault URLs relative (migration 0001's conventions), so
the same data serves any port; responses make them absolute here, on the origin the
client used (``request_origin``: 127.0.0.1 and localhost both work, as the models
routes do). Links to other catalogue lists (a creator's models, a tag's models, the
next page) are built here too, under ``{origin}/api/v1``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlencode

from blockkit.emulator.catalogue import API_PREFIX


def request_origin(request: Any) -> str:
    """``scheme://host:port`` as the client addressed this request."""
    return f"{request.url.scheme}://{request.url.netloc}"


def absolute(base_url: str, url: str | None) -> str | None:
    """``url`` made absolute against ``base_url`` (None stays None, absolute URLs stay)."""
    if url is None:
        return None
    if url.startswith("/"):
        return base_url.rstrip("/") + url
    return url


def api_url(base_url: str, path: str, params: Iterable[tuple[str, str]] = ()) -> str:
    """``{base_url}/api/v1{path}?{params}`` (params percent-encoded, in the order given)."""
    query = urlencode(list(params))
    return f"{base_url.rstrip('/')}{API_PREFIX}{path}" + (f"?{query}" if query else "")

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

from blockkit.emulator.http.catalogue import API_PREFIX


_ORIGINS: dict[tuple[Any, ...], str] = {}
_ORIGINS_MAX = 256


def request_origin(request: Any) -> str:
    """``scheme://host:port`` as the client addressed this request (Starlette's ``request.url`` rules).

    Building ``request.url`` parses and checks the Host header and joins a whole URL, a seventh of
    a cached answer's time (issue 27); a request has only a few distinct (scheme, Host, server)
    triples, so each one's origin is worked out once and kept.
    """
    scope = request.scope
    host = None
    for key, value in scope["headers"]:
        if key == b"host":
            host = value
            break
    server = scope.get("server")
    triple = (scope.get("scheme", "http"), host, tuple(server) if server else None)
    known = _ORIGINS.get(triple)
    if known is None:
        url = request.url
        known = f"{url.scheme}://{url.netloc}"
        if len(_ORIGINS) >= _ORIGINS_MAX:
            _ORIGINS.clear()
        _ORIGINS[triple] = known
    return known


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

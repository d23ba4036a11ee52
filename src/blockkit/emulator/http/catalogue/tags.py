"""GET /api/v1/tags: model tags (spec, "Tags").

Model tags only, most used first (published models carrying them), then by name;
page pagination; ``query`` is a case-insensitive substring of the name. Each item
links to the models list filtered by the tag.

Metadata as the platform's (``tags.ts`` over ``tag.service.ts`` getTags, which has counted
nothing since 2025-10): ``{totalItems: 0, currentPage, pageSize, totalPages: 1}`` on every page,
with no nextPage or prevPage; a client pages by the items' length (a full page may have a next).

Answers are cached server-side for 60 seconds of the emulator clock, per (limit,
page, query, origin): a tag added meanwhile shows once the entry expires (advance the clock
to see it at once).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from pydantic import Field
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from typing_extensions import TypedDict

from blockkit.emulator.http.catalogue import links
from blockkit.emulator.http.errors import json_response
from blockkit.emulator.http.catalogue.models import EDGE_CACHED
from blockkit.emulator.http.catalogue.pages import PageMetadata, paging_data, with_links
from blockkit.emulator.http.catalogue.params import MAX_SAFE_INTEGER, QueryModel
from blockkit.emulator.http.catalogue.query import Int, Shape, Text, read_query
from blockkit.emulator.state import EmulatorState, emulator
from blockkit.emulator.store import tags as store

CACHE_SECONDS = 60.0
CACHE_ENTRIES = 512


class TagsQuery(QueryModel):
    limit: Int = Field(20, ge=1, le=200)
    page: Int = Field(1, ge=1, le=MAX_SAFE_INTEGER)
    query: Text = None


class TagOut(TypedDict):
    name: str
    link: str


class TagsPage(TypedDict):
    items: list[TagOut]
    metadata: PageMetadata


class ResponseCache:
    """Answers kept for ``seconds`` of the emulator clock, least recently used dropped first."""

    def __init__(self, seconds: float = CACHE_SECONDS, entries: int = CACHE_ENTRIES) -> None:
        self.seconds = seconds
        self.entries = entries
        self._lock = threading.Lock()
        self._items: OrderedDict[Any, tuple[float, Any]] = OrderedDict()

    def get(self, key: Any, now: float) -> Any | None:
        with self._lock:
            found = self._items.get(key)
            if found is None:
                return None
            made, value = found
            if not 0 <= now - made < self.seconds:
                del self._items[key]
                return None
            self._items.move_to_end(key)
            return value

    def put(self, key: Any, value: Any, now: float) -> None:
        with self._lock:
            self._items[key] = (now, value)
            self._items.move_to_end(key)
            while len(self._items) > self.entries:
                self._items.popitem(last=False)


def cache_for(state: EmulatorState) -> ResponseCache:
    """This build of the apps' cache (one per build: a reset starts with an empty one)."""
    return state.kept("tags", ResponseCache)


def list_tags(state: EmulatorState, query: TagsQuery, *, base_url: str) -> TagsPage:
    cache = cache_for(state)
    now = state.clock.timestamp()
    key = (query.limit, query.page, query.query, base_url)
    cached = cache.get(key, now)
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    offset = (query.page - 1) * query.limit
    with state.store.read() as db:
        names = store.list_model_tags(db, query=query.query, limit=query.limit, offset=offset)
    # The platform's getTags counts nothing (the count was removed: "Nothing actually supports
    # paging tags anyway"), so getPagingData gives totalItems 0 and totalPages 1, and
    # getPaginationLinks no nextPage or prevPage: a client pages by the items' length.
    page: TagsPage = {
        "items": [{"name": name, "link": links.api_url(base_url, "/models", [("tag", name)])} for name in names],
        "metadata": with_links(paging_data(page=query.page, limit=query.limit), base_url, "/tags", ()),
    }
    cache.put(key, page, now)
    return page


def tags_endpoint(request: Request) -> Response:
    query = read_query(request, TagsQuery, Shape.ISSUES)
    return json_response(list_tags(emulator(request), query, base_url=links.request_origin(request)), headers=EDGE_CACHED)


routes = [Route("/tags", tags_endpoint, methods=["GET"])]

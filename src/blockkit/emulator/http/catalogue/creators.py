"""GET /api/v1/creators: users with at least one published model (spec, "Creators").

Alphabetical by username (case-insensitive), page pagination only. ``query`` is a
case-insensitive substring of the username. Each item links to the models list
filtered by the creator's username; modelCount (published models) appears only when
above zero.

Totals (the platform's getPagingData): without ``query`` they are exact, and totalPages is 1 when
there are none. With ``query`` the platform counts nothing (a take+1 probe): totalItems is the
items up to this page plus one when another page follows, totalPages this page plus one or this
page, and ``hasMore`` says which; so totals grow as pages are walked and are exact on the final
page (a page past the end reports the items skipped). nextPage (the request's query, ``page``
set) while currentPage < totalPages; prevPage from page 2 when totalPages > 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from pydantic import Field
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from typing_extensions import NotRequired, TypedDict

from blockkit.emulator.http.catalogue import links
from blockkit.emulator.http.errors import json_response
from blockkit.emulator.http.catalogue.models import EDGE_CACHED
from blockkit.emulator.http.catalogue.pages import PageMetadata, paging_data, with_links
from blockkit.emulator.http.catalogue.params import MAX_SAFE_INTEGER, QueryModel
from blockkit.emulator.http.catalogue.query import Int, Shape, Text, read_query
from blockkit.emulator.state import EmulatorState, emulator
from blockkit.emulator.store import creators as store


class CreatorsQuery(QueryModel):
    limit: Int = Field(20, ge=1, le=200)
    page: Int = Field(1, ge=1, le=MAX_SAFE_INTEGER)
    query: Text = None


class CreatorOut(TypedDict):
    username: str
    modelCount: NotRequired[int]   # only when above zero
    link: str
    image: Optional[str]


class CreatorsPage(TypedDict):
    items: list[CreatorOut]
    metadata: PageMetadata


def list_creators(state: EmulatorState, query: CreatorsQuery, *, base_url: str,
                  params: Sequence[tuple[str, str]] = ()) -> CreatorsPage:
    """``params``: the request's query, which the platform's nextPage and prevPage repeat with ``page`` set."""
    offset = (query.page - 1) * query.limit
    with state.store.read() as db:
        rows = store.list_creators(db, query=query.query, limit=query.limit + 1, offset=offset)
        more = len(rows) > query.limit
        rows = rows[:query.limit]
        if query.query:
            # getCreators's search path: a take+1 probe instead of a count (getPagingData's hasMore).
            metadata = paging_data(page=query.page, limit=query.limit, returned=len(rows), has_more=more)
        else:
            metadata = paging_data(page=query.page, limit=query.limit,
                                   total=store.count_creators(db, query=None))
    items: list[CreatorOut] = []
    for row in rows:
        item: CreatorOut = {"username": row.username,
                            "link": links.api_url(base_url, "/models", [("username", row.username)]),
                            "image": links.absolute(base_url, row.image)}
        if row.model_count > 0:
            item["modelCount"] = row.model_count
        items.append(item)
    return {"items": items, "metadata": with_links(metadata, base_url, "/creators", params)}


def creators_endpoint(request: Request) -> Response:
    query = read_query(request, CreatorsQuery, Shape.ISSUES)
    return json_response(list_creators(emulator(request), query, base_url=links.request_origin(request),
                                       params=request.query_params.multi_items()), headers=EDGE_CACHED)


routes = [Route("/creators", creators_endpoint, methods=["GET"])]

"""GET /api/v1/creators: users with at least one published model (spec, "Creators").

Alphabetical by username (case-insensitive), page pagination only. ``query`` is a
case-insensitive substring of the username. Each item links to the models list
filtered by the creator's username; modelCount (published models) appears only when
above zero.

Totals: without ``query`` they are exact. With ``query`` they are lower bounds, as
the platform's search gives them: the items up to this page plus one when another
page follows, so they grow as pages are walked and are exact on the final page (and
on a page past the end, which counts). nextPage is the signal for another page.
"""

from __future__ import annotations

from typing import Optional

from pydantic import Field
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from blockkit.emulator.catalogue import links
from blockkit.emulator.catalogue.errors import json_response
from blockkit.emulator.catalogue.pages import Out, PageMetadata, page_metadata
from blockkit.emulator.catalogue.params import MAX_SAFE_INTEGER, QueryModel
from blockkit.emulator.catalogue.query import Int, Shape, Text, read_query
from blockkit.emulator.state import EmulatorState, emulator
from blockkit.emulator.store import creators as store


class CreatorsQuery(QueryModel):
    limit: Int = Field(20, ge=1, le=200)
    page: Int = Field(1, ge=1, le=MAX_SAFE_INTEGER)
    query: Text = None


class CreatorOut(Out):
    username: str
    model_count: Optional[int] = Field(None, alias="modelCount")
    link: str
    image: Optional[str]


class CreatorsPage(Out):
    items: list[CreatorOut]
    metadata: PageMetadata


def list_creators(state: EmulatorState, query: CreatorsQuery) -> CreatorsPage:
    offset = (query.page - 1) * query.limit
    with state.store.read() as db:
        rows = store.list_creators(db, query=query.query, limit=query.limit + 1, offset=offset)
        more = len(rows) > query.limit
        rows = rows[:query.limit]
        if query.query and rows:
            total = offset + len(rows) + (1 if more else 0)   # a lower bound, exact on the last page
        else:
            total = store.count_creators(db, query=query.query)
    base_url = state.urls.base_url
    items = []
    for row in rows:
        fields = dict(username=row.username,
                      link=links.api_url(base_url, "/models", [("username", row.username)]),
                      image=links.absolute(base_url, row.image))
        if row.model_count > 0:
            fields["model_count"] = row.model_count
        items.append(CreatorOut.model_construct(**fields))
    metadata = page_metadata(base_url, "/creators", page=query.page, limit=query.limit, total=total, more=more,
                             query=query.query)
    return CreatorsPage.model_construct(items=items, metadata=metadata)


def creators_endpoint(request: Request) -> Response:
    query = read_query(request, CreatorsQuery, Shape.ISSUES)
    return json_response(list_creators(emulator(request), query))


routes = [Route("/creators", creators_endpoint, methods=["GET"])]

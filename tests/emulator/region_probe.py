"""A route family used only by the tests: it answers what the request-scoped values are."""

from __future__ import annotations

from pydantic import Field
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from blockkit.emulator.http.errors import json_response, not_found
from blockkit.emulator.http.catalogue.params import CommaList, QueryBool, QueryModel, parse_query
from blockkit.emulator.http.region import clamp_browsing_level


class ProbeQuery(QueryModel):
    limit: int = Field(100, ge=1, le=100)
    ids: CommaList[int] = []
    nsfw: QueryBool = False
    browsing_level: int = Field(31, alias="browsingLevel")


def probe(request: Request) -> Response:
    query = parse_query(request, ProbeQuery)
    return json_response({
        "region_restricted": request.state.region_restricted,
        "browsing_level": clamp_browsing_level(request, query.browsing_level),
        "query": query.model_dump(),
    })


def missing(request: Request) -> Response:
    raise not_found("No probe with that id")


def broken(request: Request) -> Response:
    raise RuntimeError("a bug in a route")


routes = [Route("/probe", probe), Route("/probe/missing", missing), Route("/probe/broken", broken)]


def paged(request: Request) -> Response:
    from blockkit.emulator.http.catalogue.pagination import absolute_url, check_page_window, metadata, next_page_url

    page = int(request.query_params.get("page", "1"))
    limit = int(request.query_params.get("limit", "100"))
    check_page_window(page, limit)
    return json_response({
        "media": absolute_url(request, "/__emulator/media/x.jpeg"),
        "external": absolute_url(request, "https://example.com/x.jpeg"),
        "metadata": metadata(nextPage=next_page_url(request, page=page + 1), nextCursor=None, currentPage=page),
    })


routes.append(Route("/paged", paged))

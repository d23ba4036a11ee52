"""GET /api/v1/collections and /collections/{id} (spec, "Collections").

Both always evaluate the request as anonymous (spec general behaviour 5) and answer
``Cache-Control: public, s-maxage=300``.

The list holds public collections only. ``nsfw=false`` (the default) serves
collections rated safe-for-work, ``nsfw=true`` every rating but Blocked; a
restricted region clamps to safe-for-work. A collection shows when its rating holds
nothing above the served level (an empty collection, rated 0, always does).
``query`` (at most 100 characters) is a case-insensitive substring of the name.
Sorts: Newest (id descending) with ``cursor`` = the id to start from (the first item
of the next page, as metadata.nextCursor gives it); Most Followers, which takes no
cursor (400) and so answers a single page. itemCount counts accepted items only;
coverImageUrl is null without a cover that is scanned and rated within the served
level.

The single collection (with tags) is a 404 when missing or private; an unlisted one
is served (it is reachable by link).
"""

from __future__ import annotations

from typing import Annotated, Literal, Optional

from pydantic import BeforeValidator, Field
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from typing_extensions import NotRequired, TypedDict

from blockkit.emulator.http.catalogue import links
from blockkit.emulator.http.errors import ApiError, error_body, json_response, not_found
from blockkit.emulator.http.catalogue.params import QueryModel
from blockkit.emulator.http.catalogue.query import Bool, Id, Int, Shape, empty_as_none, known_pairs, path_id, read_query
from blockkit.emulator.http.catalogue.viewer import ALL_LEVELS, SFW_LEVEL
from blockkit.emulator.http.region import region_restricted
from blockkit.emulator.state import EmulatorState, emulator
from blockkit.emulator.store import collections as store

CACHE_CONTROL = "public, s-maxage=300"
NOT_FOUND = "Collection not found"
MAX_QUERY = 100
CURSOR_NEEDS_NEWEST = "cursor is only supported with sort=Newest"


# --- query -------------------------------------------------------------------------------

class CollectionsQuery(QueryModel):
    limit: Int = Field(100, ge=1, le=100)
    cursor: Optional[Id] = None
    query: Annotated[Optional[str], BeforeValidator(empty_as_none), Field(max_length=MAX_QUERY)] = None
    sort: Literal["Newest", "Most Followers"] = "Newest"
    nsfw: Bool = False


# --- response shapes (TypedDicts, see pages.py) -------------------------------------------

class CollectionUser(TypedDict):
    id: int
    username: str


class CollectionTag(TypedDict):
    id: int
    name: str


class CollectionOut(TypedDict):
    id: int
    name: str
    description: Optional[str]
    type: str
    nsfwLevel: int
    read: str
    isPublic: bool
    coverImageUrl: Optional[str]
    user: CollectionUser
    itemCount: NotRequired[int]              # list items only
    tags: NotRequired[list[CollectionTag]]   # the single shape only


class CollectionsMetadata(TypedDict):
    nextCursor: NotRequired[int]
    nextPage: NotRequired[str]


class CollectionsPage(TypedDict):
    items: list[CollectionOut]
    metadata: CollectionsMetadata


# --- service -----------------------------------------------------------------------------

def _cover_url(row: store.CollectionRow, level: int, base_url: str) -> str | None:
    if row.cover_url is None or not row.cover_scanned or not row.cover_level or row.cover_level & ~level:
        return None
    return links.absolute(base_url, row.cover_url)


def collection_out(row: store.CollectionRow, *, level: int, base_url: str) -> CollectionOut:
    return {"id": row.id, "name": row.name, "description": row.description, "type": row.type,
            "nsfwLevel": row.nsfw_level, "read": row.read, "isPublic": row.read == "Public",
            "coverImageUrl": _cover_url(row, level, base_url), "user": {"id": row.user_id, "username": row.username}}


def list_collections(state: EmulatorState, query: CollectionsQuery, *, restricted: bool,
                     params: tuple[tuple[str, str], ...], base_url: str) -> CollectionsPage:
    if query.cursor is not None and query.sort != "Newest":
        raise ApiError(400, error_body(CURSOR_NEEDS_NEWEST))
    level = ALL_LEVELS if query.nsfw else SFW_LEVEL
    if restricted:
        level &= SFW_LEVEL
    # Newest reads one more row than the page: its id is the next cursor. Most Followers
    # cannot be continued (no cursor, no page), so it is one page.
    newest = query.sort == "Newest"
    with state.store.read() as db:
        rows = store.list_collections(db, sort=query.sort, level=level, limit=query.limit + (1 if newest else 0),
                                      start_id=query.cursor, query=query.query)
        page = rows[:query.limit]
        counts = store.accepted_counts(db, [r.id for r in page])
    items = []
    for row in page:
        item = collection_out(row, level=level, base_url=base_url)
        item["itemCount"] = counts.get(row.id, 0)
        items.append(item)
    metadata: CollectionsMetadata = {}
    if newest and len(rows) > query.limit:
        next_id = rows[query.limit].id
        kept = [(k, v) for k, v in params if k != "cursor"] + [("cursor", str(next_id))]
        metadata = {"nextCursor": next_id, "nextPage": links.api_url(base_url, "/collections", kept)}
    return {"items": items, "metadata": metadata}


def get_collection(state: EmulatorState, collection_id: int, *, restricted: bool, base_url: str) -> CollectionOut:
    level = SFW_LEVEL if restricted else ALL_LEVELS
    with state.store.read() as db:
        row = store.get_collection(db, collection_id)
        if row is None or row.read == "Private":
            raise not_found(f"No collection with id {collection_id}")  # collections/[id].ts:81
        tags = store.collection_tags(db, collection_id)
    collection = collection_out(row, level=level, base_url=base_url)
    collection["tags"] = [{"id": t, "name": n} for t, n in tags]
    return collection


# --- routes ------------------------------------------------------------------------------

def collections_endpoint(request: Request) -> Response:
    query = read_query(request, CollectionsQuery, Shape.ENVELOPE)
    page = list_collections(emulator(request), query, restricted=region_restricted(request),
                            params=known_pairs(request, CollectionsQuery), base_url=links.request_origin(request))
    return json_response(page, headers={"Cache-Control": CACHE_CONTROL})


def collection_endpoint(request: Request) -> Response:
    collection_id = path_id(request.path_params["id"], "collection")
    collection = get_collection(emulator(request), collection_id, restricted=region_restricted(request),
                                base_url=links.request_origin(request))
    return json_response(collection, headers={"Cache-Control": CACHE_CONTROL})


routes = [
    Route("/collections", collections_endpoint, methods=["GET"]),
    Route("/collections/{id}", collection_endpoint, methods=["GET"]),
]

"""GET /api/v1/users: look users up by id or by username prefix (spec, "Users").

- ``ids``: the users with those ids; the response holds at most as many items as ids
  were sent, in the order they were sent.
- ``query``: usernames starting with it (case-insensitive), shortest first, then
  alphabetical; at most 5 (with ``ids`` too: the ids' count).
- neither: the first 5 users by id.

Deleted users and the system user (id -1) are never listed. A malformed parameter is a
400 with the validation error itself as the body (no ``{error}`` envelope).
"""

from __future__ import annotations

from typing import Optional

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from typing_extensions import TypedDict

from blockkit.emulator.http.catalogue import links
from blockkit.emulator.http.errors import json_response
from blockkit.emulator.http.catalogue.models import EDGE_CACHED
from blockkit.emulator.http.catalogue.params import QueryModel
from pydantic import Field

from blockkit.emulator.http.catalogue.query import IdList, Int, Shape, Text, read_query
from blockkit.emulator.state import EmulatorState, emulator
from blockkit.emulator.store import user_lookup as store

DEFAULT_LIMIT = 5


class UsersQuery(QueryModel):
    ids: Optional[IdList] = None
    query: Text = None
    # getAllQuerySchema's limit (1-200): checked, then not used (users/index.ts), as on the platform.
    limit: Optional[Int] = Field(None, ge=1, le=200)


class UserLookupItem(TypedDict):
    id: int
    username: str
    avatarUrl: Optional[str]
    avatarNsfw: str
    meta: None


class UsersPage(TypedDict):
    items: list[UserLookupItem]


def lookup_users(state: EmulatorState, query: UsersQuery, base_url: str = "") -> UsersPage:
    limit = len(query.ids) if query.ids is not None else DEFAULT_LIMIT
    with state.store.read() as db:
        rows = store.lookup(db, ids=sorted(set(query.ids)) if query.ids is not None else None, prefix=query.query,
                            limit=limit)
    if query.ids is not None and query.query is None:
        order = {user_id: n for n, user_id in reversed(list(enumerate(query.ids)))}
        rows.sort(key=lambda r: order[r.id])
    # avatarNsfw keeps the spec's name (None, Soft, Mature, X); avatarUrl and meta (null) are the
    # platform's search path's keys (user.service.ts:313-318).
    return {"items": [{"id": r.id, "username": r.username, "avatarUrl": links.absolute(base_url, r.avatar_url), "avatarNsfw": r.avatar_nsfw,
                       "meta": None} for r in rows]}


def users_endpoint(request: Request) -> Response:
    query = read_query(request, UsersQuery, Shape.BARE)
    return json_response(lookup_users(emulator(request), query, links.request_origin(request)),
                         headers=EDGE_CACHED)


routes = [Route("/users", users_endpoint, methods=["GET"])]

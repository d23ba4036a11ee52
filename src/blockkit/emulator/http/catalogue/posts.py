"""GET /api/v1/posts/{id}: one post with its first 100 images (spec, "Posts").

The route always evaluates the request as anonymous (spec general behaviour 5): the
token is never read, so it cannot change the data. What it does change is caching:
an anonymous answer is edge-cacheable (``public, s-maxage=300,
stale-while-revalidate=150``), an answer to a request carrying a token is not
(``no-store``).

A post is a 404, with one message whatever the cause, when it is missing,
unpublished (or scheduled later than now), private, in early access, not yet
scanned or blocked, and in a restricted region when it holds anything above
safe-for-work. Its images are the first 100 in post order among those served:
scanned, and rated within the region's ceiling (everything but Blocked; SFW when
restricted). meta is always null.
"""

from __future__ import annotations

from typing import Optional

import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from typing_extensions import TypedDict

from blockkit.emulator.http.catalogue import links
from blockkit.emulator.http.errors import json_response, not_found
from blockkit.emulator.http.catalogue.images import render_items
from blockkit.emulator.http.catalogue.query import path_id
from blockkit.emulator.http.catalogue.viewer import ALL_LEVELS, SFW_LEVEL, carries_token
from blockkit.emulator.http.region import region_restricted
from blockkit.emulator.state import EmulatorState, emulator
from blockkit.emulator.store import images as image_store
from blockkit.emulator.store import posts as store

MAX_POST_IMAGES = 100
CACHE_ANONYMOUS = "public, s-maxage=300, stale-while-revalidate=150"
CACHE_WITH_TOKEN = "no-store"
NOT_FOUND = "Post not found"
HIDDEN_AVAILABILITY = ("Private", "EarlyAccess")


# --- response shapes ---------------------------------------------------------------------

class PostUser(TypedDict):
    id: int
    username: str


class PostTag(TypedDict):
    id: int
    name: str


class PostOut(TypedDict):
    id: int
    title: Optional[str]
    detail: Optional[str]
    nsfwLevel: int
    publishedAt: str
    modelVersionId: Optional[int]
    user: PostUser
    tags: list[PostTag]
    images: orjson.Fragment   # the JSON array of the post's ImageItems (images.render_items), meta always null


# --- service -----------------------------------------------------------------------------

def get_post(state: EmulatorState, post_id: int, *, restricted: bool, base_url: str) -> PostOut:
    """The post as served to an anonymous request; 404 when it may not be shown."""
    level = SFW_LEVEL if restricted else ALL_LEVELS
    now = state.clock.iso()
    with state.store.read() as db:
        post = store.get_post(db, post_id)
        if (post is None or post.published_at is None or post.published_at > now
                or post.availability in HIDDEN_AVAILABILITY or not post.scanned or post.blocked
                or (restricted and post.nsfw_level & ~SFW_LEVEL)):
            raise not_found(NOT_FOUND)
        tags = store.post_tags(db, post_id)
        ids = image_store.post_image_ids(db, post_id, level, MAX_POST_IMAGES)
        images = render_items(db, ids, level=level, base_url=base_url, meta="null")
    return {
        "id": post.id, "title": post.title, "detail": post.detail, "nsfwLevel": post.nsfw_level,
        "publishedAt": post.published_at,
        "modelVersionId": post.model_version_id if post.version_published else None,
        "user": {"id": post.user_id, "username": post.username},
        "tags": [{"id": tag_id, "name": name} for tag_id, name in tags],
        "images": images,
    }


# --- routes ------------------------------------------------------------------------------

def post_endpoint(request: Request) -> Response:
    post_id = path_id(request.path_params["id"], "post")
    post = get_post(emulator(request), post_id, restricted=region_restricted(request),
                    base_url=links.request_origin(request))
    cache = CACHE_WITH_TOKEN if carries_token(request) else CACHE_ANONYMOUS
    return json_response(post, headers={"Cache-Control": cache})


routes = [Route("/posts/{id}", post_endpoint, methods=["GET"])]

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

from pydantic import Field
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from blockkit.emulator.catalogue.errors import json_response, not_found
from blockkit.emulator.catalogue.images import ImageOut, image_out
from blockkit.emulator.catalogue.pages import Out
from blockkit.emulator.catalogue.query import path_id
from blockkit.emulator.catalogue.viewer import ALL_LEVELS, SFW_LEVEL, carries_token
from blockkit.emulator.region import region_restricted
from blockkit.emulator.state import EmulatorState, emulator
from blockkit.emulator.store import images as image_store
from blockkit.emulator.store import posts as store

MAX_POST_IMAGES = 100
CACHE_ANONYMOUS = "public, s-maxage=300, stale-while-revalidate=150"
CACHE_WITH_TOKEN = "no-store"
NOT_FOUND = "Post not found"
HIDDEN_AVAILABILITY = ("Private", "EarlyAccess")


# --- response models ---------------------------------------------------------------------

class PostUser(Out):
    id: int
    username: str


class PostTag(Out):
    id: int
    name: str


class PostOut(Out):
    id: int
    title: Optional[str]
    detail: Optional[str]
    nsfw_level: int = Field(alias="nsfwLevel")
    published_at: str = Field(alias="publishedAt")
    model_version_id: Optional[int] = Field(alias="modelVersionId")
    user: PostUser
    tags: list[PostTag]
    images: list[ImageOut]


# --- service -----------------------------------------------------------------------------

def get_post(state: EmulatorState, post_id: int, *, restricted: bool) -> PostOut:
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
        rows = image_store.image_rows(db, ids, with_meta=False)
        stats = image_store.image_stats(db, ids)
        versions = image_store.image_version_ids(db, ids)
    base_url = state.urls.base_url
    return PostOut.model_construct(
        id=post.id, title=post.title, detail=post.detail, nsfw_level=post.nsfw_level,
        published_at=post.published_at, model_version_id=post.model_version_id if post.version_published else None,
        user=PostUser.model_construct(id=post.user_id, username=post.username),
        tags=[PostTag.model_construct(id=tag_id, name=name) for tag_id, name in tags],
        images=[image_out(rows[i], stats.get(i), versions.get(i), level=level, base_url=base_url, meta="null")
                for i in ids if i in rows],
    )


# --- routes ------------------------------------------------------------------------------

def post_endpoint(request: Request) -> Response:
    post_id = path_id(request.path_params["id"], "post")
    post = get_post(emulator(request), post_id, restricted=region_restricted(request))
    cache = CACHE_WITH_TOKEN if carries_token(request) else CACHE_ANONYMOUS
    return json_response(post, headers={"Cache-Control": cache})


routes = [Route("/posts/{id}", post_endpoint, methods=["GET"])]

"""GET /api/v1/articles and /articles/{id} (spec, "Articles").

Both always evaluate the request as anonymous (spec general behaviour 5) and answer
``Cache-Control: public, s-maxage=300``.

The list: published, scanned, non-private articles (Unsearchable ones too: they are
not private); ``nsfw=false`` (the default) serves articles rated safe-for-work,
``nsfw=true`` every rating but Blocked; a restricted region clamps to safe-for-work
whatever ``nsfw`` says. An article shows when its rating holds nothing above the
served level. ``query`` is a case-insensitive substring of the title, ``tags``
matches an article carrying any one of the ids, ``username`` (auto-slugified) the
author. Keyset cursor ``<v>|<id>``: the sort value (a timestamp or a count) and the
id of the last item; metadata keys are omitted on the last page.

The single article adds the body as ``content`` (HTML) and is a 404, one message for
every cause, when missing, draft, unpublished (or scheduled later than now) or
private. Its cover is dropped (null) above the region's ceiling: everything but
Blocked, safe-for-work when restricted. Neither shape carries moderatorNsfwLevel.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Optional

from pydantic import BeforeValidator, Field
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from typing_extensions import NotRequired, TypedDict

from blockkit.emulator.http.catalogue import links
from blockkit.emulator.http.errors import ApiError, error_body, json_response, not_found
from blockkit.emulator.http.catalogue.pages import CursorMetadata
from blockkit.emulator.http.catalogue.params import QueryModel
from blockkit.emulator.http.catalogue.query import (
    MAX_ID,
    Bool,
    IdList,
    Int,
    Shape,
    Text,
    empty_as_none,
    known_pairs,
    path_id,
    read_query,
    slugify_username,
)
from blockkit.emulator.http.catalogue.viewer import ALL_LEVELS, SFW_LEVEL
from blockkit.emulator.http.region import region_restricted
from blockkit.emulator.state import EmulatorState, emulator
from blockkit.emulator.store import articles as store

CACHE_CONTROL = "public, s-maxage=300"
NOT_FOUND = "Article not found"
_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z")
_COUNT = re.compile(r"[0-9]{1,18}")
_ID = re.compile(r"[0-9]{1,10}")
MALFORMED_CURSOR = "Invalid cursor"  # the platform's message (articles/index.ts)
MAX_CURSOR = 100  # z.string().max(100) on the platform


# --- query -------------------------------------------------------------------------------

class ArticlesQuery(QueryModel):
    limit: Int = Field(100, ge=1, le=100)
    cursor: Annotated[Optional[str], BeforeValidator(empty_as_none), Field(max_length=MAX_CURSOR)] = None
    query: Text = None
    tags: Optional[IdList] = None
    username: Text = None
    sort: Literal["Newest", "Recently Updated", "Most Reactions", "Most Comments", "Most Bookmarks",
                  "Most Collected"] = "Newest"
    nsfw: Bool = False


def parse_cursor(text: str, sort: str) -> tuple[Any, int]:
    """``<v>|<id>``: v a timestamp for the date sorts, a count otherwise; a 400 when it is not."""
    value, bar, ident = text.rpartition("|")
    if not bar or not _ID.fullmatch(ident) or not 1 <= int(ident) <= MAX_ID:
        raise ApiError(400, error_body(MALFORMED_CURSOR))
    if sort in store.DATE_SORTS:
        if not _TIMESTAMP.fullmatch(value):
            raise ApiError(400, error_body(MALFORMED_CURSOR))
        return value, int(ident)
    if not _COUNT.fullmatch(value):
        raise ApiError(400, error_body(MALFORMED_CURSOR))
    return int(value), int(ident)


# --- response shapes (TypedDicts, see pages.py) -------------------------------------------

class ArticleStats(TypedDict):
    favoriteCount: int
    collectedCount: int
    commentCount: int
    likeCount: int
    heartCount: int
    viewCount: int
    tippedAmountCount: int


class ArticleUser(TypedDict):
    id: int
    username: str
    image: Optional[str]


class ArticleTag(TypedDict):
    id: int
    name: str
    isCategory: bool


class CoverImage(TypedDict):
    id: int
    url: str
    nsfwLevel: int
    width: int
    height: int


class ArticleOut(TypedDict):
    id: int
    title: str
    publishedAt: Optional[str]
    createdAt: str
    updatedAt: str
    nsfwLevel: int
    availability: str
    status: str
    stats: ArticleStats
    user: ArticleUser
    tags: list[ArticleTag]
    coverImage: Optional[CoverImage]
    content: NotRequired[Optional[str]]   # the single shape only


class ArticlesPage(TypedDict):
    items: list[ArticleOut]
    metadata: CursorMetadata


# --- service -----------------------------------------------------------------------------

def _cover(row: store.ArticleRow, level: int, base_url: str) -> CoverImage | None:
    """The cover when there is one, it is scanned and rated within ``level``; else None."""
    if row.cover_id is None or not row.cover_scanned or not row.cover_level or row.cover_level & ~level:
        return None
    return {"id": row.cover_id, "url": links.absolute(base_url, row.cover_url) or "", "nsfwLevel": row.cover_level,
            "width": row.cover_width or 0, "height": row.cover_height or 0}


def article_out(row: store.ArticleRow, tags: list[tuple[int, str, bool]], *, level: int, base_url: str,
                with_content: bool) -> ArticleOut:
    article: ArticleOut = {
        "id": row.id, "title": row.title, "publishedAt": row.published_at, "createdAt": row.created_at,
        "updatedAt": row.updated_at, "nsfwLevel": row.nsfw_level, "availability": row.availability,
        "status": row.status,
        "stats": {"favoriteCount": row.favorite_count, "collectedCount": row.collected_count,
                  "commentCount": row.comment_count, "likeCount": row.like_count, "heartCount": row.heart_count,
                  "viewCount": row.view_count, "tippedAmountCount": row.tipped_amount_count},
        "user": {"id": row.user_id, "username": row.username, "image": links.absolute(base_url, row.user_image)},
        "tags": [{"id": t, "name": n, "isCategory": c} for t, n, c in tags],
        "coverImage": _cover(row, level, base_url),
    }
    # The platform's list item also carries these (article.service.ts:530-560): the author's id, the
    # cover's id, whether the article is unlisted, and cosmetics (none in the emulator).
    article.update({"userId": row.user_id, "coverId": row.cover_id, "unlisted": row.availability == "Unlisted",  # type: ignore[typeddict-item]
                    "cosmetic": None})
    # The author (issue 33): simpleUserSelect's profilePicture (an Image row; the emulator's avatars are bare
    # URLs, so null). On the list, cosmetics is getArticles's jsonb_agg subquery over the equipped cosmetics,
    # which is null when there are none; the single article reads them through Prisma
    # (userWithCosmeticsSelect), an array, and adds the author's isModerator (articleDetailSelect).
    article["user"].update({"deletedAt": None, "profilePicture": None,  # type: ignore[typeddict-item]
                            "cosmetics": [] if with_content else None})
    if with_content:
        article["user"]["isModerator"] = bool(row.user_is_moderator)  # type: ignore[typeddict-unknown-key]
        article["content"] = row.content
    return article


def list_articles(state: EmulatorState, query: ArticlesQuery, *, restricted: bool,
                  params: tuple[tuple[str, str], ...], base_url: str) -> ArticlesPage:
    level = ALL_LEVELS if query.nsfw else SFW_LEVEL
    if restricted:
        level &= SFW_LEVEL
    after = parse_cursor(query.cursor, query.sort) if query.cursor is not None else None
    username = slugify_username(query.username) if query.username else None
    with state.store.read() as db:
        rows = store.list_articles(db, sort=query.sort, level=level, now=state.clock.iso(), limit=query.limit + 1,
                                   after=after, query=query.query, tags=sorted(set(query.tags or ())),
                                   username=username)
        page = rows[:query.limit]
        tags = store.article_tags(db, [r.id for r in page])
    items = [article_out(r, tags.get(r.id, []), level=level, base_url=base_url, with_content=False) for r in page]
    metadata: CursorMetadata = {}
    if len(rows) > query.limit:
        last = page[-1]
        cursor = f"{last.sort_key}|{last.id}"
        kept = [(k, v) for k, v in params if k != "cursor"] + [("cursor", cursor)]
        metadata = {"nextCursor": cursor, "nextPage": links.api_url(base_url, "/articles", kept)}
    return {"items": items, "metadata": metadata}


def get_article(state: EmulatorState, article_id: int, *, restricted: bool, base_url: str) -> ArticleOut:
    level = SFW_LEVEL if restricted else ALL_LEVELS
    now = state.clock.iso()
    with state.store.read() as db:
        row = store.get_article(db, article_id)
        if (row is None or row.status != "Published" or row.published_at is None or row.published_at > now
                or row.availability == "Private"):
            # The platform's TRPC NOT_FOUND through handleEndpointError: {message} (article.service.ts:693,
            # endpoint-helpers.ts:266-271).
            raise ApiError(404, {"message": f"No article with id {article_id}"})
        tags = store.article_tags(db, [row.id]).get(row.id, [])
    article = article_out(row, tags, level=level, base_url=base_url, with_content=True)
    if article.get("coverImage") is None:
        # The spec: a cover above the region's ceiling is dropped; the platform leaves the key out ([id].ts:96).
        article.pop("coverImage", None)  # type: ignore[misc]
    return article


# --- routes ------------------------------------------------------------------------------

def articles_endpoint(request: Request) -> Response:
    query = read_query(request, ArticlesQuery, Shape.ENVELOPE)
    page = list_articles(emulator(request), query, restricted=region_restricted(request),
                         params=known_pairs(request, ArticlesQuery), base_url=links.request_origin(request))
    return json_response(page, headers={"Cache-Control": CACHE_CONTROL})


def article_endpoint(request: Request) -> Response:
    article_id = path_id(request.path_params["id"], "article")
    article = get_article(emulator(request), article_id, restricted=region_restricted(request),
                          base_url=links.request_origin(request))
    return json_response(article, headers={"Cache-Control": CACHE_CONTROL})


routes = [
    Route("/articles", articles_endpoint, methods=["GET"]),
    Route("/articles/{id}", article_endpoint, methods=["GET"]),
]

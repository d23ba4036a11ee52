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
from typing import Any, Literal, Optional

from pydantic import Field
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from blockkit.emulator.catalogue import links
from blockkit.emulator.catalogue.errors import ApiError, error_body, json_response, not_found
from blockkit.emulator.catalogue.pages import CursorMetadata, Out
from blockkit.emulator.catalogue.params import QueryModel
from blockkit.emulator.catalogue.query import (
    MAX_ID,
    Bool,
    IdList,
    Int,
    Shape,
    Text,
    known_pairs,
    path_id,
    read_query,
    slugify_username,
)
from blockkit.emulator.catalogue.viewer import ALL_LEVELS, SFW_LEVEL
from blockkit.emulator.region import region_restricted
from blockkit.emulator.state import EmulatorState, emulator
from blockkit.emulator.store import articles as store

CACHE_CONTROL = "public, s-maxage=300"
NOT_FOUND = "Article not found"
_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z")
_COUNT = re.compile(r"[0-9]{1,18}")
_ID = re.compile(r"[0-9]{1,10}")
MALFORMED_CURSOR = "malformed cursor: expected <value>|<id> as metadata.nextCursor gave it"


# --- query -------------------------------------------------------------------------------

class ArticlesQuery(QueryModel):
    limit: Int = Field(100, ge=1, le=100)
    cursor: Text = None
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


# --- response models ---------------------------------------------------------------------

class ArticleStats(Out):
    favorite_count: int = Field(alias="favoriteCount")
    collected_count: int = Field(alias="collectedCount")
    comment_count: int = Field(alias="commentCount")
    like_count: int = Field(alias="likeCount")
    heart_count: int = Field(alias="heartCount")
    view_count: int = Field(alias="viewCount")
    tipped_amount_count: int = Field(alias="tippedAmountCount")


class ArticleUser(Out):
    id: int
    username: str
    image: Optional[str]


class ArticleTag(Out):
    id: int
    name: str
    is_category: bool = Field(alias="isCategory")


class CoverImage(Out):
    id: int
    url: str
    nsfw_level: int = Field(alias="nsfwLevel")
    width: int
    height: int


class ArticleOut(Out):
    id: int
    title: str
    published_at: str = Field(alias="publishedAt")
    created_at: str = Field(alias="createdAt")
    updated_at: str = Field(alias="updatedAt")
    nsfw_level: int = Field(alias="nsfwLevel")
    availability: str
    status: str
    stats: ArticleStats
    user: ArticleUser
    tags: list[ArticleTag]
    cover_image: Optional[CoverImage] = Field(alias="coverImage")
    content: Optional[str] = None   # the single shape only


class ArticlesPage(Out):
    items: list[ArticleOut]
    metadata: CursorMetadata


# --- service -----------------------------------------------------------------------------

def _cover(row: store.ArticleRow, level: int, base_url: str) -> CoverImage | None:
    """The cover when there is one, it is scanned and rated within ``level``; else None."""
    if row.cover_id is None or not row.cover_scanned or not row.cover_level or row.cover_level & ~level:
        return None
    return CoverImage.model_construct(id=row.cover_id, url=links.absolute(base_url, row.cover_url),
                                      nsfw_level=row.cover_level, width=row.cover_width or 0,
                                      height=row.cover_height or 0)


def article_out(row: store.ArticleRow, tags: list[tuple[int, str, bool]], *, level: int, base_url: str,
                with_content: bool) -> ArticleOut:
    fields: dict[str, Any] = dict(
        id=row.id, title=row.title, published_at=row.published_at, created_at=row.created_at,
        updated_at=row.updated_at, nsfw_level=row.nsfw_level, availability=row.availability, status=row.status,
        stats=ArticleStats.model_construct(
            favorite_count=row.favorite_count, collected_count=row.collected_count, comment_count=row.comment_count,
            like_count=row.like_count, heart_count=row.heart_count, view_count=row.view_count,
            tipped_amount_count=row.tipped_amount_count),
        user=ArticleUser.model_construct(id=row.user_id, username=row.username,
                                         image=links.absolute(base_url, row.user_image)),
        tags=[ArticleTag.model_construct(id=t, name=n, is_category=c) for t, n, c in tags],
        cover_image=_cover(row, level, base_url),
    )
    if with_content:
        fields["content"] = row.content
    return ArticleOut.model_construct(**fields)


def list_articles(state: EmulatorState, query: ArticlesQuery, *, restricted: bool,
                  params: tuple[tuple[str, str], ...]) -> ArticlesPage:
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
    base_url = state.urls.base_url
    items = [article_out(r, tags.get(r.id, []), level=level, base_url=base_url, with_content=False) for r in page]
    metadata = CursorMetadata.model_construct()
    if len(rows) > query.limit:
        last = page[-1]
        cursor = f"{last.sort_key}|{last.id}"
        kept = [(k, v) for k, v in params if k != "cursor"] + [("cursor", cursor)]
        metadata = CursorMetadata.model_construct(next_cursor=cursor,
                                                  next_page=links.api_url(base_url, "/articles", kept))
    return ArticlesPage.model_construct(items=items, metadata=metadata)


def get_article(state: EmulatorState, article_id: int, *, restricted: bool) -> ArticleOut:
    level = SFW_LEVEL if restricted else ALL_LEVELS
    now = state.clock.iso()
    with state.store.read() as db:
        row = store.get_article(db, article_id)
        if (row is None or row.status != "Published" or row.published_at is None or row.published_at > now
                or row.availability == "Private"):
            raise not_found(NOT_FOUND)
        tags = store.article_tags(db, [row.id]).get(row.id, [])
    return article_out(row, tags, level=level, base_url=state.urls.base_url, with_content=True)


# --- routes ------------------------------------------------------------------------------

def articles_endpoint(request: Request) -> Response:
    query = read_query(request, ArticlesQuery, Shape.ENVELOPE)
    page = list_articles(emulator(request), query, restricted=region_restricted(request),
                         params=known_pairs(request, ArticlesQuery))
    return json_response(page, headers={"Cache-Control": CACHE_CONTROL})


def article_endpoint(request: Request) -> Response:
    article_id = path_id(request.path_params["id"], "article")
    article = get_article(emulator(request), article_id, restricted=region_restricted(request))
    return json_response(article, headers={"Cache-Control": CACHE_CONTROL})


routes = [
    Route("/articles", articles_endpoint, methods=["GET"]),
    Route("/articles/{id}", article_endpoint, methods=["GET"]),
]

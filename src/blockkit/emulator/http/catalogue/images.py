"""GET /api/v1/images: the images feed (spec, "Images", rules 1-5).

How a page is made (``list_images``):

1. Parse and normalise the query; work out the served browsing level (the caller's
   ceiling, the request's ``browsingLevel`` or legacy ``nsfw``, the region clamp).
2. Decide the rules: a request filtered by postId, by imageId, or by modelId without
   modelVersionId, or sorted Random, or with limit=0 is *exempt*: unlisted and
   early-access posts may show and ``tags`` matches any one tag. Otherwise only public
   posts show and an image must carry all the tags.
3. Walk the candidates from the cursor's keyset position (``store.images``), one more
   than the limit to know whether there is a next page.
4. Read the window's rows in one query (uploader, stats, resources, post state) and
   drop the candidates whose post may not be shown. The cursor moves past every
   candidate examined, so a page can be short or empty and still not be the end
   (rule 4): only a missing nextCursor ends the results.

Pagination: ``feed:`` cursors by default; legacy ``<offset>|<timestamp>`` cursors
are followed under the previous rules; ``page`` is honoured only for imageId and
modelId-without-modelVersionId lookups (page * limit above 1000 is a 429), and when
it is sent nextPage advances the page.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Optional

import orjson
from pydantic import AfterValidator, BeforeValidator, Field
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from typing_extensions import NotRequired, TypedDict

from blockkit.emulator import facts
from blockkit.emulator.http.catalogue import feed_cursor, links
from blockkit.emulator.http.errors import json_response, too_many_requests
from blockkit.emulator.http.catalogue.pages import CursorMetadata
from blockkit.emulator.http.catalogue.params import MAX_SAFE_INTEGER, QueryModel, string_bool
from blockkit.emulator.http.catalogue.query import (
    Bool,
    Id,
    IdList,
    Int,
    Shape,
    Text,
    TextList,
    known_pairs,
    read_query,
    slugify_username,
)
from blockkit.emulator.http.catalogue.viewer import ALL_LEVELS, SFW_LEVEL, caller_ceiling
from blockkit.emulator.http.region import region_restricted
from blockkit.emulator.state import EmulatorState, emulator
from blockkit.emulator.store import images as store

# --- query -------------------------------------------------------------------------------

PAGE_LIMIT_PRODUCT = 1000  # page * limit above this: 429 (spec, Limits)
NSFW_NAMES: dict[str, int] = {
    # The legacy nsfw parameter as a browsing level: each name admits its rating and below.
    "None": facts.NSFW_LEVELS["PG"],
    "Soft": facts.NSFW_LEVELS["PG"] | facts.NSFW_LEVELS["PG13"],
    "Mature": facts.NSFW_LEVELS["PG"] | facts.NSFW_LEVELS["PG13"] | facts.NSFW_LEVELS["R"],
    "X": ALL_LEVELS,
}
NSFW_BOOLEANS: dict[bool, int] = {True: ALL_LEVELS, False: NSFW_NAMES["None"]}
EXEMPT_AVAILABILITY = ("Public", "Unlisted", "EarlyAccess")
PUBLIC_AVAILABILITY = ("Public",)


def _nsfw(value: Any) -> Any:
    if isinstance(value, str):
        if value in NSFW_NAMES:
            return NSFW_NAMES[value]
        try:  # booleanString() on the platform: true/false, yes/no, on/off, 1/0, ...
            return NSFW_BOOLEANS[string_bool(value)]
        except ValueError:
            raise ValueError("Expected None, Soft, Mature, X, true or false") from None
    return value


NsfwParam = Annotated[int, BeforeValidator(_nsfw)]
BASE_MODEL_NAMES = frozenset(b.name for b in facts.BASE_MODELS)


def _known_base_models(value: Any) -> Any:
    # commaDelimitedEnumArray([...baseModels]) on the platform (images/index.ts:80): a name it does not
    # know is a 400.
    for name in value:
        if name not in BASE_MODEL_NAMES:
            raise ValueError(f"Invalid option: {name[:60]!r} is not a base model (see /enums BaseModel)")
    return value


BaseModelList = Annotated[TextList, AfterValidator(_known_base_models)]
Sort = Literal["Most Reactions", "Most Comments", "Most Collected", "Newest", "Oldest", "Random"]
Period = Literal["AllTime", "Year", "Month", "Week", "Day"]


class ImagesQuery(QueryModel):
    limit: Int = Field(50, ge=0, le=200)
    page: Optional[Int] = Field(None, ge=1, le=MAX_SAFE_INTEGER)
    cursor: Text = None
    post_id: Optional[Id] = Field(None, alias="postId")
    model_id: Optional[Id] = Field(None, alias="modelId")
    model_version_id: Optional[Id] = Field(None, alias="modelVersionId")
    image_id: Optional[Id] = Field(None, alias="imageId")
    user_id: Optional[Id] = Field(None, alias="userId")
    username: Text = None
    period: Period = "AllTime"
    sort: Sort = "Most Reactions"
    nsfw: Optional[NsfwParam] = None
    # z.coerce.number() on the platform (images/index.ts:69): a negative level is accepted.
    browsing_level: Optional[Int] = Field(None, alias="browsingLevel", ge=-MAX_SAFE_INTEGER, le=MAX_SAFE_INTEGER)
    tags: Optional[IdList] = None
    type: Optional[Literal["image", "video", "audio"]] = None
    base_models: Optional[BaseModelList] = Field(None, alias="baseModels")
    with_meta: Bool = Field(False, alias="withMeta")
    with_tags: Bool = Field(False, alias="withTags")
    flat_meta: Bool = Field(False, alias="flatMeta")
    requiring_meta: Bool = Field(False, alias="requiringMeta")  # accepted; the emulator does not filter by it

    @property
    def requested_level(self) -> int | None:
        """browsingLevel, else the legacy nsfw, else None (the caller's ceiling)."""
        if self.browsing_level is not None:
            return self.browsing_level & ALL_LEVELS
        return self.nsfw

    @property
    def page_lookup(self) -> bool:
        """A lookup for which page is honoured: by imageId, or by modelId without modelVersionId."""
        return self.image_id is not None or (self.model_id is not None and self.model_version_id is None)

    @property
    def exempt(self) -> bool:
        """Rule 1's exemptions: unlisted/early-access images may show, tags match any one."""
        return self.post_id is not None or self.page_lookup or self.sort == store.RANDOM or self.limit == 0

    def filters(self) -> dict[str, Any]:
        """Everything that decides which images come in which order: a cursor is bound to it."""
        return {
            "sort": self.sort, "period": self.period, "postId": self.post_id, "modelId": self.model_id,
            "modelVersionId": self.model_version_id, "imageId": self.image_id, "userId": self.user_id,
            "username": slugify_username(self.username).lower() if self.username else None,
            "level": self.requested_level, "tags": sorted(set(self.tags or ())), "type": self.type,
            "baseModels": sorted({b.lower() for b in self.base_models or ()}),
        }


# --- response shapes ---------------------------------------------------------------------
#
# Plain dicts, typed (see pages.py): a page holds up to 200 images; as pydantic models
# they cost ~27 ms of a 42 ms page on the large seed.

class ImageStats(TypedDict):
    cryCount: int
    laughCount: int
    likeCount: int
    dislikeCount: int
    heartCount: int
    commentCount: int


class Thumbnail(TypedDict):
    url: str
    width: Optional[int]
    height: Optional[int]


class ImageItem(TypedDict):
    id: int
    url: str
    hash: str
    width: int
    height: int
    type: str
    nsfw: bool
    nsfwLevel: str
    browsingLevel: int
    createdAt: str
    postId: int
    thumbnail: Optional[Thumbnail]
    username: str
    baseModel: str
    modelVersionIds: list[int]
    stats: ImageStats
    meta: NotRequired[Optional[dict[str, Any]]]   # only with withMeta (posts: always null)


class ImagesPage(TypedDict):
    items: orjson.Fragment   # the JSON array of the page's ImageItems, rendered by SQLite (render_items)
    metadata: CursorMetadata


# --- shaping the images of a page --------------------------------------------------------------
#
# SQLite renders a page's items: one statement gives the JSON array, in the order of the ids asked
# for, that the response embeds as it is (an orjson.Fragment). Building a hundred dicts in Python
# and serialising them was most of a page's time, and under load every row read one at a time
# waited for the interpreter lock again (issue 27); SQLite builds the text with the lock free.


def _nsfw_name_sql(column: str) -> str:
    """The legacy string form of the rating ``column``, in SQL: its highest bit's name in
    facts.NSFW_LEVEL_NAMES (a bit above the table's is X; 0, unrated, is None)."""
    top = max(facts.NSFW_LEVEL_NAMES)
    cases = [f"WHEN {column} >= {top * 2} THEN 'X'"]
    cases += [f"WHEN {column} >= {bit} THEN '{facts.NSFW_LEVEL_NAMES[bit]}'"
              for bit in sorted(facts.NSFW_LEVEL_NAMES, reverse=True) if bit > 0]
    return f"(CASE {' '.join(cases)} ELSE 'None' END)"


def _absolute_sql(column: str) -> str:
    """``links.absolute`` in SQL: a stored path starting with '/' is under :base (the request's origin)."""
    return f"(CASE WHEN substr({column}, 1, 1) = '/' THEN :base || {column} ELSE {column} END)"


def _frame_url_sql(column: str) -> str:
    """The still frame (JPEG) of a video: its URL without the last path segment's extension, plus
    ``.frame.jpeg``. rtrim(x, <every character of x but '/'>) keeps x up to its last '/'."""
    folder = f"rtrim({column}, replace({column}, '/', ''))"
    segment = f"substr({column}, length({folder}) + 1)"
    upto_dot = f"rtrim({segment}, replace({segment}, '.', ''))"
    stem = f"(CASE WHEN instr({segment}, '.') > 0 THEN substr({upto_dot}, 1, length({upto_dot}) - 1) ELSE {segment} END)"
    return f"({folder} || {stem} || '.frame.jpeg')"


_STORED_META = "(CASE WHEN i.meta IS NULL OR i.meta = '' THEN NULL ELSE json(i.meta) END)"
_META_SQL = {"null": "NULL", "stored": _STORED_META, "wrapped": f"json_object('id', i.id, 'meta', {_STORED_META})"}


def _items_sql(meta: Literal["omit", "null", "stored", "wrapped"], with_tags: bool, filtered: bool) -> str:
    """One Image (spec, "Image") per id of :ids, in that order. ``meta``: left out, null, what the uploader
    gave, or {id, meta} (a page lookup without flatMeta). Thumbnails are for videos only: the custom
    WebP when its rating is within :level, else a frame of the video. ``filtered``: only images whose
    post may be shown (one of :visible availabilities, published by :now, scanned, not blocked)."""
    name = _nsfw_name_sql("i.nsfw_level")
    thumbnail = (
        "(CASE WHEN i.type <> 'video' THEN NULL"
        " WHEN i.thumbnail_url IS NOT NULL AND (coalesce(i.thumbnail_nsfw_level, 0) & :level) <> 0 THEN"
        f" json_object('url', {_absolute_sql('i.thumbnail_url')}, 'width', i.thumbnail_width,"
        " 'height', i.thumbnail_height)"
        f" ELSE json_object('url', {_absolute_sql(_frame_url_sql('i.url'))}, 'width', i.width, 'height', i.height)"
        " END)")
    fields = [
        "'id', i.id", f"'url', {_absolute_sql('i.url')}", "'hash', coalesce(i.blurhash, '')",
        "'width', coalesce(i.width, 0)", "'height', coalesce(i.height, 0)", "'type', i.type",
        f"'nsfw', json(CASE WHEN {name} <> 'None' THEN 'true' ELSE 'false' END)", f"'nsfwLevel', {name}",
        "'browsingLevel', i.nsfw_level", "'createdAt', i.created_at", "'postId', i.post_id",
        f"'thumbnail', {thumbnail}", "'username', u.username", "'baseModel', coalesce(i.base_model, '')",
        "'modelVersionIds', json((SELECT json_group_array(v) FROM (SELECT DISTINCT r.model_version_id AS v"
        " FROM image_resources r WHERE r.image_id = i.id ORDER BY v)))",
        "'stats', json_object('cryCount', coalesce(m.cry_count, 0), 'laughCount', coalesce(m.laugh_count, 0),"
        " 'likeCount', coalesce(m.like_count, 0), 'dislikeCount', coalesce(m.dislike_count, 0),"
        " 'heartCount', coalesce(m.heart_count, 0), 'commentCount', coalesce(m.comment_count, 0))",
    ]
    if meta != "omit":
        fields.append(f"'meta', {_META_SQL[meta]}")
    if with_tags:
        fields.append("'tags', json((SELECT json_group_array(json_object('id', tid, 'name', tname)) FROM"
                      " (SELECT t.id AS tid, t.name AS tname FROM image_tags it JOIN tags t ON t.id = it.tag_id"
                      " WHERE it.image_id = i.id ORDER BY t.name)))")
    shown = (" AND p.availability IN (SELECT value FROM json_each(:visible)) AND p.published_at IS NOT NULL"
             " AND p.published_at <= :now AND p.scanned AND NOT p.blocked") if filtered else ""
    return (f"SELECT json_group_array(json(item)) FROM (SELECT json_object({', '.join(fields)}) AS item"
            " FROM json_each(:ids) AS j JOIN images i ON i.id = j.value JOIN users u ON u.id = i.user_id"
            " JOIN posts p ON p.id = i.post_id"
            " LEFT JOIN image_metrics m ON m.image_id = i.id AND m.period = 'AllTime'"
            f" WHERE 1{shown} ORDER BY j.key)")


def render_items(db: Any, ids: list[int], *, level: int, base_url: str,
                 meta: Literal["omit", "null", "stored", "wrapped"], with_tags: bool = False,
                 visible: tuple[str, ...] | None = None, now: str = "") -> orjson.Fragment:
    """The JSON array of the images ``ids`` (in that order; an id with no image in a post is left out),
    each an Image; with ``visible``, only those whose post may be shown by ``now``."""
    if not ids:
        return orjson.Fragment(b"[]")
    params = {"ids": orjson.dumps(ids).decode(), "level": level, "base": base_url.rstrip("/"),
              "visible": orjson.dumps(list(visible or ())).decode(), "now": now}
    cursor = db.cursor()
    cursor.row_factory = None
    row = cursor.execute(_items_sql(meta, with_tags, visible is not None), params).fetchone()
    return orjson.Fragment(row[0].encode() if row and row[0] else b"[]")


# --- service -----------------------------------------------------------------------------

@dataclass(frozen=True)
class FeedRequest:
    """The request as the service needs it: parsed query, served level, where it came from."""

    query: ImagesQuery
    ceiling: int                      # the caller's ceiling (before the request's own level)
    restricted: bool
    params: tuple[tuple[str, str], ...]   # the request's parameters, for nextPage
    base_url: str                         # the origin the client used, for absolute URLs


def served_level(query: ImagesQuery, ceiling: int, restricted: bool) -> int:
    requested = query.requested_level
    level = (ceiling if requested is None else requested & ceiling) & ALL_LEVELS
    return level & SFW_LEVEL if restricted else level


def _salt(filters_hash: str, data: str) -> int:
    # Random is deterministic per request and data: the same filters on the same seed give the
    # same order, and a cursor continues it.
    return int(hashlib.sha256(f"{filters_hash}/{data}".encode()).hexdigest()[:8], 16)


def _check_key(sort: str, after: tuple[Any, int] | None) -> None:
    if after is None:
        return
    key = after[0]
    wants_text = sort in store.DATE_SORTS
    if wants_text != isinstance(key, str):
        raise feed_cursor.malformed()


def _next_page_url(base_url: str, params: tuple[tuple[str, str], ...], *, cursor: str | None,
                   page: int | None) -> str:
    kept = [(k, v) for k, v in params if k not in ("cursor", "page")]
    if page is not None:
        kept.append(("page", str(page)))
    elif cursor is not None:
        kept.append(("cursor", cursor))
    return links.api_url(base_url, "/images", kept)


def list_images(state: EmulatorState, request: FeedRequest) -> ImagesPage:
    query = request.query
    level = served_level(query, request.ceiling, request.restricted)
    exempt = query.exempt
    filters_hash = feed_cursor.filter_hash(query.filters())
    position: feed_cursor.FeedPosition | feed_cursor.LegacyPosition | None = None
    if query.cursor is not None:
        position = feed_cursor.decode(query.cursor)
    page_sent = query.page is not None and position is None
    if page_sent and query.page * query.limit > PAGE_LIMIT_PRODUCT:  # type: ignore[operator]
        raise too_many_requests(f"Too many pages requested: page * limit must be at most {PAGE_LIMIT_PRODUCT};"
                                " use cursor pagination (metadata.nextCursor) instead")
    now = state.clock.iso()
    with state.store.read() as db:
        data = store.data_identity(db)
        user_ids: tuple[int, ...] | None = None
        if query.user_id is not None:
            user_ids = (query.user_id,)
        if query.username:
            named = store.user_ids_by_name(db, slugify_username(query.username))
            user_ids = named if user_ids is None else tuple(set(user_ids) & set(named))
        legacy = isinstance(position, feed_cursor.LegacyPosition)
        spec = store.FeedSpec(
            sort=query.sort, period=query.period, level=level, salt=_salt(filters_hash, data),
            post_id=query.post_id, image_id=query.image_id, user_ids=user_ids, model_id=query.model_id,
            model_version_id=query.model_version_id, tags=tuple(sorted(set(query.tags or ()))),
            tags_any=exempt or legacy, media_type=query.type,
            base_models=tuple(sorted(set(query.base_models or ()))),
            created_before=position.created_before if isinstance(position, feed_cursor.LegacyPosition) else None,
            legacy_visibility=EXEMPT_AVAILABILITY if legacy else None, published_before=now if legacy else None,
        )
        after: tuple[Any, int] | None = None
        offset = 0
        if isinstance(position, feed_cursor.FeedPosition):
            feed_cursor.check_continuable(position, filters_hash, data, state.clock.timestamp())
            _check_key(query.sort, position.after)
            after = position.after
        elif isinstance(position, feed_cursor.LegacyPosition):
            offset = position.offset
        elif page_sent and query.page_lookup:
            offset = (query.page - 1) * query.limit  # type: ignore[operator]
        if level == 0:
            candidates: list[store.Candidate] = []
        else:
            candidates = store.feed_candidates(db, spec, after=after, limit=query.limit + 1, offset=offset)
        window = candidates[:query.limit]
        more = len(candidates) > query.limit
        # Stage 2: the window's images, rendered, without those whose post may not be shown (the
        # legacy query applied the same rules in SQL already).
        if query.with_meta:
            meta: Literal["omit", "null", "stored", "wrapped"] = (
                "wrapped" if query.page_lookup and not query.flat_meta else "stored")
        else:
            meta = "null"
        # meta is always sent: null unless withMeta (image-search.service.ts:245); a lookup by imageId, or by
        # modelId without modelVersionId, wraps it as {id, meta} unless flatMeta (:248).
        items = render_items(db, [c.id for c in window], level=level, base_url=request.base_url, meta=meta,
                             with_tags=query.with_tags,
                             visible=EXEMPT_AVAILABILITY if exempt or legacy else PUBLIC_AVAILABILITY, now=now)
    base_url = request.base_url
    metadata: CursorMetadata = {}
    if more:
        if isinstance(position, feed_cursor.LegacyPosition):
            next_cursor = feed_cursor.encode_legacy(feed_cursor.LegacyPosition(
                position.offset + query.limit, position.created_before))
        else:
            last = (window[-1].key, window[-1].id) if window else after
            next_cursor = feed_cursor.encode(feed_cursor.FeedPosition(filters_hash, data, last,
                                                                      int(state.clock.timestamp())))
        next_page = _next_page_url(base_url, request.params, cursor=next_cursor,
                                   page=query.page + 1 if page_sent else None)  # type: ignore[operator]
        metadata = {"nextCursor": next_cursor, "nextPage": next_page}
    if page_sent:
        # usingPaging = page && !cursor (images/index.ts): the page and the limit, whether or not the
        # lookup honours the page.
        metadata["currentPage"] = query.page  # type: ignore[typeddict-item]
        metadata["pageSize"] = query.limit
    return {"items": items, "metadata": metadata}


# --- routes ------------------------------------------------------------------------------

def images_endpoint(request: Request) -> Response:
    query = read_query(request, ImagesQuery, Shape.ENVELOPE)
    state = emulator(request)
    feed = FeedRequest(query=query, ceiling=caller_ceiling(request), restricted=region_restricted(request),
                       params=known_pairs(request, ImagesQuery), base_url=links.request_origin(request))
    return json_response(list_images(state, feed))


routes = [Route("/images", images_endpoint, methods=["GET"])]

"""GET /api/v1/models and GET /api/v1/models/{id}.

The list is Mixed: a token adds ``favorites`` and ``hidden`` (and leaves the caller's
hidden models out of every other list), a moderator's token shows every version,
not only Published ones. Two pagination modes (spec, Models):

- cursor (the default, and the only one with ``query``): keyset cursors
  ``<sort value>|<id>``; ``metadata`` is ``{nextCursor, nextPage}``, both absent on
  the last page;
- page (``page`` given): ``metadata`` adds ``currentPage`` and ``pageSize``;
  ``page * limit`` above 1000 is a 429 telling to use cursors; ``query`` with
  ``page`` is a 400.

Shapes (OpenAPI ``Model``, ``ListModelVersion``, ``ListFile``, ``PreviewImage``) are
built as plain dicts: a page holds thousands of nested objects, and the tests check
every response against the document instead. When a model's ``mode`` is Archived,
its versions' ``files`` are empty and ``downloadUrl`` is left out; TakenDown empties
``images`` as well. A serialised model item is kept in :mod:`.fragments` (keyed by
what it depends on) so the next page that holds it does not rebuild it.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal
from urllib.parse import quote, urlencode

import orjson
from pydantic import Field
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from blockkit.emulator import facts
from blockkit.emulator.http.auth import ANONYMOUS, Caller, TokenRejected, caller_of
from blockkit.emulator.http.catalogue import edge, fragments, links
from blockkit.emulator.http.errors import ApiError, error_body, not_found
from blockkit.emulator.http.catalogue.pagination import check_page_window
from blockkit.emulator.http.catalogue.params import (
    MAX_SAFE_INTEGER,
    CommaList,
    ListText,
    CoercedBool,
    QueryId,
    QueryInt,
    QueryModel,
    QueryText,
    StringBool,
    js_number,
    parse_query,
    raw_params,
)
from blockkit.emulator.http.region import region_restricted
from blockkit.emulator.state import EmulatorState, emulator
from blockkit.emulator.store import models as store

API = "/api/v1"
PRIVATE = {"Cache-Control": "private, no-store"}  # an answer that depends on a token
# An anonymous answer of the platform's PublicEndpoint / MixedAuthEndpoint (endpoint-helpers.ts:82,120).
EDGE_CACHED = {"Cache-Control": "public, s-maxage=300, stale-while-revalidate=150"}
# Parameters that need a signed-in caller whatever their value (models/index.ts authedOnlyOptions).
AUTHED_ONLY = ("favorites", "hidden")
QUERY_WITH_PAGE = "Cannot use page param with query search. Use cursor-based pagination."

ModelTypeName = Literal[facts.MODEL_TYPES]  # type: ignore[valid-type]
SortName = Literal[tuple(store.SORTS)]  # type: ignore[valid-type]
Period = Literal[facts.METRIC_PERIODS]  # type: ignore[valid-type]

# --- query model -------------------------------------------------------------------------------


class ModelsQuery(QueryModel):
    limit: QueryInt = Field(100, ge=1, le=100)
    page: QueryInt | None = Field(None, ge=1, le=MAX_SAFE_INTEGER)
    cursor: QueryText | None = None
    query: QueryText | None = None
    ids: CommaList[QueryId] | None = Field(None, min_length=1)
    tag: QueryText | None = None
    username: QueryText | None = None
    types: CommaList[ModelTypeName] | None = Field(None, min_length=1)
    base_models: CommaList[ListText] | None = Field(None, alias="baseModels", min_length=1)
    checkpoint_type: Literal["Standard", "Trained", "Merge"] | None = Field(None, alias="checkpointType")
    sort: SortName = "Highest Rated"
    period: Period = "AllTime"
    # booleanString() on the platform (models/index.ts:43-46): true/false, 1/0, yes/no, on/off, ...
    nsfw: StringBool = False
    # z.coerce.boolean() on the platform (model.schema.ts): any non-empty value is true, so
    # "false" filters as true; empty is false, which sets no filter.
    supports_generation: CoercedBool = Field(False, alias="supportsGeneration")
    from_platform: CoercedBool = Field(False, alias="fromPlatform")
    early_access: CoercedBool = Field(False, alias="earlyAccess")
    primary_file_only: StringBool = Field(False, alias="primaryFileOnly")
    favorites: StringBool = False
    hidden: StringBool = False

    @property
    def using_paging(self) -> bool:
        """Page mode: page given without a cursor (usingPaging = page && !cursor, models/index.ts:72)."""
        return self.page is not None and self.cursor is None


# --- shaping (shared with model_versions and vault) ----------------------------------------------

def origin(request: Request) -> str:
    """The origin the client reached us on: every URL we answer with starts with it."""
    return links.request_origin(request)


def absolute(base_url: str, url: str | None) -> str | None:
    """Store URLs that begin with '/' are relative to the catalogue origin."""
    if url is None:
        return None
    return base_url + url if url.startswith("/") else url


def version_download_url(base_url: str, version_id: int) -> str:
    return f"{base_url}/api/download/models/{version_id}"


@lru_cache(maxsize=4096)
def _file_query(file_type: str, fmt: str | None, size: str | None, fp: str | None) -> str:
    # A handful of distinct combinations: encode each once. The platform leaves out a training
    # data file's format (createModelFileDownloadUrl).
    if file_type == "Training Data":
        fmt = None
    query = [("type", file_type)] + [(k, v) for k, v in (("format", fmt), ("size", size), ("fp", fp)) if v]
    return urlencode(query, quote_via=quote)


def file_download_url(base_url: str, version_id: int, file_type: str, fmt: str | None, size: str | None,
                      fp: str | None, *, primary: bool = False) -> str:
    """The platform's file download URL: the primary file's is the version's own (no query)."""
    if primary:
        return version_download_url(base_url, version_id)
    return f"{base_url}/api/download/models/{version_id}?{_file_query(file_type, fmt, size, fp)}"


def file_metadata(fmt: str | None, size: str | None, fp: str | None) -> dict[str, str]:
    meta = {"format": fmt or "Other"}
    if size:
        meta["size"] = size
    if fp:
        meta["fp"] = fp
    return meta


def video_metadata(width: int, height: int, blurhash: str | None, duration: float | None) -> dict[str, Any]:
    """A video's stored metadata as the platform keeps it (``videoMetadataSchema``): hash, width, height,
    duration (seconds), audio and size (bytes).

    ``audio`` is false: the MP4 the emulator serves has no sound track. ``size`` is the upload's size the
    platform would record, estimated as one bit per pixel per frame at 8 frames a second (our choice:
    the emulator makes its bytes at the first request, so it cannot know their length here).
    """
    meta: dict[str, Any] = {"hash": blurhash, "width": width, "height": height}
    if duration is not None:
        meta["duration"] = duration
    meta["audio"] = False
    meta["size"] = max(1, round(width * height * (duration or 2.0)))
    return meta


def preview_image(base_url: str, row: Sequence[Any], *, with_id: bool = True, detail: bool = False) -> dict[str, Any]:
    """A version's preview image: the list's shape, without id on /models/{id}, with meta on /model-versions.

    minor and poi are false (the store keeps them per model, not per image), onSite false (the
    seed makes no on-site generations) and remixOfId null (no remixes).
    """
    (image_id, url, level, width, height, blurhash, kind, _version, has_meta, has_prompt, availability, meta,
     duration) = row
    image: dict[str, Any] = {"id": image_id} if with_id else {}
    image.update({"url": absolute(base_url, url), "nsfwLevel": level, "width": width or 0, "height": height or 0,
                  "hash": blurhash, "type": kind})
    if detail:
        if kind == "video":
            image["metadata"] = video_metadata(width or 0, height or 0, blurhash, duration)
        else:
            image["metadata"] = {"hash": blurhash, "width": width or 0, "height": height or 0}
        image["meta"] = None if meta is None else orjson.loads(meta)
    image.update({"minor": False, "poi": False, "hasMeta": bool(has_meta), "hasPositivePrompt": bool(has_prompt),
                  "onSite": False, "remixOfId": None})
    if detail:
        image["availability"] = availability
    return image


def commercial_uses(stored: str) -> list[str]:
    """``allowCommercialUse`` as the platform sends it: a JSON array of the use kinds (its column is
    ``CommercialUse[]``). The store keeps the spec's brace-delimited set, ``{Image,Sell}``."""
    inner = stored.strip().removeprefix("{").removesuffix("}")
    return [kind.strip().strip('"') for kind in inner.split(",") if kind.strip()]


def timestamp_without_zone(stored: str | None) -> str | None:
    """A ``timestamp without time zone`` column as Postgres writes it inside ``json_build_object``:
    no ``Z``, and the fraction without its trailing zeros (none at all for whole seconds).

    ``2025-07-28T16:12:12.340Z`` becomes ``2025-07-28T16:12:12.34``; ``...:12.000Z`` becomes ``...:12``.
    """
    if stored is None:
        return None
    text = stored.removesuffix("Z")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


PICKLE_CLEAN = "No Pickle imports"  # the scanner's message on a clean file


def scan_fields(pickle: str, virus: str, scanned_at: str | None) -> dict[str, Any]:
    """A file's scan keys (``modelFileSelect``): results, messages and when it was scanned (null while pending)."""
    return {"pickleScanResult": pickle, "pickleScanMessage": PICKLE_CLEAN if pickle == "Success" else None,
            "virusScanResult": virus, "virusScanMessage": None, "scannedAt": scanned_at}


def paid_access(early_access_ends_at: str | None) -> dict[str, Any] | None:
    """A version's paid-access window ({permanent, endsAt}), or None: the early access it was published with."""
    if early_access_ends_at is None:
        return None
    return {"permanent": False, "endsAt": early_access_ends_at}


def _remove_empty(item: dict[str, Any]) -> dict[str, Any]:
    """The object without its null values and empty arrays (the platform's removeEmpty on GET /models/{id}
    versions: lodash ``isNil(value) || (isArray(value) && !value.length)``)."""
    return {k: v for k, v in item.items() if v is not None and v != []}


@dataclass(frozen=True)
class View:
    """What one request may see of models: its browsing level and whether it is a moderator's."""

    browsing_level: int
    moderator: bool
    primary_only: bool = False
    single: bool = False  # GET /models/{id}: null version keys left out, previews without id

    @property
    def key(self) -> tuple[int, bool, bool, bool]:
        return (self.browsing_level, self.moderator, self.primary_only, self.single)


def build_model_items(db: sqlite3.Connection, ids: Sequence[int], view: View, base_url: str,
                      cache: fragments.FragmentCache, generation: int) -> list[bytes]:
    """The serialised Model objects for ``ids`` (in that order), from the fragment cache or built in batch.

    ``cache`` must have been synced before ``db``'s read transaction began.
    """
    key = ("model", base_url, view.key)
    found: dict[int, bytes] = {}
    missing = []
    for model_id in ids:
        hit = cache.get((model_id, key))
        if hit is None:
            missing.append(model_id)
        else:
            found[model_id] = hit
    if missing:
        for model_id, item in _build_models(db, missing, view, base_url).items():
            data = orjson.dumps(item)
            cache.put((model_id, key), data, generation)
            found[model_id] = data
    return [found[i] for i in ids if i in found]


def _build_models(db: sqlite3.Connection, ids: Sequence[int], view: View, base_url: str) -> dict[int, dict[str, Any]]:
    models = store.models_by_ids(db, ids)
    tags = store.tags_of_models(db, ids)
    versions = store.versions_of_models(db, ids, published_only=not view.moderator)
    version_ids = [v[0] for v in versions]
    modes = {model_id: row[15] for model_id, row in models.items()}
    # Archived and TakenDown models show no files: do not read them.
    with_files = [v[0] for v in versions if modes.get(v[1]) is None]
    files = store.files_of_versions(db, with_files, public_only=not view.moderator, primary_only=view.primary_only)
    hashes = store.hashes_of_files(db, [f[0] for f in files])
    with_images = [v[0] for v in versions if modes.get(v[1]) != "TakenDown"]
    previews = store.previews_of_versions(db, with_images, view.browsing_level)

    files_by_version: dict[int, list[dict[str, Any]]] = {}
    for f in files:
        file_id, version_id, name, file_type, size_kb, fmt, size, fp, primary, pickle, virus = f[:11]
        # modelFileSelect's keys (filesForModelVersionCache), url and visibility taken off; overrideName is
        # null: the emulator renames no files.
        file: dict[str, Any] = {
            "id": file_id, "sizeKB": size_kb, "name": name, "overrideName": None, "type": file_type,
            **scan_fields(pickle, virus, f[13]),
            "metadata": file_metadata(fmt, size, fp), "hashes": hashes.get(file_id, {}),
            "downloadUrl": file_download_url(base_url, version_id, file_type, fmt, size, fp, primary=bool(primary)),
        }
        if primary:
            file["primary"] = True  # the other files carry no primary key (model-search.service.ts:273)
        files_by_version.setdefault(version_id, []).append(file)
    images_by_version: dict[int, list[dict[str, Any]]] = {}
    for row in previews:
        images_by_version.setdefault(row[7], []).append(preview_image(base_url, row, with_id=not view.single))
    versions_by_model: dict[int, list[dict[str, Any]]] = {}
    base_models: dict[int, list[str]] = {}
    for v in versions:
        (version_id, model_id, name, base_model, base_type, published_at, generation, downloads, ups, downs,
         position, availability, nsfw_level, description, trained_words, early_access_ends_at, created_at,
         status) = v
        access = paid_access(early_access_ends_at)
        item: dict[str, Any] = {"id": version_id, "index": position, "name": name, "baseModel": base_model,
                                "baseModelType": base_type or "Standard"}
        if view.single:
            # GET /models/{id} spreads the cached version whole (models/[id].ts): createdAt, status and
            # covered stay; the list takes them off and renames covered (model-search.service.ts).
            item.update({"createdAt": created_at, "publishedAt": published_at, "status": status})
        else:
            item["publishedAt"] = published_at
        item.update({"flags": 0, "availability": availability, "nsfwLevel": nsfw_level, "description": description,
                     "trainedWords": orjson.loads(trained_words), "vaeId": None})
        if view.single:
            item["covered"] = bool(generation)
        item["paidAccess"] = access
        if access is not None:
            item["earlyAccessDeadline"] = access["endsAt"]
        item["stats"] = {"downloadCount": downloads, "thumbsUpCount": ups, "thumbsDownCount": downs}
        if not view.single:
            item["supportsGeneration"] = bool(generation)
        item.update({"files": files_by_version.get(version_id, []), "images": images_by_version.get(version_id, [])})
        if modes.get(model_id) is None:
            item["downloadUrl"] = version_download_url(base_url, version_id)
        if view.single:
            item = _remove_empty(item)
        versions_by_model.setdefault(model_id, []).append(item)
        names = base_models.setdefault(model_id, [])
        if base_model not in names:
            names.append(base_model)
    del version_ids

    out: dict[int, dict[str, Any]] = {}
    for model_id, row in models.items():
        (_id, name, description, model_type, nsfw, nsfw_level, availability, generation, no_credit, commercial,
         derivatives, different_license, minor, poi, sfw_only, mode, user_id, username, avatar, downloads, ups,
         downs, comments, tipped, _status) = row
        model: dict[str, Any] = {
            "id": model_id, "name": name, "description": description or "", "type": model_type, "nsfw": bool(nsfw),
            "nsfwLevel": nsfw_level, "availability": availability, "supportsGeneration": bool(generation),
            "allowNoCredit": bool(no_credit), "allowCommercialUse": commercial_uses(commercial), "allowDerivatives": bool(derivatives),
            "allowDifferentLicense": bool(different_license), "minor": bool(minor), "poi": bool(poi),
            "sfwOnly": bool(sfw_only),
        }
        if mode is not None:
            model["mode"] = mode
        model["userId"] = user_id
        model["baseModels"] = base_models.get(model_id, [])
        model["cosmetic"] = None
        model["stats"] = {"downloadCount": downloads, "thumbsUpCount": ups, "thumbsDownCount": downs,
                          "commentCount": comments, "tippedAmountCount": tipped}
        if username != facts.SYSTEM_USERNAME:  # the platform's own models carry no creator (model.service.ts:3845)
            model["creator"] = {"username": username, "image": absolute(base_url, avatar)}
        model["tags"] = tags.get(model_id, [])
        model["modelVersions"] = versions_by_model.get(model_id, [])
        out[model_id] = model
    return out


# --- service ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Page:
    items: list[bytes]
    metadata: dict[str, Any]

    def render(self) -> bytes:
        return b"".join((b'{"items":[', b",".join(self.items), b'],"metadata":', orjson.dumps(self.metadata), b"}"))


_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z", re.ASCII)
_SIGNED = re.compile(r"-?[0-9]{1,19}", re.ASCII)


def parse_cursor(cursor: str, sort: str) -> tuple[Any, int]:
    """A keyset cursor ``<sort value>|<id>`` for ``sort``, or a 400."""
    value, bar, id_text = cursor.rpartition("|")
    if not bar or not id_text.isascii() or not id_text.isdigit() or len(id_text) > 10:
        raise ApiError(400, error_body("cursor: malformed cursor (pass metadata.nextCursor back unchanged)"))
    if store.SORTS[sort].numeric:
        if not _SIGNED.fullmatch(value):
            raise ApiError(400, error_body(f"cursor: not a cursor of sort {sort!r}"))
        return int(value), int(id_text)
    if value and not _TIMESTAMP.fullmatch(value):
        raise ApiError(400, error_body(f"cursor: not a cursor of sort {sort!r}"))
    return value, int(id_text)


def make_cursor(value: Any, model_id: int) -> str:
    return f"{'' if value is None else value}|{model_id}"


def models_filter(db: sqlite3.Connection, query: ModelsQuery, caller: Caller, level: int, now: str) -> store.ModelFilter | None:
    """The query's filters resolved against the store; None when a name matches nothing."""
    f = store.ModelFilter(period=query.period, ids=query.ids, types=query.types, base_models=query.base_models,
                          checkpoint_type=query.checkpoint_type,
                          # true filters; false sets no filter (the platform's `if (supportsGeneration)`)
                          supports_generation=True if query.supports_generation else None,
                          from_platform=True if query.from_platform else None,
                          early_access=True if query.early_access else None, now=now,
                          browsing_level=level, terms=tuple(query.query.split()) if query.query else ())
    if query.tag is not None:
        tag_id = store.tag_id(db, query.tag)
        if tag_id is None:
            return None
        f.tag_id = tag_id
    if query.username is not None:
        f.user_ids = store.user_ids_by_username(db, query.username)
        if not f.user_ids:
            return None
    if caller.user_id is not None:
        if query.favorites:
            f.favorites_of = caller.user_id
        if query.hidden:
            f.hidden_of = caller.user_id
        else:
            f.not_hidden_of = caller.user_id
    return f


def list_models(state: EmulatorState, query: ModelsQuery, caller: Caller, *, restricted: bool,
                raw_query: list[tuple[str, str]], cache: fragments.FragmentCache, generation: int,
                base_url: str) -> Page:
    level = facts.ALL_BROWSING_LEVELS if query.nsfw else facts.SFW_BROWSING_LEVEL
    level = caller.clamp(level)
    if restricted:
        level &= facts.SFW_BROWSING_LEVEL
    view = View(level, caller.is_moderator, query.primary_file_only)
    after = parse_cursor(query.cursor, query.sort) if query.cursor is not None else None
    offset = (query.page - 1) * query.limit if query.using_paging and query.page is not None else 0
    with state.store.read() as db:
        f = models_filter(db, query, caller, level, state.clock.iso())
        rows = [] if f is None else store.list_model_ids(db, f, query.sort, limit=query.limit + 1, offset=offset,
                                                         after=after)
        more = len(rows) > query.limit
        rows = rows[:query.limit]
        items = build_model_items(db, [r[0] for r in rows], view, base_url, cache, generation)
    metadata: dict[str, Any] = {}
    if more:
        cursor = make_cursor(rows[-1][1], rows[-1][0])
        metadata["nextCursor"] = cursor
        # The request's own parameters with cursor set, page kept (getNextPage without currentPage,
        # pagination-helpers.ts:326): following it continues in cursor mode, since a cursor wins over page.
        metadata["nextPage"] = _next_url(base_url, raw_query, {"cursor": cursor})
    if query.using_paging:
        metadata["currentPage"] = query.page
        metadata["pageSize"] = query.limit
    return Page(items, metadata)


def _next_url(base_url: str, raw_query: list[tuple[str, str]], replace: dict[str, str]) -> str:
    kept = [(k, v) for k, v in raw_query if k not in replace]
    return f"{base_url}{API}/models?{urlencode(kept + list(replace.items()), quote_via=quote)}"


def get_model(state: EmulatorState, model_id: int, *, restricted: bool, base_url: str) -> bytes | None:
    """One model: its Published versions, previews of every rated level but Blocked (safe-for-work in a
    restricted region), null version keys left out; or None."""
    level = facts.SFW_BROWSING_LEVEL if restricted else facts.ALL_BROWSING_LEVELS
    cache, generation = fragments.cache_for(state.store)
    with state.store.read() as db:
        if not store.visible_model(db, model_id):
            return None
        items = build_model_items(db, [model_id], View(level, False, single=True), base_url, cache, generation)
    if not items:
        return None
    if restricted and orjson.loads(items[0])["nsfw"]:
        return None  # a restricted region sees no model flagged NSFW
    return items[0]


# --- routes ------------------------------------------------------------------------------------------

def optional_caller(request: Request, *, needed: bool = False) -> Caller:
    """The caller of a Mixed route: a bad token counts as none, unless the request needs one."""
    try:
        return caller_of(request, required=needed)
    except TokenRejected:
        if needed:
            raise
        return ANONYMOUS


async def models_endpoint(request: Request) -> Response:
    # Async so that a repeat of an anonymous page is answered on the event loop, from the cache,
    # without a thread hop; anything that reads the store runs in the thread pool (each thread
    # has its own connection). The cache's sync() uses its own thread-safe connection.
    # The platform's order (models/index.ts): favorites or hidden present at all without a user is a
    # 401 whatever their value, then the parse (400), then the page window (429, page mode only),
    # then query with page (400).
    if any(key in AUTHED_ONLY for key in raw_params(request)):
        await run_in_threadpool(optional_caller, request, needed=True)
    query = parse_query(request, ModelsQuery)
    if query.using_paging:
        check_page_window(query.page, query.limit)
    if query.query is not None and query.page is not None:
        raise ApiError(400, error_body(QUERY_WITH_PAGE))
    state = emulator(request)
    restricted = region_restricted(request)
    # An anonymous page depends only on the query, the region and the data (early access also
    # on the clock: not kept), so a repeat is served from the cache until the store changes.
    key = ("models-page", request.scope.get("query_string", b""), restricted, origin(request))
    keep = "authorization" not in request.headers and not query.early_access
    if keep:
        cache, generation = fragments.cache_for(state.store)
        body = cache.get(key)
        if body is not None:
            edge.mark(request, generation)
            return Response(body, media_type="application/json", headers=EDGE_CACHED)
    return await run_in_threadpool(_models_page, request, query, key, keep)


def _models_page(request: Request, query: ModelsQuery, key: Any, keep: bool) -> Response:
    caller = optional_caller(request, needed=query.favorites or query.hidden)
    state = emulator(request)
    cache, generation = fragments.cache_for(state.store)  # before the read transaction
    raw = [(k, v) for k, values in raw_params(request).items() for v in values if isinstance(v, str)]
    page = list_models(state, query, caller, restricted=region_restricted(request), raw_query=raw, cache=cache,
                       generation=generation, base_url=origin(request))
    body = page.render()
    if keep and caller.anonymous:
        cache.put(key, body, generation)
        edge.mark(request, generation)
    return Response(body, media_type="application/json", headers=PRIVATE if not caller.anonymous else EDGE_CACHED)


async def anonymous_cached(request: Request, key: tuple[Any, ...], build: Callable[[], Response],
                           headers: dict[str, str] | None = None) -> Response:
    """Answer a repeat of an anonymous 200 from the cache, on the event loop; else ``build()`` in the thread pool.

    For responses that depend only on the path and query, the region and the store's data
    (not on the clock or a token): a request with an Authorization header always builds.
    """
    if "authorization" in request.headers:
        return await run_in_threadpool(build)
    state = emulator(request)
    full_key = (*key, region_restricted(request), origin(request))
    cache, generation = fragments.cache_for(state.store)
    body = cache.get(full_key)
    if body is not None:
        edge.mark(request, generation)
        return Response(body, media_type="application/json", headers=headers)

    def build_and_keep() -> Response:
        cache, generation = fragments.cache_for(state.store)  # before build() opens its read transaction
        response = build()
        if response.status_code == 200:
            cache.put(full_key, bytes(response.body), generation)
            edge.mark(request, generation)
        return response

    return await run_in_threadpool(build_and_keep)


async def model_endpoint(request: Request) -> Response:
    model_id = path_id(request.path_params["id"], "id")

    def build() -> Response:
        item = get_model(emulator(request), model_id, restricted=region_restricted(request), base_url=origin(request))
        if item is None:
            raise not_found(f"No model with id {model_id}")
        return Response(item, media_type="application/json", headers=EDGE_CACHED)

    return await anonymous_cached(request, ("model-by-id", model_id), build, headers=EDGE_CACHED)


def path_id(text: str, name: str) -> int:
    """An id in a path as GET /models/{id} and mini/{id} read it: ``z.coerce.number().int().gt(0).lte(2147483647)``.

    JavaScript's Number() of the text (so ``0x1F`` is 31); anything else is a 400 ``{error}`` with
    zod's prettified message (``z.prettifyError``, models/[id].ts and mini/[id].ts).
    """
    number = js_number(text)
    if number != number:
        problem = "Invalid input: expected number, received NaN"
    elif math.isinf(number) or number != int(number):
        problem = "Invalid input: expected int, received number"
    elif number <= 0:
        problem = "Too small: expected number to be >0"
    elif number > 2_147_483_647:
        problem = "Too big: expected number to be <=2147483647"
    else:
        return int(number)
    raise ApiError(400, error_body(f"\u2716 {problem}\n  \u2192 at {name}"))


routes = [
    Route("/models", models_endpoint, methods=["GET"]),
    Route("/models/{id}", model_endpoint, methods=["GET"]),
]

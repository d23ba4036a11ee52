"""/api/v1/model-versions: one version by id or by hash, versions for many hashes, the minimal shape.

- ``GET /model-versions/{id}`` (Mixed): 404 when missing or unpublished; a moderator's
  token sees unpublished versions too, the owner's token their Private training results.
  A token also shows the early-access state the caller unlocked: ``earlyAccessConfig``
  gains ``unlocked`` (and ``unlockedAt`` for a purchase) for a signed-in caller.
- ``GET /model-versions/by-hash/{hash}`` (Public): any of the six hash kinds, any case.
- ``POST /model-versions/by-hash`` (Public): up to 100 SHA256 hashes; unmatched ones are
  dropped; one entry per version, in the order of the first hash naming it.
- ``POST /model-versions/by-hash/ids`` (Public): up to 10,000; ``{modelVersionId, hash}``
  with the hash as sent.
- ``GET /model-versions/mini/{id}`` (Mixed): the minimal shape, ``canGenerate`` judged
  for the caller; ``epoch`` picks a training-result file (404 when that version has no
  such epoch; a version without epoch files ignores it).

Images are filtered by the caller's browsing level (anonymous: the public level),
clamped in a restricted region. Files: public ones only (a moderator sees all);
none when the model is archived or taken down, and no images when taken down.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from typing import Any

import orjson
from pydantic import Field
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from blockkit.emulator.http.bodies import BodyTooLarge, read_limited
from blockkit.emulator import facts
from blockkit.emulator.http.auth import ANONYMOUS, Caller
from blockkit.emulator.http.errors import ApiError, error_body, json_response, not_found
from blockkit.emulator.http.catalogue.models import (
    EDGE_CACHED,
    PRIVATE,
    anonymous_cached,
    paid_access,
    file_download_url,
    file_metadata,
    optional_caller,
    origin,
    path_id,
    preview_image,
    scan_fields,
    timestamp_without_zone,
    version_download_url,
)
from blockkit.emulator.http.catalogue.params import MAX_ID, QueryInt, QueryModel, js_number, parse_query
from blockkit.emulator.http.region import clamp_browsing_level, region_restricted
from blockkit.emulator.state import EmulatorState, emulator
from blockkit.emulator.store import models as store

MAX_BY_HASH = 100
IMAGES_PER_VERSION = 10   # getImagesForModelVersion({imagesPerVersion: 10}), model-versions/[id].ts:189
NOT_FOUND = "Model not found"   # the platform's 404 for a version, by id or by hash ([id].ts:287)
BY_HASH_CACHE = {"Cache-Control": "public, s-maxage=3600, stale-while-revalidate=1800"}  # [hash].ts:52
HASHES_400 = "Request must include an array of SHA256 Hashes."  # by-hash/index.ts, by-hash/ids.ts
MAX_BY_HASH_IDS = 10_000
MAX_BODY_BYTES = 4 * 1024 * 1024   # 10,000 quoted hashes are about 660 KB
_HEX64 = re.compile(r"[0-9A-Fa-f]{64}", re.ASCII)
# Early-access settings every visitor may read (the model page shows them).
PUBLIC_EARLY_ACCESS_KEYS = ("timeframe", "chargeForDownload", "downloadPrice", "chargeForGeneration",
                            "generationPrice", "generationTrialLimit", "donationGoalEnabled", "donationGoal")


# --- who may see what ---------------------------------------------------------------------------

def may_see(version: store.VersionRow, caller: Caller, *, restricted: bool = False) -> bool:
    """Published (in a published model) and not Private, unless a moderator or the owner asks.

    A restricted region sees no version of a model flagged NSFW (as /models/{id}).
    """
    if restricted and version.model_nsfw:
        return False
    if caller.is_moderator:
        return True
    if not version.published:
        return False
    return version.availability != "Private" or caller.user_id == version.owner_id


def has_access(version: store.VersionRow, caller: Caller, purchases: dict[int, str], now: str) -> bool:
    """May ``caller`` use ``version`` for generation? False only when it is gated and they lack access."""
    if caller.is_moderator or (caller.user_id is not None and caller.user_id == version.owner_id):
        return True
    if version.availability == "Private":
        return False
    if version.early_access_active(now):
        return version.id in purchases
    return True


def air(version: store.VersionRow) -> str:
    return (f"urn:air:{version.air_ecosystem}:{version.air_type}:{version.air_source}:"
            f"{version.model_id}@{version.id}")


def _json(text: str | None) -> Any:
    return None if text is None else orjson.loads(text)


# --- the detail shape ---------------------------------------------------------------------------

def build_versions(db: sqlite3.Connection, versions: Sequence[store.VersionRow], caller: Caller, level: int,
                   base_url: str, *, by_id: bool = False) -> list[dict[str, Any]]:
    """ModelVersion objects for ``versions`` (already visible to ``caller``), in a fixed number of queries.

    ``by_id``: the files of GET /model-versions/{id}, which the platform reads with ``json_build_object``
    (model-versions/[id].ts): no ``overrideName``, and ``scannedAt`` as Postgres writes a timestamp
    without time zone in JSON (no ``Z``). The by-hash routes read them with ``modelFileSelect``
    (``getModelVersionApiSelect``): ``overrideName`` (null: no file is renamed here) and a ``Z``.
    """
    with_files = [v.id for v in versions if v.model_mode is None]
    files = store.files_of_versions(db, with_files, public_only=not caller.is_moderator)
    hashes = store.hashes_of_files(db, [f[0] for f in files])
    with_images = [v.id for v in versions if v.model_mode != "TakenDown"]
    previews = store.previews_of_versions(db, with_images, level, IMAGES_PER_VERSION)
    purchases = (store.early_access_purchases(db, caller.user_id, [v.id for v in versions])
                 if caller.user_id is not None else {})
    files_by_version: dict[int, list[dict[str, Any]]] = {}
    for f in files:
        file_id, version_id, name, file_type, size_kb, fmt, size, fp, primary, pickle, virus = f[:11]
        file: dict[str, Any] = {"id": file_id, "sizeKB": size_kb, "name": name}
        if not by_id:
            file["overrideName"] = None
        file["type"] = file_type
        file.update(scan_fields(pickle, virus, timestamp_without_zone(f[13]) if by_id else f[13]))
        file.update({
            "metadata": file_metadata(fmt, size, fp), "hashes": hashes.get(file_id, {}), "primary": bool(primary),
            "downloadUrl": file_download_url(base_url, version_id, file_type, fmt, size, fp, primary=bool(primary)),
        })
        files_by_version.setdefault(version_id, []).append(file)
    images_by_version: dict[int, list[dict[str, Any]]] = {}
    for row in previews:
        images_by_version.setdefault(row[7], []).append(preview_image(base_url, row, with_id=False, detail=True))
    return [_version(v, caller, purchases, files_by_version.get(v.id, []), images_by_version.get(v.id, []),
                     base_url) for v in versions]


def _version(v: store.VersionRow, caller: Caller, purchases: dict[int, str], files: list[dict[str, Any]],
             images: list[dict[str, Any]], base_url: str) -> dict[str, Any]:
    config = _json(v.early_access_config)
    if isinstance(config, dict):
        config = {k: config[k] for k in PUBLIC_EARLY_ACCESS_KEYS if k in config}
        if caller.user_id is not None:
            # What a token adds: whether this caller unlocked the early access (and when they bought it).
            unlocked = caller.is_moderator or caller.user_id == v.owner_id or v.id in purchases
            config["unlocked"] = unlocked
            if v.id in purchases:
                config["unlockedAt"] = purchases[v.id]
    model: dict[str, Any] = {"name": v.model_name, "type": v.model_type, "nsfw": bool(v.model_nsfw),
                             "poi": bool(v.model_poi)}
    if v.model_mode is not None:
        model["mode"] = v.model_mode
    return {
        "id": v.id, "modelId": v.model_id, "name": v.name, "description": v.description,
        "baseModel": v.base_model, "baseModelType": v.base_model_type or "Standard", "air": air(v),
        "status": v.status, "availability": v.availability, "nsfwLevel": v.nsfw_level,
        "createdAt": v.created_at, "updatedAt": v.updated_at, "publishedAt": v.published_at,
        "uploadType": v.upload_type, "usageControl": v.usage_control, "licensingFee": None,
        "paidAccess": paid_access(v.early_access_ends_at), "trainedWords": _json(v.trained_words) or [],
        "earlyAccessConfig": config, "earlyAccessEndsAt": v.early_access_ends_at,
        "trainingStatus": v.training_status, "trainingDetails": _json(v.training_details),
        "stats": {"downloadCount": v.download_count, "thumbsUpCount": v.thumbs_up_count},
        "model": model, "files": files, "images": images,
        "downloadUrl": version_download_url(base_url, v.id),
    }


# --- services ---------------------------------------------------------------------------------------

def get_version(state: EmulatorState, version_id: int, caller: Caller, level: int, base_url: str, *,
                restricted: bool = False) -> dict[str, Any] | None:
    with state.store.read() as db:
        version = store.versions_by_ids(db, [version_id]).get(version_id)
        if version is None or not may_see(version, caller, restricted=restricted):
            return None
        return build_versions(db, [version], caller, level, base_url, by_id=True)[0]


def get_version_by_hash(state: EmulatorState, value: str, level: int, base_url: str, *,
                        restricted: bool = False) -> dict[str, Any] | None:
    with state.store.read() as db:
        ids = store.version_ids_by_hash(db, value)
        found = store.versions_by_ids(db, ids)
        visible = [found[i] for i in ids if i in found and may_see(found[i], ANONYMOUS, restricted=restricted)]
        if not visible:
            return None
        return build_versions(db, visible[:1], ANONYMOUS, level, base_url)[0]


def versions_by_hashes(state: EmulatorState, hashes: list[str], level: int, base_url: str, *,
                       restricted: bool = False) -> list[dict[str, Any]]:
    with state.store.read() as db:
        # One entry per matching file, in file order (files.map(...), by-hash/index.ts:50): a version
        # with two matching files appears twice.
        order = [version_id for _hash, version_id in store.file_matches_by_sha256(db, hashes)]
        found = store.versions_by_ids(db, sorted(set(order)))
        visible = {i: found[i] for i in found if may_see(found[i], ANONYMOUS, restricted=restricted)}
        built = {v["id"]: v for v in build_versions(db, list(visible.values()), ANONYMOUS, level, base_url)}
        return [built[i] for i in order if i in built]


def version_ids_by_hashes(state: EmulatorState, hashes: list[str]) -> list[dict[str, Any]]:
    with state.store.read() as db:
        matches = store.version_ids_by_sha256(db, hashes)
        found = store.versions_by_ids(db, sorted({v for _h, v in matches}))
    visible: dict[str, int] = {}
    for value, version_id in matches:
        version = found.get(version_id)
        if version is not None and may_see(version, ANONYMOUS):
            visible.setdefault(value, version_id)
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for value in hashes:
        key = value.upper()
        if key in visible and key not in seen:
            seen.add(key)
            out.append({"modelVersionId": visible[key], "modelId": found[visible[key]].model_id, "hash": value})
    return out


def get_mini(state: EmulatorState, version_id: int, epoch: int | None, caller: Caller,
             base_url: str, model_file_id: int | None = None) -> dict[str, Any]:
    """The minimal model version, or a 404 with the platform's message for its cause (mini/[id].ts)."""
    now = state.clock.iso()
    with state.store.read() as db:
        version = store.versions_by_ids(db, [version_id]).get(version_id)
        if version is None or not version.published:
            raise not_found(NOT_FOUND)
        files = store.files_of_versions(db, [version_id], public_only=False)
        epochs = [f for f in files if f[12] is not None]
        if model_file_id is not None:  # that exact file instead of the primary one (mini/[id].ts:196)
            chosen = next((f for f in files if f[0] == model_file_id), None)
            if chosen is None:
                raise not_found(f"Model file {model_file_id} not found in version {version_id}")
        elif epoch is not None and epochs:  # epoch applies to training results; other versions ignore it
            chosen = next((f for f in epochs if f[12] == epoch), None)
            if chosen is None:
                raise not_found("Missing epoch")
        elif epochs:
            chosen = max(epochs, key=lambda f: f[12])  # the last epoch
        else:
            chosen = next((f for f in files if f[8] and f[11] == "Public"), None)
            if chosen is None:
                raise not_found("Missing model file")
        hashes = store.hashes_of_files(db, [chosen[0]]).get(chosen[0], {})
        purchases = (store.early_access_purchases(db, caller.user_id, [version_id])
                     if caller.user_id is not None else {})
    file_id, _vid, name, file_type, size_kb, fmt, size, fp = chosen[:8]
    early = version.early_access_active(now)
    gated = early or version.availability == "Private"
    usable = has_access(version, caller, purchases, now)
    can_generate = bool(version.supports_generation) and version.model_mode is None and usable
    mini: dict[str, Any] = {
        "air": air(version), "versionName": version.name, "modelName": version.model_name,
        "userId": version.owner_id, "baseModel": version.base_model, "availability": version.availability, "publishedAt": version.published_at,
        "size": size_kb, "fileType": file_type, "fileName": name, "hashes": hashes,
        "downloadUrls": [file_download_url(base_url, version_id, file_type, fmt, size, fp, primary=bool(chosen[8]))],
        "format": fmt or "Other", "canGenerate": can_generate, "isFeatured": bool(version.is_featured),
        "requireAuth": bool(version.require_auth), "checkPermission": gated,
    }
    if gated:
        mini["earlyAccessEndsAt"] = version.early_access_ends_at if early else None
        # Present whenever checkPermission is (null when none is configured), as the platform sends it.
        mini["freeTrialLimit"] = version.free_trial_limit
    mini["additionalResourceCharge"] = bool(version.additional_resource_charge)
    mini["minor"] = bool(version.model_minor)
    mini["sfwOnly"] = bool(version.model_sfw_only)
    # No licensing fees in the emulator: no fee entries, and payouts enabled (mini/[id].ts:399-420).
    mini["fees"] = []
    mini["payoutEnabled"] = True
    del file_id
    return mini


# --- request bodies ------------------------------------------------------------------------------------

async def hash_list(request: Request, limit: int) -> list[str]:
    """The body: a JSON array of at most ``limit`` SHA256 hashes, or a 400 naming the first failure."""
    try:
        body = await read_limited(request, MAX_BODY_BYTES)
    except BodyTooLarge:
        raise ApiError(400, error_body(f"{HASHES_400} Body too large: at most {limit} hashes")) from None
    if not body.strip():
        raise ApiError(400, error_body(f"{HASHES_400} Missing body: send a JSON array of SHA256 hashes"))
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise ApiError(400, error_body(f"{HASHES_400} Body is not JSON: send a JSON array of SHA256 hashes")) from None
    if not isinstance(data, list):
        raise ApiError(400, error_body(f"{HASHES_400} Expected a JSON array of SHA256 hashes, got {_kind(data)}"))
    if len(data) > limit:
        raise ApiError(400, error_body(f"{HASHES_400} Too many hashes: {len(data)}, at most {limit}"))
    for index, value in enumerate(data):
        if not isinstance(value, str):
            raise ApiError(400, error_body(f"{HASHES_400} [{index}]: expected a string, got {_kind(value)}"))
        if len(value) != 64:
            raise ApiError(400, error_body(f"{HASHES_400} [{index}]: a SHA256 hash has 64 characters, got {len(value)}"))
        if not _HEX64.fullmatch(value):
            raise ApiError(400, error_body(f"{HASHES_400} [{index}]: not a SHA256 hash (hexadecimal digits only)"))
    return data


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


# --- routes ---------------------------------------------------------------------------------------------

def _level(request: Request, caller: Caller) -> int:
    """The previews' level: a signed-in caller's own browsing level; anonymous callers every rated level
    but Blocked (the platform's allBrowsingLevelsFlag, [id].ts); safe-for-work in a restricted region."""
    level = facts.ALL_BROWSING_LEVELS if caller.anonymous else caller.clamp(caller.browsing_level)
    return clamp_browsing_level(request, level)


def version_path_id(text: str) -> int | None:
    """The id of GET /model-versions/{id} as the platform reads it: ``z.preprocess(Number, z.number())``.

    Not a number is a 400 (zod's prettified message); 0 is a 400 'Missing modelVersionId'; a
    negative, fractional or out-of-range number reaches the lookup and finds nothing (None: 404).
    """
    number = js_number(text)
    if number != number:  # NaN
        raise ApiError(400, error_body("\u2716 Invalid input: expected number, received NaN\n  \u2192 at id"))
    if number == 0:
        raise ApiError(400, error_body("Missing modelVersionId"))
    if not 1 <= number <= MAX_ID or number != int(number):  # infinities fail the range first
        return None
    return int(number)


async def version_endpoint(request: Request) -> Response:
    # GET /model-versions/by-hash reads as this route with the id "by-hash": a 400 (not a number).
    version_id = version_path_id(request.path_params["id"])
    if version_id is None:
        raise not_found(NOT_FOUND)

    def build() -> Response:
        caller = optional_caller(request)
        found = get_version(emulator(request), version_id, caller, _level(request, caller), origin(request),
                            restricted=region_restricted(request))
        if found is None:
            raise not_found(NOT_FOUND)
        return json_response(found, headers=PRIVATE if not caller.anonymous else EDGE_CACHED)

    return await anonymous_cached(request, ("version-by-id", version_id), build, headers=EDGE_CACHED)


async def by_hash_endpoint(request: Request) -> Response:
    # Any string ([hash].ts:10, z.string().transform(toUpperCase)); what matches no file is a 404.
    value = request.path_params["hash"]

    def build() -> Response:
        found = get_version_by_hash(emulator(request), value, _level(request, ANONYMOUS), origin(request),
                                    restricted=region_restricted(request))
        if found is None:
            raise not_found(NOT_FOUND)
        return json_response(found, headers=BY_HASH_CACHE)

    # Public: the token is never read, so every caller shares the anonymous answer.
    return await anonymous_cached(request, ("version-by-hash", value.upper()), build, headers=BY_HASH_CACHE)


async def by_hashes_endpoint(request: Request) -> Response:
    from starlette.concurrency import run_in_threadpool

    hashes = await hash_list(request, MAX_BY_HASH)
    # Store access off the event loop, like every sync route.
    found = await run_in_threadpool(lambda: versions_by_hashes(
        emulator(request), hashes, _level(request, ANONYMOUS), origin(request), restricted=region_restricted(request)))
    return json_response(found)


async def by_hashes_ids_endpoint(request: Request) -> Response:
    from starlette.concurrency import run_in_threadpool

    hashes = await hash_list(request, MAX_BY_HASH_IDS)
    return json_response(await run_in_threadpool(version_ids_by_hashes, emulator(request), hashes))


class MiniQuery(QueryModel):
    epoch: QueryInt | None = Field(None, ge=1, le=MAX_ID)
    model_file_id: QueryInt | None = Field(None, alias="modelFileId", ge=1, le=MAX_ID)


def mini_endpoint(request: Request) -> Response:
    version_id = path_id(request.path_params["id"], "id")
    query = parse_query(request, MiniQuery, shape="error")
    caller = optional_caller(request)
    mini = get_mini(emulator(request), version_id, query.epoch, caller, origin(request), query.model_file_id)
    return json_response(mini, headers=PRIVATE if not caller.anonymous else EDGE_CACHED)


routes = [
    Route("/model-versions/by-hash", by_hashes_endpoint, methods=["POST"]),
    Route("/model-versions/by-hash/ids", by_hashes_ids_endpoint, methods=["POST"]),
    Route("/model-versions/by-hash/{hash}", by_hash_endpoint, methods=["GET"]),
    Route("/model-versions/mini/{id}", mini_endpoint, methods=["GET"]),
    Route("/model-versions/{id}", version_endpoint, methods=["GET"]),
]

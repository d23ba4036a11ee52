"""Build ``src/blockkit/emulator/openapi.json``: the contract of the emulated catalogue API.

The document is written by us from ``spec/catalogue-and-oauth.md`` (the catalogue part):
every path under ``/api/v1`` with its parameters, security and responses, plus the
emulator's own ``/__emulator/clock``. Where the spec says "not shown" (or is silent
on something a client can observe) we chose, and each choice is recorded twice: as an
``x-blockkit-decision`` next to what it decides, and in ``info.x-blockkit-decisions``
so the whole list can be read in one place.

This script is the source; the JSON is its output, committed so that it ships in the
wheel and is served at ``{base_url}/api/v1/openapi.json``. A test fails when the two
drift apart.

    python3 scripts/build_openapi.py          # write the JSON
    python3 scripts/build_openapi.py --check  # exit 1 when the JSON is stale
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "src" / "blockkit" / "emulator" / "openapi.json"
# The enum lists come from the emulator's one table of platform facts.
sys.path.insert(0, str(OUT.parents[2]))
from blockkit.emulator import facts  # noqa: E402

INT32_MAX = 2147483647
# JavaScript's Number.MAX_SAFE_INTEGER: the platform reads numbers as JavaScript does.
SAFE_MAX = 9007199254740991
# Longest value a free-text query parameter may carry (a decision, see D-string-length).
FREE_TEXT_MAX = 1024

# --- Decisions where the spec is silent ------------------------------------------------
# id -> text. Referenced by id from where they apply; all listed in info.x-blockkit-decisions.
DECISIONS: dict[str, str] = {
    "D-error-validation": (
        "Validation-error JSON is a ZodError as zod 4 serialises it: {name: 'ZodError', message: <the issues "
        "array as indented JSON>} (issues is not enumerable in zod 4, so it does not go out; "
        "civitai/civitai@ebed661 models/index.ts:62 with zod v4/core/errors.ts). Each issue carries zod 4's "
        "code, path and message. Models, images, articles, collections and vault/all wrap it as {error: "
        "<ZodError>}; users answers it bare; creators and tags answer the issues array bare (or {message} "
        "when the failure is not a field)."
    ),
    "D-error-single": (
        "Endpoints addressed by id or hash (models/{id}, model-versions/*, articles/{id}, "
        "collections/{id}, posts/{id}), POST by-hash, check-vault, toggle-version and permissions "
        "answer a 400 with {error: <message string>}."
    ),
    "D-id-range": (
        "Every integer id, in a path or a query, is 1-2147483647 (the spec states this range for "
        "posts, articles and collections; the emulator applies it to all ids). Out of range, "
        "not an integer, or with a sign or fraction is a 400, never a 404 or 500."
    ),
    "D-integer-range": (
        "Integer parameters without a stated upper bound (page, browsingLevel) stop at "
        "9007199254740991 (JavaScript's largest safe integer); beyond it is a 400."
    ),
    "D-string-length": (
        f"Free-text query parameters (query, username, tag, cursor, baseModels entries, ...) carry at "
        f"most {FREE_TEXT_MAX} characters (collections query: 100, as the spec says); longer is a 400."
    ),
    "D-bad-bytes": (
        "A query value that is not valid UTF-8 after percent-decoding (for example an encoded lone "
        "surrogate %ED%A0%80) or that contains NUL (%00) is a 400 with the endpoint's body shape."
    ),
    "D-empty": (
        "An empty value of an optional free-text parameter (query=, cursor=) counts as absent; an empty "
        "value where a number, boolean, enum or id list is expected is a 400."
    ),
    "D-repeated": (
        "A parameter that takes one value, given more than once, is a 400. Only models' types and "
        "baseModels may repeat (the spec: 'repeat param or comma-separate')."
    ),
    "D-boolean": (
        "Boolean query parameters read as the platform reads them: nsfw, primaryFileOnly, favorites, hidden "
        "(booleanString, zod-helpers.ts:116) take true/false, 1/0, yes/no, on/off, y/n, enabled/disabled in "
        "any case, anything else is a 400; supportsGeneration, fromPlatform and earlyAccess "
        "(z.coerce.boolean, model.schema.ts) are true for any non-empty value (so 'false' filters as true) "
        "and false when empty; other endpoints take true/false (any case) and 1/0."
    ),
    "D-model-sort": (
        "Model sort values beyond the three the spec names: Highest Rated, Most Downloaded, Most Liked, "
        "Most Discussed, Most Collected, Most Images, Newest, Oldest (the platform's list)."
    ),
    "D-base-models": (
        "GET /models baseModels filters take any string (a name not in /enums BaseModel matches nothing: 200,"
        " no items), as the platform's z.string(); GET /images baseModels must name base models of /enums "
        "BaseModel (commaDelimitedEnumArray, images/index.ts:80), else 400."
    ),
    "D-hash-path": (
        "GET /model-versions/by-hash/{hash} takes any string, matched upper-cased against every hash kind "
        "([hash].ts:10); no match, or not a hash at all, is a 404 {error: 'Model not found'}."
    ),
    "D-hash-lengths": (
        "Hash values are upper-case hexadecimal: AutoV1 8, AutoV2 10, AutoV3 12, CRC32 8, SHA256 64 "
        "and BLAKE3 64 characters."
    ),
    "D-by-hash-ids-400": (
        "POST /model-versions/by-hash/ids refuses like POST by-hash: missing body, non-array, an entry "
        "that is not a 64-character string, or more than 10000 entries is a 400 {error}."
    ),
    "D-epoch": "mini/{id} epoch is an integer 1-2147483647.",

    "D-timestamps": (
        "Timestamps are UTC with milliseconds and a Z, as JavaScript's toISOString: "
        "2024-01-02T03:04:05.678Z. Where the platform reads a timestamp-without-time-zone column inside "
        "Postgres's json_build_object (files[].scannedAt on GET /model-versions/{id}), it has no Z and "
        "its fraction has no trailing zeros (2024-01-02T03:04:05.67, 2024-01-02T03:04:05): "
        "TimestampWithoutZone. Live bodies also show version publishedAt in /models pages in that form."
    ),
    "D-dropped": (
        "'Dropped' for moderated models means: files[] and images[] become empty arrays, downloadUrl "
        "is left out. The mode key is absent on healthy models (never null)."
    ),
    "D-preview-image": (
        'Preview images inside model versions: {id, url, nsfwLevel (integer), width, height, hash (BlurHash or null), type, minor, poi, hasMeta, hasPositivePrompt, onSite, remixOfId} in GET /models (model.service.ts getModelsWithVersions); GET /models/{id} leaves out id ([id].ts:137); /model-versions leaves out id and adds meta, metadata and availability ([id].ts:264).'
    ),
    "D-file-metadata": (
        'File metadata carries format, size and fp (strings) when known; the platform may also send quantType and isRequired, and null values.'
    ),
    "D-detail-hashes": (
        "Files carry the hash kinds computed for them, on every shape: all six for files hashed today, "
        "a subset (AutoV2, SHA256, CRC32) for older uploads hashed with fewer algorithms. The spec says "
        "list items may carry a subset; the detail shapes cannot show a hash that was never computed."
    ),
    "D-unpublished-at": (
        "publishedAt is null only for a version that was never published: a moderator's view of a "
        "Draft or Unpublished version (GET /models, GET /model-versions/{id}), or a Private training "
        "result (GET /model-versions/mini/{id}, and its owner's GET /model-versions/{id})."
    ),
    "D-mini-optional": (
        "Minimal model version: earlyAccessEndsAt is present exactly when checkPermission is true "
        "(null for a Private version without early access); freeTrialLimit likewise (null when none is "
        "configured), as mini/[id].ts sends them. userId (the owner), fees ([] : no licensing fees in the "
        "emulator) and payoutEnabled (true) are the platform's; modelFileId describes that file of the "
        "version (404 'Model file N not found in version V' when it has none such)."
    ),
    "D-article-body": "The single-article body field is named content (HTML string).",
    "D-article-cover": (
        "Both article shapes always carry coverImage; it is null when the article has no cover, or the "
        "cover is not yet scanned or rated above the served level (the list: the request's level; the "
        "single shape: the region's ceiling, every rating but Blocked, safe-for-work in a restricted "
        "region). Neither shape carries moderatorNsfwLevel."
    ),
    "D-models-auth": (
        "GET /models with favorites or hidden and no valid token is a 401 {error: 'Unauthorized'}, "
        "as on the platform."
    ),
    "D-vault-401": "Every vault endpoint answers a missing or invalid token with 401 {error: 'Unauthorized'}.",
    "D-vault-nonmember": (
        "Vault callers without an active membership: /vault/get and /vault/all answer 200 {vault: null}; "
        "/vault/check-vault answers every vaultItem null; /vault/toggle-version is a 500 whose "
        "error.message says a membership is required (the spec's 'other internal error')."
    ),
    "D-vault-all-400": "GET /vault/all with an invalid parameter is a 400 (validation-error JSON), as any list endpoint.",
    "D-toggle-unknown": (
        "POST /vault/toggle-version for a version id that does not exist is the spec's 500 'model not found' "
        "({message, error: {message}})."
    ),
    "D-vault-dates": (
        "Vault date filters take an ISO date (2024-01-31) or a full ISO-8601 timestamp; anything else is a 400."
    ),
    "D-images-cursor": (
        "The emulator always takes the images endpoint's new behaviour (public-only, all-of tags, feed: "
        "cursors); older <offset>|<timestamp> cursors are still accepted."
    ),
    "D-feed-expiry": (
        "A feed: cursor can no longer be continued (400, 'start again without it') once the emulator's "
        "clock is more than 24 hours past the cursor's issue; a feed: cursor sent with other filters than "
        "it was issued for is the other 400 ('restore the filters or drop the cursor')."
    ),
    "D-images-auth": (
        "GET /images is Public but reads an optional bearer token for the caller's browsing level, so its "
        "security is optional bearer."
    ),
    "D-posts-token-cache": (
        "GET /posts/{id} with a bearer token answers Cache-Control: no-store (the spec: 'served uncached')."
    ),
    "D-error-cache": (
        "429 and 503 answers carry Cache-Control: no-store and Retry-After (seconds); the images 503 "
        "carries Retry-After: 2."
    ),
    "D-collection-description": "Collection description is a string or null.",
    "D-permissions-keys": "permissions/check answers keys that are decimal entity ids, one per requested id.",
    "D-open-objects": (
        "Response objects are open: the platform sends fields the spec does not list and adds fields over time, "
        "so a client must ignore keys it does not know. A property is required only where the platform always "
        "sends it."
    ),
    "D-list-file": (
        "Files inside a model (GET /models, GET /models/{id}) carry primary only on the primary file (true); "
        "the other files have no primary key (model-search.service.ts:273, [id].ts:131). They carry modelFileSelect's "
        "keys (selectors/modelFile.selector.ts, through filesForModelVersionCache): overrideName and the scan "
        "fields pickleScanResult, pickleScanMessage, virusScanResult, virusScanMessage, scannedAt. The spec's "
        "File table names the scan results on the /model-versions shape only; the platform sends them here too."
    ),
    "D-list-version": (
        "A version inside a model carries, besides the spec's fields, the platform's index, flags, availability, "
        "nsfwLevel, description, trainedWords, vaeId and paidAccess (earlyAccessDeadline when paidAccess has an "
        "end) (caches.ts:632-647, model.service.ts:3889-3891). It has no modelId: the platform's cache strips "
        "it (caches.ts reduce), and recorded responses have none. The list takes createdAt, status and covered "
        "off and sends covered as supportsGeneration (model-search.service.ts); GET /models/{id} keeps them "
        "(models/[id].ts spreads the version) and sends no supportsGeneration on a version."
    ),
    "D-detail-version": (
        "GET /model-versions/{id} and by-hash carry the spec's availability, earlyAccessConfig and "
        "earlyAccessEndsAt, and the platform's paidAccess ({permanent, endsAt} or null) and licensingFee "
        "(null unless set). Files carry pickleScanMessage, virusScanMessage and scannedAt (without Z on "
        "GET /model-versions/{id}, D-timestamps) and, on by-hash, overrideName; images carry no id, "
        "and meta, metadata (a video's with duration, audio and size), minor, poi, hasMeta, hasPositivePrompt, onSite, remixOfId and availability; at most "
        "10 per version (imagesPerVersion: 10, [id].ts:189)."
    ),
    "D-image-item": (
        "GET /images items always carry meta (null unless withMeta=true; wrapped {id, meta} for lookups by "
        "imageId "
        "or by modelId without modelVersionId unless flatMeta=true, image-search.service.ts:245-248); "
        "withTags=true "
        "adds tags [{id, name}]. The emulator also sends the spec's thumbnail."
    ),
    "D-public-cache": (
        "Anonymous answers of the platform's PublicEndpoint and MixedAuthEndpoint routes (models, model-versions, "
        "images, users, creators, tags) carry Cache-Control: public, s-maxage=300, stale-while-revalidate=150 "
        "(endpoint-helpers.ts:82,120); GET by-hash/{hash} s-maxage=3600, stale-while-revalidate=1800 "
        "([hash].ts:52). "
        "Posts, articles and collections keep the spec's headers."
    ),
    "D-clock": (
        "/__emulator/clock: GET answers {now}; POST takes {advance: seconds >= 0} and answers {now}; "
        "a bad body is a 400 {error}."
    ),
    "D-faults": (
        "/__emulator/faults: the local platform's failure switches (services/faults.py). GET answers {faults: "
        "[{kind, userId, times}]}; POST {kind, times? (default 1, 0 disarms), userId? (null: anyone)} arms the next "
        "`times` uses of `kind` to fail (workflow-fails, storage-write-fails) and answers the list; DELETE disarms "
        "all; a bad body is a 400 {error}."
    ),
    "D-openapi-route": "The catalogue origin serves this document at /api/v1/openapi.json (Public).",
    "D-method": "A method a path does not define is a 405 {error: 'Method not allowed'}.",
    # The models family's behaviour where the spec is silent (catalogue/models.py, model_versions.py,
    # vault.py, permissions.py).
    "D-models-pagination": (
        "GET /models pages by cursor unless page is given without a cursor (usingPaging = page && !cursor, "
        "models/index.ts:72): a keyset cursor '<sort value>|<id>'. Page mode adds currentPage and pageSize "
        "and gives nextCursor; nextPage is the request's URL with cursor=<nextCursor> added (page kept, as "
        "getNextPage does), so following it reads the next page in cursor mode. page with a cursor: the "
        "cursor wins. query with page is a 400 {error: 'Cannot use page param with query search. Use "
        "cursor-based pagination.'}, after the 429 page window check."
    ),
    "D-models-sort-keys": (
        "Highest Rated sorts by the period's thumbs up minus thumbs down; Most Liked by thumbs up; Most "
        "Downloaded, Most Discussed and Most Collected by the period's downloads, comments and collections; "
        "Most Images counts the preview images; Newest and Oldest read the model's publication date and "
        "ignore period. Ties: the higher id first (Oldest: the lower)."
    ),
    "D-models-filters": (
        "Listed models are published, neither Private nor Unsearchable, with a published non-Private "
        "version. supportsGeneration, fromPlatform and earlyAccess filter when their value is not empty "
        "(any value, 'false' too, as z.coerce.boolean reads it: only those that are; earlyAccess: a version in "
        "early access now); empty or absent: no filter. nsfw=false lists models not flagged NSFW sharing a "
        "level with PG or PG-13, with PG and "
        "PG-13 previews; nsfw=true every level but Blocked. query: every word in the model name, any case. "
        "tag: a model tag name, any case. username: the exact name (any case), else every user whose slug "
        "(accents dropped, lower case, other characters as '-') is the parameter's. A signed-in caller's "
        "hidden models are left out unless hidden=true; favorites is the caller's Bookmark collection."
    ),
    "D-previews": (
        "A version's preview images are the model owner's rated images and videos in published, unblocked, "
        "scanned, non-private posts about the version, within the browsing level, in post order, at most 20."
    ),
    "D-model-by-id": (
        'GET /models/{id} answers the model with its Published versions and every rated preview but Blocked (the platform serves the all-levels ceiling, [id].ts), also when it is flagged NSFW; in a restricted region the previews are safe-for-work only and a model flagged NSFW is a 404. Version keys whose value is null or an empty array are left out (removeEmpty), and previews carry no id.'
    ),
    "D-version-token": (
        "GET /model-versions/{id}: a bearer token adds earlyAccessConfig.unlocked (true for a buyer, the "
        "owner or a moderator) and unlockedAt (when bought); a moderator's token also shows unpublished "
        "versions, the owner's a Private training result. Images follow the caller's browsing level "
        "(anonymous: every rated level but Blocked, as the platform's allBrowsingLevelsFlag), at most 10. A "
        "restricted region sees no version of a model flagged NSFW. On Mixed routes a "
        "token that is not valid reads as none."
    ),
    "D-by-hash-order": (
        "POST /model-versions/by-hash answers one entry per matching file (index.ts:50), in the store's file "
        "order, so a version appears once per matching file; an entry of 64 characters that is not "
        "hexadecimal is a 400. by-hash/ids answers {modelVersionId, modelId, hash} for each matched hash "
        "once, as sent."
    ),
    "D-mini-generate": (
        "mini/{id}: canGenerate needs on-site generation coverage, a model that is not moderated, and "
        "access (no running early access unless bought or owned; Private only for its owner; moderators "
        "always). A version without epoch files ignores epoch."
    ),
    "D-vault-toggle": (
        "toggle-version adds a Pending snapshot (the emulator runs no ingestion; files are listed once "
        "Stored), reserving its public files' size and its description (at least 1 KB) against the quota "
        "at once; a version that is not published is 'not found'. storageKb is the largest allowance among "
        "the caller's active memberships (founder and bronze 10 GB, silver 25 GB, gold 50 GB)."
    ),
    "D-permissions-unknown": (
        "permissions/check: an id with no published version answers false; a userId that names no user is "
        "judged as anonymous."
    ),
    "D-downloads": (
        "GET /api/download/models/{modelVersionId} follows the platform's download route (docs/platform-shapes.md, "
        "'Downloads and model files'): a 307 to a file URL on base_url that lives 24 hours on the emulator clock; a "
        "token by bearer or ?token=, an invalid one read as none; a browser User-Agent gets text/plain bodies and "
        "redirects instead of these JSON answers. The file URL serves the bytes whose hashes and sizeKB the "
        "catalogue lists, with Content-Disposition and byte ranges."
    ),
    "D-private-cache": (
        "Answers that depend on a bearer token (vault, /me, Mixed routes called with a valid token) carry "
        "Cache-Control: private, no-store."
    ),
}


def decision(*ids: str) -> dict[str, str]:
    for i in ids:
        assert i in DECISIONS, i
    return {"x-blockkit-decision": " ".join(f"[{i}] {DECISIONS[i]}" for i in ids)}


# --- Schema helpers -----------------------------------------------------------------------


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def obj(props: dict[str, Any], *, optional: tuple[str, ...] = (), extra: bool = True, **more: Any) -> dict[str, Any]:
    """An object: every property required unless named in ``optional``.

    Open to other properties (the platform's responses carry fields the spec does not list,
    and grow; [D-open-objects]); ``extra=False`` closes one.
    """
    schema: dict[str, Any] = {
        "type": "object",
        "properties": props,
        "required": [k for k in props if k not in optional],
        "additionalProperties": extra,
    }
    schema.update(more)
    return schema


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in schema:
        return {"anyOf": [schema, {"type": "null"}]}
    out = dict(schema)
    kind = out.get("type")
    if isinstance(kind, str):
        out["type"] = [kind, "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
        return out
    return {"anyOf": [schema, {"type": "null"}]}


def array(items: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"type": "array", "items": items, **more}


STR = {"type": "string"}
INT = {"type": "integer"}
NUM = {"type": "number"}
BOOL = {"type": "boolean"}
URL = {"type": "string", "minLength": 1}
COUNT = {"type": "integer", "minimum": 0}
ID = {"type": "integer", "minimum": 1, "maximum": INT32_MAX}

# --- The spec's closed value sets ------------------------------------------------------------

MODEL_TYPES = list(facts.MODEL_TYPES)          # the platform's ModelType (23 values at ebed661)
FILE_TYPES = list(facts.MODEL_FILE_TYPES)      # constants.modelFileTypes (17)
BASE_MODEL_TYPES = list(facts.BASE_MODEL_TYPES)
BASE_MODELS = [b.name for b in facts.BASE_MODELS]  # baseModelRecords names (99)
PERIODS = ["AllTime", "Year", "Month", "Week", "Day"]
MODEL_SORTS = [
    "Highest Rated", "Most Downloaded", "Most Liked", "Most Discussed", "Most Collected", "Most Images",
    "Newest", "Oldest",
]
IMAGE_SORTS = ["Most Reactions", "Most Comments", "Most Collected", "Newest", "Oldest", "Random"]
ARTICLE_SORTS = ["Newest", "Recently Updated", "Most Reactions", "Most Comments", "Most Bookmarks", "Most Collected"]
COLLECTION_SORTS = ["Newest", "Most Followers"]
VAULT_SORTS = ["Recently Added", "Recently Created", "Model Name", "Model Size"]
NSFW_NAMES = ["None", "Soft", "Mature", "X"]
MEDIA_TYPES = ["image", "video", "audio"]
HASH_KINDS = ["AutoV1", "AutoV2", "AutoV3", "SHA256", "CRC32", "BLAKE3"]
HASH_LENGTHS = {"AutoV1": 8, "AutoV2": 10, "AutoV3": 12, "SHA256": 64, "CRC32": 8, "BLAKE3": 64}
# The platform's CommercialUse enum (packages/civitai-db-schema/src/enums.ts).
COMMERCIAL_USES = ["None", "Image", "RentCivit", "Rent", "Sell"]
TIERS = ["free", "founder", "bronze", "silver", "gold"]
USER_STATUSES = ["active", "muted", "banned"]
VAULT_STATUSES = ["Pending", "Stored", "Failed"]
COLLECTION_TYPES = ["Model", "Image", "Article", "Post"]
# zod 4's issue codes (v4/core/errors.ts).
ZOD_ISSUE_CODES = [
    "invalid_type", "too_big", "too_small", "invalid_format", "not_multiple_of", "unrecognized_keys",
    "invalid_union", "invalid_key", "invalid_element", "invalid_value", "custom",
]


def schemas() -> dict[str, Any]:
    s: dict[str, Any] = {}
    s["Timestamp"] = {
        "type": "string",
        "pattern": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$",
        "description": "ISO 8601 UTC timestamp.",
        **decision("D-timestamps"),
    }
    s["TimestampWithoutZone"] = {
        "type": "string",
        "pattern": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?$",
        "description": "A UTC timestamp as Postgres writes one without time zone in JSON: no Z.",
        **decision("D-timestamps"),
    }
    either_timestamp = {"anyOf": [ref("Timestamp"), ref("TimestampWithoutZone")]}
    s["ModelType"] = {"type": "string", "enum": MODEL_TYPES}
    s["ModelFileType"] = {"type": "string", "enum": FILE_TYPES}
    s["BaseModelType"] = {"type": "string", "enum": BASE_MODEL_TYPES}
    s["NsfwName"] = {"type": "string", "enum": NSFW_NAMES}

    # Hashes: the kinds computed for a file. Any subset on every shape (the platform sends what
    # its ModelFileHash rows hold).
    hash_props = {k: {"type": "string", "pattern": f"^[0-9A-Fa-f]{{{n}}}$"} for k, n in HASH_LENGTHS.items()}
    s["HashesSubset"] = {
        "type": "object",
        "properties": hash_props,
        **decision("D-hash-lengths"),
    }
    s["HashesFull"] = {**s["HashesSubset"], **decision("D-hash-lengths", "D-detail-hashes")}

    s["FileMetadata"] = obj(
        {"format": nullable(STR), "size": nullable(STR), "fp": nullable(STR), "quantType": nullable(STR),
         "isRequired": nullable(BOOL)},
        optional=("format", "size", "fp", "quantType", "isRequired"),
        **decision("D-file-metadata"),
    )
    file_props = {
        "id": ID,
        "name": STR,
        "type": ref("ModelFileType"),
        "sizeKB": {"type": "number", "minimum": 0},
        "metadata": nullable(ref("FileMetadata")),
        "hashes": ref("HashesSubset"),
        "downloadUrl": URL,
        "primary": BOOL,
        "pickleScanResult": STR,
        "pickleScanMessage": nullable(STR),
        "virusScanResult": STR,
        "virusScanMessage": nullable(STR),
        "scannedAt": {"anyOf": [*either_timestamp["anyOf"], {"type": "null"}]},
        "overrideName": nullable(STR),
    }
    s["ListFile"] = obj(
        {**file_props, "primary": {"const": True}},
        optional=("primary",),
        description=(
            "A file inside a model (list item or GET /models/{id}): modelFileSelect's keys, the scan fields and "
            "overrideName included (scannedAt null while the scan is pending). primary is sent on the primary "
            "file only."
        ),
        **decision("D-list-file"),
    )
    s["DetailFile"] = obj(
        {**file_props, "hashes": ref("HashesFull")},
        optional=("overrideName",),
        description=(
            "A file on the /model-versions shapes: primary is always a boolean. GET /model-versions/{id} reads its "
            "files with json_build_object: no overrideName, scannedAt without Z; the by-hash routes send "
            "overrideName and scannedAt with Z."
        ),
    )
    preview_props = {
        "id": ID,
        "url": URL,
        "nsfwLevel": COUNT,
        "width": nullable(COUNT),
        "height": nullable(COUNT),
        "hash": nullable(STR),
        "type": {"type": "string", "enum": MEDIA_TYPES},
        "minor": BOOL,
        "poi": BOOL,
        "hasMeta": BOOL,
        "hasPositivePrompt": BOOL,
        "onSite": BOOL,
        "remixOfId": nullable(ID),
        "availability": STR,
        "meta": nullable({"type": "object"}),
        "metadata": nullable(obj(
            {"hash": nullable(STR), "width": nullable(COUNT), "height": nullable(COUNT),
             "duration": {"type": "number", "minimum": 0}, "audio": BOOL, "size": COUNT},
            optional=("hash", "width", "height", "duration", "audio", "size"),
            description="The media's stored metadata (GET /model-versions/{id}); a video's adds duration, audio "
                        "and size (bytes).",
        )),
    }
    s["PreviewImage"] = obj(
        preview_props,
        optional=tuple(k for k in preview_props if k not in ("url", "nsfwLevel", "type")),
        **decision("D-preview-image"),
    )
    nullable_count = {"type": ["integer", "null"], "minimum": 0}
    s["ModelStats"] = obj(
        {"downloadCount": nullable_count, "thumbsUpCount": COUNT, "thumbsDownCount": COUNT, "commentCount": COUNT,
         "tippedAmountCount": nullable_count},
        optional=("thumbsDownCount", "commentCount", "tippedAmountCount"),
        description="downloadCount and tippedAmountCount are null when the creator hides them.",
    )
    s["ListVersionStats"] = obj(
        {"downloadCount": nullable_count, "thumbsUpCount": COUNT, "thumbsDownCount": COUNT},
        optional=("thumbsDownCount",),
    )
    s["DetailVersionStats"] = obj({"downloadCount": nullable_count, "thumbsUpCount": COUNT})
    paid_access = nullable(obj({"permanent": BOOL, "endsAt": nullable(ref("Timestamp"))}, optional=("permanent", "endsAt")))
    s["PaidAccess"] = paid_access
    s["ListModelVersion"] = obj(
        {
            "id": ID,
            "index": COUNT,
            "name": STR,
            "baseModel": STR,
            "baseModelType": nullable(ref("BaseModelType")),
            "createdAt": ref("Timestamp"),
            "publishedAt": {"anyOf": [*either_timestamp["anyOf"], {"type": "null"}], **decision("D-unpublished-at")},
            "status": STR,
            "flags": COUNT,
            "availability": STR,
            "nsfwLevel": COUNT,
            "description": nullable(STR),
            "trainedWords": array(STR),
            "vaeId": nullable(ID),
            "paidAccess": ref("PaidAccess"),
            "earlyAccessDeadline": ref("Timestamp"),
            "covered": BOOL,
            "supportsGeneration": BOOL,
            "stats": ref("ListVersionStats"),
            "files": array(ref("ListFile")),
            "images": array(ref("PreviewImage")),
            "downloadUrl": URL,
        },
        optional=("index", "baseModelType", "createdAt", "publishedAt", "status", "flags", "availability",
                  "nsfwLevel", "description", "trainedWords", "vaeId", "paidAccess", "earlyAccessDeadline", "covered",
                  "supportsGeneration", "stats", "files", "images", "downloadUrl"),
        description=(
            "A model version as it appears inside a model (list item or GET /models/{id}). The list sends "
            "supportsGeneration and neither createdAt, status nor covered; GET /models/{id} sends createdAt, status "
            "and covered (the version as the platform caches it) and no supportsGeneration, and leaves out the keys "
            "whose value is null or an empty array (files and images included)."
        ),
        **decision("D-list-version"),
    )
    no_download = {"not": {"required": ["downloadUrl"]}}
    s["Model"] = obj(
        {
            "id": ID,
            "name": STR,
            "description": nullable(STR),
            "type": ref("ModelType"),
            "nsfw": BOOL,
            "nsfwLevel": COUNT,
            "availability": STR,
            "supportsGeneration": BOOL,
            "allowNoCredit": BOOL,
            "allowCommercialUse": {
                **array({"type": "string", "enum": COMMERCIAL_USES}, uniqueItems=True),
                "description": (
                    "The set of use kinds as a JSON array (the platform's CommercialUse[] column; every recorded "
                    "body). The spec calls it a brace-delimited string ({Image,Sell}): see docs/platform-shapes.md."
                ),
            },
            "allowDerivatives": BOOL,
            "allowDifferentLicense": BOOL,
            "minor": BOOL,
            "poi": BOOL,
            "sfwOnly": BOOL,
            "mode": {"type": ["string", "null"], "enum": ["Archived", "TakenDown", None]},
            "userId": ID,
            "baseModels": array(STR),
            "cosmetic": nullable({"type": "object"}),
            "stats": ref("ModelStats"),
            "creator": obj({"username": STR, "image": nullable(URL)}, optional=("image",)),
            "tags": array(STR),
            "modelVersions": array(ref("ListModelVersion")),
        },
        optional=("mode", "nsfwLevel", "availability", "supportsGeneration", "allowNoCredit", "allowCommercialUse",
                  "allowDerivatives", "allowDifferentLicense", "minor", "poi", "sfwOnly", "userId", "baseModels",
                  "cosmetic", "creator", "stats", "description"),
        allOf=[
            {
                # Healthy: every version has its download URL.
                "if": {"properties": {"mode": {"type": "null"}}},
                "then": {"properties": {"modelVersions": {"items": {"required": ["downloadUrl"]}}}},
            },
            {
                "if": {"required": ["mode"], "properties": {"mode": {"const": "Archived"}}},
                "then": {
                    "properties": {
                        "modelVersions": {"items": {"properties": {"files": {"maxItems": 0}}, **no_download}}
                    }
                },
            },
            {
                "if": {"required": ["mode"], "properties": {"mode": {"const": "TakenDown"}}},
                "then": {
                    "properties": {
                        "modelVersions": {
                            "items": {
                                "properties": {"files": {"maxItems": 0}, "images": {"maxItems": 0}},
                                **no_download,
                            }
                        }
                    }
                },
            },
        ],
        description="creator is left out for models the platform's own account owns.",
        **decision("D-dropped"),
    )
    s["ModelVersion"] = obj(
        {
            "id": ID,
            "modelId": ID,
            "name": STR,
            "description": nullable(STR),
            "baseModel": STR,
            "baseModelType": nullable(ref("BaseModelType")),
            "air": {
                "type": "string",
                "pattern": r"^urn:air:[a-z0-9._\-]+:[a-z0-9_]+:[a-z0-9]+:\d+@\d+$",
                "description": "Canonical resource identifier (AIR).",
            },
            "status": STR,
            "availability": STR,
            "nsfwLevel": COUNT,
            "createdAt": ref("Timestamp"),
            "updatedAt": ref("Timestamp"),
            "publishedAt": {**nullable(ref("Timestamp")), **decision("D-unpublished-at")},
            "uploadType": STR,
            "usageControl": STR,
            "licensingFee": nullable(NUM),
            "paidAccess": ref("PaidAccess"),
            "trainedWords": array(STR),
            "earlyAccessConfig": {"type": ["object", "null"]},
            "earlyAccessEndsAt": nullable(ref("Timestamp")),
            "trainingStatus": {"type": ["string", "null"]},
            "trainingDetails": {"type": ["object", "null"]},
            "stats": ref("DetailVersionStats"),
            "model": obj(
                {
                    "name": STR,
                    "type": ref("ModelType"),
                    "nsfw": BOOL,
                    "poi": BOOL,
                    "mode": {"type": ["string", "null"], "enum": ["Archived", "TakenDown", None]},
                },
                optional=("mode", "poi"),
            ),
            "files": array(ref("DetailFile")),
            "images": array(ref("PreviewImage")),
            "downloadUrl": URL,
        },
        optional=("description", "baseModelType", "air", "status", "availability", "nsfwLevel", "createdAt",
                  "updatedAt", "publishedAt", "uploadType", "usageControl", "licensingFee", "paidAccess",
                  "trainedWords", "earlyAccessConfig", "earlyAccessEndsAt", "trainingStatus", "trainingDetails"),
        allOf=[
            {
                "if": {
                    "properties": {"model": {"required": ["mode"], "properties": {"mode": {"const": "Archived"}}}}
                },
                "then": {"properties": {"files": {"maxItems": 0}}},
            }
        ],
        description=(
            "The /model-versions shape. availability, earlyAccessConfig and earlyAccessEndsAt are the spec's "
            "(the emulator sends them); the platform's own answer has paidAccess and licensingFee instead."
        ),
        **decision("D-dropped", "D-detail-version"),
    )
    s["MiniModelVersion"] = obj(
        {
            "air": s["ModelVersion"]["properties"]["air"],
            "versionName": STR,
            "modelName": STR,
            "baseModel": STR,
            "availability": STR,
            "publishedAt": {**nullable(ref("Timestamp")), **decision("D-unpublished-at")},
            "size": {"type": "number", "minimum": 0},
            "fileType": ref("ModelFileType"),
            "fileName": STR,
            "hashes": ref("HashesSubset"),
            "downloadUrls": array(URL),
            "format": STR,
            "canGenerate": BOOL,
            "isFeatured": BOOL,
            "requireAuth": BOOL,
            "checkPermission": BOOL,
            "earlyAccessEndsAt": nullable(ref("Timestamp")),
            "freeTrialLimit": nullable(COUNT),
            "additionalResourceCharge": BOOL,
            "minor": BOOL,
            "sfwOnly": BOOL,
            "userId": ID,
            "fees": array({"type": "object"}),
            "payoutEnabled": BOOL,
        },
        optional=("earlyAccessEndsAt", "freeTrialLimit", "userId", "fees", "payoutEnabled"),
        allOf=[
            {
                "if": {"properties": {"checkPermission": {"const": True}}},
                "then": {"required": ["earlyAccessEndsAt", "freeTrialLimit"]},
                "else": {"not": {"anyOf": [{"required": ["earlyAccessEndsAt"]}, {"required": ["freeTrialLimit"]}]}},
            }
        ],
        **decision("D-mini-optional"),
    )
    s["HashId"] = obj({"modelVersionId": ID, "modelId": ID, "hash": STR})

    s["Vault"] = obj(
        {
            "userId": ID,
            "storageKb": COUNT,
            "usedStorageKb": COUNT,
            "meta": {"type": "object", "description": "Free-form, reserved."},
            "updatedAt": ref("Timestamp"),
        }
    )
    s["VaultItem"] = obj(
        {
            "id": ID,
            "vaultId": ID,
            "status": {"type": "string", "enum": VAULT_STATUSES},
            "modelVersionId": ID,
            "modelId": ID,
            "modelName": STR,
            "versionName": STR,
            "creatorName": STR,
            "creatorId": nullable(INT),  # Int? on the platform (SetNull when the creator goes)
            "type": ref("ModelType"),
            "baseModel": STR,
            "category": STR,
            "modelSizeKb": COUNT,
            "detailsSizeKb": COUNT,
            "imagesSizeKb": COUNT,
            "createdAt": ref("Timestamp"),
            "addedAt": ref("Timestamp"),
            "refreshedAt": nullable(ref("Timestamp")),
            "notes": nullable(STR),
            "meta": {
                "type": "object",
                "properties": {"failures": COUNT},
                "required": ["failures"],
                "description": "failures: the ingestion retry counter; other keys are diagnostic.",
            },
            "coverImageUrl": nullable(URL),
            "files": array(obj({"id": ID, "sizeKB": {"type": "number", "minimum": 0}, "url": URL, "displayName": STR})),
        }
    )

    s["ImageMeta"] = {
        "type": "object",
        "description": "Free-form generation data as the uploader supplied it; unknown keys are opaque.",
        "properties": {
            "civitaiResources": array(
                obj({"type": STR, "modelVersionId": ID, "weight": NUM}, optional=("weight",), extra=True)
            ),
            "resources": {"type": "array"},
        },
        "additionalProperties": True,
    }
    image_props = {
        "id": ID,
        "url": URL,
        "hash": nullable(STR),
        "width": nullable(COUNT),
        "height": nullable(COUNT),
        "type": {"type": "string", "enum": MEDIA_TYPES},
        "nsfw": BOOL,
        "nsfwLevel": ref("NsfwName"),
        "browsingLevel": COUNT,
        "createdAt": ref("Timestamp"),
        "postId": ID,
        "thumbnail": nullable(obj({"url": URL, "width": nullable(COUNT), "height": nullable(COUNT)})),
        "username": STR,
        "baseModel": STR,
        "modelVersionIds": array(ID, uniqueItems=True),
        "stats": obj(
            {k: COUNT for k in ("cryCount", "laughCount", "likeCount", "dislikeCount", "heartCount", "commentCount")}
        ),
        "meta": nullable(ref("ImageMeta")),
        "tags": array(obj({"id": ID, "name": STR})),
    }
    still_only_for_video = [
        {
            "if": {"properties": {"type": {"enum": ["image", "audio"]}}},
            "then": {"properties": {"thumbnail": {"type": "null"}}},
        }
    ]
    s["Image"] = obj(
        image_props,
        optional=("thumbnail", "tags", "baseModel", "username", "postId", "stats", "modelVersionIds", "browsingLevel",
                  "createdAt", "nsfw"),
        allOf=still_only_for_video,
        description=(
            "meta is always present: null unless withMeta=true and the uploader supplied it; a lookup by imageId, "
            "or by modelId without modelVersionId, wraps it as {id, meta} unless flatMeta=true. tags only with "
            "withTags=true. thumbnail is the spec's (the emulator sends it; the platform's answer has none)."
        ),
        **decision("D-image-item"),
    )
    s["PostImage"] = obj(
        {**image_props, "meta": {"type": "null"}},
        optional=("tags",),
        allOf=still_only_for_video,
        description="An image inside a post: every Image field, meta always null.",
    )
    s["Post"] = obj(
        {
            "id": ID,
            "title": nullable(STR),
            "detail": nullable(STR),
            "nsfwLevel": COUNT,
            "publishedAt": ref("Timestamp"),
            "modelVersionId": nullable(ID),
            "user": obj({"id": ID, "username": STR}),
            "tags": array(obj({"id": ID, "name": STR})),
            "images": array(ref("PostImage"), maxItems=100),
        }
    )
    article_props = {
        "id": ID,
        "title": STR,
        "publishedAt": ref("Timestamp"),
        "createdAt": ref("Timestamp"),
        "updatedAt": ref("Timestamp"),
        "nsfwLevel": COUNT,
        "availability": STR,
        "status": STR,
        "stats": obj(
            {
                k: COUNT
                for k in (
                    "favoriteCount", "collectedCount", "commentCount", "likeCount", "heartCount", "viewCount",
                    "tippedAmountCount",
                )
            },
            optional=("favoriteCount", "collectedCount", "commentCount", "likeCount", "heartCount", "viewCount",
                      "tippedAmountCount"),
            description="The spec's seven counts (the emulator sends them); other count keys may appear.",
        ),
        "user": obj(
            {"id": ID, "username": STR, "image": nullable(URL), "deletedAt": nullable(ref("Timestamp")),
             "profilePicture": {"type": ["object", "null"]}, "cosmetics": {"type": ["array", "null"]},
             "isModerator": BOOL},
            optional=("image", "deletedAt", "profilePicture", "cosmetics", "isModerator"),
            description=("The list's cosmetics is null without equipped cosmetics (getArticles's jsonb_agg), the "
                         "single article's an array (Prisma); the single article adds isModerator."),
        ),
        "tags": array(obj({"id": ID, "name": STR, "isCategory": BOOL}, optional=("isCategory",))),
        "coverImage": nullable(obj({"id": ID, "url": URL, "nsfwLevel": COUNT, "width": nullable(COUNT),
                                    "height": nullable(COUNT)})),
    }
    s["ArticleListItem"] = obj(article_props, optional=("coverImage", "stats"), **decision("D-article-cover"))
    s["Article"] = obj(
        {
            **article_props,
            "content": {"type": "string", "description": "The article body (HTML)."},
        },
        optional=("coverImage", "stats"),
        **decision("D-article-body", "D-article-cover"),
    )
    collection_props = {
        "id": ID,
        "name": STR,
        "description": nullable(STR),
        "type": {"type": "string", "enum": COLLECTION_TYPES},
        "nsfwLevel": COUNT,
        "read": STR,
        "isPublic": BOOL,
        "coverImageUrl": nullable(URL),
        "user": obj({"id": ID, "username": STR}),
    }
    s["CollectionListItem"] = obj(
        {**collection_props, "itemCount": COUNT}, **decision("D-collection-description")
    )
    s["Collection"] = obj(
        {**collection_props, "tags": array(obj({"id": ID, "name": STR}))}, **decision("D-collection-description")
    )
    s["UserLookupItem"] = obj(
        {"id": ID, "username": STR, "avatarNsfw": {"anyOf": [ref("NsfwName"), COUNT]}, "avatarUrl": nullable(STR),
         "meta": nullable({"type": "object"})},
        optional=("avatarUrl", "meta"),
        description="avatarNsfw: the spec's name (None, Soft, Mature, X), which the emulator sends; the platform's "
                    "search path sends the numeric level.",
    )
    s["CurrentUser"] = obj(
        {
            "id": ID,
            "username": STR,
            "tier": {"type": "string", "enum": TIERS},
            "status": {"type": "string", "enum": USER_STATUSES},
            "isMember": BOOL,
            "subscriptions": array(STR),
            "email": STR,
            "emailVerified": BOOL,
            "tokenScope": {"type": "integer", "minimum": 0},
            "buzzLimit": {"type": ["array", "null"], "items": {"type": "object"}},
            "subject": {
                "oneOf": [
                    obj({"type": {"const": "oauth"}, "id": STR}),
                    obj({"type": {"const": "apiKey"}, "id": {"type": "integer", "minimum": 1}}),
                ]
            },
        },
        optional=("email", "emailVerified", "tokenScope", "buzzLimit", "subject"),
        dependentRequired={"email": ["emailVerified"], "emailVerified": ["email"],
                           "tokenScope": ["buzzLimit", "subject"], "subject": ["tokenScope", "buzzLimit"]},
        description=("me.ts: email and emailVerified when the token may read the profile (UserRead) and the user has "
                     "an email; every bearer token adds tokenScope, buzzLimit (a list of budgets, or null) and "
                     "subject: {type: oauth, id: <clientId>} for an OAuth token, {type: apiKey, id: <key row id>} "
                     "for a user's own key (bearer-token.ts)."),
        allOf=[
            {
                "if": {"properties": {"tier": {"const": "free"}}},
                "then": {"properties": {"isMember": {"const": False}}},
                "else": {"properties": {"isMember": {"const": True}}},
            }
        ],
    )
    s["Creator"] = obj(
        {"username": STR, "modelCount": {"type": "integer", "minimum": 1}, "link": URL, "image": nullable(URL)},
        optional=("modelCount", "image"),
    )
    s["Tag"] = obj({"name": STR, "link": URL})
    s["Enums"] = obj(
        {
            "ModelType": array(STR, minItems=1, uniqueItems=True),
            "ModelFileType": array(STR, minItems=1, uniqueItems=True),
            "ActiveBaseModel": array(STR, uniqueItems=True),
            "BaseModel": array(STR, minItems=1, uniqueItems=True),
            "BaseModelType": array(ref("BaseModelType"), minItems=1, uniqueItems=True),
        }
    )

    # Pagination metadata: keys come in pairs (next*: both or neither; page info: both or neither).
    s["ModelsMetadata"] = obj(
        {
            "nextCursor": {"type": ["string", "integer"]},
            "nextPage": URL,
            "currentPage": {"type": "integer", "minimum": 1},
            "pageSize": {"type": "integer", "minimum": 1},
        },
        optional=("nextCursor", "nextPage", "currentPage", "pageSize"),
        dependentRequired={
            "nextCursor": ["nextPage"],
            "nextPage": ["nextCursor"],
            "currentPage": ["pageSize"],
            "pageSize": ["currentPage"],
        },
        description="nextCursor and nextPage are absent on the last page; currentPage and pageSize only with page pagination.",
    )
    s["CursorMetadata"] = obj(
        {"nextCursor": {"type": "string", "minLength": 1}, "nextPage": URL},
        optional=("nextCursor", "nextPage"),
        description="Both keys are absent on the last page. An empty items array is not the end.",
    )
    s["ImagesMetadata"] = obj(
        {**s["CursorMetadata"]["properties"], "currentPage": {"type": "integer", "minimum": 1},
         "pageSize": {"type": "integer", "minimum": 0}},
        optional=("nextCursor", "nextPage", "currentPage", "pageSize"),
        dependentRequired={"currentPage": ["pageSize"], "pageSize": ["currentPage"]},
        description=("nextCursor and nextPage are absent on the last page; with page and no cursor (page mode) "
                     "currentPage and pageSize are on every page (images/index.ts)."),
    )
    s["CollectionsMetadata"] = obj(
        {"nextCursor": ID, "nextPage": URL},
        optional=("nextCursor", "nextPage"),
        dependentRequired={"nextCursor": ["nextPage"], "nextPage": ["nextCursor"]},
    )
    s["CreatorsMetadata"] = obj(
        {
            "totalItems": COUNT,
            "currentPage": {"type": "integer", "minimum": 1},
            "pageSize": {"type": "integer", "minimum": 1},
            "totalPages": {"type": "integer", "minimum": 1},
            "hasMore": BOOL,
            "nextPage": URL,
            "prevPage": URL,
        },
        optional=("hasMore", "nextPage", "prevPage"),
        description=("The platform's getPagingData and getPaginationLinks: totalPages is 1 when there is nothing; "
                     "with query nothing is counted: totalItems and totalPages are lower bounds (exact on the last "
                     "page) and hasMore is sent, the signal for another page. nextPage while currentPage < "
                     "totalPages, prevPage from page 2 when totalPages > 1."),
    )
    s["TagsMetadata"] = obj(
        {
            "totalItems": {"type": "integer", "const": 0},
            "currentPage": {"type": "integer", "minimum": 1},
            "pageSize": {"type": "integer", "minimum": 1},
            "totalPages": {"type": "integer", "const": 1},
        },
        description=("The platform counts no tags (tag.service.ts getTags): totalItems 0 and totalPages 1 on "
                     "every page, and so no nextPage or prevPage; page by the items' length."),
    )

    # Error bodies.
    s["Error"] = obj({"error": {"type": "string", "minLength": 1}}, description="{error: <message>}")
    s["Unauthorized"] = obj({"error": {"const": "Unauthorized"}})
    s["Message"] = obj({"message": {"type": "string", "minLength": 1}}, description="{message: <message>}")
    s["InternalError"] = obj(
        {"message": {"type": "string", "minLength": 1}, "error": {"type": ["string", "object"]}},
        description="{message: <text>, error: <detail>}",
    )
    s["ToggleInternalError"] = obj(
        {
            "message": {"type": "string", "minLength": 1},
            "error": {
                "type": "object",
                "properties": {"message": {"type": "string", "minLength": 1}},
                "required": ["message"],
            },
        },
        description="500 from toggle-version: error.message says why (quota, model not found, membership...).",
        **decision("D-vault-nonmember", "D-toggle-unknown"),
    )
    s["ValidationIssue"] = obj(
        {"code": {"type": "string", "enum": ZOD_ISSUE_CODES}, "path": array({"type": ["string", "integer"]}),
         "message": {"type": "string", "minLength": 1}},
    )
    s["ValidationIssues"] = array(ref("ValidationIssue"), minItems=1, **decision("D-error-validation"))
    s["ValidationError"] = obj(
        {"name": {"const": "ZodError"},
         "message": {"type": "string", "minLength": 1, "description": "The issues array as indented JSON."}},
        **decision("D-error-validation"),
    )
    s["ValidationEnvelope"] = obj({"error": ref("ValidationError")}, **decision("D-error-validation"))
    s["Clock"] = obj({"now": ref("Timestamp")})
    s["Fault"] = obj({"kind": {"type": "string", "enum": ["workflow-fails", "storage-write-fails"]},
                      "userId": {"type": ["integer", "null"]},
                      "times": {"type": "integer", "minimum": 1, "maximum": 1000}})
    s["Faults"] = obj({"faults": array(ref("Fault"))})
    return s


# --- Parameters -----------------------------------------------------------------------------


def param(
    name: str,
    schema: dict[str, Any],
    description: str,
    *,
    where: str = "query",
    required: bool = False,
    explode: bool | None = None,
    decisions: tuple[str, ...] = (),
) -> dict[str, Any]:
    p: dict[str, Any] = {"name": name, "in": where, "description": description, "schema": schema}
    if required or where == "path":
        p["required"] = True
    if explode is not None:
        p["style"] = "form"
        p["explode"] = explode
    if decisions:
        p.update(decision(*decisions))
    return p


def free_text(max_length: int = FREE_TEXT_MAX, *, list_item: bool = False) -> dict[str, Any]:
    # No NUL: a value carrying one is refused (D-bad-bytes). An entry of a comma-separated
    # list cannot hold a comma. Empty counts as absent (D-empty).
    if list_item:
        return {"type": "string", "minLength": 1, "maxLength": max_length, "pattern": "^[^\\u0000,]*$"}
    return {"type": "string", "maxLength": max_length, "pattern": "^[^\\u0000]*$"}


def limit(low: int, high: int, default: int) -> dict[str, Any]:
    return param("limit", {"type": "integer", "minimum": low, "maximum": high, "default": default}, f"Items per page, {low}-{high}.")


def page(default: int | None = None, note: str = "1-indexed page number.", minimum: int = 1) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer", "minimum": minimum, "maximum": SAFE_MAX}
    if default is not None:
        schema["default"] = default
    return param("page", schema, note, decisions=("D-integer-range",))


def boolean(name: str, description: str, default: bool | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "boolean"}
    if default is not None:
        schema["default"] = default
    return param(name, schema, description, decisions=("D-boolean",))


def enum_param(name: str, values: list[str], default: str | None, description: str, **kw: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", "enum": values}
    if default is not None:
        schema["default"] = default
    return param(name, schema, description, **kw)


def id_param(name: str, description: str, where: str = "query", **kw: Any) -> dict[str, Any]:
    return param(name, dict(ID), description, where=where, decisions=("D-id-range",), **kw)


def id_list(name: str, description: str, *, required: bool = False, min_items: int = 1) -> dict[str, Any]:
    return param(
        name,
        {"type": "array", "items": dict(ID), "minItems": min_items},
        description + " Comma-separated.",
        required=required,
        explode=False,
        decisions=("D-id-range",),
    )


def string_list(name: str, description: str, explode: bool, items: dict[str, Any] | None = None) -> dict[str, Any]:
    return param(
        name,
        {"type": "array", "items": items or free_text(list_item=True), "minItems": 1},
        description,
        explode=explode,
        decisions=("D-string-length",) if items is None else (),
    )


PERIOD = enum_param("period", PERIODS, "AllTime", "Window for sort metrics.")


# --- Responses ------------------------------------------------------------------------------

CACHE_PUBLIC = "public, s-maxage=300"
CACHE_POSTS = "public, s-maxage=300, stale-while-revalidate=150"


def header(schema: dict[str, Any], description: str, required: bool = True) -> dict[str, Any]:
    return {"description": description, "required": required, "schema": schema}


RETRY_AFTER = header({"type": "string", "pattern": "^[0-9]+$"}, "Seconds to wait before retrying.")
NO_STORE = header({"type": "string", "const": "no-store"}, "Never cached.")


def json_response(description: str, schema: dict[str, Any], headers: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    r: dict[str, Any] = {"description": description, "content": {"application/json": {"schema": schema}}}
    if headers:
        r["headers"] = headers
    r.update(extra)
    return r


def any_of(*names: str) -> dict[str, Any]:
    return {"anyOf": [ref(n) for n in names]}


def bad(description: str, *shapes: str) -> dict[str, Any]:
    schema = ref(shapes[0]) if len(shapes) == 1 else any_of(*shapes)
    return json_response(description, schema)


def throttled(description: str) -> dict[str, Any]:
    return json_response(
        description, ref("Error"), {"Retry-After": RETRY_AFTER, "Cache-Control": NO_STORE}, **decision("D-error-cache")
    )


UNAUTHORIZED = json_response("Missing, malformed or revoked token.", ref("Unauthorized"))
NOT_FOUND = "Missing (or not visible to this caller)."


def operation(
    op_id: str,
    summary: str,
    auth: str,
    parameters: list[dict[str, Any]],
    responses: dict[str, Any],
    *,
    body: dict[str, Any] | None = None,
    decisions: tuple[str, ...] = (),
    tags: tuple[str, ...] = (),
    description: str | None = None,
    security: list[dict[str, list[str]]] | None = None,
) -> dict[str, Any]:
    if security is None:
        security = {
            "Public": [],
            "Mixed": [{}, {"bearer": []}],
            "Authenticated": [{"bearer": []}],
        }[auth]
    op: dict[str, Any] = {
        "operationId": op_id,
        "summary": summary,
        "tags": list(tags),
        "x-blockkit-auth": auth,
        "security": security,
        "parameters": parameters,
        "responses": responses,
    }
    if description:
        op["description"] = description
    if body is not None:
        op["requestBody"] = body
    if decisions:
        op.update(decision(*decisions))
    return op


def ok(schema: dict[str, Any], description: str = "Success.", headers: dict[str, Any] | None = None) -> dict[str, Any]:
    return json_response(description, schema, headers)


def edge_cached(max_age: int = 300) -> dict[str, Any]:
    """Cache-Control of a platform PublicEndpoint/MixedAuthEndpoint answer (D-public-cache)."""
    value = f"public, s-maxage={max_age}, stale-while-revalidate={max_age // 2}"
    return {"Cache-Control": header({"type": "string", "enum": [value, "private, no-store"]},
                                    "Anonymous answers are edge-cached; answers to a token are private.",
                                    required=False)}


def list_of(item: str, metadata: str | None) -> dict[str, Any]:
    props: dict[str, Any] = {"items": array(ref(item))}
    if metadata:
        props["metadata"] = ref(metadata)
    return obj(props)


def hashes_body(max_items: int, decisions: tuple[str, ...] = ()) -> dict[str, Any]:
    body = {
        "required": True,
        "content": {
            "application/json": {
                "schema": array({"type": "string", "minLength": 64, "maxLength": 64}, maxItems=max_items)
            }
        },
        "description": f"A JSON array of at most {max_items} full SHA256 hashes (64 characters each).",
    }
    if decisions:
        body.update(decision(*decisions))
    return body


def paths() -> dict[str, Any]:
    p: dict[str, Any] = {}
    api = "/api/v1"
    models_params = [
        limit(1, 100, 100),
        page(note="1-indexed page number; incompatible with query (400)."),
        param("cursor", free_text(), "Opaque, from metadata.nextCursor.", decisions=("D-string-length", "D-empty")),
        param("query", free_text(), "Full-text search; requires cursor pagination.", decisions=("D-string-length",)),
        id_list("ids", "Model ids."),
        param("tag", free_text(), "Tag name.", decisions=("D-string-length",)),
        param("username", free_text(), "Creator; auto-slugified.", decisions=("D-string-length",)),
        param(
            "types",
            {"type": "array", "items": ref("ModelType"), "minItems": 1},
            "ModelType values: repeat the parameter or comma-separate.",
            explode=True,
            decisions=("D-repeated",),
        ),
        param(
            "baseModels",
            {"type": "array", "items": free_text(list_item=True), "minItems": 1},
            "Values of BaseModel: repeat the parameter or comma-separate.",
            explode=True,
            decisions=("D-repeated", "D-base-models"),
        ),
        enum_param("checkpointType", ["Standard", "Trained", "Merge"], None, "Checkpoint models only."),
        enum_param("sort", MODEL_SORTS, "Highest Rated", "Sort order.", decisions=("D-model-sort",)),
        PERIOD,
        boolean("nsfw", "Include mature content; ignored in SFW-gated regions. Also yes/no, on/off, y/n, enabled/disabled.", False),
        boolean("supportsGeneration", "Only models supported by on-site generation. Any non-empty value filters (false too), as on the platform."),
        boolean("fromPlatform", "Only models trained on the service. Any non-empty value filters (false too), as on the platform."),
        boolean("earlyAccess", "Include early-access versions. Any non-empty value filters (false too), as on the platform."),
        boolean("primaryFileOnly", "Drop non-primary files. Also yes/no, on/off, y/n, enabled/disabled.", False),
        boolean("favorites", "Token required: the caller's bookmark collection. Also yes/no, on/off, y/n, enabled/disabled.", False),
        boolean("hidden", "Token required: the caller's hidden models. Also yes/no, on/off, y/n, enabled/disabled.", False),
    ]
    p[f"{api}/models"] = {
        "get": operation(
            "listModels",
            "List models.",
            "Mixed",
            models_params,
            {
                "200": ok(list_of("Model", "ModelsMetadata"), headers=edge_cached()),
                "400": bad(
                    "Invalid parameter, malformed cursor, or query combined with page.", "ValidationEnvelope", "Error"
                ),
                "401": json_response("favorites or hidden without a valid token.", ref("Unauthorized"), **decision("D-models-auth")),
                "429": bad("page * limit above 1000: too many pages requested, use cursors.", "Error"),
            },
            decisions=("D-models-pagination", "D-models-sort-keys", "D-models-filters", "D-previews", "D-private-cache",),
            tags=("models",),
            description="favorites and hidden need a token. Non-moderators see only Published versions and public files.",
        )
    }
    p[f"{api}/models/{{id}}"] = {
        "get": operation(
            "getModel",
            "One model.",
            "Public",
            [id_param("id", "Model id.", where="path")],
            {
                "200": ok(ref("Model"), headers=edge_cached()),
                "400": bad("id is not an integer in range.", "Error"),
                "404": bad(NOT_FOUND, "Error"),
            },
            decisions=("D-error-single", "D-model-by-id", "D-previews"),
            tags=("models",),
        )
    }
    version_404 = bad("Missing or unpublished.", "Error")
    p[f"{api}/model-versions/{{id}}"] = {
        "get": operation(
            "getModelVersion",
            "One model version.",
            "Mixed",
            [id_param("id", "Model version id.", where="path")],
            {"200": ok(ref("ModelVersion"), headers=edge_cached()), "400": bad("id is not an integer in range.", "Error"),
             "404": version_404},
            decisions=("D-error-single", "D-version-token", "D-previews", "D-private-cache"),
            tags=("model-versions",),
        )
    }
    p[f"{api}/model-versions/by-hash/{{hash}}"] = {
        "get": operation(
            "getModelVersionByHash",
            "The model version holding a file with this hash.",
            "Public",
            [
                param(
                    "hash",
                    {"type": "string", "minLength": 1},
                    "AutoV1, AutoV2, AutoV3, SHA256, BLAKE3 or CRC32 hash, matched case-insensitively.",
                    where="path",
                    decisions=("D-hash-path",),
                )
            ],
            {"200": ok(ref("ModelVersion"), headers=edge_cached(3600)),
             "404": bad("No file matches, or the version is unpublished.", "Error")},
            decisions=("D-hash-path", "D-public-cache", "D-detail-version"),
            tags=("model-versions",),
        )
    }
    p[f"{api}/model-versions/by-hash"] = {
        "post": operation(
            "getModelVersionsByHashes",
            "Model versions for up to 100 SHA256 hashes; unmatched hashes are dropped.",
            "Public",
            [],
            {
                "200": ok(array(ref("ModelVersion"))),
                "400": bad("Missing body, non-array, a hash not 64 characters, or more than 100 entries; the message names the first failure.", "Error"),
            },
            body=hashes_body(100),
            decisions=("D-error-single", "D-by-hash-order"),
            tags=("model-versions",),
        )
    }
    p[f"{api}/model-versions/by-hash/ids"] = {
        "post": operation(
            "getModelVersionIdsByHashes",
            "Model version ids for up to 10000 SHA256 hashes; unmatched hashes are dropped.",
            "Public",
            [],
            {
                "200": ok(array(ref("HashId"), maxItems=10000)),
                "400": bad("Missing body, non-array, a hash not 64 characters, or more than 10000 entries.", "Error"),
            },
            body=hashes_body(10000, ("D-by-hash-ids-400",)),
            decisions=("D-by-hash-order",),
            tags=("model-versions",),
        )
    }
    p[f"{api}/model-versions/mini/{{id}}"] = {
        "get": operation(
            "getMiniModelVersion",
            "The minimal model version.",
            "Mixed",
            [
                id_param("id", "Model version id.", where="path"),
                param(
                    "epoch",
                    {"type": "integer", "minimum": 1, "maximum": INT32_MAX},
                    "For Private training-result versions: the epoch's file (last epoch when omitted).",
                    decisions=("D-epoch",),
                ),
                param("modelFileId", dict(ID), "Describe this file of the version instead of its primary file.",
                      decisions=("D-id-range",)),
            ],
            {
                "200": ok(ref("MiniModelVersion")),
                "400": bad("Invalid id or epoch.", "Error"),
                "404": bad("Missing, unpublished, primary file missing, or epoch not found.", "Error"),
            },
            decisions=("D-error-single", "D-mini-generate"),
            tags=("model-versions",),
        )
    }

    # Vault.
    p[f"{api}/vault/get"] = {
        "get": operation(
            "getVault",
            "The caller's vault, created on the first call; {vault: null} without membership.",
            "Authenticated",
            [],
            {"200": ok(obj({"vault": nullable(ref("Vault"))})), "401": UNAUTHORIZED},
            decisions=("D-vault-401",),
            tags=("vault",),
        )
    }
    date_filter = {"anyOf": [{"type": "string", "format": "date"}, {"type": "string", "format": "date-time"}]}
    p[f"{api}/vault/all"] = {
        "get": operation(
            "listVaultItems",
            "The caller's vault items.",
            "Authenticated",
            [
                limit(1, 200, 60),
                page(default=1),
                param("query", free_text(), "Case-insensitive substring of modelName, versionName, creatorName.", decisions=("D-string-length",)),
                param("types", {"type": "array", "items": ref("ModelType"), "minItems": 1}, "Comma-separated ModelType values.", explode=False),
                string_list("categories", "Comma-separated categories.", explode=False),
                string_list("baseModels", "Comma-separated base models.", explode=False),
                *[
                    param(n, date_filter, d, decisions=("D-vault-dates",))
                    for n, d in (
                        ("dateCreatedFrom", "Lower bound of the version's createdAt."),
                        ("dateCreatedTo", "Upper bound of the version's createdAt."),
                        ("dateAddedFrom", "Lower bound of when the item was added."),
                        ("dateAddedTo", "Upper bound of when the item was added."),
                    )
                ],
                enum_param("sort", VAULT_SORTS, "Recently Added", "Sort order."),
            ],
            {
                "200": ok(
                    {
                        "oneOf": [
                            obj(
                                {
                                    "items": array(ref("VaultItem")),
                                    "totalItems": COUNT,
                                    "currentPage": {"type": "integer", "minimum": 1},
                                    "pageSize": {"type": "integer", "minimum": 1},
                                    "totalPages": {"type": "integer", "minimum": 1},  # getPagingData: 1 for no items
                                }
                            ),
                            obj({"vault": {"type": "null"}}, **decision("D-vault-nonmember")),
                        ]
                    }
                ),
                "400": bad("Invalid parameter.", "ValidationEnvelope"),
                "401": UNAUTHORIZED,
            },
            decisions=("D-vault-401", "D-vault-all-400"),
            tags=("vault",),
        )
    }
    p[f"{api}/vault/check-vault"] = {
        "get": operation(
            "checkVault",
            "One entry per requested id: the vault item or null.",
            "Authenticated",
            [id_list("modelVersionIds", "Model version ids.", required=True, min_items=0)],
            {
                "200": ok(array(obj({"modelVersionId": ID, "vaultItem": nullable(ref("VaultItem"))}))),
                "400": bad("modelVersionIds missing or malformed.", "Error"),
                "401": UNAUTHORIZED,
            },
            decisions=("D-vault-401", "D-error-single"),
            tags=("vault",),
        )
    }
    p[f"{api}/vault/toggle-version"] = {
        "post": operation(
            "toggleVaultVersion",
            "Add the version when absent, remove it when present.",
            "Authenticated",
            [id_param("modelVersionId", "Model version id.", required=True)],
            {
                "200": ok(
                    obj({"success": BOOL, "vaultId": ID}, optional=("vaultId",)),
                    "vaultId is present when the item was added, absent when removed.",
                ),
                "400": bad("modelVersionId missing or malformed.", "Error"),
                "401": UNAUTHORIZED,
                "500": json_response("Storage quota exceeded, model not found, or another internal error.", ref("ToggleInternalError")),
            },
            decisions=("D-vault-401", "D-error-single", "D-vault-toggle"),
            tags=("vault",),
        )
    }

    # Images.
    p[f"{api}/images"] = {
        "get": operation(
            "listImages",
            "The images feed.",
            "Public",
            [
                limit(0, 200, 50),
                page(note="Honoured only for lookups by imageId, or by modelId without modelVersionId; ignored whenever cursor is set."),
                param("cursor", free_text(), "Opaque; pass metadata.nextCursor back verbatim.", decisions=("D-string-length", "D-images-cursor", "D-feed-expiry")),
                id_param("postId", "Post id."),
                id_param("modelId", "Any version of this model."),
                id_param("modelVersionId", "Model version id."),
                id_param("imageId", "Image id."),
                id_param("userId", "Uploader id."),
                param("username", free_text(), "Uploader; auto-slugified.", decisions=("D-string-length",)),
                PERIOD,
                enum_param("sort", IMAGE_SORTS, "Most Reactions", "Sort order."),
                param(
                    "nsfw",
                    {"anyOf": [{"type": "string", "enum": NSFW_NAMES}, {"type": "boolean"}]},
                    "Legacy: None, Soft, Mature, X, or a boolean; browsingLevel takes precedence.",
                    decisions=("D-boolean",),
                ),
                param(
                    "browsingLevel",
                    {"type": "integer", "minimum": -SAFE_MAX, "maximum": SAFE_MAX},
                    "Browsing level bitmask.",
                    decisions=("D-integer-range",),
                ),
                id_list("tags", "Tag ids; an image must carry all of them."),
                enum_param("type", MEDIA_TYPES, None, "Media type."),
                string_list("baseModels", "Comma-separated base models (values of /enums BaseModel).", explode=False,
                            items={"type": "string", "enum": BASE_MODELS}),
                boolean("withMeta", "Include meta.", False),
                boolean("withTags", "Add each image's tags [{id, name}].", False),
                boolean("flatMeta", "Never wrap meta as {id, meta}.", False),
                boolean("requiringMeta", "Accepted (the platform's filter for images with generation data).", False),
            ],
            {
                "200": ok(list_of("Image", "ImagesMetadata"), headers=edge_cached()),
                "400": bad(
                    "Invalid parameter, malformed cursor, or a feed: cursor that cannot be continued (with these filters, or at all).",
                    "ValidationEnvelope",
                    "Error",
                ),
                "429": bad("page * limit above 1000: too many pages requested, use cursors.", "Error"),
                "503": json_response(
                    "Search overloaded (feed: cursor); retry unchanged.",
                    ref("Error"),
                    {"Retry-After": header({"type": "string", "const": "2"}, "Always 2."), "Cache-Control": NO_STORE},
                ),
            },
            decisions=("D-images-auth",),
            security=[{}, {"bearer": []}],
            tags=("images",),
            description="An empty items array is not the end; the results end only when nextCursor is absent.",
        )
    }
    p[f"{api}/posts/{{id}}"] = {
        "get": operation(
            "getPost",
            "One post with its first 100 images.",
            "Public",
            [id_param("id", "Post id.", where="path")],
            {
                "200": ok(
                    ref("Post"),
                    headers={
                        "Cache-Control": header(
                            {"type": "string", "enum": [CACHE_POSTS, "no-store"]},
                            "Anonymous answers are edge-cached; a request carrying a token is served uncached.",
                        )
                    },
                ),
                "400": bad("id not a positive integer.", "Error"),
                "404": bad(
                    "Missing, unpublished, private, early access, not yet scanned or blocked; in a restricted region also any post with mature content.",
                    "Error",
                ),
                "429": throttled("Rate limit exceeded; honour Retry-After."),
                "503": throttled("Server busy; honour Retry-After."),
            },
            decisions=("D-error-single", "D-posts-token-cache"),
            tags=("posts",),
        )
    }
    public_cache = {"Cache-Control": header({"type": "string", "const": CACHE_PUBLIC}, "Edge-cached anonymous answer.")}
    p[f"{api}/articles"] = {
        "get": operation(
            "listArticles",
            "Published, scanned, non-private articles.",
            "Public",
            [
                limit(1, 100, 100),
                param("cursor", free_text(100), "Keyset cursor <v>|<id>, at most 100 characters; cursor pagination only;"
                      " a malformed one is a 400 {error: 'Invalid cursor'}."),
                param("query", free_text(), "Full-text search over the title.", decisions=("D-string-length",)),
                id_list("tags", "Tag ids, not names."),
                param("username", free_text(), "Author.", decisions=("D-string-length",)),
                enum_param("sort", ARTICLE_SORTS, "Newest", "Sort order."),
                boolean("nsfw", "Clamped to SFW in restricted regions.", False),
            ],
            {
                "200": ok(list_of("ArticleListItem", "CursorMetadata"), headers=public_cache),
                "400": bad("Invalid parameter or malformed cursor.", "ValidationEnvelope", "Error"),
                "429": throttled("Rate limit exceeded; honour Retry-After."),
            },
            tags=("articles",),
        )
    }
    p[f"{api}/articles/{{id}}"] = {
        "get": operation(
            "getArticle",
            "One article with its body.",
            "Public",
            [id_param("id", "Article id.", where="path")],
            {
                "200": ok(ref("Article"), headers=public_cache),
                "400": bad("id not an integer in range.", "Error"),
                "404": bad("Missing, draft, unpublished or private (indistinguishable): {message: 'No article with id N'}.",
                           "Message"),
                "429": throttled("Rate limit exceeded; honour Retry-After."),
            },
            decisions=("D-error-single",),
            tags=("articles",),
        )
    }
    p[f"{api}/collections"] = {
        "get": operation(
            "listCollections",
            "Public collections.",
            "Public",
            [
                limit(1, 100, 100),
                param("cursor", dict(ID), "A collection id; only with sort=Newest.", decisions=("D-id-range",)),
                param("query", free_text(100), "Search over the name, up to 100 characters."),
                enum_param("sort", COLLECTION_SORTS, "Newest", "Sort order."),
                boolean("nsfw", "Clamped in restricted regions.", False),
            ],
            {
                "200": ok(list_of("CollectionListItem", "CollectionsMetadata"), headers=public_cache),
                "400": bad("Invalid parameter, or cursor with sort=Most Followers.", "ValidationEnvelope", "Error"),
                "429": throttled("Rate limit exceeded; honour Retry-After."),
            },
            tags=("collections",),
        )
    }
    p[f"{api}/collections/{{id}}"] = {
        "get": operation(
            "getCollection",
            "One public collection with its tags.",
            "Public",
            [id_param("id", "Collection id.", where="path")],
            {
                "200": ok(ref("Collection"), headers=public_cache),
                "400": bad("id not an integer in range.", "Error"),
                "404": bad("Missing or private (indistinguishable).", "Error"),
                "429": throttled("Rate limit exceeded; honour Retry-After."),
            },
            decisions=("D-error-single",),
            tags=("collections",),
        )
    }
    p[f"{api}/me"] = {
        "get": operation(
            "getMe",
            "The caller of the token.",
            "Authenticated",
            [],
            {"200": ok(ref("CurrentUser")), "401": UNAUTHORIZED},
            decisions=("D-private-cache",),
            tags=("users",),
        )
    }
    p[f"{api}/users"] = {
        "get": operation(
            "listUsers",
            "Look users up by id or username prefix; the first 5 with neither.",
            "Public",
            [
                id_list("ids", "User ids; the response holds at most this many."),
                param("query", free_text(), "Username prefix; shortest matches first.", decisions=("D-string-length",)),
                param("limit", {"type": "integer", "minimum": 1, "maximum": 200},
                      "Checked (1-200), then not used, as on the platform (getAllQuerySchema)."),
            ],
            {
                "200": ok(obj({"items": array(ref("UserLookupItem"))}), headers=edge_cached()),
                "400": bad("Malformed ids or another parse failure.", "ValidationError"),
                "500": json_response("Internal failure.", ref("InternalError")),
            },
            tags=("users",),
        )
    }
    p[f"{api}/creators"] = {
        "get": operation(
            "listCreators",
            "Users with at least one published model, alphabetical.",
            "Public",
            [
                limit(1, 200, 20),
                page(default=1),
                param("query", free_text(), "Full-text on username.", decisions=("D-string-length",)),
            ],
            {
                "200": ok(list_of("Creator", "CreatorsMetadata"), headers=edge_cached()),
                "400": bad("Invalid parameter.", "ValidationIssues", "Message"),
            },
            tags=("users",),
        )
    }
    p[f"{api}/tags"] = {
        "get": operation(
            "listTags",
            "Model tags.",
            "Public",
            [
                limit(1, 200, 20),
                page(default=1),
                param("query", free_text(), "Full-text on tag name.", decisions=("D-string-length",)),
            ],
            {
                "200": ok(list_of("Tag", "TagsMetadata"), headers=edge_cached()),
                "400": bad("Invalid parameter.", "ValidationIssues", "Message"),
            },
            tags=("tags",),
        )
    }
    p[f"{api}/permissions/check"] = {
        "get": operation(
            "checkPermissions",
            "May this user use these resources for generation?",
            "Public",
            [
                id_list("entityIds", "Entity ids (required; may be empty).", required=True, min_items=0),
                enum_param("entityType", ["ModelVersion"], "ModelVersion", "Only ModelVersion is supported."),
                enum_param("permission", ["Generate"], "Generate", "Only Generate is supported."),
                id_param("userId", "Check on behalf of this user (anonymous when omitted)."),
            ],
            {
                "200": ok(
                    {
                        "oneOf": [
                            {
                                "type": "object",
                                "propertyNames": {"pattern": "^[1-9][0-9]*$"},
                                "additionalProperties": {"type": "boolean"},
                                "minProperties": 1,
                            },
                            {"type": "array", "maxItems": 0},
                        ]
                    },
                    "Entity id -> usable for generation; an empty array when entityIds is empty.",
                ),
                "400": bad("entityIds missing or malformed, or an invalid permission.", "Error"),
                "500": json_response("Internal failure.", ref("InternalError")),
            },
            decisions=("D-permissions-keys", "D-permissions-unknown"),
            tags=("permissions",),
            description="The bearer token does not scope the check.",
        )
    }
    p[f"{api}/enums"] = {
        "get": operation("getEnums", "The catalogue's enum lists.", "Public", [], {"200": ok(ref("Enums"))}, tags=("enums",))
    }
    p[f"{api}/openapi.json"] = {
        "get": operation(
            "getOpenApi",
            "This document.",
            "Public",
            [],
            {"200": ok({"type": "object", "required": ["openapi", "paths"]})},
            decisions=("D-openapi-route",),
            tags=("emulator",),
        )
    }
    no_store_download = header({"type": "string", "const": "no-store, max-age=0"}, "Never cached.")
    refused = obj({"error": {"type": "string", "minLength": 1}, "message": {"type": "string", "minLength": 1}})
    p["/api/download/models/{modelVersionId}"] = {
        "get": operation(
            "downloadModel",
            "Redirect to a model file's bytes: the version's primary file, or the one the query names.",
            "Mixed",
            [
                param("modelVersionId", {"type": "integer", "minimum": 1},
                      "A version id, read as JavaScript's Number() reads it.", where="path"),
                param("type", {"type": "string", "enum": list(facts.DOWNLOAD_FILE_TYPES)}, "A ModelFileType."),
                param("format", {"type": "string", "enum": list(facts.MODEL_FILE_FORMATS)}, "A model file format."),
                param("size", {"type": "string", "enum": list(facts.MODEL_FILE_SIZES)}, "full or pruned."),
                param("fp", {"type": "string", "maxLength": 64}, "At most 64 characters."),
                param("quantType", {"type": "string", "maxLength": 64}, "At most 64 characters."),
                param("fileId", {"type": "integer", "minimum": 1}, "A file of the version, by id."),
                param("token", {"type": "string"}, "A bearer token, when no Authorization header is sent."),
            ],
            {
                "307": {
                    "description": "The file's short-lived URL.",
                    "headers": {"Location": header({"type": "string", "minLength": 1}, "The file URL."),
                                "Cache-Control": no_store_download},
                },
                "400": json_response("A parameter fails the platform's schema, or modelVersionId is 0.", ref("Error"),
                                     {"Cache-Control": no_store_download}),
                "401": json_response("Sign-in required, or downloads disabled.", refused,
                                     {"Cache-Control": no_store_download}),
                "403": json_response(
                    "Early access not bought, or a Private version not the caller's.",
                    {"anyOf": [ref("Error"), obj({"error": {"type": "string", "const": "Early Access"},
                                                  "deadline": {"type": "string"},
                                                  "message": {"type": "string", "minLength": 1}})]},
                    {"Cache-Control": no_store_download}),
                "404": json_response("No such version or file.", ref("Error")),
                "410": json_response("The model is archived.", ref("Error"), {"Cache-Control": no_store_download}),
            },
            decisions=("D-downloads",),
            tags=("downloads",),
        )
    }
    p["/__emulator/downloads/{grant}/{name}"] = {
        "get": operation(
            "downloadFile",
            "A model file's bytes (the URL the download route redirects to).",
            "Public",
            [param("grant", {"type": "string"}, "The grant the redirect named.", where="path"),
             param("name", {"type": "string"}, "The download filename.", where="path")],
            {
                "200": {"description": "The bytes (206 for a range).",
                        "headers": {"Content-Disposition": header({"type": "string", "pattern": "^attachment; "},
                                                                  "attachment; filename=...")}},
                "206": {"description": "A byte range."},
                "403": json_response("The link expired.", ref("Error")),
                "404": json_response("No such link.", ref("Error")),
                "416": {"description": "A range past the end."},
            },
            decisions=("D-downloads",),
            tags=("downloads",),
        )
    }
    p["/__emulator/clock"] = {
        "get": operation(
            "getClock", "The emulator's clock.", "Public", [], {"200": ok(ref("Clock"))}, decisions=("D-clock",), tags=("emulator",)
        ),
        "post": operation(
            "advanceClock",
            "Move the one clock of all three origins forward.",
            "Public",
            [],
            {"200": ok(ref("Clock")), "400": bad("Not a finite number of seconds, 0 or more.", "Error")},
            body={
                "required": True,
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "properties": {"advance": {"type": "number", "minimum": 0, "maximum": 3.0e9}},
                            "required": ["advance"],
                        }
                    }
                },
            },
            decisions=("D-clock",),
            tags=("emulator",),
        ),
    }
    p["/__emulator/faults"] = {
        "get": operation("getFaults", "The armed failure switches.", "Public", [], {"200": ok(ref("Faults"))},
                         decisions=("D-faults",), tags=("emulator",)),
        "post": operation(
            "armFault",
            "Make the next uses of a service fail (the next workflow, the next app-storage write).",
            "Public",
            [],
            {"200": ok(ref("Faults")), "400": bad("An unknown kind, a bad count or user.", "Error"),
             "415": json_response("Not sent as application/json (the browser-origin guard).", ref("Error"))},
            body={
                "required": True,
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "properties": {"kind": {"type": "string", "enum": ["workflow-fails", "storage-write-fails"]},
                                           "times": {"type": "integer", "minimum": 0, "maximum": 1000},
                                           "userId": {"type": ["integer", "null"], "minimum": 1}},
                            "required": ["kind"],
                        }
                    }
                },
            },
            decisions=("D-faults",),
            tags=("emulator",),
        ),
        "delete": operation("disarmFaults", "Disarm every failure switch.", "Public", [],
                            {"200": ok(ref("Faults")),
                             "415": json_response("Not sent as application/json (the browser-origin guard).",
                                                  ref("Error"))},
                            decisions=("D-faults",), tags=("emulator",)),
    }
    return p


def document() -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "blockkit emulator: catalogue API",
            "version": "1",
            "description": (
                "The catalogue API under {base_url}/api/v1 as the blockkit emulator serves it, written from "
                "the spec (spec/catalogue-and-oauth.md). Unknown query parameters are ignored; invalid ones "
                "are a 400. x-blockkit-decision marks where the spec is silent and we chose."
            ),
            "x-blockkit-decisions": [{"id": k, "decision": v} for k, v in DECISIONS.items()],
        },
        "servers": [{"url": "/", "description": "The emulator's base_url."}],
        "x-blockkit-decision": " ".join(
            f"[{i}] {DECISIONS[i]}" for i in ("D-bad-bytes", "D-repeated", "D-method", "D-open-objects")
        ),
        "paths": paths(),
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer", "description": "Authorization: Bearer <ACCESS_TOKEN>"}
            },
            "schemas": schemas(),
        },
    }


def render() -> str:
    return json.dumps(document(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the committed JSON is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            print(f"{OUT} is stale: run python3 scripts/build_openapi.py", file=sys.stderr)
            return 1
        return 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

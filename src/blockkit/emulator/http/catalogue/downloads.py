"""GET /api/download/models/{modelVersionId}: the platform's download route, and the file it redirects to.

The route (Public; a token is optional: ``Authorization: Bearer`` or ``?token=``) follows
the platform's download handler and ``getFileForModelVersion`` (civitai ``ebed661``), in
their order:

1. query: ``type`` (a ModelFileType), ``format``, ``size`` (full, pruned), ``fp`` and
   ``quantType`` (strings up to 64), ``fileId``; a bad one is a 400 ``{"error": <zod's
   prettified message>}``; ``modelVersionId`` 0 is a 400 ``Missing modelVersionId``;
2. the version: missing, a POI model's (not its owner's), a deleted model's, or not
   published (owner and moderators excepted): 404 ``File not found``; an archived model:
   410; downloads disabled (usageControl not Download): 401; ``requireAuth`` without a
   caller: 401; early access running on the emulator clock, not bought: 403 with the
   ``deadline``; a Private version that is not the caller's: 403 (401 signed out);
3. the file: ``fileId`` names it, else the best of the version's (public) files of
   ``type`` for the ``format``/``size``/``fp`` asked (the platform's ``getPrimaryFile``
   scores); none, or one whose metadata contradicts the query: 404;
4. 307 to the file's short-lived URL, ``{base_url}/__emulator/downloads/<grant>/<name>``.

A token the platform does not accept makes the caller anonymous (its session lookup
answers null), never a 401 by itself. Every answer is ``Cache-Control: no-store,
max-age=0``. A caller whose User-Agent names a browser gets the platform's text bodies
and its redirects (login, version page) instead of JSON.

The file URL answers the bytes of :mod:`blockkit.emulator.services.files` with
``Content-Disposition: attachment; filename=<the platform's download filename>``, byte
ranges, HEAD and ETag (Starlette's ``FileResponse`` over a cached copy in
``<data>/download-cache``, bounded by :data:`CACHE_MAX_BYTES`). A grant lives
:data:`GRANT_SECONDS` on the emulator clock, in this process only.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import secrets
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from blockkit.emulator import facts
from blockkit.emulator.services import files
from blockkit.emulator.http.auth import ANONYMOUS, Caller, TokenRejected, caller_of
from blockkit.emulator.http.errors import json_response
from blockkit.emulator.state import EmulatorState, emulator
from blockkit.emulator.store import Store, meta
from blockkit.emulator.store import models as store
from blockkit.jsstr import js_string_to_number, utf16_len

DOWNLOAD_PATH = "/api/download/models/{model_version_id}"
FILE_PREFIX = "/__emulator/downloads/"
NO_STORE = {"Cache-Control": "no-store, max-age=0"}
RESOLVE_FAILED = {"Cache-Control": "private, no-store"}
CORS = {"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Headers": "*", "Access-Control-Allow-Methods": "GET"}
GRANT_SECONDS = 24 * 3600
MAX_GRANTS = 10_000
CACHE_MAX_BYTES = 64 * 1024 * 1024
MAX_DB_INTEGER = 2**63 - 1
BROWSER_AGENTS = ("mozilla", "chrome", "safari", "firefox", "opera", "edge")

# The platform's getPrimaryFile: preferred metadata, and the weight of each agreeing key.
DEFAULT_PREFERENCES = {"format": "SafeTensor", "size": "pruned", "fp": "fp16", "quantType": "Q4_K_M"}
PREFERENCE_WEIGHTS = {"format": 100, "size": 10, "fp": 1, "quantType": 0.5}
PRIMARY_FILE_TYPES = ("Model", "Pruned Model", "Diffusion Model", "UNet")
TYPE_AGREEMENT = 1000

# The platform's messages (download route and getFileForModelVersion).
FILE_NOT_FOUND = "File not found"
ARCHIVED = "Model archived, not available for download"
NO_ACCESS = "You do not have access to download this file"
LOGIN_REQUIRED = "The creator of this asset requires you to be logged in to download it"
DOWNLOADS_DISABLED = "The creator of this asset has disabled downloads on this file"
EARLY_ACCESS = "This asset is in Early Access. You can use Buzz access it now!"


# --- the query, as the platform's zod schema reads it ------------------------------------------------

class DownloadQueryError(Exception):
    """The query failed the platform's schema; ``message`` is zod's prettified text."""


@dataclass(frozen=True)
class DownloadQuery:
    model_version_id: float
    type: str | None = None
    format: str | None = None
    size: str | None = None
    fp: str | None = None
    quant_type: str | None = None
    file_id: float | None = None

    def metadata(self) -> dict[str, str]:
        asked = {"format": self.format, "size": self.size, "fp": self.fp, "quantType": self.quant_type}
        return {k: v for k, v in asked.items() if v}


def _one(values: list[str]) -> str | list[str] | None:
    # Next.js gives a repeated query key as an array.
    return None if not values else values[0] if len(values) == 1 else values


def _number(value: str | list[str]) -> float:
    return math.nan if isinstance(value, list) else js_string_to_number(value)


def _number_issue(number: float) -> str | None:
    if math.isnan(number):
        return "Invalid input: expected number, received NaN"
    if math.isinf(number):
        return "Invalid input: expected number, received number"
    return None


def parse_download_query(path_id: str, params: Any) -> DownloadQuery:
    """The route's query (Starlette ``QueryParams``) and path id, or DownloadQueryError."""
    issues: list[tuple[str, str]] = []
    version_id = js_string_to_number(path_id)
    if (problem := _number_issue(version_id)) is not None:
        issues.append((problem, "modelVersionId"))
    chosen: dict[str, str | None] = {}
    for key, allowed in (("type", facts.DOWNLOAD_FILE_TYPES), ("format", facts.MODEL_FILE_FORMATS),
                         ("size", facts.MODEL_FILE_SIZES)):
        value = _one(params.getlist(key))
        if value is not None and (isinstance(value, list) or value not in allowed):
            issues.append(("Invalid option: expected one of " + "|".join(f'"{v}"' for v in allowed), key))
        chosen[key] = value if isinstance(value, str) else None
    for key in ("fp", "quantType"):
        value = _one(params.getlist(key))
        if isinstance(value, list):
            issues.append(("Invalid input: expected string, received array", key))
        elif value is not None and utf16_len(value) > 64:
            issues.append(("Too big: expected string to have <=64 characters", key))
        chosen[key] = value if isinstance(value, str) else None
    file_id: float | None = None
    raw_file_id = _one(params.getlist("fileId"))
    if raw_file_id:  # the platform reads a falsy value ("") as no fileId
        file_id = _number(raw_file_id)
        if (problem := _number_issue(file_id)) is not None:
            issues.append((problem, "fileId"))
    if issues:
        raise DownloadQueryError("\n".join(f"✖ {message}\n  → at {path}" for message, path in issues))
    return DownloadQuery(version_id, chosen["type"], chosen["format"], chosen["size"], chosen["fp"],
                         chosen["quantType"], file_id)


# --- the platform's download filename (getDownloadFilename) -----------------------------------------

_WORD = re.compile(
    r"[A-Z]?[a-z]+(?=[^A-Za-z0-9]|[A-Z]|$)"
    r"|[A-Z]+(?=[^A-Za-z0-9]|[A-Z][a-z]|$)"
    r"|[A-Z]?[a-z]+"
    r"|[A-Z]+"
    r"|[0-9]*(?:1ST|2ND|3RD|(?![123])[0-9]TH)(?=\b|[a-z_])"
    r"|[0-9]*(?:1st|2nd|3rd|(?![123])[0-9]th)(?=\b|[A-Z_])"
    r"|[0-9]+", re.ASCII)


def camel_case(value: str) -> str:
    """lodash's ``camelCase`` for ASCII text (what ``filenamize`` leaves)."""
    words = _WORD.findall(value)
    return "".join(w.lower() if i == 0 else w[:1].upper() + w[1:].lower() for i, w in enumerate(words))


def _truncate(value: str, length: int) -> str:
    """lodash's ``truncate(value, {length, separator: '_', omission: ''})``."""
    if length >= len(value):
        return value
    if length < 1:
        return ""
    result = value[:length]
    if value.find("_", length) != length:
        cut = result.rfind("_")
        if cut > -1:
            result = result[:cut]
    return result


def filenamize(value: str, length: int = 20) -> str:
    value = re.sub(r"[^a-z0-9]", "_", value.replace("'", ""), flags=re.IGNORECASE | re.ASCII)
    return camel_case(_truncate(value, length + value.count("_")))


def download_filename(model_name: str, model_type: str, version_name: str, trained_words: list[str],
                      file_name: str, file_type: str) -> str:
    """The name the platform gives a download (and a file in its API answers)."""
    model_part = filenamize(model_name)
    version_part = filenamize(re.sub(re.escape(model_part), "", version_name, flags=re.IGNORECASE))
    if not model_part or model_type in ("LORA", "LoCon"):
        return file_name
    ext = file_name.rsplit(".", 1)[-1]
    if file_type not in facts.DOWNLOAD_FILE_TYPES:
        return file_name
    if file_type == "Training Data":
        return f"{model_part}_{version_part}_trainingData.zip"
    if model_type == "TextualInversion":
        suffix = "-neg" if file_type == "Negative" else ""
        return f"{trained_words[0]}{suffix}.{ext}" if trained_words else file_name
    if file_type == "VAE":
        return file_name
    suffix = ""
    if "-inpainting" in file_name.lower():
        version_part = re.sub(r"_?inpainting", "", version_part, count=1, flags=re.IGNORECASE)
        suffix = "-inpainting"
    elif ".instruct-pix2pix" in file_name.lower():
        version_part = re.sub(r"_?instruct|-?pix2pix", "", version_part, flags=re.IGNORECASE)
        suffix = ".instruct-pix2pix"
    elif file_type == "Text Encoder":
        suffix = "_txt"
    return f"{model_part}_{version_part}{suffix}.{ext}"


# --- choosing the file (getFileForModelVersion) -------------------------------------------------------

@dataclass(frozen=True)
class Outcome:
    """What the service decided: a file to serve, or the platform's refusal."""

    status: str   # success, not-found, resolve-failed, archived, downloads-disabled, unauthorized,
    #               early-access, no-access
    file: tuple[Any, ...] | None = None
    version: store.VersionRow | None = None
    deadline: str | None = None
    seed: int = 0


def file_metadata(row: tuple[Any, ...]) -> dict[str, str]:
    """A file's metadata as the catalogue lists it (format ``Other`` when none is stored)."""
    fmt, size, fp = row[5], row[6], row[7]
    out = {"format": fmt or "Other"}
    if size:
        out["size"] = size
    if fp:
        out["fp"] = fp
    return out


def _score(row: tuple[Any, ...], preferred: dict[str, str]) -> float:
    score = float(TYPE_AGREEMENT)
    for key, value in file_metadata(row).items():
        weight = PREFERENCE_WEIGHTS.get(key)
        if weight:
            score += weight if value == preferred.get(key) else -weight
    if row[3] in PRIMARY_FILE_TYPES:
        score += TYPE_AGREEMENT
    return score


def best_file(rows: list[tuple[Any, ...]], asked: dict[str, str]) -> tuple[Any, ...] | None:
    """The platform's ``getPrimaryFile``: the highest score for the preferences; a tie goes to the
    file the catalogue marks primary, then to the lowest id (the platform keeps its DB order)."""
    preferred = {**DEFAULT_PREFERENCES, **asked}
    if not rows:
        return None
    return min(rows, key=lambda r: (-_score(r, preferred), -int(r[8]), r[0]))


def resolve(state: EmulatorState, query: DownloadQuery, caller: Caller) -> Outcome:
    version_id = query.model_version_id
    if version_id != int(version_id) or not -MAX_DB_INTEGER <= version_id <= MAX_DB_INTEGER:
        return Outcome("not-found")  # the platform's DB query fails on it (a 500 there)
    now = state.clock.iso()
    with state.store.read() as db:
        version = store.versions_by_ids(db, [int(version_id)]).get(int(version_id))
        if version is None:
            return Outcome("not-found")
        moderator = caller.is_moderator
        owner = caller.user_id is not None and caller.user_id == version.owner_id
        if version.model_poi and not owner and not moderator:
            return Outcome("not-found")
        if version.model_mode == "Archived":
            return Outcome("archived")
        if version.model_status == "Deleted" and not moderator:
            return Outcome("not-found")
        if not (moderator or owner or (version.model_status == "Published" and version.status == "Published")):
            return Outcome("not-found")
        if version.usage_control != "Download" and not moderator and not owner:
            return Outcome("downloads-disabled")
        if version.require_auth and caller.user_id is None:
            return Outcome("unauthorized")
        if version.early_access_active(now) and not moderator and not owner:
            bought = caller.user_id is not None and version.id in store.early_access_purchases(
                db, caller.user_id, [version.id])
            if not bought:
                return Outcome("early-access", version=version, deadline=version.early_access_ends_at)
        private = "Private" in (version.availability, version.model_availability)
        if private and not moderator and not owner:
            return Outcome("no-access" if caller.user_id is not None else "unauthorized")
        if version.model_mode == "TakenDown":
            # The platform removes a taken-down model's files from storage: its resolve fails.
            return Outcome("resolve-failed")
        rows = store.files_of_versions(db, [version.id], public_only=not (moderator or owner))
        if query.file_id:
            chosen = next((r for r in rows if r[0] == query.file_id), None)
        else:
            chosen = best_file([r for r in rows if query.type is None or r[3] == query.type], query.metadata())
            if chosen is not None:
                metadata = file_metadata(chosen)
                if any(metadata.get(k, v) != v for k, v in query.metadata().items()):
                    chosen = None  # the platform's misalignment check
        if chosen is None:
            return Outcome("not-found")
        seed = int(meta.get(db, meta.SEED, 0))
    return Outcome("success", file=chosen, version=version, seed=seed)


# --- grants: the short-lived file URLs ----------------------------------------------------------------

@dataclass(frozen=True)
class Grant:
    recipe: files.Recipe
    filename: str
    expires_at: float  # emulator clock, seconds


class Grants:
    """The file URLs handed out by this build of the apps (a reset starts with none), oldest first."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.table: OrderedDict[str, Grant] = OrderedDict()


def _grants(state: EmulatorState) -> Grants:
    return state.kept("download-grants", Grants)


def issue_grant(state: EmulatorState, grant: Grant) -> str:
    key = secrets.token_urlsafe(24)
    now = state.clock.timestamp()
    grants = _grants(state)
    with grants.lock:
        table = grants.table
        for stale in [k for k, g in table.items() if g.expires_at <= now]:
            del table[stale]
        while len(table) >= MAX_GRANTS:
            table.popitem(last=False)
        table[key] = grant
    return key


def find_grant(state: EmulatorState, key: str) -> Grant | None:
    grants = _grants(state)
    with grants.lock:
        return grants.table.get(key)


# --- the bytes on disk ----------------------------------------------------------------------------------

def cache_dir(store_: Store) -> Path:
    return store_.path.parent / "download-cache"


def cached_file(store_: Store, recipe: files.Recipe) -> Path:
    """The recipe's bytes in ``<data>/download-cache`` (made on first use; the oldest copies are
    removed past :data:`CACHE_MAX_BYTES`)."""
    folder = cache_dir(store_)
    digest = hashlib.sha256(orjson.dumps([recipe.seed, recipe.file_id, recipe.name, recipe.format, recipe.fp,
                                          recipe.length])).hexdigest()[:24]
    path = folder / f"{recipe.file_id}-{digest}.bin"
    try:
        info = path.stat()
    except FileNotFoundError:
        pass
    else:
        # Recently used: evicted last. The access time only: the mtime makes the ETag (If-Range).
        os.utime(path, (time.time(), info.st_mtime))
        return path
    folder.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        tmp.write_bytes(files.file_bytes(recipe))
        tmp.replace(path)  # whole or not at all, for a reader in another thread
    finally:
        tmp.unlink(missing_ok=True)
    _evict(folder, keep=path)
    return path


def _evict(folder: Path, keep: Path) -> None:
    entries = []
    for entry in os.scandir(folder):
        if entry.name.endswith(".bin"):
            try:
                info = entry.stat()
            except OSError:
                continue
            entries.append((info.st_atime, info.st_size, Path(entry.path)))
    total = sum(size for _t, size, _p in entries)
    for _used, size, path in sorted(entries):
        if total <= CACHE_MAX_BYTES:
            break
        if path != keep:
            path.unlink(missing_ok=True)
            total -= size


# --- routes -----------------------------------------------------------------------------------------

def is_browser(request: Request) -> bool:
    agent = request.headers.get("user-agent", "").lower()
    return any(name in agent for name in BROWSER_AGENTS)


def _error(request: Request, status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    headers = {**CORS, **NO_STORE, **(headers or {})}
    if is_browser(request):
        return PlainTextResponse(message, status_code=status, headers=headers)
    return json_response({"error": message}, status, headers)


def _caller(request: Request) -> Caller:
    try:
        return caller_of(request, allow_query_token=True)
    except TokenRejected:
        return ANONYMOUS  # the platform's session lookup answers null for a token it does not accept


def download_endpoint(request: Request) -> Response:
    state = emulator(request)
    try:
        query = parse_download_query(request.path_params["model_version_id"], request.query_params)
    except DownloadQueryError as exc:
        return json_response({"error": str(exc)}, 400, {**CORS, **NO_STORE})
    if query.model_version_id == 0:
        return _error(request, 400, "Missing modelVersionId")
    outcome = resolve(state, query, _caller(request))
    version_path = f"/model-versions/{int(query.model_version_id)}" if outcome.version else ""
    headers = {**CORS, **NO_STORE}
    if outcome.status == "not-found":
        return _error(request, 404, FILE_NOT_FOUND)
    if outcome.status == "resolve-failed":
        return _error(request, 404, FILE_NOT_FOUND, RESOLVE_FAILED)
    if outcome.status == "archived":
        return _error(request, 410, ARCHIVED)
    if outcome.status == "early-access":
        if is_browser(request):
            return RedirectResponse(version_path, status_code=307, headers=headers)
        return json_response({"error": "Early Access", "deadline": outcome.deadline, "message": EARLY_ACCESS}, 403,
                             headers)
    if outcome.status == "no-access":
        return _error(request, 403, NO_ACCESS)
    if outcome.status == "unauthorized":
        if is_browser(request):
            back = quote(f"/model-versions/{int(query.model_version_id)}", safe="")
            return RedirectResponse(f"/login?returnUrl={back}&reason=download-auth", status_code=307,
                                    headers=headers)
        return json_response({"error": "Unauthorized", "message": LOGIN_REQUIRED}, 401, headers)
    if outcome.status == "downloads-disabled":
        return json_response({"error": "Unauthorized", "message": DOWNLOADS_DISABLED}, 401, headers)
    assert outcome.file is not None and outcome.version is not None
    row, version = outcome.file, outcome.version
    file_id, name, file_type, size_kb, fmt, fp = row[0], row[2], row[3], row[4], row[5], row[7]
    recipe = files.Recipe(outcome.seed, file_id, name, fmt, fp, round(size_kb * 1024))
    if recipe.length > files.MAX_FILE_BYTES:
        # A data directory seeded before files were made from their rows lists platform-sized files.
        return json_response({"error": f"file {file_id} lists {size_kb} KB: this data directory was seeded before "
                                       "the emulator served downloads; start from a fresh one "
                                       "(blockkit emulator reset) to download its files"}, 500, headers)
    trained = orjson.loads(version.trained_words) if version.trained_words else []
    filename = download_filename(version.model_name, version.model_type, version.name, trained, name, file_type)
    key = issue_grant(state, Grant(recipe, filename, state.clock.timestamp() + GRANT_SECONDS))
    # As a signed storage URL does, the URL names its Content-Disposition (clients read the filename there).
    disposition = quote(f'attachment; filename="{filename}"', safe="")
    location = (f"{request.url.scheme}://{request.url.netloc}{FILE_PREFIX}{key}/{quote(filename, safe='')}"
                f"?response-content-disposition={disposition}")
    return RedirectResponse(location, status_code=307, headers=headers)


def file_endpoint(request: Request) -> Response:
    state = emulator(request)
    grant = find_grant(state, request.path_params["grant"])
    if grant is None:
        return json_response({"error": "No such download link: ask /api/download/models/{id} for a new one"}, 404)
    if grant.expires_at <= state.clock.timestamp():
        return json_response({"error": "This download link has expired: ask /api/download/models/{id} again"},
                             403)
    path = cached_file(state.store, grant.recipe)
    media_type = "application/zip" if grant.filename.lower().endswith(".zip") else "application/octet-stream"
    return FileResponse(path, media_type=media_type, filename=grant.filename,
                        headers={"Cache-Control": "private, max-age=0"})


def preflight(request: Request) -> Response:
    return Response(status_code=200, headers=CORS)


routes = [
    Route(DOWNLOAD_PATH, download_endpoint, methods=["GET", "HEAD"]),
    Route(DOWNLOAD_PATH, preflight, methods=["OPTIONS"]),
]
file_routes = [Route("/downloads/{grant}/{name}", file_endpoint, methods=["GET", "HEAD"])]  # under /__emulator

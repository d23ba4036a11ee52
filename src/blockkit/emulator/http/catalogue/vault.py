"""/api/v1/vault: a member's personal vault of model versions (bearer token; active membership).

Every route needs a token: none, or one that is malformed, unknown, expired or revoked,
is 401 ``{"error": "Unauthorized"}``. A caller without an active membership (a paid
tier with an active subscription) has no vault: ``/vault/get`` and ``/vault/all``
answer ``{"vault": null}``, ``/vault/check-vault`` every ``vaultItem`` null, and
``/vault/toggle-version`` a 500 whose ``error.message`` says a membership is needed.

- ``GET /vault/get`` creates the vault on the first call. ``storageKb`` is the largest
  allowance among the caller's active memberships (``facts.VAULT_STORAGE_KB``),
  brought up to date on every call; ``usedStorageKb`` sums the items' three sizes.
- ``GET /vault/all`` filters and sorts in the service (a vault is small), then pages.
- ``POST /vault/toggle-version`` adds a version as a Pending snapshot (its public
  files' size reserved against the quota at once; no ingestion runs in the emulator,
  so it stays Pending) or removes it; quota, a missing or unpublished version and
  a missing membership are 500s with ``error.message``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from typing import Annotated, Any, Literal

import orjson
from pydantic import BeforeValidator, Field
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from blockkit.emulator import facts
from blockkit.emulator.http.auth import Caller, caller_of
from blockkit.emulator.http.errors import ApiError, json_response
from blockkit.emulator.http.catalogue.model_versions import may_see
from blockkit.emulator.http.catalogue.pages import paging_data
from blockkit.emulator.http.catalogue.models import PRIVATE, ModelTypeName, absolute, origin
from blockkit.emulator.http.catalogue.params import (
    MAX_SAFE_INTEGER,
    CommaList,
    ListText,
    QueryId,
    QueryInt,
    QueryModel,
    QueryText,
    parse_query,
)
from blockkit.emulator.store.clock import format_timestamp
from blockkit.emulator.state import EmulatorState, emulator
from blockkit.emulator.store import models as models_store
from blockkit.emulator.store import vault as store

# --- query models ---------------------------------------------------------------------------------

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)
_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})?", re.ASCII)


@dataclass(frozen=True)
class Bound:
    """A date filter: a day (the whole of it) or an instant."""

    moment: datetime
    whole_day: bool

    def lower(self) -> str:
        return format_timestamp(self.moment)

    def upper(self) -> str:
        """The last timestamp inside the bound (a day ends at its last millisecond)."""
        end = self.moment + timedelta(days=1) - timedelta(milliseconds=1) if self.whole_day else self.moment
        return format_timestamp(end)


def _bound(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        if _DATE.fullmatch(value):
            return Bound(datetime.combine(date.fromisoformat(value), datetime.min.time(), timezone.utc), True)
        if _DATETIME.fullmatch(value):
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
            return Bound(moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc), False)
    except ValueError:
        pass
    raise ValueError("Expected an ISO date (2024-01-31) or an ISO-8601 timestamp")


QueryBound = Annotated[Bound, BeforeValidator(_bound)]

VaultSort = Literal["Recently Added", "Recently Created", "Model Name", "Model Size"]


class VaultAllQuery(QueryModel):
    limit: QueryInt = Field(60, ge=1, le=200)
    page: QueryInt = Field(1, ge=1, le=MAX_SAFE_INTEGER)
    query: QueryText | None = None
    types: CommaList[ModelTypeName] | None = Field(None, min_length=1)
    categories: CommaList[ListText] | None = Field(None, min_length=1)
    base_models: CommaList[ListText] | None = Field(None, alias="baseModels", min_length=1)
    date_created_from: QueryBound | None = Field(None, alias="dateCreatedFrom")
    date_created_to: QueryBound | None = Field(None, alias="dateCreatedTo")
    date_added_from: QueryBound | None = Field(None, alias="dateAddedFrom")
    date_added_to: QueryBound | None = Field(None, alias="dateAddedTo")
    sort: VaultSort = "Recently Added"


class CheckVaultQuery(QueryModel):
    model_version_ids: CommaList[QueryId] = Field(alias="modelVersionIds")


class ToggleQuery(QueryModel):
    model_version_id: QueryId = Field(alias="modelVersionId")


# --- shapes -----------------------------------------------------------------------------------------

def vault_shape(row: tuple[Any, ...]) -> dict[str, Any]:
    user_id, storage_kb, meta, updated_at, used = row
    return {"userId": user_id, "storageKb": storage_kb, "usedStorageKb": int(used),
            "meta": orjson.loads(meta) if meta else {}, "updatedAt": updated_at}


def item_shape(row: tuple[Any, ...], files: list[tuple[Any, ...]], base_url: str) -> dict[str, Any]:
    (item_id, vault_id, status, version_id, model_id, model_name, version_name, creator_id, creator_name, kind,
     base_model, category, model_kb, details_kb, images_kb, created_at, added_at, refreshed_at, notes, meta,
     cover) = row
    meta_obj = orjson.loads(meta) if meta else {}
    if not isinstance(meta_obj, dict):
        meta_obj = {}
    meta_obj.setdefault("failures", 0)
    return {
        "id": item_id, "vaultId": vault_id, "status": status, "modelVersionId": version_id, "modelId": model_id,
        "modelName": model_name, "versionName": version_name, "creatorName": creator_name, "creatorId": creator_id,
        "type": kind, "baseModel": base_model, "category": category, "modelSizeKb": model_kb,
        "detailsSizeKb": details_kb, "imagesSizeKb": images_kb, "createdAt": created_at, "addedAt": added_at,
        "refreshedAt": refreshed_at, "notes": notes, "meta": meta_obj, "coverImageUrl": absolute(base_url, cover),
        "files": [{"id": f[0], "sizeKB": f[1], "url": absolute(base_url, f[2]), "displayName": f[3]} for f in files],
    }


# --- service ------------------------------------------------------------------------------------------

def allowance(tiers: list[str]) -> int:
    """The storage a user's active memberships give (the largest one)."""
    return max((facts.VAULT_STORAGE_KB[t] for t in tiers if t in facts.VAULT_STORAGE_KB), default=0)


def get_vault(state: EmulatorState, caller: Caller) -> dict[str, Any] | None:
    """The caller's vault, created on the first call and its allowance kept current; None without membership."""
    assert caller.user_id is not None
    now = state.clock.iso()
    with state.store.read() as db:
        tiers = store.active_tiers(db, caller.user_id)
        row = store.get_vault(db, caller.user_id)
    if not caller.is_member or not tiers:
        return None
    storage = allowance(tiers)
    if row is None or row[1] != storage:
        with state.store.write() as db:
            if store.get_vault(db, caller.user_id) is None:
                store.create_vault(db, caller.user_id, storage, now)
            else:
                store.set_storage(db, caller.user_id, storage, now)
            row = store.get_vault(db, caller.user_id)
    assert row is not None
    return vault_shape(row)


def _matches(row: tuple[Any, ...], query: VaultAllQuery) -> bool:
    if query.query is not None:
        needle = query.query.casefold()
        if not any(needle in str(text).casefold() for text in (row[5], row[6], row[8])):
            return False
    if query.types and row[9] not in query.types:
        return False
    if query.categories and row[11] not in query.categories:
        return False
    if query.base_models and row[10] not in query.base_models:
        return False
    created, added = row[15], row[16]
    for value, low, high in ((created, query.date_created_from, query.date_created_to),
                             (added, query.date_added_from, query.date_added_to)):
        if low is not None and value < low.lower():
            return False
        if high is not None and value > high.upper():
            return False
    return True


SORT_KEYS = {
    "Recently Added": (lambda r: (r[16], r[0]), True),
    "Recently Created": (lambda r: (r[15], r[0]), True),
    "Model Name": (lambda r: (str(r[5]).casefold(), str(r[6]).casefold(), r[0]), False),
    "Model Size": (lambda r: (r[12] + r[13] + r[14], r[0]), True),
}


def list_items(state: EmulatorState, caller: Caller, query: VaultAllQuery, base_url: str) -> dict[str, Any] | None:
    assert caller.user_id is not None
    if not caller.is_member:
        return None
    with state.store.read() as db:
        rows = [r for r in store.items(db, caller.user_id) if _matches(r, query)]
        key, descending = SORT_KEYS[query.sort]
        rows.sort(key=key, reverse=descending)
        total = len(rows)
        start = (query.page - 1) * query.limit
        page = rows[start:start + query.limit] if start < total else []
        files = store.item_files(db, [r[0] for r in page])
    # getPaginatedVaultItems ends in getPagingData, spread at the top level: totalPages is 1 for no items.
    return {"items": [item_shape(r, files.get(r[0], []), base_url) for r in page],
            **paging_data(page=query.page, limit=query.limit, total=total)}


def check_items(state: EmulatorState, caller: Caller, version_ids: list[int], base_url: str) -> list[dict[str, Any]]:
    assert caller.user_id is not None
    found: dict[int, tuple[Any, ...]] = {}
    files: dict[int, list[tuple[Any, ...]]] = {}
    if caller.is_member and version_ids:
        with state.store.read() as db:
            found = store.items_for_versions(db, caller.user_id, sorted(set(version_ids)))
            files = store.item_files(db, [r[0] for r in found.values()])
    return [{"modelVersionId": v,
             "vaultItem": item_shape(found[v], files.get(found[v][0], []), base_url) if v in found else None}
            for v in version_ids]


class ToggleFailed(Exception):
    """The toggle cannot be done: the 500's error.message."""


def toggle(state: EmulatorState, caller: Caller, version_id: int) -> dict[str, Any]:
    assert caller.user_id is not None
    now = state.clock.iso()
    with state.store.write() as db:
        tiers = store.active_tiers(db, caller.user_id)
        if not caller.is_member or not tiers:
            raise ToggleFailed("A vault needs an active membership (bronze, silver, gold or founder)")
        existing = store.items_for_versions(db, caller.user_id, [version_id]).get(version_id)
        if existing is not None:
            store.remove_item(db, existing[0])
            store.touch(db, caller.user_id, now)
            return {"success": True}
        version = models_store.versions_by_ids(db, [version_id]).get(version_id)
        if version is None or not may_see(version, caller):
            raise ToggleFailed(f"Model version {version_id} not found")
        storage = allowance(tiers)
        if store.get_vault(db, caller.user_id) is None:
            store.create_vault(db, caller.user_id, storage, now)
        else:
            store.set_storage(db, caller.user_id, storage, now)
        files = models_store.files_of_versions(db, [version_id], public_only=True)
        model_kb = math.ceil(sum(f[4] for f in files))
        details_kb = max(1, math.ceil(len((version.description or "").encode()) / 1024))
        row = store.get_vault(db, caller.user_id)
        assert row is not None
        used = int(row[4])
        if used + model_kb + details_kb > storage:
            raise ToggleFailed(f"Storage quota exceeded: the vault holds {used} of {storage} KB and this version"
                               f" needs {model_kb + details_kb} KB")
        creator = db.execute("SELECT username FROM users WHERE id = ?", (version.owner_id,)).fetchone()
        store.add_item(
            db, vault_id=caller.user_id, status="Pending", model_version_id=version.id, model_id=version.model_id,
            model_name=version.model_name, version_name=version.name, creator_id=version.owner_id,
            creator_name=creator[0] if creator else "", type=version.model_type, base_model=version.base_model,
            category=models_store.category_of_model(db, version.model_id), model_size_kb=model_kb,
            details_size_kb=details_kb, images_size_kb=0, created_at=version.created_at, added_at=now,
            meta='{"failures": 0}',
        )
        store.touch(db, caller.user_id, now)
    return {"success": True, "vaultId": caller.user_id}


# --- routes ---------------------------------------------------------------------------------------------

def get_endpoint(request: Request) -> Response:
    caller = caller_of(request, required=True)
    return json_response({"vault": get_vault(emulator(request), caller)}, headers=PRIVATE)


def all_endpoint(request: Request) -> Response:
    caller = caller_of(request, required=True)
    query = parse_query(request, VaultAllQuery)
    found = list_items(emulator(request), caller, query, origin(request))
    return json_response(found if found is not None else {"vault": None}, headers=PRIVATE)


def check_endpoint(request: Request) -> Response:
    caller = caller_of(request, required=True)
    query = parse_query(request, CheckVaultQuery, shape="error")
    return json_response(check_items(emulator(request), caller, list(query.model_version_ids), origin(request)),
                         headers=PRIVATE)


def toggle_endpoint(request: Request) -> Response:
    caller = caller_of(request, required=True)
    query = parse_query(request, ToggleQuery, shape="error")
    try:
        result = toggle(emulator(request), caller, query.model_version_id)
    except ToggleFailed as exc:
        raise ApiError(500, {"message": "Could not toggle the model version in your vault",
                             "error": {"message": str(exc)}}, PRIVATE) from None
    return json_response(result, headers=PRIVATE)


routes = [
    Route("/vault/get", get_endpoint, methods=["GET"]),
    Route("/vault/all", all_endpoint, methods=["GET"]),
    Route("/vault/check-vault", check_endpoint, methods=["GET"]),
    Route("/vault/toggle-version", toggle_endpoint, methods=["POST"]),
]

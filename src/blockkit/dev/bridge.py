"""The dev host's answers to block requests.

The host answers what it can at once: tokens, and the per-viewer app storage
(kept in memory for the session). A request whose scope the manifest does not
declare gets an error reply, as a save fails on the platform. Requests the dev
host cannot simulate (generation, pickers, shared boards) get an error that
says so, so that the block does not hang.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from blockkit.dev.protocol import BLOCK_TO_HOST, BlockMessage, scopes_satisfied

# The platform's app storage caps: 64 KB a value, 50 MB an app.
STORAGE_VALUE_LIMIT_BYTES = 64 * 1024
STORAGE_QUOTA_BYTES = 50 * 1024 * 1024
# blockkit's own stand-ins where the platform's numbers are not published.
STORAGE_QUOTA_ROWS = 10_000
STORAGE_LIST_PAGE = 100

SCOPE_ERROR = "SCOPE_NOT_DECLARED"
NOT_SIMULATED_ERROR = "NOT_SIMULATED_IN_BLOCKKIT_DEV"


@dataclass
class DevStorage:
    """App storage for one viewer of one block, for as long as ``blockkit dev`` runs."""

    rows: dict[str, tuple[Any, str]] = field(default_factory=dict)

    def used_bytes(self) -> int:
        return sum(_size(value) for value, _ in self.rows.values())


Reply = dict[str, Any]


@dataclass
class Bridge:
    """Host-side request handling for one dev session."""

    declared_scopes: frozenset[str]
    mint_token: Callable[[], dict[str, Any]]
    storage: DevStorage = field(default_factory=DevStorage)

    def reply_to(self, data: Any) -> Reply | None:
        """The host's reply to the block message ``data``, or None when it sends none."""
        if not isinstance(data, dict) or not isinstance(data.get("type"), str):
            return None
        spec = BLOCK_TO_HOST.get(data["type"])
        if spec is None or spec.reply is None:
            return None
        raw_payload = data.get("payload")
        payload: dict[str, Any] = raw_payload if isinstance(raw_payload, dict) else {}
        answer = self._answer(data["type"], spec, payload)
        request_id = payload.get("requestId")
        if isinstance(request_id, str):
            answer = {"requestId": request_id, **answer}
        return {"type": spec.reply, "payload": answer}

    def _answer(self, type_: str, spec: BlockMessage, payload: dict[str, Any]) -> dict[str, Any]:
        if type_ == "REQUEST_TOKEN":
            return {"token": self.mint_token()}
        if not scopes_satisfied(spec, self.declared_scopes):
            needed = " or ".join(sorted(spec.scopes))
            return {"error": f"{SCOPE_ERROR}: {type_} needs {needed}"}
        handler = _STORAGE_HANDLERS.get(type_)
        if handler is not None:
            return handler(self.storage, payload)
        return {"error": f"{NOT_SIMULATED_ERROR}: blockkit dev does not simulate {type_}"}


def _storage_get(storage: DevStorage, payload: dict[str, Any]) -> dict[str, Any]:
    row = storage.rows.get(str(payload.get("key")))
    return {"value": row[0] if row else None}


def _storage_set(storage: DevStorage, payload: dict[str, Any]) -> dict[str, Any]:
    key = str(payload.get("key"))
    value = payload.get("value")
    size = _size(value)
    others = storage.used_bytes() - (_size(storage.rows[key][0]) if key in storage.rows else 0)
    if size > STORAGE_VALUE_LIMIT_BYTES or others + size > STORAGE_QUOTA_BYTES:
        return {"ok": False, "error": "PAYLOAD_TOO_LARGE"}
    if key not in storage.rows and len(storage.rows) >= STORAGE_QUOTA_ROWS:
        return {"ok": False, "error": "PAYLOAD_TOO_LARGE"}
    storage.rows[key] = (value, _now())
    return {"ok": True, "sizeBytes": size}


def _storage_delete(storage: DevStorage, payload: dict[str, Any]) -> dict[str, Any]:
    deleted = storage.rows.pop(str(payload.get("key")), None) is not None
    return {"ok": True, "deleted": deleted}


def _storage_list(storage: DevStorage, payload: dict[str, Any]) -> dict[str, Any]:
    raw_prefix = payload.get("prefix")
    prefix = raw_prefix if isinstance(raw_prefix, str) else ""
    keys = sorted(k for k in storage.rows if k.startswith(prefix))
    cursor = payload.get("cursor")
    if isinstance(cursor, str):
        keys = [k for k in keys if k > cursor]
    limit = payload.get("limit")
    page_size = limit if isinstance(limit, int) and 0 < limit <= STORAGE_LIST_PAGE else STORAGE_LIST_PAGE
    page = keys[:page_size]
    result: dict[str, Any] = {"keys": [{"key": k, "updatedAt": storage.rows[k][1]} for k in page]}
    if len(keys) > page_size:
        result["nextCursor"] = page[-1]
    return result


def _storage_quota(storage: DevStorage, payload: dict[str, Any]) -> dict[str, Any]:
    return {
        "usedBytes": storage.used_bytes(),
        "rowCount": len(storage.rows),
        "limitBytes": STORAGE_QUOTA_BYTES,
        "limitRows": STORAGE_QUOTA_ROWS,
    }


_STORAGE_HANDLERS: dict[str, Callable[[DevStorage, dict[str, Any]], dict[str, Any]]] = {
    "APP_STORAGE_GET": _storage_get,
    "APP_STORAGE_SET": _storage_set,
    "APP_STORAGE_DELETE": _storage_delete,
    "APP_STORAGE_LIST": _storage_list,
    "APP_STORAGE_QUOTA": _storage_quota,
}


def _size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":")).encode())


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")

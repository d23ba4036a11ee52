"""The console's storage: app storage (per block and user) and shared storage (per block), shown and
edited through the same services the bridge calls (``services/appstorage.py``: its limits hold)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson
from starlette.responses import Response
from starlette.routing import Route

from blockkit.emulator.http.console import action, done, integer, page, text
from blockkit.emulator.services import appstorage
from blockkit.emulator.services.errors import ServiceError
from blockkit.emulator.state import EmulatorState, emulator
from blockkit.emulator.store import console as queries

if TYPE_CHECKING:
    from starlette.requests import Request


def _pretty(raw: str) -> str:
    return orjson.dumps(orjson.loads(raw), option=orjson.OPT_INDENT_2).decode()


def storage_page(request: Request) -> Response:
    state = emulator(request)
    block = request.query_params.get("block") or None
    raw_user = request.query_params.get("user", "").strip()
    user = int(raw_user) if raw_user.lstrip("-").isdigit() else None
    with state.store.read() as db:
        rows = [{**r, "value": _pretty(r["value"])} for r in queries.app_storage(db, block, user)]
        entries = [{**e, "key": appstorage.entry_key(e["id"], e["created_at"]), "value": _pretty(e["value"])}
                   for e in queries.shared_entries(db, block, user)]
        blocks = queries.storage_blocks(db)
    return page(request, "storage.html", "storage", rows=rows, entries=entries, blocks=blocks, block=block or "",
                user="" if user is None else str(user))


def _value(payload: dict[str, Any]) -> Any:
    raw = payload.get("value", "")
    if not isinstance(raw, str):
        raise ServiceError(400, "bad_value", "the value is JSON text")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ServiceError(400, "bad_value", f"the value is not JSON: {exc}") from None


def _answered(reply: dict[str, Any]) -> dict[str, Any]:
    """A storage reply's refusal ({"error": ...}: the bridge's own message) as the console's."""
    if reply.get("error"):
        raise ServiceError(400, "refused", str(reply["error"]))
    return reply


@action("storage-set")
def storage_set(request: Request, state: EmulatorState, payload: dict[str, Any]) -> Response:
    block_id, user_id, key = text(payload, "block_id"), integer(payload, "user_id"), text(payload, "key")
    reply = _answered(appstorage.storage_set(state.store, state.clock, block_id, user_id, key, _value(payload)))
    return done(f"{block_id} / user {user_id} / {key}: saved ({reply['sizeBytes']} bytes)")


@action("storage-delete")
def storage_delete(request: Request, state: EmulatorState, payload: dict[str, Any]) -> Response:
    block_id, user_id, key = text(payload, "block_id"), integer(payload, "user_id"), text(payload, "key")
    reply = _answered(appstorage.storage_delete(state.store, state.clock, block_id, user_id, key))
    return done(f"{block_id} / user {user_id} / {key}: {'deleted' if reply['deleted'] else 'was not there'}")


@action("shared-update")
def shared_update(request: Request, state: EmulatorState, payload: dict[str, Any]) -> Response:
    block_id, author, key = text(payload, "block_id"), integer(payload, "user_id"), text(payload, "key")
    _answered(appstorage.shared_update(state.store, state.clock, block_id, author, key, _value(payload)))
    return done(f"shared entry {key}: saved")


@action("shared-withdraw")
def shared_withdraw(request: Request, state: EmulatorState, payload: dict[str, Any]) -> Response:
    block_id, author, key = text(payload, "block_id"), integer(payload, "user_id"), text(payload, "key")
    _answered(appstorage.shared_withdraw(state.store, state.clock, block_id, author, key))
    return done(f"shared entry {key}: withdrawn")


routes = [Route("/storage", storage_page, methods=["GET"])]

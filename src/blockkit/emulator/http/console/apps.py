"""The console's apps and access: OAuth clients, consents and grants, live tokens, device codes,
block consent grants, orchestration API keys."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson
from starlette.responses import Response
from starlette.routing import Route

from blockkit.emulator.http.console import action, done, integer, page, text
from blockkit.emulator.services import console as service
from blockkit.emulator.services.errors import ServiceError
from blockkit.emulator.services.oauth import scopes
from blockkit.emulator.state import EmulatorState, emulator
from blockkit.emulator.store import console as queries

if TYPE_CHECKING:
    from starlette.requests import Request


def memory(state: EmulatorState) -> Any:
    """The OAuth provider's short-lived memory (device codes), shared through the build's state."""
    from blockkit.emulator.services.oauth.memory import Memory

    return state.kept("oauth-memory", lambda: Memory(state.clock))


def scope_names(mask: int) -> str:
    if mask == scopes.FULL:
        return "Full"
    return ", ".join(bit.name for bit in scopes.SCOPE_BITS if mask & bit.bit) or "none"


def apps_page(request: Request) -> Response:
    state = emulator(request)
    now = state.clock.iso()
    with state.store.read() as db:
        clients = queries.oauth_clients(db)
        consents = queries.consents(db)
        grants = queries.grants(db, now)
        tokens = queries.live_tokens(db, now)
        blocks = [{**g, "granted_scopes": ", ".join(orjson.loads(g["granted_scopes"] or "[]")) or "none"}
                  for g in queries.block_grants(db)]
        keys = queries.api_keys(db)
        users = [u for u in queries.users_with_pools(db) if u["id"] > 0 and not u["deleted"] and u["status"] == "active"]
    clients_by_id = {c["id"]: c["name"] for c in clients}
    devices = [{"user_code": d.user_code, "client_id": d.client_id, "client_name": clients_by_id.get(d.client_id, ""),
                "scope": d.scope, "expires_in": int(d.expires_at - memory(state).now())}
               for d in service.pending_devices(memory(state))]
    return page(request, "apps.html", "apps", clients=clients, consents=consents, grants=grants, tokens=tokens,
                blocks=blocks, keys=keys, devices=devices, users=users, bits=scopes.SCOPE_BITS,
                scope_names=scope_names)


def _uris(payload: dict[str, Any]) -> list[str]:
    value = payload.get("redirect_uris", [])
    if isinstance(value, str):
        value = [line.strip() for line in value.splitlines() if line.strip()]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ServiceError(400, "bad_field", "redirect_uris is a list of URIs, one a line")
    return value


@action("client-add")
def client_add(request: Request, state: EmulatorState, payload: dict[str, Any]) -> Response:
    from blockkit.emulator.services.oauth.clients import register_client

    allowed = service.scope_of(payload.get("scope")) if payload.get("scope") else scopes.FULL
    registered = register_client(state.store, state.clock, name=text(payload, "name"), redirect_uris=_uris(payload),
                                 confidential=payload.get("confidential") is True, allowed_scopes=allowed)
    found = registered.as_dict()
    if "client_secret" in found:
        return done(f"registered {found['client_id']}; its client_secret is shown once, below:",
                    secret=found["client_secret"], client_id=found["client_id"])
    return done(f"registered {found['client_id']} (a public client)", client_id=found["client_id"])


@action("client-edit")
def client_edit(request: Request, state: EmulatorState, payload: dict[str, Any]) -> Response:
    client_id = text(payload, "client_id")
    service.update_client(state.store, client_id, redirect_uris=_uris(payload),
                          allowed_scopes=service.scope_of(payload.get("scope")))
    return done(f"{client_id}: saved")


@action("client-remove")
def client_remove(request: Request, state: EmulatorState, payload: dict[str, Any]) -> Response:
    client_id = text(payload, "client_id")
    service.remove_client(state.store, client_id)
    return done(f"{client_id}: removed, with every code, token and consent issued to it")


@action("grant-revoke")
def grant_revoke(request: Request, state: EmulatorState, payload: dict[str, Any]) -> Response:
    user_id, client_id = integer(payload, "user_id"), text(payload, "client_id")
    service.revoke_grant(state.store, state.clock, user_id, client_id)
    return done(f"user {user_id} and {client_id}: consent forgotten, tokens revoked")


@action("token-revoke")
def token_revoke(request: Request, state: EmulatorState, payload: dict[str, Any]) -> Response:
    token_id = integer(payload, "token_id")
    service.revoke_token(state.store, state.clock, token_id)
    return done(f"token {token_id}: revoked")


@action("device-decide")
def device_decide(request: Request, state: EmulatorState, payload: dict[str, Any]) -> Response:
    user_code = text(payload, "user_code")
    approved = payload.get("decision") == "approve"
    user_id = integer(payload, "user_id") if approved else 0
    if approved:
        service.decide_device(state.store, memory(state), user_code, user_id, approved=True)
        return done(f"{user_code}: approved as user {user_id}; the device signs in on its next poll")
    entry, why = memory(state).pending_by_user_code(user_code)
    if entry is None:
        raise ServiceError(400, "bad_code", f"{user_code}: {why.lower()}")
    memory(state).decide(entry, user_id=0, approved=False)
    return done(f"{user_code}: denied")


@action("block-grant-reset")
def block_grant_reset(request: Request, state: EmulatorState, payload: dict[str, Any]) -> Response:
    from blockkit.emulator.services import consent

    user_id, app_block_id = integer(payload, "user_id"), text(payload, "app_block_id")
    if not consent.reset(state.store, user_id, app_block_id):
        raise ServiceError(404, "no_grant", f"user {user_id} holds no grant for {app_block_id}")
    return done(f"user {user_id} and {app_block_id}: the block asks for consent again")


@action("apikey-add")
def apikey_add(request: Request, state: EmulatorState, payload: dict[str, Any]) -> Response:
    from blockkit.emulator.services.orchestration.funds import create_api_key

    created = create_api_key(state.store, state.clock, text(payload, "username"))
    return done(f"an API key for user {created['user_id']}; shown once, below:", secret=created["api_key"])


@action("apikey-revoke")
def apikey_revoke(request: Request, state: EmulatorState, payload: dict[str, Any]) -> Response:
    key_id = integer(payload, "key_id")
    service.revoke_api_key(state.store, state.clock, key_id)
    return done(f"API key {key_id}: revoked")


routes = [Route("/apps", apps_page, methods=["GET"])]

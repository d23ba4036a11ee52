"""RFC 8628, the device authorization grant's rules as the platform keeps them: no Request here.

- :func:`start`: a client asks for a code with a scope (a decimal bitmask; absent means
  UserRead, which every code includes); refused ``invalid_client`` or ``invalid_scope``.
- :func:`poll`: the device asks with its code; ``expired_token`` (after 15 minutes on the
  emulator's clock, or once used), ``invalid_grant`` (another client's code), ``access_denied``,
  ``slow_down`` when polled sooner than the interval (which then grows by 5 s), else
  ``authorization_pending``; once approved, the token pair, once.

The codes live in the provider's memory (``memory.py``); the tokens in the store
(``store/oauth.py``). Each refusal is a :class:`DeviceRefused` with the RFC's error name and the
sentence the route answers with (``http/oauth/device.py``).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from blockkit.emulator import journal

from blockkit.emulator.services.oauth import scopes
from blockkit.emulator.services.oauth.memory import DEVICE_CODE_TTL_SECONDS, SLOW_DOWN_STEP, DeviceCode, Memory
from blockkit.emulator.services.oauth.validator import new_token
from blockkit.emulator.store import oauth as store
from blockkit.emulator.store.clock import format_timestamp
from blockkit.emulator.store.tokens import DEFAULT_TTL_SECONDS

if TYPE_CHECKING:
    from blockkit.emulator.state import EmulatorState
    from blockkit.emulator.store import Store

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


class DeviceRefused(Exception):
    """A refused device call: ``error`` (RFC 6749/8628's name) and ``description`` (a sentence)."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(error, description)
        self.error = error
        self.description = description


def start(db_store: Store, mem: Memory, client_id: str, raw_scope: str | None) -> DeviceCode:
    """A new device code for ``client_id`` asking ``raw_scope`` (plus UserRead)."""
    with db_store.read() as db:
        client = store.get_client(db, client_id)
    if client is None:
        raise DeviceRefused("invalid_client", "Unknown client")
    value = 0 if raw_scope in (None, "") else scopes.parse_scope(raw_scope)
    if value is None:
        raise DeviceRefused("invalid_scope", "scope must be a decimal integer from 0 to Full")
    requested = value | scopes.USER_READ
    if not scopes.within(requested, client.allowed_scopes | scopes.USER_READ):
        raise DeviceRefused("invalid_scope", "Requested scope exceeds client permissions")
    return mem.new_device_code(client.id, requested)


def poll(state: EmulatorState, mem: Memory, device_code: str, client_id: str) -> dict[str, Any]:
    """The device's poll: the token answer once approved, else a :class:`DeviceRefused`.

    Each refusal also tells the request journal why, in words (``journal.note_reason``); the
    answer stays the RFC's error and sentence."""
    entry = mem.device(device_code)
    if entry is None:
        journal.note_reason("expired_token: the device code is not one the emulator holds: it was never issued by"
                            " this run, was already exchanged for a token, or expired and was dropped")
        raise DeviceRefused("expired_token", "Device code expired or already used; start again")
    if entry.client_id != client_id:
        journal.note_reason(f"invalid_grant: the device code was issued to client {entry.client_id!r}, and"
                            f" client {client_id!r} polled with it")
        raise DeviceRefused("invalid_grant", "This device code was issued to another client")
    now = mem.now()
    if entry.expires_at <= now:
        mem.forget(entry)
        journal.note_reason(f"expired_token: the device code expired at {_when(entry.expires_at)}"
                            f" ({DEVICE_CODE_TTL_SECONDS // 60} minutes after it was issued); the emulator's clock"
                            f" reads {_when(now)}")
        raise DeviceRefused("expired_token", "Device code expired (15 minutes); start again")
    if entry.status == "denied":
        mem.forget(entry)
        journal.note_reason(f"access_denied: user {entry.user_id} denied the device on the device page"
                            f" (client {entry.client_id!r}, scope {entry.scope}); start again")
        raise DeviceRefused("access_denied", "The user denied the device")
    if entry.status == "pending":
        previous = entry.last_poll
        too_soon = previous is not None and now < previous + entry.interval
        entry.last_poll = now
        if too_soon:
            assert previous is not None
            interval = entry.interval
            entry.interval += SLOW_DOWN_STEP
            journal.note_reason(f"slow_down: this poll came {_seconds(now - previous)} s after the previous one and"
                                f" the interval is {interval} s; the interval is now {entry.interval} s")
            raise DeviceRefused("slow_down", f"Polled sooner than the interval; wait {entry.interval} seconds"
                                             " between polls")
        journal.note_reason(f"authorization_pending: no user has approved or denied the device yet; the code"
                            f" expires in {_seconds(entry.expires_at - now)} s (at {_when(entry.expires_at)});"
                            f" poll again every {entry.interval} s")
        raise DeviceRefused("authorization_pending", "The user has not approved the device yet; poll again")
    if not mem.forget(entry):  # claimed by a concurrent poll
        journal.note_reason("expired_token: another poll exchanged this approved device code a moment ago")
        raise DeviceRefused("expired_token", "Device code already used")
    return issue(state, entry)


def _when(timestamp: float) -> str:
    return format_timestamp(datetime.fromtimestamp(timestamp, tz=timezone.utc))


def _seconds(span: float) -> str:
    return f"{round(max(span, 0.0), 1):g}"


def issue(state: EmulatorState, entry: DeviceCode) -> dict[str, Any]:
    """Issue the token pair of an approved code (its client and scope checked again)."""
    with state.store.write() as db:
        client = store.get_client(db, entry.client_id)
        if client is None:
            raise DeviceRefused("invalid_grant", "Unknown client")
        if not scopes.within(entry.scope, client.allowed_scopes | scopes.USER_READ):
            raise DeviceRefused("invalid_scope", "Requested scope exceeds client permissions")
        access, refresh = new_token(), new_token()
        now = state.clock.now()
        assert entry.user_id is not None
        refresh_id = store.save_refresh_token(db, refresh, client_id=client.id, user_id=entry.user_id,
                                              scope=entry.scope, now=now)
        store.issue_access_token(db, access, client_id=client.id, user_id=entry.user_id, scope=entry.scope,
                                 now=now, refresh_token_id=refresh_id)
    return {"access_token": access, "token_type": "Bearer", "expires_in": DEFAULT_TTL_SECONDS,
            "refresh_token": refresh, "scope": str(entry.scope)}

"""What the platform keeps in Redis for a few minutes, kept here in the emulator's memory.

- OIDC context: the ``nonce`` sent to authorize, kept with the code (by its hash) until the
  exchange reads it once (10 minutes, the code's lifetime).
- Device codes (RFC 8628): ``device_code`` (64 hex digits) and ``user_code`` (``XXXX-XXXX``),
  pending, then approved or denied by a signed-in user, for 15 minutes; a poll sooner than
  the interval answers ``slow_down`` and widens the interval by 5 seconds.

Times come from the emulator's clock, so moving it expires them. A restart forgets them, as
a flushed Redis would; nothing here is a long-lived grant.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from blockkit.emulator.store.tokens import hash_token

if TYPE_CHECKING:
    from blockkit.emulator.store.clock import Clock

NONCE_TTL_SECONDS = 600
DEVICE_CODE_TTL_SECONDS = 15 * 60  # the platform's DEVICE_CODE_TTL
DEVICE_POLL_INTERVAL = 5           # the platform's DEVICE_POLL_INTERVAL (seconds)
SLOW_DOWN_STEP = 5                 # RFC 8628 3.5: add 5 seconds after slow_down
USER_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no I, O, 0 or 1


@dataclass(frozen=True)
class OidcContext:
    nonce: str
    user_id: int
    client_id: str
    auth_time: int
    expires_at: float


@dataclass
class DeviceCode:
    device_code: str
    user_code: str
    client_id: str
    scope: int
    expires_at: float
    interval: int = DEVICE_POLL_INTERVAL
    status: str = "pending"  # pending, approved, denied
    user_id: int | None = None
    last_poll: float | None = None
    used: bool = field(default=False)


def normalize_user_code(raw: str) -> str:
    """``abcd1234``, ``ABCD 1234`` and ``abcd-1234`` are one code (the platform's normalisation)."""
    cleaned = "".join(ch for ch in raw.upper() if ch.isascii() and ch.isalnum())
    return f"{cleaned[:4]}-{cleaned[4:]}" if len(cleaned) == 8 else raw.upper()


class Memory:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.lock = threading.Lock()
        self.nonces: dict[str, OidcContext] = {}
        self.devices: dict[str, DeviceCode] = {}
        self.user_codes: dict[str, str] = {}

    def now(self) -> float:
        return self.clock.timestamp()

    # --- OIDC ------------------------------------------------------------------------------------
    def save_nonce(self, code: str, *, nonce: str, user_id: int, client_id: str, auth_time: int) -> None:
        with self.lock:
            self._sweep()
            self.nonces[hash_token(code)] = OidcContext(nonce, user_id, client_id, auth_time,
                                                        self.now() + NONCE_TTL_SECONDS)

    def take_nonce(self, code: str) -> OidcContext | None:
        """The context of a code, once (single use), or None."""
        with self.lock:
            found = self.nonces.pop(hash_token(code), None)
        return found if found is not None and found.expires_at > self.now() else None

    # --- device codes ----------------------------------------------------------------------------
    def new_device_code(self, client_id: str, scope: int) -> DeviceCode:
        with self.lock:
            self._sweep()
            while True:
                letters = "".join(secrets.choice(USER_CODE_ALPHABET) for _ in range(8))
                user_code = f"{letters[:4]}-{letters[4:]}"
                if user_code not in self.user_codes:
                    break
            entry = DeviceCode(secrets.token_hex(32), user_code, client_id, scope,
                               self.now() + DEVICE_CODE_TTL_SECONDS)
            self.devices[entry.device_code] = entry
            self.user_codes[user_code] = entry.device_code
            return entry

    def device(self, device_code: str) -> DeviceCode | None:
        with self.lock:
            return self.devices.get(device_code)

    def pending_by_user_code(self, raw: str) -> tuple[DeviceCode | None, str]:
        """The pending device code a user typed, or (None, why not)."""
        with self.lock:
            device_code = self.user_codes.get(normalize_user_code(raw))
            entry = self.devices.get(device_code) if device_code else None
        if entry is None:
            return None, "Invalid or expired code"
        if entry.status != "pending" or entry.expires_at <= self.now():
            return None, "Code already used or expired"
        return entry, ""

    def decide(self, entry: DeviceCode, *, user_id: int, approved: bool) -> None:
        with self.lock:
            entry.status = "approved" if approved else "denied"
            entry.user_id = user_id
            self.user_codes.pop(entry.user_code, None)

    def forget(self, entry: DeviceCode) -> bool:
        """Remove a device code; False when it was already gone (a concurrent poll took it)."""
        with self.lock:
            self.user_codes.pop(entry.user_code, None)
            return self.devices.pop(entry.device_code, None) is not None

    def _sweep(self) -> None:
        now = self.now()
        for key in [k for k, v in self.nonces.items() if v.expires_at <= now]:
            del self.nonces[key]
        for key in [k for k, v in self.devices.items() if v.expires_at + 60 <= now]:
            self.user_codes.pop(self.devices[key].user_code, None)
            del self.devices[key]

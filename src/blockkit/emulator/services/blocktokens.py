"""Block tokens: RS256 JWTs for app blocks (PLATFORM.md section 8), signed and checked with joserfc.

- The signing key is an RSA-2048 key in the data directory (``block-token-key.pem``, mode
  0600), made on first use; its kid (the first 32 hex digits of sha256 of the modulus, as
  the platform computes it) is recorded in ``block_signing_keys``. ``GET
  {base_url}/api/v1/block-tokens/jwks`` publishes the public key.
- ``mint_block_token(state, ...)`` is the in-process issuer (``blockkit dev`` mints with
  it; ``state`` is anything with ``store`` and ``clock``, e.g. a running ``Emulator``);
  ``blockroutes.add_host_origin(store, origin)`` lets a host page on another origin mint
  over HTTP; ``POST {base_url}/api/v1/block-tokens`` is the host page's route (same origin
  only, a session optional, body ``{blockInstanceId, slotContext}`` up to 8 KB, 120 a
  minute per IP). Instances are registered with ``register_block_instance``;
  ``revoke_block_instance`` refuses every token of an instance issued until then.
- Consent: a signed-in viewer's token holds the consent-exempt scopes and those the viewer granted
  the app block (``services/consent.py``); the rest are withheld and reported as ``missingScopes``.
- Claims: iss ``civitai``, aud ``civitai-app-block``, iat, nbf, exp (15 minutes, 5 with a
  ``block:settings:*`` scope), jti, sub (``user:<id>`` or ``anon``), blockId, appId, appBlockId (``<appId>/<blockId>``),
  blockInstanceId, ctx (only what a scope binds to: modelId and slotId, or slotId and
  entityType none on a page), scopes, buzzBudget (only with ai:write:budgeted: the
  instance's budget per generation, default 10, at most 1000) and maxBrowsingLevel.
- Verification (``verify``): signature by kid, alg RS256, typ JWT, iss, aud, exp/nbf on the
  emulator clock (30 s leeway), the claim shapes. Which routes accept a block token, and the
  caller it makes there, is HTTP's: ``http/blocks/verifier.py``.
"""

from __future__ import annotations

import contextvars
import hashlib
import os
import re
import secrets
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import RSAKey
from joserfc.jwt import JWTClaimsRegistry

from blockkit.emulator import facts
from blockkit.emulator.store.clock import format_timestamp, parse_timestamp
from blockkit.emulator.errors import EmulatorError
from blockkit.emulator.store.connection import link_into_place

if TYPE_CHECKING:
    from blockkit.emulator.state import EmulatorState
    from blockkit.emulator.store import Store

ISSUER = "civitai"
AUDIENCE = "civitai-app-block"
TOKEN_LIFETIME_SECONDS = 900
DEV_TOKEN_LIFETIME_SECONDS = 4 * 60 * 60  # block-token.service.ts DEV_TOKEN_LIFETIME_SECONDS
SETTINGS_TOKEN_LIFETIME_SECONDS = 300
LEEWAY_SECONDS = 30
KEY_FILENAME = "block-token-key.pem"
BUZZ_BUDGET_DEFAULT = 10
BUZZ_BUDGET_CAP = 1000
BUDGET_SCOPE = "ai:write:budgeted"
SETTINGS_SCOPES = frozenset({"block:settings:read", "block:settings:write"})
SUBJECT = re.compile(r"anon|user:[1-9][0-9]{0,11}", re.ASCII)


def viewer_id(claims: dict[str, Any]) -> int | None:
    """The viewer's user id in a block token's claims (``sub`` ``user:<id>``), or None when signed out."""
    sub = str(claims.get("sub", ""))
    return int(sub.split(":", 1)[1]) if sub.startswith("user:") else None

# Scopes a block token may carry (PLATFORM.md section 3); a token with any other is refused.
KNOWN_SCOPES = frozenset({
    "models:read:self", "media:read:owned", "user:read:self", "ai:write:budgeted", "buzz:read:self",
    "block:settings:read", "block:settings:write", "social:tip:self", "apps:storage:read", "apps:storage:write",
    "apps:storage:shared:read", "apps:storage:shared:write", "collections:read:self", "collections:write:self",
    "collections:read:private", "goods:purchase:self", "goods:read:self", "posts:write:self",
})
# Scopes that need a signed-in subject (an anonymous viewer never holds them).
SELF_SCOPES = frozenset({"media:read:owned", "buzz:read:self", "social:tip:self", "user:read:self",
                         "apps:storage:read", "apps:storage:write", "apps:storage:shared:write",
                         "collections:read:self", "collections:write:self", "collections:read:private",
                         "goods:purchase:self", "goods:read:self", "posts:write:self", "ai:write:budgeted",
                         "models:read:self"})


# --- the key -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class SigningKey:
    key: RSAKey
    kid: str

    def public_jwk(self) -> dict[str, Any]:
        public = self.key.as_dict(private=False)
        return {"kty": "RSA", "use": "sig", "alg": "RS256", "kid": self.kid, "n": public["n"], "e": public["e"]}


# path -> (the file's (inode, mtime, size) when read, its key): a key replaced on disk (`emulator import
# --replace` while the server runs) is read again.
_keys: dict[Path, tuple[tuple[int, int, int] | None, SigningKey]] = {}
_keys_lock = threading.Lock()


def _identity(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


def key_id(key: RSAKey) -> str:
    return hashlib.sha256(str(key.as_dict(private=False)["n"]).encode()).hexdigest()[:32]


def signing_key(store: Store, clock_now: str | None = None) -> SigningKey:
    """The data directory's signing key, created (mode 0600) on first use."""
    path = store.path.parent / KEY_FILENAME
    with _keys_lock:
        cached = _keys.get(path)
        if cached is not None and cached[0] == _identity(path):
            return cached[1]
        if path.is_file():
            key = RSAKey.import_key(path.read_bytes())
        else:
            key = RSAKey.generate_key(2048, private=True)
            if not _publish_key(path, key.as_pem(private=True)):  # another process made it first: use theirs
                key = RSAKey.import_key(path.read_bytes())
        found = SigningKey(key, key_id(key))
        with store.write() as db:
            db.execute("INSERT OR IGNORE INTO block_signing_keys (kid, algorithm, filename, created_at)"
                       " VALUES (?, 'RS256', ?, ?)", (found.kid, KEY_FILENAME,
                                                       clock_now or "1970-01-01T00:00:00.000Z"))
        _keys[path] = (_identity(path), found)
        return found


def _publish_key(path: Path, pem: bytes) -> bool:
    """Write the key whole under a temporary name (0600, synced), then link it into place: a crash leaves no
    empty or half-written key file. False when a key is already there (it is kept)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(pem)
            handle.flush()
            os.fsync(handle.fileno())
        return link_into_place(tmp, path)
    except OSError as exc:
        raise EmulatorError(f"{path}: cannot write the block-token key: {exc.strerror or exc}") from None
    finally:
        tmp.unlink(missing_ok=True)


def jwks(store: Store) -> dict[str, Any]:
    return {"keys": [signing_key(store).public_jwk()]}


# --- instances ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class BlockInstance:
    id: str
    block_id: str
    app_id: str
    scopes: tuple[str, ...]
    buzz_budget_per_gen: int | None
    slot_id: str
    model_id: int | None
    installed_by: int | None
    enabled: bool


def register_block_instance(store: Store, clock_now: str, *, instance_id: str, block_id: str, app_id: str,
                            scopes: list[str], slot_id: str = "app.page", model_id: int | None = None,
                            buzz_budget_per_gen: int | None = None, installed_by: int | None = None) -> BlockInstance:
    """Install (or reinstall, enabled) a block instance the host may mint tokens for."""
    if not 1 <= len(instance_id) <= 64:
        raise EmulatorError("a block instance id is 1-64 characters")
    unknown = sorted(set(scopes) - KNOWN_SCOPES)
    if unknown:
        raise EmulatorError(f"unknown block scopes: {', '.join(unknown)}")
    with store.write() as db:
        db.execute(
            "INSERT INTO block_instances (id, block_id, app_id, scopes, buzz_budget_per_gen, slot_id, model_id,"
            " installed_by, enabled, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?) ON CONFLICT (id) DO UPDATE SET"
            " block_id = excluded.block_id, app_id = excluded.app_id, scopes = excluded.scopes,"
            " buzz_budget_per_gen = excluded.buzz_budget_per_gen, slot_id = excluded.slot_id,"
            " model_id = excluded.model_id, installed_by = excluded.installed_by, enabled = 1",
            (instance_id, block_id, app_id, orjson.dumps(sorted(set(scopes))).decode(), buzz_budget_per_gen, slot_id,
             model_id, installed_by, clock_now))
        instance = find_instance(db, instance_id)
    assert instance is not None
    return instance


def find_instance(db: sqlite3.Connection, instance_id: str) -> BlockInstance | None:
    row = db.execute("SELECT id, block_id, app_id, scopes, buzz_budget_per_gen, slot_id, model_id, installed_by,"
                     " enabled FROM block_instances WHERE id = ?", (instance_id,)).fetchone()
    if row is None:
        return None
    return BlockInstance(row[0], row[1], row[2], tuple(orjson.loads(row[3])), row[4], row[5], row[6], row[7],
                         bool(row[8]))


def revoke_block_instance(store: Store, clock_now: str, instance_id: str, *, reason: str = "uninstalled") -> None:
    """Uninstall or disable an instance: its tokens issued until now are refused, no new ones are minted."""
    with store.write() as db:
        db.execute("UPDATE block_instances SET enabled = 0 WHERE id = ?", (instance_id,))
        db.execute("INSERT INTO block_token_revocations (block_instance_id, revoked_at, reason) VALUES (?, ?, ?)"
                   " ON CONFLICT (block_instance_id) DO UPDATE SET revoked_at = excluded.revoked_at,"
                   " reason = excluded.reason", (instance_id, clock_now, reason))


def is_revoked(db: sqlite3.Connection, instance_id: str, issued_at: int) -> bool:
    row = db.execute("SELECT revoked_at FROM block_token_revocations WHERE block_instance_id = ?",
                     (instance_id,)).fetchone()
    return row is not None and issued_at <= parse_timestamp(row[0]).timestamp()


def record_issued(store: Store, jti: str, instance_id: str, issued_at: int, expires_at: int) -> None:
    """Keep the token's row (migration 0011): a token is valid only while its row is in the store, so a
    reset or an import takes the tokens minted since with the other rows. Expired rows go here."""
    with store.write() as db:
        db.execute("DELETE FROM block_tokens WHERE expires_at < ?", (issued_at - LEEWAY_SECONDS,))
        db.execute("INSERT INTO block_tokens (jti, block_instance_id, issued_at, expires_at) VALUES (?, ?, ?, ?)",
                   (jti, instance_id, issued_at, expires_at))


def refusal(db: sqlite3.Connection, claims: dict[str, Any]) -> tuple[int, str] | None:
    """(status, why) the store refuses a token whose signature and claims hold (None: it does not): its
    instance was revoked since (403), or is gone, or this store never issued the token (minted before a
    reset, or for other data: 401)."""
    row = db.execute(
        "SELECT EXISTS (SELECT 1 FROM block_tokens WHERE jti = ? AND block_instance_id = ?),"
        " EXISTS (SELECT 1 FROM block_instances WHERE id = ?),"
        " (SELECT revoked_at FROM block_token_revocations WHERE block_instance_id = ?)",
        (claims["jti"], claims["blockInstanceId"], claims["blockInstanceId"], claims["blockInstanceId"])).fetchone()
    if row[2] is not None and int(claims["iat"]) <= parse_timestamp(row[2]).timestamp():
        return 403, "block instance revoked"
    if not row[1] or not row[0]:
        return 401, "invalid block token"
    return None


# --- minting --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Minted:
    token: str
    expires_at: str
    jti: str
    claims: dict[str, Any]

    # The declared scopes withheld because the viewer has not granted them (services/consent.py);
    # always empty for a signed-out viewer, who has no consent ledger.
    missing_scopes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        # The platform's route (block-tokens/index.ts:1181-1192): needsConsent and missingScopes say what
        # the host should ask the viewer for.
        return {"token": self.token, "expiresAt": self.expires_at, "needsConsent": bool(self.missing_scopes),
                "missingScopes": list(self.missing_scopes)}


class MintRefused(EmulatorError):
    """The instance cannot have a token (status says how the route answers)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def default_ceiling(user_browsing_level: int | None, restricted: bool) -> int:
    """maxBrowsingLevel when the host does not choose: the viewer's level (PG for anonymous), SFW when restricted."""
    level = facts.NSFW_LEVELS["PG"] if user_browsing_level is None else user_browsing_level & facts.ALL_BROWSING_LEVELS
    return level & facts.SFW_BROWSING_LEVEL if restricted else level


def app_block_id(app_id: str, block_id: str) -> str:
    """The token's ``appBlockId``: the platform names the app's block registration with it, and its
    verifier refuses a token without it (civitai/civitai ``block-scope.middleware.ts``); the emulator
    has no registration row, so the id is ``<appId>/<blockId>``."""
    return f"{app_id}/{block_id}"


def mint_block_token(state: EmulatorState, *, instance_id: str, user_id: int | None,
                     max_browsing_level: int | None = None, restricted: bool = False,
                     lifetime_seconds: int | None = None, ignore_grants: bool = False, dev: bool = False) -> Minted:
    """Sign a token for ``instance_id`` and viewer ``user_id`` (None: signed out). Raises MintRefused.

    ``lifetime_seconds`` shortens the token's life (``blockkit dev --scenario token-expires-early``);
    it never lengthens it. ``ignore_grants`` mints as for a viewer who granted nothing yet
    (``--scenario consent-denied``: the stored grant is left as it is). ``dev``: the dev-token route's
    mint (services/devtokens.py): the instance's scopes as they are (that route clamped them; the
    developer is the viewer of their own app, so no consent ledger applies), 4 hours, a ``dev`` claim."""
    store = state.store
    now = int(state.clock.timestamp())
    with store.read() as db:
        instance = find_instance(db, instance_id)
        user = None if user_id is None else db.execute(
            "SELECT id, status, browsing_level, deleted_at FROM users WHERE id = ?", (user_id,)).fetchone()
    if instance is None or not instance.enabled:
        raise MintRefused(404, "Block install not found")
    if user_id is not None and (user is None or user[3] is not None or user[1] == "banned"):
        raise MintRefused(403, "account unavailable")
    scopes = list(instance.scopes)
    missing: list[str] = []
    if user_id is not None and not dev:  # the viewer's consent: gated scopes wait for a grant (services/consent.py)
        from blockkit.emulator.services import consent

        granted = frozenset() if ignore_grants else consent.granted(
            store, user_id, app_block_id(instance.app_id, instance.block_id))
        scopes, missing = consent.partition(scopes, granted)
    if user_id is None:  # a signed-out viewer holds only the scopes that need no subject
        scopes = [s for s in scopes if s not in SELF_SCOPES and s not in SETTINGS_SCOPES]
    if any(s in SETTINGS_SCOPES for s in scopes) and (user_id is None or user_id != instance.installed_by):
        raise MintRefused(403, "block:settings:* tokens require the block installer")
    is_page = instance.model_id is None
    ctx: dict[str, Any] = ({"slotId": instance.slot_id, "entityType": "none"} if is_page
                           else {"modelId": instance.model_id, "slotId": instance.slot_id})
    lifetime = SETTINGS_TOKEN_LIFETIME_SECONDS if any(s in SETTINGS_SCOPES for s in scopes) else TOKEN_LIFETIME_SECONDS
    if dev:
        lifetime = DEV_TOKEN_LIFETIME_SECONDS  # the platform's dev marker overrides the settings branch
    if lifetime_seconds is not None:
        lifetime = max(1, min(lifetime, int(lifetime_seconds)))
    ceiling = max_browsing_level if max_browsing_level is not None else default_ceiling(
        None if user is None else int(user[2]), restricted)
    jti = secrets.token_hex(16)
    claims: dict[str, Any] = {
        "iss": ISSUER, "aud": AUDIENCE, "iat": now, "nbf": now, "exp": now + lifetime, "jti": jti,
        "sub": "anon" if user_id is None else f"user:{user_id}",
        "blockId": instance.block_id, "appId": instance.app_id, "appBlockId": app_block_id(instance.app_id,
                                                                                         instance.block_id),
        "blockInstanceId": instance.id, "ctx": ctx, "scopes": scopes, "maxBrowsingLevel": ceiling,
    }
    if dev:
        claims["dev"] = True
    if BUDGET_SCOPE in scopes:
        budget = instance.buzz_budget_per_gen if instance.buzz_budget_per_gen is not None else BUZZ_BUDGET_DEFAULT
        if budget <= 0:
            raise MintRefused(422, "INVALID_BUZZ_BUDGET")
        claims["buzzBudget"] = min(budget, BUZZ_BUDGET_CAP)
    key = signing_key(store, state.clock.iso())
    token = jwt.encode({"alg": "RS256", "kid": key.kid, "typ": "JWT"}, claims, key.key, algorithms=["RS256"])
    record_issued(store, jti, instance.id, now, now + lifetime)
    from datetime import datetime, timezone

    return Minted(token, format_timestamp(datetime.fromtimestamp(now + lifetime, tz=timezone.utc)), jti, claims,
                  tuple(missing))


# --- verifying ------------------------------------------------------------------------------------

def looks_like_jwt(raw: str) -> bool:
    parts = raw.split(".")
    return len(parts) == 3 and all(parts)


def verify(raw: str, state: EmulatorState) -> dict[str, Any] | None:
    """The claims of a block token this emulator signed and that is valid now, or None."""
    key = signing_key(state.store, state.clock.iso())
    try:
        token = jwt.decode(raw, key.key, algorithms=["RS256"])
    except (JoseError, ValueError, TypeError):
        return None
    header, claims = token.header, token.claims
    if header.get("kid") != key.kid or header.get("typ") != "JWT" or header.get("alg") != "RS256":
        return None
    registry = JWTClaimsRegistry(now=int(state.clock.timestamp()), leeway=LEEWAY_SECONDS,
                                 iss={"essential": True, "value": ISSUER}, aud={"essential": True, "value": AUDIENCE},
                                 exp={"essential": True}, iat={"essential": True}, jti={"essential": True},
                                 sub={"essential": True})
    try:
        registry.validate(claims)
    except JoseError:
        return None
    shapes_ok = (
        isinstance(claims.get("aud"), str) and isinstance(claims.get("sub"), str)
        and SUBJECT.fullmatch(claims["sub"]) is not None
        and all(isinstance(claims.get(k), str) for k in ("blockId", "appId", "appBlockId", "blockInstanceId", "jti"))
        and isinstance(claims.get("scopes"), list) and all(isinstance(s, str) for s in claims["scopes"])
        and isinstance(claims.get("ctx"), dict)
        and (claims.get("maxBrowsingLevel") is None or type(claims["maxBrowsingLevel"]) is int)
        and (claims.get("buzzBudget") is None or type(claims["buzzBudget"]) is int)
    )
    return claims if shapes_ok else None

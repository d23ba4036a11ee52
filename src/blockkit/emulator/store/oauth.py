"""The OAuth provider's tables: clients, codes, refresh tokens, consents, sessions, rate limits.

Plain functions over a connection (``store.read()`` / ``store.write()``); no HTTP here.
Every secret is kept as ``tokens.hash_token(raw)`` (sha256 hex); raw values come from
``secrets`` and are returned once to the caller that issues them. Times are passed in
(``now``, from the emulator clock), so advancing the clock expires codes and tokens.
"""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import orjson

from blockkit.emulator.store.clock import format_timestamp
from blockkit.emulator.store.tokens import DEFAULT_TTL_SECONDS, hash_token

CODE_TTL_SECONDS = 600            # the spec: 10 minutes, single use
REFRESH_TTL_SECONDS = 30 * 86400  # the platform's refresh token lifetime (30 days)
SESSION_TTL_SECONDS = 30 * 86400


def new_secret() -> str:
    """A fresh random value for a code, token, secret or session id: 256 bits, URL-safe."""
    return secrets.token_urlsafe(32)


# --- clients -------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Client:
    id: str
    name: str
    secret_hash: str | None
    owner_user_id: int
    allowed_scopes: int
    confidential: bool
    redirect_uris: tuple[str, ...]
    allowed_origins: tuple[str, ...]

    @property
    def client_id(self) -> str:  # what oauthlib reads from request.client
        return self.id


_CLIENT_COLUMNS = "id, name, secret_hash, owner_user_id, allowed_scopes, is_confidential, redirect_uris, allowed_origins"


def _client(row: tuple[Any, ...]) -> Client:
    return Client(row[0], row[1], row[2], int(row[3]), int(row[4]), bool(row[5]),
                  tuple(orjson.loads(row[6])), tuple(orjson.loads(row[7])))


def add_client(db: sqlite3.Connection, *, name: str, owner_user_id: int, redirect_uris: list[str],
               allowed_scopes: int, confidential: bool, allowed_origins: list[str], now: datetime,
               client_id: str | None = None) -> tuple[str, str | None]:
    """Register a client; return (client_id, raw client_secret or None for a public client)."""
    client_id = client_id or f"bk_{secrets.token_urlsafe(12)}"
    secret = new_secret() if confidential else None
    db.execute(
        f"INSERT INTO oauth_clients ({_CLIENT_COLUMNS}, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (client_id, name, hash_token(secret) if secret else None, owner_user_id, allowed_scopes, int(confidential),
         orjson.dumps(redirect_uris).decode(), orjson.dumps(allowed_origins).decode(), format_timestamp(now)))
    return client_id, secret


def get_client(db: sqlite3.Connection, client_id: str) -> Client | None:
    row = db.execute(f"SELECT {_CLIENT_COLUMNS} FROM oauth_clients WHERE id = ?", (client_id,)).fetchone()
    return None if row is None else _client(row)


def registered_origins(db: sqlite3.Connection) -> set[str]:
    """The origins (scheme://host[:port]) of every registered redirect URI and allowed origin."""
    from urllib.parse import urlsplit

    found: set[str] = set()
    for uris, origins in db.execute("SELECT redirect_uris, allowed_origins FROM oauth_clients"):
        for uri in orjson.loads(uris):
            parts = urlsplit(uri)
            if parts.scheme and parts.netloc:
                found.add(f"{parts.scheme}://{parts.netloc}".lower())
        found.update(origin.lower() for origin in orjson.loads(origins))
    return found


# --- authorization codes ---------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Code:
    id: int
    client_id: str
    user_id: int
    scope: int
    redirect_uri: str
    code_challenge: str
    code_challenge_method: str
    expires_at: str
    used_at: str | None


def save_code(db: sqlite3.Connection, raw: str, *, client_id: str, user_id: int, scope: int, redirect_uri: str,
              code_challenge: str, code_challenge_method: str, now: datetime) -> None:
    db.execute(
        "INSERT INTO oauth_codes (code_hash, client_id, user_id, scope, redirect_uri, code_challenge,"
        " code_challenge_method, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (hash_token(raw), client_id, user_id, scope, redirect_uri, code_challenge, code_challenge_method,
         format_timestamp(now), format_timestamp(now + timedelta(seconds=CODE_TTL_SECONDS))))


def find_code(db: sqlite3.Connection, raw: str) -> Code | None:
    row = db.execute("SELECT id, client_id, user_id, scope, redirect_uri, code_challenge, code_challenge_method,"
                     " expires_at, used_at FROM oauth_codes WHERE code_hash = ?", (hash_token(raw),)).fetchone()
    return None if row is None else Code(*row)


def use_code(db: sqlite3.Connection, code_id: int, *, now: datetime) -> bool:
    """Mark a code used; False when it already was (a concurrent exchange lost the race)."""
    cursor = db.execute("UPDATE oauth_codes SET used_at = ? WHERE id = ? AND used_at IS NULL",
                        (format_timestamp(now), code_id))
    return cursor.rowcount == 1


# --- refresh tokens ----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class RefreshToken:
    id: int
    client_id: str
    user_id: int
    scope: int
    family_id: int
    expires_at: str
    rotated_at: str | None
    revoked_at: str | None


def find_refresh_token(db: sqlite3.Connection, raw: str) -> RefreshToken | None:
    row = db.execute("SELECT id, client_id, user_id, scope, family_id, expires_at, rotated_at, revoked_at"
                     " FROM oauth_refresh_tokens WHERE token_hash = ?", (hash_token(raw),)).fetchone()
    return None if row is None else RefreshToken(*row)


def save_refresh_token(db: sqlite3.Connection, raw: str, *, client_id: str, user_id: int, scope: int,
                       now: datetime, parent: RefreshToken | None = None) -> int:
    """Store a refresh token (a new family, or the child of ``parent``); return its id."""
    cursor = db.execute(
        "INSERT INTO oauth_refresh_tokens (token_hash, client_id, user_id, scope, family_id, parent_id, created_at,"
        " expires_at) VALUES (?, ?, ?, ?, 0, ?, ?, ?)",
        (hash_token(raw), client_id, user_id, scope, parent.id if parent else None, format_timestamp(now),
         format_timestamp(now + timedelta(seconds=REFRESH_TTL_SECONDS))))
    token_id = int(cursor.lastrowid or 0)
    db.execute("UPDATE oauth_refresh_tokens SET family_id = ? WHERE id = ?",
               (parent.family_id if parent else token_id, token_id))
    return token_id


def rotate_refresh_token(db: sqlite3.Connection, token_id: int, *, now: datetime) -> bool:
    """Retire a refresh token that has just been exchanged; False when it already was."""
    cursor = db.execute("UPDATE oauth_refresh_tokens SET rotated_at = ? WHERE id = ? AND rotated_at IS NULL"
                        " AND revoked_at IS NULL", (format_timestamp(now), token_id))
    return cursor.rowcount == 1


def revoke_family(db: sqlite3.Connection, family_id: int, *, now: datetime) -> None:
    """Revoke every refresh token of a family and every access token they minted."""
    stamp = format_timestamp(now)
    db.execute("UPDATE oauth_refresh_tokens SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL",
               (stamp, family_id))
    db.execute("UPDATE oauth_access_tokens SET revoked_at = ? WHERE revoked_at IS NULL AND refresh_token_id IN"
               " (SELECT id FROM oauth_refresh_tokens WHERE family_id = ?)", (stamp, family_id))


def issue_access_token(db: sqlite3.Connection, raw: str, *, client_id: str, user_id: int, scope: int,
                       now: datetime, refresh_token_id: int | None, ttl_seconds: int = DEFAULT_TTL_SECONDS) -> None:
    """Store an access token whose raw value the grant chose (the same table as store/tokens.py)."""
    db.execute(
        "INSERT INTO oauth_access_tokens (token_hash, client_id, user_id, scope, created_at, expires_at,"
        " refresh_token_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (hash_token(raw), client_id, user_id, scope, format_timestamp(now),
         format_timestamp(now + timedelta(seconds=ttl_seconds)), refresh_token_id))


# --- consents ----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Consent:
    scope: int
    buzz_limit: Any  # the stored JSON value (a list of budgets) or None


def get_consent(db: sqlite3.Connection, user_id: int, client_id: str) -> Consent | None:
    row = db.execute("SELECT scope, buzz_limit FROM oauth_consents WHERE user_id = ? AND client_id = ?",
                     (user_id, client_id)).fetchone()
    if row is None:
        return None
    return Consent(int(row[0]), None if row[1] is None else orjson.loads(row[1]))


def save_consent(db: sqlite3.Connection, *, user_id: int, client_id: str, scope: int, buzz_limit: Any,
                 now: datetime) -> None:
    stamp = format_timestamp(now)
    limit = None if buzz_limit is None else orjson.dumps(buzz_limit).decode()
    db.execute("INSERT INTO oauth_consents (user_id, client_id, scope, buzz_limit, created_at, updated_at)"
               " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (user_id, client_id) DO UPDATE SET scope = excluded.scope,"
               " buzz_limit = excluded.buzz_limit, updated_at = excluded.updated_at",
               (user_id, client_id, scope, limit, stamp, stamp))


# --- sessions ----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Session:
    id: int
    user_id: int
    csrf_token: str


def start_session(db: sqlite3.Connection, user_id: int, *, now: datetime) -> str:
    """A new session for ``user_id``; returns the raw session id (the cookie's value)."""
    raw = new_secret()
    db.execute("INSERT INTO oauth_sessions (session_hash, user_id, csrf_token, created_at, expires_at)"
               " VALUES (?, ?, ?, ?, ?)",
               (hash_token(raw), user_id, new_secret(), format_timestamp(now),
                format_timestamp(now + timedelta(seconds=SESSION_TTL_SECONDS))))
    return raw


def find_session(db: sqlite3.Connection, raw: str, *, now: str) -> Session | None:
    """The live session of a cookie value (not ended, not expired, its user not deleted), or None."""
    row = db.execute("SELECT s.id, s.user_id, s.csrf_token FROM oauth_sessions s JOIN users u ON u.id = s.user_id"
                     " WHERE s.session_hash = ? AND s.ended_at IS NULL AND s.expires_at > ? AND u.deleted_at IS NULL",
                     (hash_token(raw), now)).fetchone()
    return None if row is None else Session(*row)


def end_session(db: sqlite3.Connection, raw: str, *, now: datetime) -> None:
    db.execute("UPDATE oauth_sessions SET ended_at = ? WHERE session_hash = ? AND ended_at IS NULL",
               (format_timestamp(now), hash_token(raw)))


# --- rate limits --------------------------------------------------------------------------------

# A key is an id the store made (a client id, a user id) or an address; anything longer is
# hashed, so no caller can make one row hold more than this.
RATE_KEY_MAX = 128


def hit(db: sqlite3.Connection, bucket: str, key: str, *, now: float, window: int) -> tuple[int, int]:
    """Count one request in the fixed window holding ``now``; return (count so far, seconds left).

    Rows of a window that has passed are deleted first, as the platform's Redis keys expire:
    the table holds the current window only.
    """
    start = int(now) - int(now) % window
    if len(key) > RATE_KEY_MAX:
        key = "sha256:" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
    db.execute("DELETE FROM rate_limits WHERE bucket = ? AND window_start <> ?", (bucket, start))
    row = db.execute(
        "INSERT INTO rate_limits (bucket, key, window_start, count) VALUES (?, ?, ?, 1)"
        " ON CONFLICT (bucket, key) DO UPDATE SET"
        " count = CASE WHEN window_start = excluded.window_start THEN count + 1 ELSE 1 END,"
        " window_start = excluded.window_start RETURNING count",
        (bucket, key, start)).fetchone()
    return int(row[0]), start + window - int(now)

"""OAuth access tokens: issue, look up, revoke. Only the sha256 of a token is stored.

A raw token is ``secrets.token_urlsafe(32)`` (43 URL-safe characters, 256 random
bits); the table keeps ``sha256(raw)`` in hex, so a copy of the database holds no
usable token. Times are the store's timestamp form, taken from the emulator clock
by the caller (``now``), so advancing the clock expires tokens.
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

DEFAULT_TTL_SECONDS = 3600  # the spec's access token lifetime


def hash_token(raw: str) -> str:
    """The stored form of a token: sha256 of its UTF-8 bytes, lower-case hex."""
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class AccessToken:
    id: int
    client_id: str | None
    user_id: int
    scope: int
    created_at: str
    expires_at: str
    revoked_at: str | None
    refresh_token_id: int | None


@dataclass(frozen=True, slots=True)
class TokenUser:
    """The user a token belongs to, with what a Caller needs."""

    id: int
    username: str
    tier: str
    status: str
    is_moderator: bool
    browsing_level: int
    deleted: bool
    subscriptions: tuple[str, ...]  # active subscription product names


def issue_access_token(db: sqlite3.Connection, *, user_id: int, scope: int, now: datetime,
                       ttl_seconds: int = DEFAULT_TTL_SECONDS, client_id: str | None = None,
                       refresh_token_id: int | None = None) -> str:
    """Store a new access token for ``user_id`` and return the raw token (shown once, never stored)."""
    raw = secrets.token_urlsafe(32)
    db.execute(
        "INSERT INTO oauth_access_tokens (token_hash, client_id, user_id, scope, created_at, expires_at,"
        " refresh_token_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (hash_token(raw), client_id, user_id, scope, format_timestamp(now),
         format_timestamp(now + timedelta(seconds=ttl_seconds)), refresh_token_id),
    )
    return raw


_COLUMNS = "id, client_id, user_id, scope, created_at, expires_at, revoked_at, refresh_token_id"


def lookup_access_token(db: sqlite3.Connection, raw: str) -> AccessToken | None:
    """The token row for a raw token (revoked and expired ones too), or None."""
    row = db.execute(f"SELECT {_COLUMNS} FROM oauth_access_tokens WHERE token_hash = ?", (hash_token(raw),)).fetchone()
    return None if row is None else AccessToken(*row)


def revoke_access_token(db: sqlite3.Connection, raw: str, *, now: datetime) -> bool:
    """Revoke a token by its raw value; True when a live token was revoked."""
    cursor = db.execute("UPDATE oauth_access_tokens SET revoked_at = ? WHERE token_hash = ? AND revoked_at IS NULL",
                        (format_timestamp(now), hash_token(raw)))
    return cursor.rowcount > 0


def revoke_access_token_id(db: sqlite3.Connection, token_id: int, *, now: datetime) -> bool:
    cursor = db.execute("UPDATE oauth_access_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                        (format_timestamp(now), token_id))
    return cursor.rowcount > 0


_USER_SQL = ("SELECT u.id, u.username, u.tier, u.status, u.is_moderator, u.browsing_level, u.deleted_at IS NOT NULL,"
             " (SELECT json_group_array(product) FROM (SELECT product FROM subscriptions"
             "  WHERE user_id = u.id AND status = 'active' ORDER BY id))")


def _token_user(row: tuple[Any, ...]) -> TokenUser:
    return TokenUser(row[0], row[1], row[2], row[3], bool(row[4]), int(row[5]), bool(row[6]),
                     tuple(orjson.loads(row[7])))


def token_user(db: sqlite3.Connection, user_id: int) -> TokenUser | None:
    """The user behind a token, with their active subscriptions, or None when no such user."""
    row = db.execute(f"{_USER_SQL} FROM users u WHERE u.id = ?", (user_id,)).fetchone()
    return None if row is None else _token_user(tuple(row))


def lookup_token_and_user(db: sqlite3.Connection, raw: str) -> tuple[AccessToken, TokenUser | None] | None:
    """The token row for a raw token (revoked and expired ones too) and its user, in one statement
    (so one snapshot with no transaction to open); None when no such token."""
    columns = ", ".join(f"t.{name}" for name in _COLUMNS.split(", "))
    row = db.execute(f"SELECT {columns}, {_USER_SQL.removeprefix('SELECT ')} FROM oauth_access_tokens t"
                     " LEFT JOIN users u ON u.id = t.user_id WHERE t.token_hash = ?", (hash_token(raw),)).fetchone()
    if row is None:
        return None
    values = tuple(row)
    width = len(_COLUMNS.split(", "))
    return AccessToken(*values[:width]), (None if values[width] is None else _token_user(values[width:]))

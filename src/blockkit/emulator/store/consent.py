"""The consent ledger (table ``app_user_scope_grants``): which scopes a viewer granted an app block.

Plain SQL on a connection inside the caller's transaction; the rule (which scopes need a grant) is
``services/consent.py``'s.
"""

from __future__ import annotations

import sqlite3

import orjson


def granted_scopes(db: sqlite3.Connection, user_id: int, app_block_id: str) -> set[str]:
    """The scopes granted and not revoked; empty when there is no row or it is revoked."""
    row = db.execute("SELECT granted_scopes, revoked_at FROM app_user_scope_grants"
                     " WHERE user_id = ? AND app_block_id = ?", (user_id, app_block_id)).fetchone()
    if row is None or row[1] is not None:
        return set()
    value = orjson.loads(row[0])
    return {s for s in value if isinstance(s, str)} if isinstance(value, list) else set()


def add_grant(db: sqlite3.Connection, user_id: int, app_block_id: str, scopes: list[str], *, version: str,
              now: str) -> list[str]:
    """Union ``scopes`` into the viewer's stored grant, clear any revocation, and return the grant, sorted.

    As the platform's recordScopeGrant: the union is with the scopes stored in the row, a revoked row's too."""
    row = db.execute("SELECT granted_scopes FROM app_user_scope_grants WHERE user_id = ? AND app_block_id = ?",
                     (user_id, app_block_id)).fetchone()
    stored = orjson.loads(row[0]) if row is not None else []
    kept = {s for s in stored if isinstance(s, str)} if isinstance(stored, list) else set()
    merged = sorted(kept | {s for s in scopes if s})
    db.execute("INSERT INTO app_user_scope_grants (user_id, app_block_id, version, granted_scopes, created_at,"
               " updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (user_id, app_block_id) DO UPDATE SET"
               " version = excluded.version, granted_scopes = excluded.granted_scopes,"
               " updated_at = excluded.updated_at, revoked_at = NULL",
               (user_id, app_block_id, version, orjson.dumps(merged).decode(), now, now))
    return merged


def delete_grant(db: sqlite3.Connection, user_id: int, app_block_id: str) -> bool:
    """Forget the viewer's grant row altogether (blockkit dev's reset); True when there was one."""
    return db.execute("DELETE FROM app_user_scope_grants WHERE user_id = ? AND app_block_id = ?",
                      (user_id, app_block_id)).rowcount > 0

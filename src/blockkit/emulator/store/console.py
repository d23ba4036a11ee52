"""Queries the web console reads (``http/console``): what the platform holds, in the shapes its pages show.

SQL only, as every store module; the console's writes go through the services.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from blockkit.emulator.store.buzz import POOLS
from blockkit.emulator.store.orchestration import attempts_of


_USERS = ("SELECT u.id, u.username, u.tier, u.status, u.is_moderator, u.deleted_at IS NOT NULL AS deleted,"
          " COALESCE(SUM(CASE a.pool WHEN 'blue' THEN a.balance END), 0) AS blue,"
          " COALESCE(SUM(CASE a.pool WHEN 'green' THEN a.balance END), 0) AS green,"
          " COALESCE(SUM(CASE a.pool WHEN 'yellow' THEN a.balance END), 0) AS yellow,"
          " COUNT(a.pool) AS opened"
          " FROM users u LEFT JOIN buzz_accounts a ON a.user_id = u.id")


def users_with_pools(db: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every user, by id, with the three pool balances (0 for a pool never opened)."""
    return [dict(row) for row in db.execute(_USERS + " GROUP BY u.id ORDER BY u.id")]


def user_with_pools(db: sqlite3.Connection, user_id: int) -> dict[str, Any] | None:
    row = db.execute(_USERS + " WHERE u.id = ? GROUP BY u.id", (user_id,)).fetchone()
    return None if row is None else dict(row)


def ledger(db: sqlite3.Connection, user_id: int, limit: int = 200) -> list[dict[str, Any]]:
    """The user's ledger entries, newest first, each with what its reference names (a workflow, a purchase)."""
    rows = db.execute(
        "SELECT t.id, t.pool, t.amount, t.kind, t.reference, t.description, t.created_at,"
        " EXISTS (SELECT 1 FROM workflows w WHERE w.id = t.reference) AS is_workflow,"
        " EXISTS (SELECT 1 FROM goods_purchases g WHERE g.id = t.reference) AS is_purchase,"
        " EXISTS (SELECT 1 FROM recipe_jobs j WHERE j.id = t.reference) AS is_job"
        " FROM buzz_transactions t WHERE t.user_id = ? ORDER BY t.id DESC LIMIT ?", (user_id, limit))
    return [dict(row) for row in rows]


def crossings(db: sqlite3.Connection, start: str, end: str, limit: int = 50) -> dict[str, list[dict[str, Any]]]:
    """What moving the clock from ``start`` to ``end`` (stored timestamps) passes: early-access ends
    of model versions and expiries of live access tokens, each soonest first."""
    early = db.execute(
        "SELECT v.id, v.name, m.id AS model_id, m.name AS model_name, v.early_access_ends_at AS at"
        " FROM model_versions v JOIN models m ON m.id = v.model_id"
        " WHERE v.early_access_ends_at > ? AND v.early_access_ends_at <= ?"
        " ORDER BY v.early_access_ends_at, v.id LIMIT ?", (start, end, limit))
    tokens = db.execute(
        "SELECT t.id, t.client_id, u.username, t.expires_at AS at FROM oauth_access_tokens t"
        " JOIN users u ON u.id = t.user_id WHERE t.revoked_at IS NULL AND t.expires_at > ? AND t.expires_at <= ?"
        " ORDER BY t.expires_at, t.id LIMIT ?", (start, end, limit))
    return {"early_access": [dict(row) for row in early], "tokens": [dict(row) for row in tokens]}


def counts(db: sqlite3.Connection) -> dict[str, int]:
    """How many of each main kind of row the platform holds (the overview's summary)."""
    tables = {"users": "users", "models": "models", "images": "images", "oauth clients": "oauth_clients",
              "workflows": "workflows", "purchases": "goods_purchases", "ledger entries": "buzz_transactions"}
    return {label: int(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])  # noqa: S608 - fixed names
            for label, table in tables.items()}


__all__ = ["POOLS", "counts", "crossings", "ledger", "user_with_pools", "users_with_pools"]


# --- apps and access ------------------------------------------------------------------------

def oauth_clients(db: sqlite3.Connection) -> list[dict[str, Any]]:
    import orjson

    rows = db.execute(
        "SELECT c.id, c.name, c.is_confidential, c.allowed_scopes, c.redirect_uris, c.allowed_origins, c.created_at,"
        " u.username AS owner FROM oauth_clients c JOIN users u ON u.id = c.owner_user_id ORDER BY c.created_at, c.id")
    return [{**dict(row), "redirect_uris": orjson.loads(row["redirect_uris"]),
             "allowed_origins": orjson.loads(row["allowed_origins"])} for row in rows]


def consents(db: sqlite3.Connection) -> list[dict[str, Any]]:
    """Remembered consents (the consent page is skipped for these) with the live refresh grants beside them."""
    rows = db.execute(
        "SELECT k.user_id, u.username, k.client_id, c.name AS client_name, k.scope, k.buzz_limit, k.updated_at"
        " FROM oauth_consents k JOIN users u ON u.id = k.user_id JOIN oauth_clients c ON c.id = k.client_id"
        " ORDER BY k.updated_at DESC")
    return [dict(row) for row in rows]


def grants(db: sqlite3.Connection, now: str) -> list[dict[str, Any]]:
    """Live refresh-token grants (one row per family: its current token), soonest expiry first."""
    rows = db.execute(
        "SELECT r.family_id, r.client_id, c.name AS client_name, r.user_id, u.username, r.scope, r.expires_at"
        " FROM oauth_refresh_tokens r JOIN users u ON u.id = r.user_id JOIN oauth_clients c ON c.id = r.client_id"
        " WHERE r.revoked_at IS NULL AND r.rotated_at IS NULL AND r.expires_at > ? ORDER BY r.expires_at", (now,))
    return [dict(row) for row in rows]


def live_tokens(db: sqlite3.Connection, now: str, limit: int = 200) -> list[dict[str, Any]]:
    rows = db.execute(
        "SELECT t.id, t.client_id, c.name AS client_name, t.user_id, u.username, t.scope, t.created_at, t.expires_at"
        " FROM oauth_access_tokens t JOIN users u ON u.id = t.user_id LEFT JOIN oauth_clients c ON c.id = t.client_id"
        " WHERE t.revoked_at IS NULL AND t.expires_at > ? ORDER BY t.expires_at, t.id LIMIT ?", (now, limit))
    return [dict(row) for row in rows]


def block_grants(db: sqlite3.Connection) -> list[dict[str, Any]]:
    rows = db.execute(
        "SELECT g.user_id, u.username, g.app_block_id, g.version, g.granted_scopes, g.updated_at"
        " FROM app_user_scope_grants g LEFT JOIN users u ON u.id = g.user_id WHERE g.revoked_at IS NULL"
        " ORDER BY g.updated_at DESC")
    return [dict(row) for row in rows]


def api_keys(db: sqlite3.Connection) -> list[dict[str, Any]]:
    rows = db.execute(
        "SELECT k.id, k.user_id, u.username, k.created_at, k.revoked_at FROM orchestration_api_keys k"
        " JOIN users u ON u.id = k.user_id ORDER BY k.id DESC")
    return [dict(row) for row in rows]


def update_client(db: sqlite3.Connection, client_id: str, *, redirect_uris: list[str], allowed_scopes: int) -> bool:
    import orjson

    cursor = db.execute("UPDATE oauth_clients SET redirect_uris = ?, allowed_scopes = ? WHERE id = ?",
                        (orjson.dumps(redirect_uris).decode(), allowed_scopes, client_id))
    return cursor.rowcount > 0


def remove_client(db: sqlite3.Connection, client_id: str) -> bool:
    """The client and everything issued to it (codes, refresh and access tokens, consents)."""
    for table in ("oauth_codes", "oauth_refresh_tokens", "oauth_access_tokens", "oauth_consents"):
        db.execute(f"DELETE FROM {table} WHERE client_id = ?", (client_id,))  # noqa: S608 - fixed names
    return db.execute("DELETE FROM oauth_clients WHERE id = ?", (client_id,)).rowcount > 0


def revoke_grant(db: sqlite3.Connection, user_id: int, client_id: str, now: str) -> int:
    """Forget the consent of ``user_id`` to ``client_id`` and revoke its refresh and access tokens;
    returns how many rows it touched (0: there was nothing to revoke)."""
    touched = db.execute("DELETE FROM oauth_consents WHERE user_id = ? AND client_id = ?",
                         (user_id, client_id)).rowcount
    touched += db.execute("UPDATE oauth_refresh_tokens SET revoked_at = ? WHERE user_id = ? AND client_id = ?"
                          " AND revoked_at IS NULL", (now, user_id, client_id)).rowcount
    touched += db.execute("UPDATE oauth_access_tokens SET revoked_at = ? WHERE user_id = ? AND client_id = ?"
                          " AND revoked_at IS NULL", (now, user_id, client_id)).rowcount
    return touched


def revoke_api_key(db: sqlite3.Connection, key_id: int, now: str) -> bool:
    return db.execute("UPDATE orchestration_api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                      (now, key_id)).rowcount > 0


# --- orchestration and goods ----------------------------------------------------------------

def recent_workflows(db: sqlite3.Connection, limit: int = 50) -> list[dict[str, Any]]:
    """The newest workflows (every column ``workflows.render`` reads, and the owner's username)."""
    rows = db.execute(
        "SELECT w.*, u.username FROM workflows w JOIN users u ON u.id = w.user_id"
        " ORDER BY w.created_at DESC, w.id DESC LIMIT ?", (limit,))
    return [dict(row) for row in rows]


def callback_events(db: sqlite3.Connection, limit: int = 200) -> list[dict[str, Any]]:
    rows = db.execute("SELECT id, workflow_id, url, event_type, due_at, state, attempts, last_error"
                      " FROM workflow_events ORDER BY id DESC LIMIT ?", (limit,))
    events = [dict(row) for row in rows]
    tries = attempts_of(db, [event["id"] for event in events])
    for event in events:
        event["tries"] = tries[event["id"]]  # each delivery attempt, in order (migration 0013)
    return events


def deliver_again(db: sqlite3.Connection, event_id: int) -> bool:
    """Put a callback event back in the dispatcher's queue, due now (its attempts so far are kept)."""
    return db.execute("UPDATE workflow_events SET state = 'pending', next_try = 0 WHERE id = ? AND state != 'pending'",
                      (event_id,)).rowcount > 0


def goods_catalogues(db: sqlite3.Connection) -> list[dict[str, Any]]:
    import orjson

    rows = db.execute("SELECT g.app_id, g.block_id, g.owner_user_id, u.username AS owner, g.goods, g.updated_at"
                      " FROM goods_catalogues g LEFT JOIN users u ON u.id = g.owner_user_id ORDER BY g.app_id")
    return [{**dict(row), "goods": orjson.loads(row["goods"])} for row in rows]


def purchases(db: sqlite3.Connection, limit: int = 200) -> list[dict[str, Any]]:
    rows = db.execute(
        "SELECT p.id, p.user_id, u.username, p.app_id, p.block_id, p.good_id, p.kind, p.title, p.price,"
        " p.created_at, p.refund_state, p.refunded_at FROM goods_purchases p JOIN users u ON u.id = p.user_id"
        " ORDER BY p.created_at DESC, p.id LIMIT ?", (limit,))
    return [dict(row) for row in rows]


def recipe_jobs(db: sqlite3.Connection, limit: int = 50) -> list[dict[str, Any]]:
    rows = db.execute("SELECT j.id, j.user_id, u.username, j.recipe, j.status, j.cost, j.created_at, j.finished_at"
                      " FROM recipe_jobs j JOIN users u ON u.id = j.user_id ORDER BY j.created_at DESC LIMIT ?",
                      (limit,))
    return [dict(row) for row in rows]


# --- storage --------------------------------------------------------------------------------

def app_storage(db: sqlite3.Connection, block_id: str | None = None, user_id: int | None = None,
                limit: int = 500) -> list[dict[str, Any]]:
    """App storage rows by block, user and key (optionally of one block and one user)."""
    rows = db.execute(
        "SELECT s.block_id, s.user_id, u.username, s.key, s.value, s.size, s.updated_at FROM app_storage s"
        " LEFT JOIN users u ON u.id = s.user_id WHERE (? IS NULL OR s.block_id = ?) AND (? IS NULL OR s.user_id = ?)"
        " ORDER BY s.block_id, s.user_id, s.key LIMIT ?", (block_id, block_id, user_id, user_id, limit))
    return [dict(row) for row in rows]


def shared_entries(db: sqlite3.Connection, block_id: str | None = None, user_id: int | None = None,
                   limit: int = 500) -> list[dict[str, Any]]:
    rows = db.execute(
        "SELECT e.id, e.block_id, e.board, e.user_id, u.username, e.value, e.size, e.status, e.created_at,"
        " e.updated_at, (SELECT count(*) FROM shared_votes v WHERE v.entry_id = e.id) AS votes"
        " FROM shared_entries e LEFT JOIN users u ON u.id = e.user_id"
        " WHERE (? IS NULL OR e.block_id = ?) AND (? IS NULL OR e.user_id = ?)"
        " ORDER BY e.block_id, e.board, e.id DESC LIMIT ?", (block_id, block_id, user_id, user_id, limit))
    return [dict(row) for row in rows]


def storage_blocks(db: sqlite3.Connection) -> list[str]:
    rows = db.execute("SELECT block_id FROM app_storage UNION SELECT block_id FROM shared_entries ORDER BY 1")
    return [str(row[0]) for row in rows]

"""Orchestration rows: API keys, funds and deposits, stored blobs, workflows. SQL only."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from blockkit.emulator.store.tokens import hash_token

# --- API keys -------------------------------------------------------------------------------


def add_api_key(db: sqlite3.Connection, user_id: int, raw: str, now: str) -> int:
    cursor = db.execute("INSERT INTO orchestration_api_keys (key_hash, user_id, created_at) VALUES (?, ?, ?)",
                        (hash_token(raw), user_id, now))
    return int(cursor.lastrowid or 0)


def api_key_user(db: sqlite3.Connection, raw: str) -> int | None:
    """The user id of a live key, or None."""
    row = db.execute("SELECT user_id FROM orchestration_api_keys WHERE key_hash = ? AND revoked_at IS NULL",
                     (hash_token(raw),)).fetchone()
    return None if row is None else int(row[0])


# --- funds ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FundRow:
    id: str
    owner_user_id: int
    allow_mature_content: bool
    description: str | None
    created_at: str
    expires_at: str


def insert_fund(db: sqlite3.Connection, fund: FundRow) -> None:
    db.execute("INSERT INTO funds (id, owner_user_id, allow_mature_content, description, created_at, expires_at)"
               " VALUES (?, ?, ?, ?, ?, ?)", (fund.id, fund.owner_user_id, int(fund.allow_mature_content),
                                             fund.description, fund.created_at, fund.expires_at))


def live_fund(db: sqlite3.Connection, fund_id: str, now: str) -> FundRow | None:
    """A fund whose expiry lies after ``now``; an expired fund is gone (None)."""
    row = db.execute("SELECT id, owner_user_id, allow_mature_content, description, created_at, expires_at"
                     " FROM funds WHERE id = ? AND expires_at > ?", (fund_id, now)).fetchone()
    return None if row is None else FundRow(row[0], row[1], bool(row[2]), row[3], row[4], row[5])


def fund_balances(db: sqlite3.Connection, fund_id: str) -> dict[str, int]:
    return {r[0]: int(r[1]) for r in db.execute(
        "SELECT account_type, sum(amount) FROM fund_deposits WHERE fund_id = ? GROUP BY account_type", (fund_id,))}


def add_deposit(db: sqlite3.Connection, fund_id: str, user_id: int, account_type: str, amount: int, now: str) -> None:
    db.execute("INSERT INTO fund_deposits (fund_id, user_id, account_type, amount, created_at) VALUES (?, ?, ?, ?, ?)",
               (fund_id, user_id, account_type, amount, now))


# --- blobs ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BlobRow:
    id: str
    user_id: int | None
    filename: str
    media_type: str
    width: int
    height: int
    created_at: str


def insert_blob(db: sqlite3.Connection, blob: BlobRow) -> None:
    db.execute("INSERT INTO blobs (id, user_id, filename, media_type, width, height, created_at)"
               " VALUES (?, ?, ?, ?, ?, ?, ?)", (blob.id, blob.user_id, blob.filename, blob.media_type, blob.width,
                                                blob.height, blob.created_at))


def find_blob(db: sqlite3.Connection, blob_id: str) -> BlobRow | None:
    row = db.execute("SELECT id, user_id, filename, media_type, width, height, created_at FROM blobs WHERE id = ?",
                     (blob_id,)).fetchone()
    return None if row is None else BlobRow(*row)


# --- workflows ------------------------------------------------------------------------------


def insert_workflow(db: sqlite3.Connection, *, id: str, user_id: int, app_id: str | None, block_id: str | None,
                    created_at: str, cost: int, document: str, external_id: str | None = None) -> None:
    db.execute("INSERT INTO workflows (id, user_id, app_id, block_id, status, created_at, cost, document, external_id)"
               " VALUES (?, ?, ?, ?, 'timed', ?, ?, ?, ?)",
               (id, user_id, app_id, block_id, created_at, cost, document, external_id))


def find_by_external_id(db: sqlite3.Connection, user_id: int, external_id: str) -> dict[str, Any] | None:
    row = db.execute("SELECT id, user_id, app_id, block_id, status, created_at, canceled_at, cost, document"
                     " FROM workflows WHERE user_id = ? AND external_id = ?", (user_id, external_id)).fetchone()
    return None if row is None else dict(row)


def expiring_workflows(db: sqlite3.Connection, limit: int) -> list[str]:
    """Ids of workflows that will expire (a step timed out) or fail, and are not refunded yet."""
    return [r[0] for r in db.execute(
        "SELECT id FROM workflows WHERE status = 'timed' AND canceled_at IS NULL"
        " AND json_extract(document, '$.outcome') IN ('expired', 'failed') AND json_extract(document, '$.refunded') = 0"
        " ORDER BY created_at LIMIT ?", (limit,))]


def find_workflow(db: sqlite3.Connection, workflow_id: str) -> dict[str, Any] | None:
    row = db.execute("SELECT id, user_id, app_id, block_id, status, created_at, canceled_at, cost, document"
                     " FROM workflows WHERE id = ?", (workflow_id,)).fetchone()
    return None if row is None else dict(row)


def iter_workflows(db: sqlite3.Connection, user_id: int, app_id: str | None, *, ascending: bool,
                   after: tuple[str, str] | None, from_date: str | None, to_date: str | None,
                   tags: tuple[str, ...]) -> Iterator[dict[str, Any]]:
    """The user's (and app's) workflows in (created_at, id) order, past ``after``, within the dates, with every tag."""
    where = ["user_id = ?", "(? IS NULL OR app_id = ?)"]
    args: list[Any] = [user_id, app_id, app_id]
    if after is not None:
        where.append("(created_at, id) > (?, ?)" if ascending else "(created_at, id) < (?, ?)")
        args += list(after)
    if from_date is not None:
        where.append("created_at >= ?")
        args.append(from_date)
    if to_date is not None:
        where.append("created_at <= ?")
        args.append(to_date)
    for tag in tags:
        where.append("EXISTS (SELECT 1 FROM json_each(document, '$.tags') WHERE value = ?)")
        args.append(tag)
    order = "ASC" if ascending else "DESC"
    cursor = db.execute("SELECT id, user_id, app_id, block_id, status, created_at, canceled_at, cost, document"
                        f" FROM workflows WHERE {' AND '.join(where)} ORDER BY created_at {order}, id {order}", args)
    for row in cursor:
        yield dict(row)


def update_workflow_document(db: sqlite3.Connection, workflow_id: str, document: str,
                             status: str | None = None) -> None:
    db.execute("UPDATE workflows SET document = ?, status = coalesce(?, status) WHERE id = ?",
               (document, status, workflow_id))


def delete_workflow(db: sqlite3.Connection, workflow_id: str) -> None:
    db.execute("DELETE FROM workflows WHERE id = ?", (workflow_id,))
    drop_events(db, workflow_id)


def cancel_workflow(db: sqlite3.Connection, workflow_id: str, now: str, document: str) -> None:
    db.execute("UPDATE workflows SET status = 'canceled', canceled_at = ?, document = ? WHERE id = ?",
               (now, document, workflow_id))


# --- callback events (the outbox) -----------------------------------------------------------


def add_event(db: sqlite3.Connection, workflow_id: str, url: str, event_type: str, body: str, due_at: str) -> None:
    db.execute("INSERT INTO workflow_events (workflow_id, url, event_type, body, due_at) VALUES (?, ?, ?, ?, ?)",
               (workflow_id, url, event_type, body, due_at))


def drop_events(db: sqlite3.Connection, workflow_id: str, after: str | None = None) -> None:
    """Drop a workflow's undelivered events (only those due after ``after`` when given)."""
    db.execute("UPDATE workflow_events SET state = 'dropped' WHERE workflow_id = ? AND state = 'pending'"
               " AND (? IS NULL OR due_at > ?)", (workflow_id, after, after))


def due_events(db: sqlite3.Connection, now: str, wall: float, limit: int) -> list[dict[str, Any]]:
    rows = db.execute("SELECT id, workflow_id, url, event_type, body, due_at, attempts FROM workflow_events"
                      " WHERE state = 'pending' AND due_at <= ? AND next_try <= ? ORDER BY due_at, id LIMIT ?",
                      (now, wall, limit))
    return [dict(r) for r in rows]


def mark_event(db: sqlite3.Connection, event_id: int, state: str, attempts: int, next_try: float,
               error: str | None) -> None:
    db.execute("UPDATE workflow_events SET state = ?, attempts = ?, next_try = ?, last_error = ? WHERE id = ?",
               (state, attempts, next_try, error, event_id))


def add_attempt(db: sqlite3.Connection, event_id: int, attempt: int, started_at: str, duration_ms: int,
                http_status: int | None, error: str | None, url: str) -> None:
    """One delivery attempt of a callback event (migration 0013). ``attempt`` is the event's count with
    this one; should two senders ever race on one event, the later row takes the next free number."""
    db.execute("INSERT INTO callback_attempts (event_id, attempt, started_at, duration_ms, http_status, error, url)"
               " VALUES (?, max(?, 1 + coalesce((SELECT max(attempt) FROM callback_attempts WHERE event_id = ?), 0)),"
               " ?, ?, ?, ?, ?)", (event_id, attempt, event_id, started_at, duration_ms, http_status, error, url))


def attempts_of(db: sqlite3.Connection, event_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """The attempts of each of ``event_ids``, in the order they were made."""
    found: dict[int, list[dict[str, Any]]] = {event_id: [] for event_id in event_ids}
    if not event_ids:
        return found
    marks = ", ".join("?" for _ in event_ids)
    rows = db.execute(f"SELECT event_id, attempt, started_at, duration_ms, http_status, error, url"
                      f" FROM callback_attempts WHERE event_id IN ({marks}) ORDER BY event_id, attempt", event_ids)
    for row in rows:
        found[row["event_id"]].append(dict(row))
    return found


# --- recipe jobs ----------------------------------------------------------------------------


def insert_job(db: sqlite3.Connection, job_id: str, user_id: int, recipe: str, cost: int, debits: str,
               now: str) -> None:
    db.execute("INSERT INTO recipe_jobs (id, user_id, recipe, status, cost, debits, created_at)"
               " VALUES (?, ?, ?, 'running', ?, ?, ?)", (job_id, user_id, recipe, cost, debits, now))


def finish_job(db: sqlite3.Connection, job_id: str, status: str, blob_id: str | None, now: str) -> None:
    db.execute("UPDATE recipe_jobs SET status = ?, blob_id = ?, finished_at = ? WHERE id = ? AND status = 'running'",
               (status, blob_id, now, job_id))


def running_jobs(db: sqlite3.Connection) -> list[dict[str, Any]]:
    return [dict(r) for r in db.execute("SELECT id, user_id, recipe, cost, debits FROM recipe_jobs"
                                        " WHERE status = 'running'")]


def events_in(db: sqlite3.Connection, states: tuple[str, ...], limit: int) -> list[dict[str, Any]]:
    """Callback events in ``states``, newest first: what ``GET /__emulator/callbacks`` lists."""
    marks = ", ".join("?" for _ in states)
    rows = db.execute(f"SELECT id, workflow_id, url, event_type, state, attempts, due_at, last_error"
                      f" FROM workflow_events WHERE state IN ({marks}) ORDER BY id DESC LIMIT ?", (*states, limit))
    return [dict(r) for r in rows]

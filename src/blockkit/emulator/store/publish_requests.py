"""Publish requests (``publish_requests``): a block bundle submitted for review, and its review.

Plain functions over a connection; the rules (who may submit, which transitions are allowed)
are the service's (``services/publish_requests.py``). The status moves are status-guarded
updates (``WHERE status = 'pending'``), so a withdraw and an approve that race cannot both win.
"""

from __future__ import annotations

import base64
import sqlite3
from dataclasses import dataclass
from typing import Any

import orjson

STATUSES = ("pending", "approved", "rejected", "withdrawn")

_COLUMNS = ("id, slug, version, name, submitted_by_user_id, status, manifest, bundle_sha256, bundle_size_bytes,"
            " file_summary, manifest_diff_summary, rejection_reason, approval_notes, reviewed_at, submitted_at,"
            " updated_at")


@dataclass(frozen=True, slots=True)
class PublishRequest:
    id: str
    slug: str
    version: str
    name: str
    submitted_by_user_id: int
    status: str
    manifest: dict[str, Any]
    bundle_sha256: str
    bundle_size_bytes: int
    file_summary: dict[str, Any]
    manifest_diff_summary: dict[str, Any]
    rejection_reason: str | None
    approval_notes: str | None
    reviewed_at: str | None
    submitted_at: str
    updated_at: str


def _row(row: tuple[Any, ...]) -> PublishRequest:
    values = list(row)
    for index in (6, 9, 10):
        values[index] = orjson.loads(values[index])
    return PublishRequest(*values)


def insert(db: sqlite3.Connection, *, id: str, slug: str, version: str, name: str, user_id: int,
           manifest: dict[str, Any], bundle: bytes, bundle_sha256: str, file_summary: dict[str, Any],
           manifest_diff_summary: dict[str, Any], now: str) -> None:
    """A new pending request (sqlite3.IntegrityError when the slug already has a pending one)."""
    db.execute(
        "INSERT INTO publish_requests (id, slug, version, name, submitted_by_user_id, status, manifest, bundle_base64,"
        " bundle_sha256, bundle_size_bytes, file_summary, manifest_diff_summary, submitted_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?)",
        (id, slug, version, name, user_id, orjson.dumps(manifest).decode(), base64.b64encode(bundle).decode("ascii"),
         bundle_sha256, len(bundle),
         orjson.dumps(file_summary).decode(), orjson.dumps(manifest_diff_summary).decode(), now, now))


def get(db: sqlite3.Connection, request_id: str) -> PublishRequest | None:
    row = db.execute(f"SELECT {_COLUMNS} FROM publish_requests WHERE id = ?", (request_id,)).fetchone()
    return None if row is None else _row(row)


def pending_for_slug(db: sqlite3.Connection, slug: str) -> PublishRequest | None:
    row = db.execute(f"SELECT {_COLUMNS} FROM publish_requests WHERE slug = ? AND status = 'pending'",
                     (slug,)).fetchone()
    return None if row is None else _row(row)


def latest_approved(db: sqlite3.Connection, slug: str) -> PublishRequest | None:
    """The slug's most recently approved request (what the platform serves), or None."""
    row = db.execute(f"SELECT {_COLUMNS} FROM publish_requests WHERE slug = ? AND status = 'approved'"
                     " ORDER BY reviewed_at DESC, rowid DESC LIMIT 1", (slug,)).fetchone()
    return None if row is None else _row(row)


def bundle_of(db: sqlite3.Connection, request_id: str) -> bytes | None:
    row = db.execute("SELECT bundle_base64 FROM publish_requests WHERE id = ?", (request_id,)).fetchone()
    return None if row is None else base64.b64decode(row[0])


def list_requests(db: sqlite3.Connection, *, user_id: int | None = None, request_id: str | None = None,
                  slug: str | None = None, status: str | None = None, limit: int = 100) -> list[PublishRequest]:
    """Requests newest first, narrowed by each filter that is given."""
    where: list[str] = []
    params: list[Any] = []
    for column, value in (("submitted_by_user_id", user_id), ("id", request_id), ("slug", slug),
                          ("status", status)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    rows = db.execute(f"SELECT {_COLUMNS} FROM publish_requests{clause} ORDER BY submitted_at DESC, rowid DESC"
                      " LIMIT ?", (*params, limit)).fetchall()
    return [_row(row) for row in rows]


def set_status(db: sqlite3.Connection, request_id: str, status: str, *, now: str, reviewed: bool = False,
               rejection_reason: str | None = None, approval_notes: str | None = None) -> bool:
    """Move a still-pending request to ``status``; False when it was no longer pending."""
    cursor = db.execute(
        "UPDATE publish_requests SET status = ?, updated_at = ?, reviewed_at = CASE WHEN ? THEN ? ELSE reviewed_at"
        " END, rejection_reason = coalesce(?, rejection_reason), approval_notes = coalesce(?, approval_notes)"
        " WHERE id = ? AND status = 'pending'",
        (status, now, int(reviewed), now, rejection_reason, approval_notes, request_id))
    return cursor.rowcount > 0

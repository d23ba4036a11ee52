"""App storage (APP_STORAGE_*) and shared boards (SHARED_*), persisted in the store.

Python API (``blockkit dev`` swaps its in-memory ``DevStorage`` for these; each returns the
reply payload the bridge sends back; every function takes ``(store, clock, block_id, user_id, ...)``):

App storage, per (block, viewer), with the caps ``dev/bridge.py`` already uses (64 KB a value,
50 MB and 10,000 rows per (block, viewer), pages of at most 100 keys):

- ``storage_get(..., key) -> {"value"}`` (None when absent);
- ``storage_set(..., key, value) -> {"ok": True, "sizeBytes"}`` or ``{"ok": False, "error": "PAYLOAD_TOO_LARGE"}``;
- ``storage_delete(..., key) -> {"ok": True, "deleted"}``;
- ``storage_list(..., prefix="", cursor=None, limit=None) -> {"keys": [{key, updatedAt}], "nextCursor"?}``;
- ``storage_quota(...) -> {"usedBytes", "rowCount", "limitBytes", "limitRows"}``.

Shared boards, per (block, board name), visible to every viewer of the block (our shapes):

- ``shared_list(..., board, cursor=None, limit=None, sort="new"|"top") -> {"items": [Entry], "nextCursor"?}``;
- ``shared_get(..., board, entry_id) -> {"item": Entry | None}``;
- ``shared_count(..., board) -> {"count"}``; ``shared_counts(..., boards) -> {"counts": {board: n}}``;
- ``shared_append(..., board, value) -> {"ok": True, "item": Entry}`` (64 KB a value, 100 live
  entries per viewer per board);
- ``shared_update(..., entry_id, value)`` / ``shared_withdraw(..., entry_id)``: the author only;
- ``shared_vote`` / ``shared_unvote(..., entry_id) -> {"ok": True, "votes", "voted"}`` (one vote per viewer);
- ``shared_report(..., entry_id, reason=None) -> {"ok": True}``: ``REPORTS_TO_HIDE`` distinct
  reporters hide an entry.

Entry: ``{id, board, value, authorId, votes, votedByViewer, createdAt, updatedAt}``. Refusals are
``{"ok": False, "error": CODE}`` (NOT_FOUND, FORBIDDEN, PAYLOAD_TOO_LARGE, LIMIT_REACHED, BAD_REQUEST),
as the bridge's storage replies already are.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from blockkit.emulator.clock import Clock
    from blockkit.emulator.store import Store

VALUE_LIMIT_BYTES = 64 * 1024
QUOTA_BYTES = 50 * 1024 * 1024
QUOTA_ROWS = 10_000
LIST_PAGE = 100
MAX_KEY = 256
MAX_BOARD = 64
ENTRIES_PER_VIEWER = 100
REPORTS_TO_HIDE = 3


def _size(value: Any) -> int:
    # The size the bridge measures: compact JSON in UTF-8.
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def _refuse(code: str) -> dict[str, Any]:
    return {"ok": False, "error": code}


def _key_ok(key: object) -> bool:
    return isinstance(key, str) and 0 < len(key) <= MAX_KEY


# --- app storage ------------------------------------------------------------------------------

def storage_get(store: Store, clock: Clock, block_id: str, user_id: int, key: object) -> dict[str, Any]:
    if not _key_ok(key):
        return {"value": None}
    with store.read() as db:
        row = db.execute("SELECT value FROM app_storage WHERE block_id = ? AND user_id = ? AND key = ?",
                         (block_id, user_id, key)).fetchone()
    return {"value": None if row is None else orjson.loads(row[0])}


def storage_set(store: Store, clock: Clock, block_id: str, user_id: int, key: object, value: Any) -> dict[str, Any]:
    if not _key_ok(key):
        return _refuse("BAD_REQUEST")
    try:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):
        return _refuse("BAD_REQUEST")
    size = len(text.encode("utf-8"))
    if size > VALUE_LIMIT_BYTES:
        return _refuse("PAYLOAD_TOO_LARGE")
    with store.write() as db:
        used, rows = db.execute("SELECT coalesce(sum(size), 0), count(*) FROM app_storage WHERE block_id = ?"
                                " AND user_id = ?", (block_id, user_id)).fetchone()
        old = db.execute("SELECT size FROM app_storage WHERE block_id = ? AND user_id = ? AND key = ?",
                         (block_id, user_id, key)).fetchone()
        if used - (old[0] if old else 0) + size > QUOTA_BYTES or (old is None and rows >= QUOTA_ROWS):
            return _refuse("PAYLOAD_TOO_LARGE")
        db.execute("INSERT INTO app_storage (block_id, user_id, key, value, size, updated_at) VALUES (?, ?, ?, ?, ?, ?)"
                   " ON CONFLICT (block_id, user_id, key) DO UPDATE SET value = excluded.value,"
                   " size = excluded.size, updated_at = excluded.updated_at",
                   (block_id, user_id, key, text, size, clock.iso()))
    return {"ok": True, "sizeBytes": size}


def storage_delete(store: Store, clock: Clock, block_id: str, user_id: int, key: object) -> dict[str, Any]:
    if not _key_ok(key):
        return {"ok": True, "deleted": False}
    with store.write() as db:
        cursor = db.execute("DELETE FROM app_storage WHERE block_id = ? AND user_id = ? AND key = ?",
                            (block_id, user_id, key))
    return {"ok": True, "deleted": cursor.rowcount > 0}


def storage_list(store: Store, clock: Clock, block_id: str, user_id: int, prefix: object = "",
                 cursor: object = None, limit: object = None) -> dict[str, Any]:
    prefix = prefix if isinstance(prefix, str) else ""
    page = limit if isinstance(limit, int) and not isinstance(limit, bool) and 0 < limit <= LIST_PAGE else LIST_PAGE
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    with store.read() as db:
        rows = db.execute("SELECT key, updated_at FROM app_storage WHERE block_id = ? AND user_id = ?"
                          " AND key LIKE ? ESCAPE '\\' AND substr(key, 1, ?) = ? AND (? IS NULL OR key > ?)"
                          " ORDER BY key LIMIT ?",
                          (block_id, user_id, escaped + "%", len(prefix), prefix,
                           cursor if isinstance(cursor, str) else None, cursor if isinstance(cursor, str) else None,
                           page + 1)).fetchall()
    out: dict[str, Any] = {"keys": [{"key": r[0], "updatedAt": r[1]} for r in rows[:page]]}
    if len(rows) > page:
        out["nextCursor"] = rows[page - 1][0]
    return out


def storage_quota(store: Store, clock: Clock, block_id: str, user_id: int) -> dict[str, Any]:
    with store.read() as db:
        used, rows = db.execute("SELECT coalesce(sum(size), 0), count(*) FROM app_storage WHERE block_id = ?"
                                " AND user_id = ?", (block_id, user_id)).fetchone()
    return {"usedBytes": int(used), "rowCount": int(rows), "limitBytes": QUOTA_BYTES, "limitRows": QUOTA_ROWS}


# --- shared boards ----------------------------------------------------------------------------

def _board_ok(board: object) -> bool:
    return isinstance(board, str) and 0 < len(board) <= MAX_BOARD


_ENTRY = ("SELECT e.id, e.board, e.value, e.user_id, e.created_at, e.updated_at,"
          " (SELECT count(*) FROM shared_votes v WHERE v.entry_id = e.id) AS votes,"
          " EXISTS (SELECT 1 FROM shared_votes v WHERE v.entry_id = e.id AND v.user_id = ?) AS mine"
          " FROM shared_entries e")


def _entry(row: Any) -> dict[str, Any]:
    return {"id": row[0], "board": row[1], "value": orjson.loads(row[2]), "authorId": row[3], "votes": row[6],
            "votedByViewer": bool(row[7]), "createdAt": row[4], "updatedAt": row[5]}


def _live(db: Any, block_id: str, entry_id: object, viewer: int) -> Any:
    if isinstance(entry_id, bool) or not isinstance(entry_id, int):
        return None
    return db.execute(_ENTRY + " WHERE e.id = ? AND e.block_id = ? AND e.status = 'active'",
                      (viewer, entry_id, block_id)).fetchone()


def shared_list(store: Store, clock: Clock, block_id: str, user_id: int, board: object, cursor: object = None,
                limit: object = None, sort: object = "new") -> dict[str, Any]:
    if not _board_ok(board) or sort not in ("new", "top"):
        return _refuse("BAD_REQUEST")
    page = limit if isinstance(limit, int) and not isinstance(limit, bool) and 0 < limit <= LIST_PAGE else LIST_PAGE
    offset = cursor if isinstance(cursor, int) and not isinstance(cursor, bool) and cursor > 0 else 0
    order = "e.id DESC" if sort == "new" else "votes DESC, e.id DESC"
    with store.read() as db:
        rows = db.execute(_ENTRY + f" WHERE e.block_id = ? AND e.board = ? AND e.status = 'active' ORDER BY {order}"
                          " LIMIT ? OFFSET ?", (user_id, block_id, board, page + 1, offset)).fetchall()
    out: dict[str, Any] = {"items": [_entry(r) for r in rows[:page]]}
    if len(rows) > page:
        out["nextCursor"] = offset + page
    return out


def shared_get(store: Store, clock: Clock, block_id: str, user_id: int, board: object,
               entry_id: object) -> dict[str, Any]:
    with store.read() as db:
        row = _live(db, block_id, entry_id, user_id)
    return {"item": _entry(row) if row is not None and row[1] == board else None}


def shared_count(store: Store, clock: Clock, block_id: str, user_id: int, board: object) -> dict[str, Any]:
    return {"count": shared_counts(store, clock, block_id, user_id, [board])["counts"].get(board, 0)} \
        if _board_ok(board) else _refuse("BAD_REQUEST")


def shared_counts(store: Store, clock: Clock, block_id: str, user_id: int, boards: object) -> dict[str, Any]:
    if not isinstance(boards, list) or not 0 < len(boards) <= 50 or not all(_board_ok(b) for b in boards):
        return _refuse("BAD_REQUEST")
    with store.read() as db:
        found = dict(db.execute(f"SELECT board, count(*) FROM shared_entries WHERE block_id = ? AND status = 'active'"
                                f" AND board IN ({', '.join('?' * len(boards))}) GROUP BY board", (block_id, *boards)))
    return {"counts": {b: int(found.get(b, 0)) for b in boards}}


def shared_append(store: Store, clock: Clock, block_id: str, user_id: int, board: object, value: Any) -> dict[str, Any]:
    if not _board_ok(board):
        return _refuse("BAD_REQUEST")
    try:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):
        return _refuse("BAD_REQUEST")
    if len(text.encode("utf-8")) > VALUE_LIMIT_BYTES:
        return _refuse("PAYLOAD_TOO_LARGE")
    now = clock.iso()
    with store.write() as db:
        mine = db.execute("SELECT count(*) FROM shared_entries WHERE block_id = ? AND board = ? AND user_id = ?"
                          " AND status = 'active'", (block_id, board, user_id)).fetchone()[0]
        if mine >= ENTRIES_PER_VIEWER:
            return _refuse("LIMIT_REACHED")
        cursor = db.execute("INSERT INTO shared_entries (block_id, board, user_id, value, size, created_at, updated_at)"
                            " VALUES (?, ?, ?, ?, ?, ?, ?)", (block_id, board, user_id, text, len(text.encode()), now, now))
        row = _live(db, block_id, cursor.lastrowid, user_id)
    return {"ok": True, "item": _entry(row)}


def _author_change(store: Store, clock: Clock, block_id: str, user_id: int, entry_id: object, sql: str,
                   params: tuple[Any, ...]) -> dict[str, Any]:
    with store.write() as db:
        row = _live(db, block_id, entry_id, user_id)
        if row is None:
            return _refuse("NOT_FOUND")
        if row[3] != user_id:
            return _refuse("FORBIDDEN")
        db.execute(sql, (*params, entry_id))
        row = db.execute(_ENTRY + " WHERE e.id = ?", (user_id, entry_id)).fetchone()
    return {"ok": True, "item": _entry(row)}


def shared_update(store: Store, clock: Clock, block_id: str, user_id: int, entry_id: object,
                  value: Any) -> dict[str, Any]:
    try:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):
        return _refuse("BAD_REQUEST")
    if len(text.encode("utf-8")) > VALUE_LIMIT_BYTES:
        return _refuse("PAYLOAD_TOO_LARGE")
    return _author_change(store, clock, block_id, user_id, entry_id,
                          "UPDATE shared_entries SET value = ?, size = ?, updated_at = ? WHERE id = ?",
                          (text, len(text.encode()), clock.iso()))


def shared_withdraw(store: Store, clock: Clock, block_id: str, user_id: int, entry_id: object) -> dict[str, Any]:
    out = _author_change(store, clock, block_id, user_id, entry_id,
                         "UPDATE shared_entries SET status = 'withdrawn', updated_at = ? WHERE id = ?", (clock.iso(),))
    return {"ok": True} if out.get("ok") else out


def _vote(store: Store, block_id: str, user_id: int, entry_id: object, on: bool) -> dict[str, Any]:
    with store.write() as db:
        if _live(db, block_id, entry_id, user_id) is None:
            return _refuse("NOT_FOUND")
        if on:
            db.execute("INSERT OR IGNORE INTO shared_votes (entry_id, user_id) VALUES (?, ?)", (entry_id, user_id))
        else:
            db.execute("DELETE FROM shared_votes WHERE entry_id = ? AND user_id = ?", (entry_id, user_id))
        row = _live(db, block_id, entry_id, user_id)
    return {"ok": True, "votes": row[6], "voted": bool(row[7])}


def shared_vote(store: Store, clock: Clock, block_id: str, user_id: int, entry_id: object) -> dict[str, Any]:
    return _vote(store, block_id, user_id, entry_id, True)


def shared_unvote(store: Store, clock: Clock, block_id: str, user_id: int, entry_id: object) -> dict[str, Any]:
    return _vote(store, block_id, user_id, entry_id, False)


def shared_report(store: Store, clock: Clock, block_id: str, user_id: int, entry_id: object,
                  reason: object = None) -> dict[str, Any]:
    with store.write() as db:
        if _live(db, block_id, entry_id, user_id) is None:
            return _refuse("NOT_FOUND")
        db.execute("INSERT OR IGNORE INTO shared_reports (entry_id, user_id, reason, created_at) VALUES (?, ?, ?, ?)",
                   (entry_id, user_id, reason[:500] if isinstance(reason, str) else None, clock.iso()))
        reports = db.execute("SELECT count(*) FROM shared_reports WHERE entry_id = ?", (entry_id,)).fetchone()[0]
        if reports >= REPORTS_TO_HIDE:
            db.execute("UPDATE shared_entries SET status = 'hidden' WHERE id = ?", (entry_id,))
    return {"ok": True}

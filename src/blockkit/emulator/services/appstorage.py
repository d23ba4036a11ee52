"""App storage (APP_STORAGE_*) and shared storage (SHARED_*), persisted in the store.

Shapes, limits and messages follow the platform's tRPC routers behind the host bridge
(civitai/civitai at ebed661: ``src/server/routers/apps.router.ts`` and
``apps-shared.router.ts``; the replies the page host relays are in
``src/components/AppBlocks/PageBlockHost.tsx``). Every function takes ``(store, clock, block_id,
user_id, ...)``, ``user_id`` None for a signed-out viewer, and returns the reply payload the
bridge sends back (without ``requestId``). A refusal is ``{"error": message}`` (with ``ok:
False`` on the replies that carry ``ok``, and the neutral value on the reads, as the host sends).
The words say only what the platform says; the request journal hears why, with the counts and
ids a developer needs (``journal.note_reason``): the quota beside what the block holds, an
author's entries beside the limit, the author beside the viewer, the entry a viewer voted on
already.

App storage, per (block, viewer); the quota is the block's, across its viewers:

- ``storage_get(..., key) -> {"value"}`` (None when absent, and for a signed-out viewer);
- ``storage_set(..., key, value) -> {"ok": True, "sizeBytes"}``;
- ``storage_delete(..., key) -> {"ok": True, "deleted"}``;
- ``storage_list(..., prefix=None, cursor=None, limit=None) -> {"keys": [{key, updatedAt}],
  "nextCursor"?}``: keys in order, 50 a page by default (1-200); ``nextCursor`` (the base64 of the
  last key) whenever the page is full, as the platform pages;
- ``storage_quota(...) -> {"usedBytes", "rowCount", "limitBytes", "limitRows"}``.

Shared storage: one space per block that every viewer reads and signed-in viewers write.
An entry's ``key`` is made by the server (26 characters, ULID-like, in creation order); its
value is ``{title (1-200 chars), body? (at most 4096), data?}``:

- ``shared_list(..., prefix=None, cursor=None, limit=None, mine=False) -> {"items": [Item], "nextCursor"?}``:
  newest first, 50 a page by default (1-100); ``mine`` keeps the viewer's own entries;
- ``shared_get(..., key) -> {"item": Item | None}``; ``shared_count(..., key) -> {"count"}`` (its
  votes); ``shared_counts(..., keys) -> {"counts": {key: n}}`` (1-100 keys);
- ``shared_append(..., value) -> {"key"}`` (50 entries per author per block);
- ``shared_update(..., key, value) -> {"ok": True}`` (the author only);
- ``shared_vote`` / ``shared_unvote(..., key) -> {"count"}`` (one vote per viewer);
- ``shared_withdraw(..., key) -> {"ok": True, "deleted"}`` (the author's own entry);
- ``shared_report(..., key, reason=None) -> {"ok": True}``: recorded for a moderator; a report
  hides nothing by itself.

Item: ``{key, authorUserId, value, count, createdAt, updatedAt, viewerVoted}``.
"""

from __future__ import annotations

import base64
import json
import math
from typing import TYPE_CHECKING, Any

import orjson

from blockkit.emulator import journal
from blockkit.emulator.services import faults
from blockkit.emulator.store.clock import parse_timestamp

if TYPE_CHECKING:
    from blockkit.emulator.store.clock import Clock
    from blockkit.emulator.store import Store

VALUE_LIMIT_BYTES = 64 * 1024
QUOTA_BYTES = 50 * 1024 * 1024
QUOTA_ROWS = 1_000_000
LIST_DEFAULT = 50
LIST_MAX = 200
MAX_KEY = 200
MAX_PREFIX = 200
MAX_CURSOR = 400
SHARED_LIST_MAX = 100
SHARED_KEY_MAX = 64
SHARED_PREFIX_MAX = 64
SHARED_COUNTS_MAX = 100
ENTRIES_PER_VIEWER = 50
TITLE_MAX = 200
BODY_MAX = 4096
REASON_MAX = 500

# The platform's messages (its tRPC errors), which the host relays as ``error``.
SIGNED_OUT = "storage requires an authenticated viewer"
SHARED_SIGNED_OUT = "shared storage writes require an authenticated viewer"
TOO_LARGE = f"value exceeds {VALUE_LIMIT_BYTES // 1024}KB cap"
SHARED_TOO_LARGE = "value exceeds size cap"
QUOTA_EXCEEDED = "app quota exceeded"
ROWS_EXCEEDED = "app row limit exceeded"
NOT_FOUND = "request not found"
NOT_AUTHOR = "you can only edit your own submissions"
TOO_MANY_ENTRIES = "you have reached the maximum number of submissions for this app"


def _json(value: Any) -> str | None:
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return None


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _text(value: object, low: int, high: int) -> bool:
    return isinstance(value, str) and low <= len(value) <= high


def _page(limit: object, high: int) -> int:
    # The host clamps a number into range and uses the default for anything else.
    if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not math.isfinite(limit):
        return LIST_DEFAULT
    return int(min(max(int(limit), 1), high))


BAD_CURSOR = "cursor is not one this list gave (pass back nextCursor as it came)"


class _BadCursor(ValueError):
    pass


def _cursor(cursor: object) -> str | None:
    """The key a cursor names; None for no cursor; _BadCursor for a string that is not a cursor."""
    if cursor is None or cursor == "":
        return None
    if not isinstance(cursor, str) or len(cursor) > MAX_CURSOR:
        raise _BadCursor(BAD_CURSOR)
    try:
        # b64decode raises ValueError (not binascii.Error) for a str with non-ASCII characters.
        return base64.b64decode(cursor, validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        raise _BadCursor(BAD_CURSOR) from None


def _encode_cursor(key: str) -> str:
    return base64.b64encode(key.encode("utf-8")).decode("ascii")


# --- app storage ------------------------------------------------------------------------------

def _bad_key(key: object) -> str | None:
    return None if _text(key, 1, MAX_KEY) else f"key must be a string of 1-{MAX_KEY} characters"


def storage_get(store: Store, clock: Clock, block_id: str, user_id: int | None, key: object) -> dict[str, Any]:
    problem = _bad_key(key)
    if problem:
        return {"value": None, "error": problem}
    if user_id is None:
        return {"value": None}
    with store.read() as db:
        row = db.execute("SELECT value FROM app_storage WHERE block_id = ? AND user_id = ? AND key = ?",
                         (block_id, user_id, key)).fetchone()
    return {"value": None if row is None else orjson.loads(row[0])}


def storage_set(store: Store, clock: Clock, block_id: str, user_id: int | None, key: object,
                value: Any) -> dict[str, Any]:
    problem = _bad_key(key)
    if problem:
        return {"ok": False, "error": problem}
    if user_id is None:
        return {"ok": False, "error": SIGNED_OUT}
    text = _json(value)
    if text is None:
        return {"ok": False, "error": "value is not serializable"}
    size = _size(text)
    if size > VALUE_LIMIT_BYTES:
        return {"ok": False, "error": TOO_LARGE}
    with store.write() as db:
        if faults.take(db, "storage-write-fails", user_id):  # committed: the refusal uses the switch up
            return {"ok": False, "error": faults.STORAGE_FAILED}
        used, rows = db.execute("SELECT coalesce(sum(size), 0), count(*) FROM app_storage WHERE block_id = ?",
                                (block_id,)).fetchone()
        old = db.execute("SELECT size FROM app_storage WHERE block_id = ? AND user_id = ? AND key = ?",
                         (block_id, user_id, key)).fetchone()
        if used - (old[0] if old else 0) + size > QUOTA_BYTES:
            replacing = f", replacing {old[0]} bytes" if old else ""
            journal.note_reason(f"app storage quota: block {block_id}'s storage holds {used} of its {QUOTA_BYTES}"
                                f" bytes across its viewers; this value is {size} bytes{replacing}, which would make"
                                f" {used - (old[0] if old else 0) + size}")
            return {"ok": False, "error": QUOTA_EXCEEDED}
        if old is None and rows + 1 > QUOTA_ROWS:
            journal.note_reason(f"app storage row limit: block {block_id}'s storage holds {rows} of its {QUOTA_ROWS}"
                                f" keys across its viewers, and key {key!r} would be a new one")
            return {"ok": False, "error": ROWS_EXCEEDED}
        db.execute("INSERT INTO app_storage (block_id, user_id, key, value, size, updated_at) VALUES (?, ?, ?, ?, ?, ?)"
                   " ON CONFLICT (block_id, user_id, key) DO UPDATE SET value = excluded.value,"
                   " size = excluded.size, updated_at = excluded.updated_at",
                   (block_id, user_id, key, text, size, clock.iso()))
    return {"ok": True, "sizeBytes": size}


def storage_delete(store: Store, clock: Clock, block_id: str, user_id: int | None, key: object) -> dict[str, Any]:
    problem = _bad_key(key)
    if problem:
        return {"ok": False, "deleted": False, "error": problem}
    if user_id is None:
        return {"ok": False, "deleted": False, "error": SIGNED_OUT}
    with store.write() as db:
        if faults.take(db, "storage-write-fails", user_id):
            return {"ok": False, "deleted": False, "error": faults.STORAGE_FAILED}
        cursor = db.execute("DELETE FROM app_storage WHERE block_id = ? AND user_id = ? AND key = ?",
                            (block_id, user_id, key))
    return {"ok": True, "deleted": cursor.rowcount > 0}


def storage_list(store: Store, clock: Clock, block_id: str, user_id: int | None, prefix: object = None,
                 cursor: object = None, limit: object = None) -> dict[str, Any]:
    prefix = prefix if isinstance(prefix, str) else ""
    if len(prefix) > MAX_PREFIX:
        return {"keys": [], "error": f"prefix must be at most {MAX_PREFIX} characters"}
    if user_id is None:
        return {"keys": []}
    page = _page(limit, LIST_MAX)
    try:
        after = _cursor(cursor) or ""
    except _BadCursor as exc:
        return {"keys": [], "error": str(exc)}
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    with store.read() as db:
        rows = db.execute("SELECT key, updated_at FROM app_storage WHERE block_id = ? AND user_id = ?"
                          " AND key LIKE ? ESCAPE '\\' AND substr(key, 1, ?) = ? AND key > ?"
                          " ORDER BY key LIMIT ?",
                          (block_id, user_id, escaped + "%", len(prefix), prefix, after, page)).fetchall()
    out: dict[str, Any] = {"keys": [{"key": r[0], "updatedAt": r[1]} for r in rows]}
    if len(rows) == page:
        out["nextCursor"] = _encode_cursor(rows[-1][0])
    return out


def storage_quota(store: Store, clock: Clock, block_id: str, user_id: int | None = None) -> dict[str, Any]:
    with store.read() as db:
        used, rows = db.execute("SELECT coalesce(sum(size), 0), count(*) FROM app_storage WHERE block_id = ?",
                                (block_id,)).fetchone()
    return {"usedBytes": int(used), "rowCount": int(rows), "limitBytes": QUOTA_BYTES, "limitRows": QUOTA_ROWS}


# --- shared storage ---------------------------------------------------------------------------

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # ascending ASCII: string order is numeric order


def _b32(number: int, width: int) -> str:
    out = []
    for _ in range(width):
        number, digit = divmod(number, 32)
        out.append(_CROCKFORD[digit])
    return "".join(reversed(out))


def entry_key(entry_id: int, created_at: str) -> str:
    """An entry's key: its creation time (ms, 10 characters) then its row id (16), like a ULID."""
    millis = int(parse_timestamp(created_at).timestamp() * 1000)
    return _b32(millis, 10) + _b32(entry_id, 16)


def _entry_id(key: object) -> int | None:
    if not isinstance(key, str) or len(key) != 26 or any(c not in _CROCKFORD for c in key):
        return None
    number = 0
    for c in key[10:]:
        number = number * 32 + _CROCKFORD.index(c)
    return number


_ITEM = ("SELECT e.id, e.created_at, e.user_id, e.value, e.updated_at,"
         " (SELECT count(*) FROM shared_votes v WHERE v.entry_id = e.id) AS votes,"
         " EXISTS (SELECT 1 FROM shared_votes v WHERE v.entry_id = e.id AND v.user_id = ?) AS mine"
         " FROM shared_entries e")


def _item(row: Any) -> dict[str, Any]:
    return {"key": entry_key(row[0], row[1]), "authorUserId": row[2], "value": orjson.loads(row[3]),
            "count": row[5], "createdAt": row[1], "updatedAt": row[4], "viewerVoted": bool(row[6])}


def _find(db: Any, block_id: str, key: object, viewer: int | None) -> Any:
    """The live entry named by ``key`` (the key must match its creation time too), or None."""
    entry_id = _entry_id(key)
    if entry_id is None:
        return None
    row = db.execute(_ITEM + " WHERE e.id = ? AND e.block_id = ? AND e.status = 'active'",
                     (viewer or 0, entry_id, block_id)).fetchone()
    return row if row is not None and entry_key(row[0], row[1]) == key else None


def _bad_shared_key(key: object) -> str | None:
    return None if _text(key, 1, SHARED_KEY_MAX) else f"key must be a string of 1-{SHARED_KEY_MAX} characters"


def shared_value(value: object) -> tuple[str | None, str | None]:
    """(the stored JSON, None) or (None, why not): {title, body?, data?}, unknown members dropped."""
    if not isinstance(value, dict) or not _text(value.get("title"), 1, TITLE_MAX):
        return None, f"value must be {{title (1-{TITLE_MAX} characters), body?, data?}}"
    if "body" in value and value["body"] is not None and not _text(value["body"], 0, BODY_MAX):
        return None, f"value.body must be a string of at most {BODY_MAX} characters"
    kept = {"title": value["title"]}
    if value.get("body") is not None:
        kept["body"] = value["body"]
    if "data" in value:
        kept["data"] = value["data"]
    text = _json(kept)
    if text is None:
        return None, "value is not serializable"
    if _size(text) > VALUE_LIMIT_BYTES:
        return None, SHARED_TOO_LARGE
    return text, None


def shared_list(store: Store, clock: Clock, block_id: str, user_id: int | None, prefix: object = None,
                cursor: object = None, limit: object = None, *, mine: bool = False) -> dict[str, Any]:
    prefix = prefix if isinstance(prefix, str) else ""
    if len(prefix) > SHARED_PREFIX_MAX:
        return {"error": f"prefix must be at most {SHARED_PREFIX_MAX} characters"}
    page = _page(limit, SHARED_LIST_MAX)
    try:
        before = _cursor(cursor)
    except _BadCursor as exc:
        return {"error": str(exc)}
    with store.read() as db:
        rows = db.execute(_ITEM + " WHERE e.block_id = ? AND e.status = 'active'", (user_id or 0, block_id)).fetchall()
    if mine:  # the viewer's own entries only (a signed-out viewer authored none)
        rows = [r for r in rows if user_id is not None and r[2] == user_id]
    # Keys come from (time, id), so the order and the prefix are computed here (a block holds few entries).
    keyed = sorted(((entry_key(r[0], r[1]), r) for r in rows), key=lambda pair: pair[0], reverse=True)
    chosen = [r for k, r in keyed if k.startswith(prefix) and (before is None or k < before)][:page]
    out: dict[str, Any] = {"items": [_item(r) for r in chosen]}
    if len(chosen) == page:
        out["nextCursor"] = _encode_cursor(entry_key(chosen[-1][0], chosen[-1][1]))
    return out


def _shared_write_refusal(block_id: str, user_id: int | None, key: object, what: str) -> str | None:
    """Why a write to a shared entry is refused before the store is read: signed out, or a bad key."""
    if user_id is None:
        _signed_out_reason(block_id, what)
        return SHARED_SIGNED_OUT
    return _bad_shared_key(key)


# --- why a shared write is refused, in words for the request journal (never in the reply) ----------

def _signed_out_reason(block_id: str, what: str) -> None:
    journal.note_reason(f"shared storage {what}: the block token for block {block_id} names no viewer (signed out);"
                        " every viewer reads the shared space, and only a signed-in viewer appends, updates,"
                        " votes, unvotes, withdraws or reports")


def counts_reason(keys: object) -> str:
    """Why a shared_counts request's keys are refused: how many it sent, or which key is not one."""
    if not isinstance(keys, list):
        return f"shared_counts takes a list of 1-{SHARED_COUNTS_MAX} keys; keys is {journal.kind_of(keys)}"
    if not 1 <= len(keys) <= SHARED_COUNTS_MAX:
        return f"shared_counts takes 1-{SHARED_COUNTS_MAX} keys; this request sent {len(keys)}"
    index = next(i for i, k in enumerate(keys) if _bad_shared_key(k))
    return (f"shared_counts keys are strings of 1-{SHARED_KEY_MAX} characters; keys[{index}] is"
            f" {journal.kind_of(keys[index])}")


def _missing_reason(db: Any, block_id: str, key: object, what: str) -> None:
    """Why ``key`` names no live entry of the block: not an entry key, none such, or withdrawn or hidden."""
    entry_id = _entry_id(key)
    if entry_id is None:
        journal.note_reason(f"shared storage {what}: {key!r} is not a shared entry key (the 26 characters, 0-9 and"
                            " A-Z without I, L, O and U, that shared_append answered)")
        return
    row = db.execute("SELECT created_at, status, updated_at, block_id FROM shared_entries WHERE id = ?",
                     (entry_id,)).fetchone()
    if row is None or row[3] != block_id or entry_key(entry_id, row[0]) != key:
        journal.note_reason(f"shared storage {what}: block {block_id}'s shared space holds no entry {key}")
    elif row[1] == "withdrawn":
        journal.note_reason(f"shared storage {what}: entry {key} in block {block_id}'s shared space was withdrawn"
                            f" by its author at {row[2]}")
    else:
        journal.note_reason(f"shared storage {what}: entry {key} in block {block_id}'s shared space is {row[1]}"
                            f" (since {row[2]}); a {what} reaches active entries only")


def shared_get(store: Store, clock: Clock, block_id: str, user_id: int | None, key: object) -> dict[str, Any]:
    problem = _bad_shared_key(key)
    if problem:
        return {"item": None, "error": problem}
    with store.read() as db:
        row = _find(db, block_id, key, user_id)
    return {"item": None if row is None else _item(row)}


def shared_count(store: Store, clock: Clock, block_id: str, user_id: int | None, key: object) -> dict[str, Any]:
    problem = _bad_shared_key(key)
    if problem:
        return {"error": problem}
    with store.read() as db:
        row = _find(db, block_id, key, user_id)
    return {"count": 0 if row is None else row[5]}


def shared_counts(store: Store, clock: Clock, block_id: str, user_id: int | None, keys: object) -> dict[str, Any]:
    if not isinstance(keys, list) or not 1 <= len(keys) <= SHARED_COUNTS_MAX or any(_bad_shared_key(k) for k in keys):
        journal.note_reason(counts_reason(keys))
        return {"error": f"keys must be 1-{SHARED_COUNTS_MAX} strings of 1-{SHARED_KEY_MAX} characters"}
    counts: dict[str, int] = {}
    with store.read() as db:
        for key in keys:
            row = _find(db, block_id, key, user_id)
            counts[key] = 0 if row is None else row[5]
    return {"counts": counts}


def shared_append(store: Store, clock: Clock, block_id: str, user_id: int | None, value: Any) -> dict[str, Any]:
    if user_id is None:
        _signed_out_reason(block_id, "append")
        return {"error": SHARED_SIGNED_OUT}
    text, problem = shared_value(value)
    if text is None:
        return {"error": problem}
    now = clock.iso()
    with store.write() as db:
        mine, hidden = db.execute("SELECT count(*), coalesce(sum(status = 'hidden'), 0) FROM shared_entries"
                                  " WHERE block_id = ? AND user_id = ? AND status != 'withdrawn'",
                                  (block_id, user_id)).fetchone()
        if mine + 1 > ENTRIES_PER_VIEWER:
            held = f"{mine} entries ({hidden} of them hidden)" if hidden else f"{mine} entries"
            journal.note_reason(f"shared storage entry limit: user {user_id} holds {held} in block {block_id}'s"
                                f" shared space, and an author may hold {ENTRIES_PER_VIEWER} (withdrawn entries do"
                                " not count); withdraw one to append another")
            return {"error": TOO_MANY_ENTRIES}
        cursor = db.execute("INSERT INTO shared_entries (block_id, board, user_id, value, size, created_at, updated_at)"
                            " VALUES (?, '', ?, ?, ?, ?, ?)", (block_id, user_id, text, _size(text), now, now))
        assert cursor.lastrowid is not None
    return {"key": entry_key(cursor.lastrowid, now)}


def shared_update(store: Store, clock: Clock, block_id: str, user_id: int | None, key: object,
                  value: Any) -> dict[str, Any]:
    problem = _shared_write_refusal(block_id, user_id, key, "update")
    if problem:
        return {"ok": False, "error": problem}
    with store.write() as db:
        row = _find(db, block_id, key, user_id)
        if row is None:
            _missing_reason(db, block_id, key, "update")
            return {"ok": False, "error": NOT_FOUND}
        if row[2] != user_id:
            journal.note_reason(f"shared storage update: entry {key} in block {block_id}'s shared space is user"
                                f" {row[2]}'s, and this viewer is user {user_id}; only an entry's author updates it")
            return {"ok": False, "error": NOT_AUTHOR}
        text, problem = shared_value(value)
        if text is None:
            return {"ok": False, "error": problem}
        db.execute("UPDATE shared_entries SET value = ?, size = ?, updated_at = ? WHERE id = ?",
                   (text, _size(text), clock.iso(), row[0]))
    return {"ok": True}


def shared_withdraw(store: Store, clock: Clock, block_id: str, user_id: int | None, key: object) -> dict[str, Any]:
    problem = _shared_write_refusal(block_id, user_id, key, "withdraw")
    if problem:
        return {"error": problem}
    with store.write() as db:
        row = _find(db, block_id, key, user_id)
        if row is None or row[2] != user_id:  # someone else's entry is left alone, as a no-op
            journal.note_resolved_refusal()  # the platform answers 200 {deleted: false}; the journal says why
            if row is None:
                _missing_reason(db, block_id, key, "withdraw")
            else:
                journal.note_reason(f"shared storage withdraw: entry {key} in block {block_id}'s shared space is"
                                    f" user {row[2]}'s, and this viewer is user {user_id}; only an entry's author"
                                    " withdraws it, so it was left alone (deleted: false)")
            return {"ok": True, "deleted": False}
        db.execute("UPDATE shared_entries SET status = 'withdrawn', updated_at = ? WHERE id = ?", (clock.iso(), row[0]))
    return {"ok": True, "deleted": True}


def _vote(store: Store, block_id: str, user_id: int | None, key: object, on: bool) -> dict[str, Any]:
    what = "vote" if on else "unvote"
    problem = _shared_write_refusal(block_id, user_id, key, what)
    if problem:
        return {"error": problem}
    with store.write() as db:
        row = _find(db, block_id, key, user_id)
        if row is None:
            _missing_reason(db, block_id, key, what)
            return {"error": NOT_FOUND}
        if on:
            changed = db.execute("INSERT OR IGNORE INTO shared_votes (entry_id, user_id) VALUES (?, ?)",
                                 (row[0], user_id)).rowcount
        else:
            changed = db.execute("DELETE FROM shared_votes WHERE entry_id = ? AND user_id = ?",
                                 (row[0], user_id)).rowcount
        count = db.execute("SELECT count(*) FROM shared_votes WHERE entry_id = ?", (row[0],)).fetchone()[0]
    if not changed:  # one vote per viewer: a second vote (an unvote with none) answers the count, unchanged
        journal.note_resolved_refusal()
        journal.note_reason(f"shared storage vote: user {user_id} had voted for entry {key} in block {block_id}'s"
                            f" shared space already, and a viewer votes once; the count stays {count}" if on else
                            f"shared storage unvote: user {user_id} has no vote on entry {key} in block {block_id}'s"
                            f" shared space to take back; the count stays {count}")
    return {"count": count}


def shared_vote(store: Store, clock: Clock, block_id: str, user_id: int | None, key: object) -> dict[str, Any]:
    return _vote(store, block_id, user_id, key, True)


def shared_unvote(store: Store, clock: Clock, block_id: str, user_id: int | None, key: object) -> dict[str, Any]:
    return _vote(store, block_id, user_id, key, False)


def shared_report(store: Store, clock: Clock, block_id: str, user_id: int | None, key: object,
                  reason: object = None) -> dict[str, Any]:
    problem = _shared_write_refusal(block_id, user_id, key, "report")
    if problem:
        return {"ok": False, "error": problem}
    if reason is not None and not _text(reason, 0, REASON_MAX):
        return {"ok": False, "error": f"reason must be at most {REASON_MAX} characters"}
    with store.write() as db:
        row = _find(db, block_id, key, user_id)
        if row is None:
            _missing_reason(db, block_id, key, "report")
            return {"ok": False, "error": NOT_FOUND}
        db.execute("INSERT OR IGNORE INTO shared_reports (entry_id, user_id, reason, created_at) VALUES (?, ?, ?, ?)",
                   (row[0], user_id, reason, clock.iso()))
    return {"ok": True}


def reports(store: Store, block_id: str) -> list[dict[str, Any]]:
    """The reports filed on a block's shared entries (for a person playing the moderator)."""
    with store.read() as db:
        rows = db.execute("SELECT e.id, e.created_at, r.user_id, r.reason, r.created_at FROM shared_reports r"
                          " JOIN shared_entries e ON e.id = r.entry_id WHERE e.block_id = ? ORDER BY r.created_at",
                          (block_id,)).fetchall()
    return [{"key": entry_key(r[0], r[1]), "reporterUserId": r[2], "reason": r[3], "createdAt": r[4]} for r in rows]

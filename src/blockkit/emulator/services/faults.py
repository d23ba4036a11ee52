"""Unhappy paths on demand: make the local platform's next workflow or storage write fail.

A block author tests what a viewer meets when the platform says no. These switches make the
real services take their failure path; nothing is faked at the edge:

- ``workflow-fails``: the next workflow submitted (by the viewer, or by anyone) is accepted and
  charged as usual, then its first step fails 1 s after it starts: the step, its job and the
  workflow end ``failed``, the steps after it never run, no output is shown, the callbacks say so,
  and the charge is refunded once the failure is due on the emulator clock (as an expired
  workflow is: ``workflows.settle``).
- ``storage-write-fails``: the next app-storage write (set or delete) is refused as the platform
  answers an internal error, and nothing is written.

Each switch is armed for a number of uses (default 1) and kept in the store's ``meta`` table
(``fault.<kind>`` for anyone, ``fault.<kind>.<userId>`` for one viewer), so every face of the
local platform sees it: the bridge of ``blockkit dev``, the REST twins, the orchestration origin,
another process. Taking a use is part of the write transaction that acts on it.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from blockkit.emulator.store import meta

if TYPE_CHECKING:
    from blockkit.emulator.store import Store

KINDS: dict[str, str] = {
    "workflow-fails": "the next workflow submitted fails 1 s into its first step, and its charge is refunded",
    "storage-write-fails": "the next app-storage write is refused with an internal error, and nothing is written",
}
PREFIX = "fault."
MAX_TIMES = 1000
# What a refused storage write answers: the platform's host relays an internal error's message.
STORAGE_FAILED = "Internal server error"


class FaultError(ValueError):
    """An unknown kind or a bad count: one sentence."""


def _key(kind: str, user_id: int | None) -> str:
    if kind not in KINDS:
        raise FaultError(f"unknown fault {kind!r}: one of {', '.join(sorted(KINDS))}")
    return f"{PREFIX}{kind}" if user_id is None else f"{PREFIX}{kind}.{int(user_id)}"


def arm(store: Store, kind: str, times: int = 1, user_id: int | None = None) -> None:
    """Make the next ``times`` uses of ``kind`` fail (for ``user_id`` only, when given); 0 disarms."""
    if type(times) is not int or not 0 <= times <= MAX_TIMES:
        raise FaultError(f"times must be a whole number from 0 to {MAX_TIMES}")
    key = _key(kind, user_id)
    with store.write() as db:
        if times == 0:
            db.execute("DELETE FROM meta WHERE key = ?", (key,))
        else:
            meta.put(db, key, times)


def disarm_all(store: Store) -> None:
    with store.write() as db:
        db.execute("DELETE FROM meta WHERE key LIKE 'fault.%'")


def armed(store: Store) -> list[dict[str, Any]]:
    """Every armed switch: ``[{kind, userId (or None), times}]``."""
    with store.read() as db:
        rows = db.execute("SELECT key FROM meta WHERE key LIKE 'fault.%' ORDER BY key").fetchall()
        out = []
        for (key,) in rows:
            kind, _, user = key[len(PREFIX):].partition(".")
            out.append({"kind": kind, "userId": int(user) if user else None, "times": meta.get(db, key)})
    return out


def take(db: sqlite3.Connection, kind: str, user_id: int | None) -> bool:
    """Inside a write transaction: use one armed failure of ``kind`` for ``user_id`` (theirs first)."""
    keys = [_key(kind, user_id)] if user_id is not None else []
    keys.append(_key(kind, None))
    for key in keys:
        left = meta.get(db, key)
        if isinstance(left, int) and left > 0:
            if left == 1:
                db.execute("DELETE FROM meta WHERE key = ?", (key,))
            else:
                meta.put(db, key, left - 1)
            return True
    return False

"""The ``meta`` table: the data directory's own facts (seed, scale, clock offset, ...), as JSON."""

from __future__ import annotations

import sqlite3
from typing import Any

import orjson

# Keys the emulator writes. ``created_at`` describes this copy of the data (wall-clock time
# of its creation), not the data, so export leaves it out (see LOCAL_KEYS).
SEED = "seed"
SCALE = "scale"
CREATED_AT = "created_at"
CLOCK_OFFSET = "clock_offset"  # seconds the emulated clock runs ahead of real time
LANDMARKS = "landmarks"        # the seed's named fixtures (seed.landmarks())
LOCAL_KEYS = frozenset({CREATED_AT})


def get(db: sqlite3.Connection, key: str, default: Any = None) -> Any:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return default if row is None else orjson.loads(row[0])


def put(db: sqlite3.Connection, key: str, value: Any) -> None:
    db.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
               (key, orjson.dumps(value).decode()))


def all_items(db: sqlite3.Connection) -> dict[str, Any]:
    return {row[0]: orjson.loads(row[1]) for row in db.execute("SELECT key, value FROM meta ORDER BY key")}

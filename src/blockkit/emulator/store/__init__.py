"""The emulator's SQLite store.

- ``connection``: :class:`Store` (open, per-thread connections, ``read()``/``write()``
  transactions, checkpoint, close) and the file checks that raise :class:`StoreError`.
- ``migrate``: numbered ``migrations/NNNN_*.sql`` and per-family ``indexes/*.sql``.
- ``meta``: the key/value facts of the data directory (seed, scale, clock offset).
- one module per resource family (``users``, ``enums``, ``models``, ...): plain functions
  ``f(db: sqlite3.Connection, ...) -> rows/records``. They hold the SQL; nothing else does.
"""

from __future__ import annotations

from blockkit.emulator.errors import StoreError
from blockkit.emulator.store.connection import APPLICATION_ID, DB_FILENAME, Store

__all__ = ["APPLICATION_ID", "DB_FILENAME", "Store", "StoreError"]

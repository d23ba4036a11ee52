"""Batched inserts for the seed: rows by keyword, flushed with executemany in chunks.

A row names its columns by keyword; a column left out takes the default the
schema declares (read from the live table, so the seed never restates it). A
NOT NULL column without a default that a row leaves out is an error at once.
"""

from __future__ import annotations

import sqlite3
from typing import Any, Callable

CHUNK = 10_000


def _default_value(text: str | None) -> Any:
    if text is None or text.upper() == "NULL":
        return None
    if text.startswith("'") and text.endswith("'"):
        return text[1:-1].replace("''", "'")
    try:
        return int(text)
    except ValueError:
        return float(text)


class Sink:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self._columns: dict[str, tuple[str, ...]] = {}
        self._column_sets: dict[str, frozenset[str]] = {}
        self._defaults: dict[str, dict[str, Any]] = {}
        self._sql: dict[str, str] = {}
        self._buffers: dict[str, list[tuple[Any, ...]]] = {}
        self.counts: dict[str, int] = {}

    def _table(self, table: str) -> None:
        info = self.db.execute(f'PRAGMA table_info("{table}")').fetchall()
        if not info:
            raise KeyError(f"no table {table}")
        columns = tuple(row[1] for row in info)
        defaults: dict[str, Any] = {}
        for row in info:
            name, notnull, default = row[1], row[3], row[4]
            if default is not None or not notnull:
                defaults[name] = _default_value(default)
        self._columns[table] = columns
        self._column_sets[table] = frozenset(columns)
        self._defaults[table] = defaults
        names = ", ".join(columns)
        marks = ", ".join("?" for _ in columns)
        self._sql[table] = f"INSERT INTO {table} ({names}) VALUES ({marks})"
        self._buffers[table] = []
        self.counts[table] = 0

    def add(self, table: str, **values: Any) -> None:
        columns = self._columns.get(table)
        if columns is None:
            self._table(table)
            columns = self._columns[table]
        defaults = self._defaults[table]
        try:
            row = tuple([values[c] if c in values else defaults[c] for c in columns])
        except KeyError as exc:
            raise KeyError(f"seed row for {table} lacks {exc.args[0]}") from None
        if len(values) > len(columns) or not values.keys() <= self._column_sets[table]:
            unknown = sorted(set(values) - self._column_sets[table])
            raise KeyError(f"seed row for {table} has unknown columns {unknown}")
        buffer = self._buffers[table]
        buffer.append(row)
        if len(buffer) >= CHUNK:
            self.flush(table)

    def appender(self, table: str, names: tuple[str, ...]) -> Callable[..., None]:
        """A fast positional adder for hot tables: ``add(v1, v2, ...)`` for the columns ``names``.

        The columns left out take their declared defaults, as with add().
        """
        if table not in self._columns:
            self._table(table)
        columns = self._columns[table]
        unknown = set(names) - self._column_sets[table]
        if unknown:
            raise KeyError(f"seed appender for {table} has unknown columns {sorted(unknown)}")
        missing = [c for c in columns if c not in names and c not in self._defaults[table]]
        if missing:
            raise KeyError(f"seed appender for {table} lacks {missing[0]}")
        defaults = self._defaults[table]
        # Where each table column comes from: an index into the values, or a default.
        plan = [(names.index(c), None) if c in names else (-1, defaults[c]) for c in columns]
        buffer = self._buffers[table]
        if [i for i, _ in plan] == list(range(len(columns))):
            def add(*values: Any) -> None:
                buffer.append(values)
                if len(buffer) >= CHUNK:
                    self.flush(table)
        else:
            def add(*values: Any) -> None:
                buffer.append(tuple([values[i] if i >= 0 else d for i, d in plan]))
                if len(buffer) >= CHUNK:
                    self.flush(table)
        return add

    def flush(self, table: str) -> None:
        buffer = self._buffers[table]
        if buffer:
            self.db.executemany(self._sql[table], buffer)
            self.counts[table] += len(buffer)
            buffer.clear()

    def flush_all(self) -> None:
        for table in self._buffers:
            self.flush(table)

"""Schema migrations: numbered SQL files, applied in order, in one transaction.

``store/migrations/NNNN_name.sql`` (NNNN from 0001, no gaps) each move the schema
one version on; ``PRAGMA user_version`` records the last one applied. To change
the schema, add the next file: nothing else needs to change. A released file is
never edited.

Secondary indexes are not versioned: ``store/indexes/*.sql`` hold ``CREATE INDEX
IF NOT EXISTS`` statements, one file per resource family, applied on every open
(a no-op once they exist) and after a bulk seed, which drops them first so large
inserts do not maintain them row by row. Triggers are versioned (a migration makes
them); the bulk seed drops them too, fills what they maintain in one statement at
the end (store/models.py: count_models) and creates them again from their own SQL.
"""

from __future__ import annotations

import functools
import re
import sqlite3
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING

from blockkit.emulator.errors import StoreError
from blockkit.emulator.store.connection import APPLICATION_ID

if TYPE_CHECKING:
    from blockkit.emulator.store.connection import Store

_MIGRATION_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


@functools.lru_cache(maxsize=1)
def migrations() -> tuple[Migration, ...]:
    """Every migration this blockkit ships, in order (checked: numbered 1..N with no gaps)."""
    folder = resources.files("blockkit.emulator.store") / "migrations"
    found: list[Migration] = []
    for entry in folder.iterdir():
        match = _MIGRATION_NAME.match(entry.name)
        if match:
            found.append(Migration(int(match.group(1)), match.group(2), entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if versions != list(range(1, len(found) + 1)):  # a packaging mistake of ours, not the user's
        raise RuntimeError(f"emulator migrations must be numbered 1..N without gaps, found {versions}")
    return tuple(found)


def latest_version() -> int:
    return migrations()[-1].version


@functools.lru_cache(maxsize=1)
def index_scripts() -> tuple[tuple[str, str], ...]:
    """(family, sql) of every store/indexes/<family>.sql, by name."""
    folder = resources.files("blockkit.emulator.store") / "indexes"
    return tuple(sorted((entry.name[:-4], entry.read_text(encoding="utf-8"))
                        for entry in folder.iterdir() if entry.name.endswith(".sql")))


def statements(script: str) -> list[str]:
    """Split a script into statements (sqlite3.executescript would commit our transaction)."""
    out: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                out.append(buffer.strip())
            buffer = ""
    rest = "\n".join(line for line in buffer.splitlines() if not line.strip().startswith("--")).strip()
    if rest:
        raise RuntimeError(f"unterminated SQL statement: {rest[:60]!r}")
    return out


def prepare(store: Store) -> None:
    """Check the file is ours and not too new, switch it to WAL, apply pending migrations."""
    conn = store.connection()
    application_id, version, objects = _identity(conn)
    _check_identity(store, application_id, version, objects)
    if version == latest_version():
        if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            _enable_wal(store, conn)
        return
    _enable_wal(store, conn)
    conn.execute("BEGIN IMMEDIATE")
    try:
        # Another process may have migrated between our look and our lock: look again.
        application_id, version, objects = _identity(conn)
        _check_identity(store, application_id, version, objects)
        for migration in migrations():
            if migration.version > version:
                for statement in statements(migration.sql):
                    conn.execute(statement)
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version = {latest_version()}")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _identity(conn: sqlite3.Connection) -> tuple[int, int, int]:
    application_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    objects = int(conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0])
    return application_id, version, objects


def _check_identity(store: Store, application_id: int, version: int, objects: int) -> None:
    if application_id != APPLICATION_ID and (application_id != 0 or objects or version):
        raise StoreError(f"{store.path}: an SQLite database of another application (application_id"
                         f" {application_id:#x}); blockkit leaves it alone: use another --data directory")
    if version > latest_version():
        raise StoreError(f"{store.path}: schema version {version} is newer than this blockkit understands"
                         f" ({latest_version()}); upgrade blockkit or use another --data directory")


def _enable_wal(store: Store, conn: sqlite3.Connection) -> None:
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        raise StoreError(f"{store.path}: cannot switch the database to WAL mode (journal mode stays {mode})")


def apply_indexes(store: Store) -> None:
    """Create every secondary index that does not exist yet."""
    with store.write() as conn:
        for _family, script in index_scripts():
            for statement in statements(script):
                conn.execute(statement)


def drop_triggers(conn: sqlite3.Connection) -> list[str]:
    """Drop every trigger (inside the caller's write transaction, before a bulk insert or wipe)
    and return their SQL for restore_triggers()."""
    found = [(row[0], row[1]) for row in conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name")]
    for name, _sql in found:
        conn.execute(f'DROP TRIGGER "{name}"')
    return [sql for _name, sql in found]


def restore_triggers(conn: sqlite3.Connection, sqls: list[str]) -> None:
    """Create again the triggers drop_triggers() returned (same transaction)."""
    for sql in sqls:
        conn.execute(sql)


def drop_indexes(store: Store) -> None:
    """Drop the secondary indexes (before a bulk insert; apply_indexes() puts them back)."""
    with store.write() as conn:
        names = [row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name")]
        for name in names:
            conn.execute(f'DROP INDEX "{name}"')

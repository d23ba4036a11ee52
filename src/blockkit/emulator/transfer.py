"""Export, import and reset a data directory.

An export is a directory: one JSON Lines file per table (``<table>.jsonl``, one
object per row, rows in primary-key order), the data directory's files the
store refers to (``files/``: every stored blob under ``files/blobs/``, the
block-token signing key ``files/block-token-key.pem``, and ``blockkit dev``'s
``files/dev-*.json``), and ``manifest.json`` (format, schema version, seed,
scale, each table's columns, row count and file's sha256, and each file's size
and sha256), written last. The same data exports to the same bytes (the test for seed
determinism relies on it); ``meta.created_at`` describes the copy, not the data,
and is left out. The clock's offset is a ``meta`` row, so it travels too. The
media cache (``media-cache/``) is not copied: it is drawn again, byte for byte,
from the stored rows. The blobs copied are those whose rows are in the snapshot.

Import checks the whole export (rows, each table's sha256, and each file's size
and sha256) before it touches the store, refuses a store that holds data unless
told to replace it, copies the blobs in, loads every row in one transaction
(foreign keys, and every Buzz pool's balance against its ledger, checked before
commit), and only then puts the key and the dev files in place, each replaced
atomically. A bad export changes nothing, and leaves nothing behind: the blobs a
refused import copied are removed again (the CLI also removes the empty store it
made in a new directory). Version 1 exports (rows only) and version 2 (no
table sha256) still import, with every other check; an edited row in them is
caught only where it breaks the schema, a reference or the books.

A failed export removes what it wrote (no partial files are left).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sqlite3
import stat
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson

from blockkit.emulator.store.clock import format_timestamp
from blockkit.emulator.errors import EmulatorError
from blockkit.emulator.store import Store, meta, migrate
from blockkit.emulator.store import models as model_store
from blockkit.emulator.store.migrate import latest_version

EXPORT_FORMAT = "blockkit-emulator-export"
EXPORT_VERSION = 3         # 3: each table's sha256 (required from 3 on)
READABLE_VERSIONS = (1, 2, 3)
TABLE_SHA256_SINCE = 3
MANIFEST = "manifest.json"
FILES = "files"
KEY_FILE = "block-token-key.pem"
DEV_FILES = ("dev-published-images.json", "dev-user-checkpoints.json")  # blockkit dev's own state
BLOBS = "blobs"
# The only names an export's files may have (an export is input: nothing may point outside the data dir).
_FILE_NAME = re.compile(r"blobs/[0-9a-f-]{36}\.(?:png|jpeg|webp)|block-token-key\.pem|dev-published-images\.json"
                        r"|dev-user-checkpoints\.json", re.ASCII)


class TransferError(EmulatorError):
    """An export or import that cannot be done (one line, exit 2)."""


def tables(db: sqlite3.Connection) -> list[str]:
    """The store's data tables, by name (SQLite's own sqlite_* tables excluded)."""
    return [row[0] for row in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
        " ORDER BY name")]


def columns(db: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in db.execute(f'PRAGMA table_info("{table}")')]


def _order_by(db: sqlite3.Connection, table: str) -> str:
    keyed = sorted((row[5], row[1]) for row in db.execute(f'PRAGMA table_info("{table}")') if row[5])
    return ", ".join(f'"{name}"' for _, name in keyed) if keyed else "rowid"


def is_empty(db: sqlite3.Connection) -> bool:
    """True when no table but meta holds a row (and meta holds no seed)."""
    for table in tables(db):
        if table == "meta":
            continue
        if db.execute(f'SELECT 1 FROM "{table}" LIMIT 1').fetchone():
            return False
    return meta.get(db, meta.SEED) is None


# --- export ------------------------------------------------------------------------------

def export(store: Store, target: Path) -> dict[str, Any]:
    """Write the store's data to ``target`` (a new or empty directory). Returns the manifest."""
    target = Path(target)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise TransferError(f"{target}: exists and is not an empty directory; export writes into a new one")
    made = _missing_parents(target)
    try:
        target.mkdir(mode=0o700, parents=True, exist_ok=True)
        # The tables hold what the data directory keeps private (emails, app storage, the ledger,
        # sessions): the export is 0700 and its files 0600, as the data directory's are.
        if target.stat().st_uid == os.geteuid():
            os.chmod(target, 0o700)
    except OSError as exc:
        raise TransferError(f"{target}: cannot create the directory: {exc.strerror or exc}") from None
    try:
        return _export(store, target)
    except BaseException:
        # The directory was empty or absent: everything in it now is this export's.
        for child in list(target.iterdir()):
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)
        for folder in made:  # the directories it created, deepest first
            _rmdir(folder)
        raise


def _missing_parents(path: Path) -> list[Path]:
    """The directories ``mkdir(parents=True)`` would create for ``path``, deepest first."""
    missing = []
    while not path.exists() and path != path.parent:
        missing.append(path)
        path = path.parent
    return missing


def _rmdir(path: Path) -> None:
    try:
        path.rmdir()
    except OSError:
        pass


def _export(store: Store, target: Path) -> dict[str, Any]:
    manifest: dict[str, Any] = {"format": EXPORT_FORMAT, "version": EXPORT_VERSION}
    with store.guard(), store.read() as db:  # one snapshot, even while the server writes
        manifest["schema_version"] = int(db.execute("PRAGMA user_version").fetchone()[0])
        manifest["seed"] = meta.get(db, meta.SEED)
        manifest["scale"] = meta.get(db, meta.SCALE)
        manifest["tables"] = {}
        for table in tables(db):
            names = columns(db, table)
            count = 0
            path = target / f"{table}.jsonl"
            digest = hashlib.sha256()
            try:
                with _create(path) as out:
                    sql = f'SELECT * FROM "{table}" ORDER BY {_order_by(db, table)}'
                    for row in db.execute(sql):
                        record = dict(zip(names, tuple(row)))
                        if table == "meta" and record["key"] in meta.LOCAL_KEYS:
                            continue
                        line = orjson.dumps(record) + b"\n"
                        out.write(line)
                        digest.update(line)
                        count += 1
            except OSError as exc:
                raise TransferError(f"{path}: cannot write: {exc.strerror or exc}") from None
            manifest["tables"][table] = {"file": path.name, "columns": names, "rows": count,
                                         "sha256": digest.hexdigest()}
        blob_names = [row[0] for row in db.execute("SELECT filename FROM blobs ORDER BY filename")] \
            if "blobs" in manifest["tables"] else []
        # Inside the snapshot: a blob's file is written before its row, so every row seen here has its file.
        manifest["files"] = _export_files(store.path.parent, target / FILES, blob_names)
    _write_atomic(target / MANIFEST, orjson.dumps(manifest, option=orjson.OPT_INDENT_2) + b"\n")
    return manifest


def _export_files(data_dir: Path, target: Path, blob_names: list[str]) -> dict[str, dict[str, Any]]:
    """Copy the data directory's files into ``target``; {relative name: {bytes, sha256}}, by name."""
    names = [f"{BLOBS}/{name}" for name in blob_names] + [KEY_FILE, *DEV_FILES]
    out: dict[str, dict[str, Any]] = {}
    for name in sorted(names):
        source = data_dir / name
        if not _FILE_NAME.fullmatch(name) or not source.is_file():
            continue  # no key yet, no dev state, or a blob row whose file is gone (404 on the source too)
        destination = target / name
        try:
            destination.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            data = source.read_bytes()
            with _create(destination) as handle:
                handle.write(data)
        except OSError as exc:
            raise TransferError(f"{destination}: cannot write: {exc.strerror or exc}") from None
        out[name] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    return out


def _create(path: Path) -> Any:
    """A new file of this user's alone (0600), never one already there or a link planted in its place."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    return os.fdopen(fd, "wb")


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.unlink(missing_ok=True)
        with _create(tmp) as handle:
            handle.write(data)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise TransferError(f"{path}: cannot write: {exc.strerror or exc}") from None


# --- import ------------------------------------------------------------------------------

# Bounds on what an import reads (an export is input from elsewhere): the manifest, and one row.
MAX_MANIFEST_BYTES = 64 * 1024 * 1024
MAX_ROW_BYTES = 64 * 1024 * 1024


def _open_export_file(path: Path) -> Any:
    """``path`` opened for reading if it is a regular file and no symlink (security review 2, S10).

    An export comes from elsewhere: a file of it that is a link to ``/dev/zero`` or ``/dev/stdin``
    would be read for ever. lstat first, then open with O_NOFOLLOW and O_NONBLOCK, then fstat the
    descriptor itself; the folders ``files/`` and ``files/blobs/`` must not be links either.
    """
    for folder in (path.parent, path.parent.parent):
        if folder.name in (FILES, BLOBS) and folder.is_symlink():
            raise TransferError(f"{folder}: is a symbolic link; an export holds its own files")
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise TransferError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        kind = "a symbolic link" if stat.S_ISLNK(info.st_mode) else "not a regular file"
        raise TransferError(f"{path}: is {kind}; an export holds regular files only")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise TransferError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise TransferError(f"{path}: is not a regular file; an export holds regular files only")
    return os.fdopen(fd, "rb")


def _read_bounded(path: Path, limit: int, what: str) -> bytes:
    with _open_export_file(path) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise TransferError(f"{path}: larger than {what}")
    return data


def read_manifest(source: Path) -> dict[str, Any]:
    path = Path(source) / MANIFEST
    try:
        manifest = orjson.loads(_read_bounded(path, MAX_MANIFEST_BYTES, f"{MAX_MANIFEST_BYTES >> 20} MiB"))
    except FileNotFoundError:
        raise TransferError(f"{source}: not an emulator export (no {MANIFEST})") from None
    except OSError as exc:
        raise TransferError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except orjson.JSONDecodeError as exc:
        raise TransferError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != EXPORT_FORMAT:
        raise TransferError(f"{path}: not an emulator export manifest")
    if manifest.get("version") not in READABLE_VERSIONS:
        raise TransferError(f"{path}: export format version {manifest.get('version')!r} is not supported"
                            f" (this blockkit reads versions {', '.join(map(str, READABLE_VERSIONS))})")
    schema = manifest.get("schema_version")
    if not isinstance(schema, int) or schema < 1:
        raise TransferError(f"{path}: schema_version must be a positive integer")
    if schema > latest_version():
        raise TransferError(f"{path}: exported from schema version {schema}, newer than this blockkit understands"
                            f" ({latest_version()}); upgrade blockkit")
    if not isinstance(manifest.get("tables"), dict):
        raise TransferError(f"{path}: 'tables' must be an object")
    files = manifest.setdefault("files", {})
    if not isinstance(files, dict) or not all(
            isinstance(name, str) and _FILE_NAME.fullmatch(name) and isinstance(entry, dict)
            and isinstance(entry.get("bytes"), int) and isinstance(entry.get("sha256"), str)
            for name, entry in files.items()):
        raise TransferError(f"{path}: 'files' must map blobs/<id>.<ext>, {KEY_FILE} or dev-*.json to"
                            " {bytes, sha256}")
    return manifest


def _rows(path: Path, allowed: set[str]) -> Iterator[dict[str, Any]]:
    try:
        handle = _open_export_file(path)
    except OSError as exc:
        raise TransferError(f"{path}: cannot read: {exc.strerror or exc}") from None
    with handle:
        number = 0
        while True:
            line = handle.readline(MAX_ROW_BYTES + 1)
            if not line:
                break
            number += 1
            if len(line) > MAX_ROW_BYTES:
                raise TransferError(f"{path}:{number}: a row longer than {MAX_ROW_BYTES >> 20} MiB")
            if not line.strip():
                continue
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                raise TransferError(f"{path}:{number}: not valid JSON ({exc})") from None
            if not isinstance(record, dict):
                raise TransferError(f"{path}:{number}: a row must be a JSON object")
            unknown = set(record) - allowed
            if unknown:
                raise TransferError(f"{path}:{number}: unknown column {sorted(unknown)[0]!r}")
            yield record


def validate_export(source: Path, db: sqlite3.Connection) -> dict[str, Any]:
    """Check every file of the export against the manifest and this schema; return the manifest."""
    source = Path(source)
    manifest = read_manifest(source)
    known = set(tables(db))
    for table, entry in manifest["tables"].items():
        if table not in known:
            raise TransferError(f"{source / MANIFEST}: table {table!r} does not exist in this schema")
        if not isinstance(entry, dict) or not isinstance(entry.get("rows"), int) \
                or entry.get("file") != f"{table}.jsonl":
            raise TransferError(f"{source / MANIFEST}: bad entry for table {table!r}")
        count = sum(1 for _ in _rows(source / entry["file"], set(columns(db, table))))
        if count != entry["rows"]:
            raise TransferError(f"{source / entry['file']}: {count} rows, the manifest says {entry['rows']}"
                                " (an incomplete or edited export)")
        if manifest["version"] >= TABLE_SHA256_SINCE or "sha256" in entry:
            if not isinstance(entry.get("sha256"), str):
                raise TransferError(f"{source / MANIFEST}: table {table!r} has no sha256 (an edited manifest)")
            if _sha256_of(source / entry["file"]) != entry["sha256"]:
                raise TransferError(f"{source / entry['file']}: its sha256 differs from the manifest (an edited"
                                    " export: a row was changed)")
    for name, entry in manifest["files"].items():
        data = export_file(source, name, entry)
        if name == KEY_FILE:
            _check_key(source / FILES / name, data)
    return manifest


def export_file(source: Path, name: str, entry: dict[str, Any]) -> bytes:
    """The bytes of an export's file ``name``, read no further than the manifest's size, and checked
    against its size and sha256."""
    path = Path(source) / FILES / name
    try:
        data = _read_bounded(path, entry["bytes"], "the manifest says (an incomplete or edited export)")
    except OSError as exc:
        raise TransferError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(data) != entry["bytes"] or hashlib.sha256(data).hexdigest() != entry["sha256"]:
        raise TransferError(f"{path}: its size or sha256 differs from the manifest (an incomplete or edited export)")
    return data


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    try:
        with _open_export_file(path) as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    except OSError as exc:
        raise TransferError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return digest.hexdigest()


def _read_file(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise TransferError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _check_key(path: Path, data: bytes) -> None:
    from joserfc.jwk import RSAKey

    try:
        if RSAKey.import_key(data).is_private:
            return
    except Exception:  # noqa: BLE001 - joserfc and cryptography raise several types for a bad PEM
        pass
    raise TransferError(f"{path}: not a PEM RSA private key")


def _place(path: Path, data: bytes, mode: int) -> None:
    """Write ``path`` whole (a temporary file, synced, then os.replace)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.import.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        raise TransferError(f"{path}: cannot write: {exc.strerror or exc}") from None
    finally:
        tmp.unlink(missing_ok=True)


def import_export(store: Store, source: Path, *, replace: bool = False) -> dict[str, Any]:
    """Load an export into ``store``. Refuses a store holding data unless ``replace``."""
    source = Path(source)
    conn = store.connection()
    with store.guard():
        with store.read() as db:
            manifest = validate_export(source, db)
            if not replace and not is_empty(db):
                raise TransferError(f"{store.path.parent}: the store already holds data; import into an empty"
                                    " --data directory, or pass --replace to overwrite it")
        data_dir = store.path.parent
        files = manifest["files"]
        key_here = data_dir / KEY_FILE
        if KEY_FILE in files and not replace and key_here.is_file() \
                and hashlib.sha256(_read_file(key_here)).hexdigest() != files[KEY_FILE]["sha256"]:
            raise TransferError(f"{key_here}: another block-token key is here; pass --replace to replace it with"
                                " the export's")
        copied: list[Path] = []  # the blobs this import put where there were none: removed if it fails
        blobs_existed = (data_dir / BLOBS).exists()
        try:
            for name in files:  # blobs first: new names, unused if the rows never come
                if name.startswith(f"{BLOBS}/"):
                    if _copy_blob(export_file(source, name, files[name]), data_dir / name):
                        copied.append(data_dir / name)
            _load_rows(store, conn, source, manifest)
        except BaseException:
            for path in copied:
                path.unlink(missing_ok=True)
            if not blobs_existed:
                _rmdir(data_dir / BLOBS)  # made by this import, and empty again
            raise
    for name in (KEY_FILE, *DEV_FILES):  # after the rows committed; each replaced whole
        if name in files:
            _place(data_dir / name, export_file(source, name, files[name]), 0o600)
    return manifest


def discard_new_store(data_dir: Path, *, remove_dir: bool) -> None:
    """After a refused import into a new directory: remove the empty store the import's open made
    (and the directory, when it made that too and it is empty), unless a server has taken the
    directory meanwhile or the store holds data after all. Best effort; never raises."""
    from blockkit.emulator import datadir
    from blockkit.emulator.store import DB_FILENAME

    path = Path(data_dir) / DB_FILENAME
    lock_file = Path(data_dir) / datadir.LOCK_FILENAME
    lock_existed = lock_file.exists()
    try:
        lock = datadir.acquire_data_lock(Path(data_dir))
    except EmulatorError:
        return  # a server holds it now: its store is not ours to remove
    try:
        try:
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
                empty = is_empty(db)
            db.close()
        except sqlite3.Error:
            return
        if empty:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
    finally:
        lock.release()
        if not lock_existed:
            lock_file.unlink(missing_ok=True)  # made by the look above (the directory's lock is the one that counts)
    if remove_dir:
        _rmdir(Path(data_dir))


def _load_rows(store: Store, conn: sqlite3.Connection, source: Path, manifest: dict[str, Any]) -> None:
    from blockkit.emulator.store import buzz as buzz_store

    conn.execute("PRAGMA foreign_keys = OFF")  # checked as a whole before commit instead
    try:
        with store.write() as db:
            _wipe(db, keep_meta=())
            # The rows bring their derived counts; the triggers that keep them (migration 0009)
            # would run per row: they are dropped while loading and the counts made once after.
            triggers = migrate.drop_triggers(db)
            for table, entry in manifest["tables"].items():
                allowed = set(columns(db, table))
                batch: list[dict[str, Any]] = []
                for record in _rows(source / entry["file"], allowed):
                    batch.append(record)
                    if len(batch) >= 5000:
                        _insert(db, table, batch)
                        batch = []
                _insert(db, table, batch)
            model_store.count_models(db)
            migrate.restore_triggers(db, triggers)
            problems = db.execute("PRAGMA foreign_key_check").fetchmany(1)
            if problems:
                table, rowid, parent, _ = tuple(problems[0])
                raise TransferError(f"{source}: a row of {table} (rowid {rowid}) refers to a missing {parent} row;"
                                    " nothing was imported")
            unbalanced = buzz_store.first_unbalanced(db)
            if unbalanced is not None:
                user_id, pool, balance, total = unbalanced
                raise TransferError(f"{source}: user {user_id}'s {pool} Buzz balance is {balance} but its ledger"
                                    f" adds up to {total} (an edited export); nothing was imported")
            meta.put(db, meta.CREATED_AT, format_timestamp(datetime.now(timezone.utc)))
    finally:
        conn.execute("PRAGMA foreign_keys = ON")


def _copy_blob(data: bytes, destination: Path) -> bool:
    """Copy one blob in (from bytes already checked against the manifest); True when there was no
    file at ``destination`` before."""
    existed = destination.exists()
    if existed and destination.is_file() and destination.stat().st_size == len(data) \
            and destination.read_bytes() == data:
        return False
    tmp = destination.with_name(f".{destination.name}.{os.getpid()}.import.tmp")
    try:
        destination.parent.mkdir(parents=True, exist_ok=True)
        tmp.unlink(missing_ok=True)
        with _create(tmp) as handle:
            handle.write(data)
        os.replace(tmp, destination)
    except OSError as exc:
        raise TransferError(f"{destination}: cannot write: {exc.strerror or exc}") from None
    finally:
        tmp.unlink(missing_ok=True)
    return not existed


def _insert(db: sqlite3.Connection, table: str, batch: list[dict[str, Any]]) -> None:
    # Rows of one export share their columns; group anyway, so a hand-made export also loads.
    groups: dict[tuple[str, ...], list[tuple[Any, ...]]] = {}
    for record in batch:
        keys = tuple(record)
        groups.setdefault(keys, []).append(tuple(record.values()))
    for keys, rows in groups.items():
        names = ", ".join(f'"{k}"' for k in keys)
        marks = ", ".join("?" for _ in keys)
        try:
            db.executemany(f'INSERT INTO "{table}" ({names}) VALUES ({marks})', rows)
        except sqlite3.IntegrityError as exc:
            raise TransferError(f"{table}: a row breaks the schema ({exc}); nothing was imported") from None


def _wipe(db: sqlite3.Connection, keep_meta: tuple[str, ...]) -> None:
    # Without the triggers (migration 0009), which would update a model per deleted image; every
    # table ends empty, so there is nothing for them to keep.
    triggers = migrate.drop_triggers(db)
    for table in tables(db):
        if table == "meta":
            marks = ", ".join("?" for _ in keep_meta)
            db.execute(f"DELETE FROM meta WHERE key NOT IN ({marks})" if keep_meta else "DELETE FROM meta",
                       keep_meta)
        else:
            db.execute(f'DELETE FROM "{table}"')
    migrate.restore_triggers(db, triggers)


# --- reset -------------------------------------------------------------------------------

def reset(store: Store, seed: int, scale: str) -> None:
    """Replace every row with freshly seeded data, in one transaction (the clock offset stays)."""
    from blockkit.emulator.seed.generate import generate

    conn = store.connection()
    with store.guard():
        conn.execute("PRAGMA foreign_keys = OFF")
        try:
            with store.write() as db:
                _wipe(db, keep_meta=(meta.CLOCK_OFFSET,))
                generate(store, seed, scale)
                meta.put(db, meta.CREATED_AT, format_timestamp(datetime.now(timezone.utc)))
        finally:
            conn.execute("PRAGMA foreign_keys = ON")

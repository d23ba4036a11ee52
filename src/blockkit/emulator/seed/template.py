"""Seeded databases kept as templates, so that a fresh start copies instead of generating.

Generating the small seed takes about a second, the large one about nine; copying a
finished database with SQLite's backup API takes a few milliseconds to a few hundred.
A template is kept per (seed, scale, schema version, generator fingerprint): the
fingerprint hashes the emulator's source (the generator, the platform facts, the
store's SQL and everything else in the package), so a blockkit that would seed
differently never uses an older template. The copy is a page-for-page image of a
fresh build, so a store started from it holds exactly what a fresh build holds.

Where: ``$BLOCKKIT_CACHE_DIR/seed-templates``, else ``$XDG_CACHE_HOME/blockkit/...``,
else ``~/.cache/blockkit/...``; a directory of ours only (made 0700, files 0600; one
that another user owns, or that others may write, is not used). ``BLOCKKIT_SEED_CACHE=0``
turns the cache off. Any problem with the cache falls back to generating: the cache can
make a start faster, never make it fail.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import stat
import tempfile
from functools import lru_cache
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from blockkit.emulator.store.clock import format_timestamp

if TYPE_CHECKING:
    from blockkit.emulator.store import Store

CACHE_VARIABLE = "BLOCKKIT_CACHE_DIR"
SWITCH_VARIABLE = "BLOCKKIT_SEED_CACHE"
_EMULATOR = Path(__file__).resolve().parents[1]
# What may decide the seeded bytes: the generator, the facts it draws from, the store's schema and
# SQL, and anything they import. The whole emulator package is hashed (a few milliseconds), so a
# change anywhere in it means a new template rather than a stale one.
_SUFFIXES = (".py", ".sql", ".json")


def enabled() -> bool:
    return os.environ.get(SWITCH_VARIABLE, "1").strip().lower() not in ("0", "false", "no", "off")


def cache_dir() -> Path:
    explicit = os.environ.get(CACHE_VARIABLE)
    if explicit:
        return Path(explicit) / "seed-templates"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "blockkit" / "seed-templates"


@lru_cache(maxsize=1)
def fingerprint() -> str:
    """A hash of every source file that decides what a seeded store holds."""
    digest = hashlib.sha256()
    for path in sorted(p for p in _EMULATOR.rglob("*") if p.suffix in _SUFFIXES and "__pycache__" not in p.parts):
        digest.update(str(path.relative_to(_EMULATOR)).encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()[:20]


def template_path(seed: int, scale: str, schema_version: int) -> Path:
    return cache_dir() / f"seed{seed}-{scale}-v{schema_version}-{fingerprint()}.sqlite3"


def _usable_dir(directory: Path, *, create: bool) -> bool:
    """True when ``directory`` is ours and others cannot write it (made 0700 when ``create``)."""
    try:
        if create:
            directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        info = directory.stat()
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        return False
    return not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def install(data_dir: Path, seed: int, scale: str) -> bool:
    """Put a copy of the (seed, scale) template in place as ``data_dir``'s database, before the store opens.

    Only into a data directory that has no database yet; False when there is no template to use
    (then the store is seeded by generating). A file copy, not a backup: a large seed takes a
    fraction of a second instead of rewriting every page through the WAL.
    """
    from blockkit.emulator.store import DB_FILENAME, meta, migrate

    if not enabled():
        return False
    target = Path(data_dir) / DB_FILENAME
    if target.exists() or Path(f"{target}-wal").exists():
        return False
    path = template_path(seed, scale, migrate.latest_version())
    if not _usable_dir(path.parent, create=False):
        return False
    try:
        info = path.stat()
    except OSError:
        return False
    if info.st_uid != os.getuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return False
    try:
        Path(data_dir).mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=".seed-", suffix=".tmp", dir=data_dir)
    except OSError:
        return False
    tmp = Path(tmp_name)
    try:
        with open(path, "rb") as source, os.fdopen(fd, "wb") as out:
            shutil.copyfileobj(source, out, 1 << 20)
        copy = sqlite3.connect(tmp)  # the implicit transaction commits on close below
        try:
            row = copy.execute("SELECT value FROM meta WHERE key = ?", (meta.SEED,)).fetchone()
            if row is None:
                return False
            # when this copy was made: local to the data directory, as after a generated seed
            meta.put(copy, meta.CREATED_AT, format_timestamp(datetime.now(timezone.utc)))
            copy.commit()
        finally:
            copy.close()
        os.chmod(tmp, 0o600)
        from blockkit.emulator.store.connection import link_into_place

        # Never over a database another process made since the check above (an import into the same
        # new directory): linked into place only where there is none.
        if not link_into_place(tmp, target):
            return False
    except (OSError, sqlite3.Error):
        return False
    finally:
        tmp.unlink(missing_ok=True)
    return True


def save(store: Store, seed: int, scale: str) -> None:
    """Keep ``store`` (just seeded, nothing else in it) as the template for (seed, scale). Best effort."""
    if not enabled():
        return
    path = template_path(seed, scale, store.schema_version)
    if path.exists() or not _usable_dir(path.parent, create=True):
        return
    fd, tmp_name = tempfile.mkstemp(prefix=".template-", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        source = sqlite3.connect(store.path, timeout=store.busy_timeout_ms / 1000)
        target = sqlite3.connect(tmp)
        try:
            source.backup(target)
            target.execute("PRAGMA journal_mode = DELETE")  # one self-contained file
        finally:
            target.close()
            source.close()
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except (OSError, sqlite3.Error):
        pass
    finally:
        tmp.unlink(missing_ok=True)

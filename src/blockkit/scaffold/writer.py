"""Put rendered files on disk without ever replacing the developer's work.

A file is replaced only when it still holds exactly what an earlier
``blockkit new`` wrote (its hash is in blockkit.toml). A file the developer
changed, or removed, or that no earlier run wrote, is left alone and reported.

Writing is all or nothing: every file is first written to a temporary name
beside its target, and only when all of them are on disk are they renamed into
place. An error or Ctrl-C before that removes the temporary files and any
folder this run created, so a failed run leaves the target as it found it.

Nothing is written outside the target directory: a path whose folder (or the
file itself) is a symbolic link leading out of it is refused before anything is
written, and each temporary file is created exclusively under a fresh random
name, so a planted file or link never receives the bytes (review row 41).
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from pathlib import Path

from blockkit.fix.atomic import OutsideTree, create_exclusive, real_inside
from blockkit.scaffold.config import digest

# A directory holding only these counts as empty: `git init` first is common.
_IGNORED_WHEN_EMPTY = frozenset({".git"})
# Suffix of a file being written; renamed into place once every file is written.
_STAGING_SUFFIX = ".blockkit-tmp"


class TargetError(Exception):
    """The target directory cannot be written to; the message says why and what to do."""


@dataclass
class WriteResult:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    # Kept as they are, by reason: a file blockkit wrote and the developer edited,
    # one they deleted, and one blockkit never wrote that sits where a template file goes.
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)
    # Kept files for which this run's template differs from what blockkit wrote before.
    upgrades_missed: list[str] = field(default_factory=list)
    # path -> hash of what blockkit wrote there (to be recorded in blockkit.toml)
    hashes: dict[str, str] = field(default_factory=dict)
    # path -> content still to be written (see commit)
    pending: dict[str, bytes] = field(default_factory=dict)


def _nearest_existing(path: Path) -> Path:
    # ``path`` is absolute, so its root always exists.
    for candidate in (path, *path.parents):
        if candidate.exists() or candidate.is_symlink():
            return candidate
    return Path(path.anchor)


def _unwritable_reason(folder: Path) -> str | None:
    if os.access(folder, os.W_OK | os.X_OK):
        return None
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return os.strerror(errno.EROFS)
    except (AttributeError, OSError):  # pragma: no cover - no statvfs (Windows)
        pass
    return os.strerror(errno.EACCES)


def check_target(directory: Path, force: bool) -> None:
    """Refuse, before any question is asked, a target that cannot become a block."""
    if directory.exists() and not directory.is_dir():
        raise TargetError(f"{directory} exists and is not a directory")
    existing = _nearest_existing(directory.absolute())
    if not existing.is_dir():
        shown = os.path.relpath(existing) if not directory.is_absolute() else str(existing)
        raise TargetError(f"cannot create {directory}: {shown} is not a directory")
    reason = _unwritable_reason(existing)
    if reason is not None:
        raise TargetError(f"cannot write into {directory}: {existing} is not writable ({reason})")
    if not directory.exists() or force:
        return
    entries = sorted(p.name for p in directory.iterdir() if p.name not in _IGNORED_WHEN_EMPTY)
    if entries:
        shown = ", ".join(entries[:5]) + (", ..." if len(entries) > 5 else "")
        raise TargetError(
            f"{directory} is not empty ({shown}); pass --force to write into it"
            " (files you changed are never overwritten)"
        )


def _blocking_file(directory: Path, relative: str) -> str | None:
    """The first folder on the way to ``relative`` that exists as something else."""
    parts = Path(relative).parts[:-1]
    for depth in range(1, len(parts) + 1):
        folder = directory.joinpath(*parts[:depth])
        if folder.exists() and not folder.is_dir():
            return "/".join(parts[:depth])
    return None


def check_inside(directory: Path, relative: str) -> None:
    """Raise TargetError when ``relative`` leads, through a symbolic link, out of ``directory``."""
    try:
        real_inside(directory / relative, directory)
    except OutsideTree as exc:
        parts = Path(relative).parts
        link = next((Path(*parts[:depth]) for depth in range(1, len(parts) + 1)
                     if directory.joinpath(*parts[:depth]).is_symlink()
                     and _leaves(directory.joinpath(*parts[:depth]), exc.root)), Path(relative))
        target = os.path.realpath(directory / link)
        raise TargetError(
            f"cannot write {relative}: {directory / link} is a symbolic link to {target}, outside"
            f" {exc.root}; remove the link or choose another directory (nothing was written)"
        ) from None


def _leaves(path: Path, root: Path) -> bool:
    try:
        real_inside(path, root)
    except OutsideTree:
        return True
    return False


def plan(directory: Path, files: dict[str, bytes], recorded: dict[str, str]) -> WriteResult:
    """Decide, without writing, what happens to every file; raises TargetError on a conflict."""
    result = WriteResult()
    for relative in files:
        check_inside(directory, relative)  # before any file is read through such a link
    for relative, content in files.items():
        blocker = _blocking_file(directory, relative)
        if blocker is not None:
            raise TargetError(
                f"cannot write {relative}: {directory / blocker} is not a directory;"
                " move it away and run again (nothing was written)"
            )
        path = directory / relative
        new_hash = digest(content)
        if path.is_file():
            current = path.read_bytes()
            if current == content:
                result.unchanged.append(relative)
                result.hashes[relative] = new_hash
                continue
            if relative not in recorded:
                result.foreign.append(relative)
                continue
            if recorded[relative] != digest(current):
                # Changed since we wrote it: the developer's now.
                result.changed.append(relative)
                result.hashes[relative] = recorded[relative]
                if recorded[relative] != new_hash:
                    result.upgrades_missed.append(relative)
                continue
        elif path.exists() or path.is_symlink():
            # A folder, a dangling link or a device where a template file goes.
            result.foreign.append(relative)
            continue
        elif relative in recorded:
            # The developer deleted our file on purpose.
            result.removed.append(relative)
            result.hashes[relative] = recorded[relative]
            continue
        result.pending[relative] = content
        result.written.append(relative)
        result.hashes[relative] = new_hash
    return result


def _make_folders(folder: Path, created: list[Path]) -> None:
    missing = [p for p in (folder, *folder.parents) if not p.exists()]
    for path in reversed(missing):
        path.mkdir()
        created.append(path)


def commit(directory: Path, files: dict[str, bytes]) -> None:
    """Write ``files`` (relative path -> bytes) all or nothing; see the module docstring."""
    for relative in files:  # again, blockkit.toml included, right before writing
        check_inside(directory, relative)
    created: list[Path] = []
    staged: list[tuple[Path, Path]] = []
    try:
        for relative, content in files.items():
            path = directory / relative
            _make_folders(path.parent, created)
            # A fresh name, created exclusively and never through a link: a planted
            # ".index.html.blockkit-tmp" is neither written nor removed. 0o666 lets the
            # umask decide the mode, as for any new file.
            handle, temporary = create_exclusive(path.parent, f".{path.name}.", _STAGING_SUFFIX)
            staged.append((temporary, path))
            with os.fdopen(handle, "wb") as stream:
                stream.write(content)
        for temporary, path in staged:
            os.replace(temporary, path)
    except BaseException:
        for temporary, _ in staged:
            try:
                temporary.unlink()
            except FileNotFoundError:
                pass
        for folder in reversed(created):
            try:
                folder.rmdir()
            except OSError:
                pass
        raise

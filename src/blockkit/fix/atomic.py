"""Writing files safely: whole or not at all, never through a planted link, never out of the tree.

A new file's bytes first go to a temporary file in the target's directory, so
that ``os.replace`` is a rename on one file system and a reader sees the old
bytes or the new ones, never half of each. The temporary file gets a fresh
random name and is created exclusively (``O_EXCL``, ``O_NOFOLLOW``): a file or
symbolic link planted under a predictable name is never opened, so it cannot
make us write somewhere else (review rows 27 and 41).
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path
from typing import Optional

_ANY_WRITE = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH
_EXCLUSIVE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_ATTEMPTS = 100


class FileChanged(Exception):
    """The file changed on disk after it was read; writing would lose someone's edit."""


class OutsideTree(Exception):
    """The path leads, through a symbolic link, to a file outside the tree being worked on."""

    def __init__(self, path: Path, real: Path, root: Path) -> None:
        super().__init__(f"{path} leads through a symbolic link to {real}, outside {root}")
        self.path, self.real, self.root = path, real, root


def real_inside(path: Path, root: Path) -> Path:
    """The real path of ``path`` (links resolved); raises OutsideTree unless it lies inside ``root``.

    ``path`` need not exist yet: the part that does is resolved, the rest taken as written.
    """
    real = Path(os.path.realpath(path))
    top = Path(os.path.realpath(root))
    if real != top and top not in real.parents:
        raise OutsideTree(path, real, top)
    return real


def create_exclusive(folder: Path, prefix: str, suffix: str, mode: int = 0o666) -> tuple[int, Path]:
    """A new, empty file ``folder/<prefix><random><suffix>`` that nothing else could have made.

    Returns its descriptor (open for writing) and path. ``mode`` is filtered by the umask,
    as for any new file.
    """
    for _ in range(_ATTEMPTS):
        path = folder / f"{prefix}{secrets.token_hex(4)}{suffix}"
        try:
            return os.open(path, _EXCLUSIVE, mode), path
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, f"no free temporary name in {folder}")


def write_file(path: Path, data: bytes) -> None:
    """Create or replace ``path`` with ``data``, whole, through a fresh temporary file.

    A symbolic link at ``path`` itself is replaced, never written through.
    """
    fd, temporary = create_exclusive(path.parent, f".{path.name}.", ".tmp")
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
        os.replace(temporary, path)
    except BaseException:
        _remove(temporary)
        raise


def replace_file(path: Path, data: bytes, expected: bytes, *, root: Optional[Path] = None) -> Path:
    """Write ``data`` to the file behind ``path`` atomically, keeping its mode, if it still holds ``expected``.

    A symbolic link is kept and its target updated; with ``root``, a target outside
    ``root`` raises OutsideTree and nothing is written. Raises FileChanged or OSError;
    on failure nothing changes. Returns the path written.
    """
    real = real_inside(path, root) if root is not None else Path(os.path.realpath(path))
    status = os.stat(real)
    mode = stat.S_IMODE(status.st_mode)
    # A rename needs only a writable directory, so it would replace a file its owner made
    # read-only (and root passes every access check): honour the file's own permission.
    if not mode & _ANY_WRITE or not os.access(real, os.W_OK):
        raise PermissionError(errno.EACCES, "the file is read-only")
    fd, temporary = create_exclusive(real.parent, f".{real.name}.", ".tmp", 0o600)
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        _keep_owner(temporary, status)
        # Checked last, after the slow part: an editor's save while we wrote is not lost
        # (review row 33), and a link swapped meanwhile cannot lead us out of the tree.
        if root is not None and real_inside(path, root) != real:
            raise FileChanged("it changed on disk while being fixed; run blockkit fix again")
        with open(real, "rb") as current:
            if current.read() != expected:
                raise FileChanged("it changed on disk while being fixed; run blockkit fix again")
        os.replace(temporary, real)
    except BaseException:
        _remove(temporary)
        raise
    return real


def _remove(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _keep_owner(name: Path, status: os.stat_result) -> None:
    """Give the new file the old one's owner and group where allowed (root fixing a user's file)."""
    if not hasattr(os, "chown"):  # pragma: no cover - Windows
        return
    try:
        os.chown(name, status.st_uid, status.st_gid)
    except OSError:
        pass  # only root may give a file away; anyone else keeps their own ownership

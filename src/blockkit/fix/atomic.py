"""Replacing a file so that a reader sees either the old bytes or the new ones, never half of each."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

_ANY_WRITE = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH


class FileChanged(Exception):
    """The file changed on disk after it was read; writing would lose someone's edit."""


def replace_file(path: Path, data: bytes, expected: bytes) -> None:
    """Write ``data`` to ``path`` atomically, keeping its mode, if it still holds ``expected``.

    The temporary file sits in the same directory, so ``os.replace`` is a rename
    on one file system. Raises FileChanged or OSError; on failure nothing changes.
    """
    # Resolve a symlink so that the link is kept and its target is updated.
    real = Path(os.path.realpath(path))
    with real.open("rb") as handle:
        if handle.read() != expected:
            raise FileChanged("it changed on disk while being fixed; run blockkit fix again")
    status = os.stat(real)
    mode = stat.S_IMODE(status.st_mode)
    # A rename needs only a writable directory, so it would replace a file its owner made
    # read-only (and root passes every access check): honour the file's own permission.
    if not mode & _ANY_WRITE or not os.access(real, os.W_OK):
        raise PermissionError(errno.EACCES, "the file is read-only")
    fd, tmp_name = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as tmp:
            tmp.write(data)
            tmp.flush()
            os.fsync(tmp.fileno())
        os.chmod(tmp_name, mode)
        _keep_owner(tmp_name, status)
        os.replace(tmp_name, real)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except OSError:
            pass
        raise


def _keep_owner(name: str, status: os.stat_result) -> None:
    """Give the new file the old one's owner and group where allowed (root fixing a user's file)."""
    if not hasattr(os, "chown"):  # pragma: no cover - Windows
        return
    try:
        os.chown(name, status.st_uid, status.st_gid)
    except OSError:
        pass  # only root may give a file away; anyone else keeps their own ownership

"""Replacing a file so that a reader sees either the old bytes or the new ones, never half of each."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


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
            raise FileChanged(f"{path}: changed on disk while being fixed; run blockkit fix again")
    mode = stat.S_IMODE(os.stat(real).st_mode)
    fd, tmp_name = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as tmp:
            tmp.write(data)
            tmp.flush()
            os.fsync(tmp.fileno())
        os.chmod(tmp_name, mode)
        os.replace(tmp_name, real)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except OSError:
            pass
        raise

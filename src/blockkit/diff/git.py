"""Reading a manifest as it was at a git revision, for ``lint --against REV``."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Optional

from blockkit.platform import LIMITS
from blockkit.source import Source, read_bytes


class RevisionError(Exception):
    """The revision cannot be read (no git, not a repository, unknown revision): exit status 2."""


def _git(directory: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", "-C", str(directory), *args], capture_output=True, timeout=60, check=False)
    except FileNotFoundError:
        raise RevisionError("git is not installed or not on PATH") from None
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RevisionError(f"cannot run git: {exc}") from None


def source_at_revision(path: Path, revision: str) -> Optional[Source]:
    """The manifest at ``path`` as committed in ``revision``; None when it did not exist there.

    Raises RevisionError when git cannot answer at all.
    """
    if revision.startswith("-"):
        raise RevisionError(f"{revision!r} is not a revision")  # would be read as an option
    directory = path.resolve().parent
    verified = _git(directory, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}")
    if verified.returncode != 0:
        inside = _git(directory, "rev-parse", "--is-inside-work-tree")
        if inside.returncode != 0:
            raise RevisionError(f"{path.parent}: not inside a git repository")
        raise RevisionError(f"{revision!r}: unknown revision")
    commit = verified.stdout.decode("ascii", "replace").strip()
    # "<rev>:./<name>" is resolved against the directory git runs in.
    spec = f"{commit}:./{path.name}"
    if _git(directory, "cat-file", "-e", spec).returncode != 0:
        return None
    shown = _git(directory, "cat-file", "blob", spec)
    if shown.returncode != 0:
        message = shown.stderr.decode("utf-8", "replace").strip() or "git cat-file failed"
        raise RevisionError(f"{revision}:{path}: {message}")
    raw = shown.stdout
    return read_bytes(raw[: LIMITS.file_bytes_max + 1], f"{revision}:{path}")

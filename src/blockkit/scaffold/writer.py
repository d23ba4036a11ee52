"""Put rendered files on disk without ever replacing the developer's work.

A file is replaced only when it still holds exactly what an earlier
``blockkit new`` wrote (its hash is in blockkit.toml). A file the developer
changed, or removed, or that no earlier run wrote, is left alone and reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from blockkit.scaffold.config import digest

# A directory holding only these counts as empty: `git init` first is common.
_IGNORED_WHEN_EMPTY = frozenset({".git"})


class TargetError(Exception):
    """The target directory cannot be written to; the message says why and what to do."""


@dataclass
class WriteResult:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    # path -> hash of what blockkit wrote there (to be recorded in blockkit.toml)
    hashes: dict[str, str] = field(default_factory=dict)


def check_target(directory: Path, force: bool) -> None:
    if directory.exists() and not directory.is_dir():
        raise TargetError(f"{directory} exists and is not a directory")
    if not directory.exists() or force:
        return
    entries = sorted(p.name for p in directory.iterdir() if p.name not in _IGNORED_WHEN_EMPTY)
    if entries:
        shown = ", ".join(entries[:5]) + (", ..." if len(entries) > 5 else "")
        raise TargetError(
            f"{directory} is not empty ({shown}); pass --force to write into it"
            " (files you changed are never overwritten)"
        )


def write_files(directory: Path, files: dict[str, bytes], recorded: dict[str, str]) -> WriteResult:
    result = WriteResult()
    directory.mkdir(parents=True, exist_ok=True)
    for relative, content in files.items():
        path = directory / relative
        new_hash = digest(content)
        if path.is_file():
            current = path.read_bytes()
            if current == content:
                result.unchanged.append(relative)
                result.hashes[relative] = new_hash
                continue
            if recorded.get(relative) != digest(current):
                # Changed since we wrote it, or never ours: the developer's now.
                result.kept.append(relative)
                if relative in recorded:
                    result.hashes[relative] = recorded[relative]
                continue
        elif path.exists() or relative in recorded:
            # Something else sits there, or the developer deleted our file on purpose.
            result.kept.append(relative)
            if relative in recorded:
                result.hashes[relative] = recorded[relative]
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        result.written.append(relative)
        result.hashes[relative] = new_hash
    return result

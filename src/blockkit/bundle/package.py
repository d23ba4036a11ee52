"""``build_package``: the source zip of a block folder, built as the platform's CLI builds it.

What is left out follows the CLI's packager (civitai/cli internal/pkgzip), whose rules are
facts in ``blockkit.platform`` (PACKAGE_*): VCS metadata, dependency installs, build
output and caches by directory name; archives (``*.zip``); every dotenv file but the three
kept at the root; anything that is not a regular file (symbolic links first of all).

The zip is deterministic: entries sorted by path, one fixed timestamp (1980-01-01, the
earliest a zip can hold), mode 0644 for every file, deflate at one level, no directory
entries and no extra fields. The same tree gives the same bytes (with the same zlib).
"""

from __future__ import annotations

import io
import os
import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

from blockkit.platform import (
    BUNDLE_LIMITS,
    MANIFEST_FILENAME,
    PACKAGE_EXCLUDED_DIRS,
    PACKAGE_KEPT_ENV_FILES,
    PACKAGE_RULE_ARCHIVE,
    PACKAGE_RULE_DOTENV_DIR,
    PACKAGE_RULE_DOTENV_PREFIX,
    PACKAGE_RULE_DOTENV_SUFFIX,
    PACKAGE_RULE_NON_REGULAR,
    PACKAGE_VCS_NAMES,
)

FIXED_DATE_TIME = (1980, 1, 1, 0, 0, 0)
FILE_MODE = 0o100644  # a regular file, rw-r--r--
COMPRESS_LEVEL = 6
# How many skipped paths the one "Skipped" line names before "... and K more".
SKIPPED_SHOWN = 20


class PackageError(ValueError):
    """The folder cannot be packaged (not a directory, no manifest, unreadable, too big to hold)."""


@dataclass(frozen=True)
class Skip:
    """One path left out, at the point the walk decided it: a file, or a directory (not entered)."""

    path: str
    is_dir: bool
    rule: str  # "" for a fixed name (node_modules/): the name says why

    def show(self) -> str:
        shown = self.path + ("/" if self.is_dir else "")
        return f"{shown} ({self.rule})" if self.rule else shown

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "dir": self.is_dir, "rule": self.rule or None}


@dataclass
class Package:
    """A built package: the zip's bytes, the files in it (sorted), what was left out, and the
    files' total size."""

    data: bytes
    files: list[str] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    decompressed_bytes: int = 0

    def skipped_line(self) -> Optional[str]:
        """``Skipped N path(s): ...``, tagged entries first, each group by path; None when nothing was."""
        if not self.skipped:
            return None
        shown = [skip.show() for skip in self.skipped[:SKIPPED_SHOWN]]
        more = len(self.skipped) - len(shown)
        tail = f", ... and {more} more" if more > 0 else ""
        return f"Skipped {len(self.skipped)} path(s): {', '.join(shown)}{tail}"


# blockkit's own folder in a block: dev traces and the local platform's data (its store and its
# block-token signing key), never the block's content.
BLOCKKIT_DIR = ".blockkit"


def _dir_rule(name: str) -> Optional[str]:
    if name in PACKAGE_EXCLUDED_DIRS or name == BLOCKKIT_DIR:
        return ""
    lower = name.lower()
    if lower == ".env" or lower.startswith(".env."):
        return PACKAGE_RULE_DOTENV_DIR
    if lower.endswith(".zip"):
        return PACKAGE_RULE_ARCHIVE
    return None


def _file_rule(name: str, at_root: bool) -> Optional[str]:
    if name in PACKAGE_VCS_NAMES:
        return ""
    lower = name.lower()
    if lower.endswith(".zip"):
        return PACKAGE_RULE_ARCHIVE
    if at_root and name in PACKAGE_KEPT_ENV_FILES:
        return None
    if lower.startswith(".env"):
        return PACKAGE_RULE_DOTENV_PREFIX
    if lower.endswith(".env"):
        return PACKAGE_RULE_DOTENV_SUFFIX
    return None


def _walk(root: Path) -> tuple[list[tuple[str, Path]], list[Skip]]:
    files: list[tuple[str, Path]] = []
    skipped: list[Skip] = []
    pending: list[tuple[Path, str]] = [(root, "")]
    while pending:
        folder, relative = pending.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as exc:
            raise PackageError(f"{folder}: cannot list: {exc.strerror or exc}") from None
        for entry in entries:
            name = entry.name
            path = f"{relative}{name}"
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError as exc:
                raise PackageError(f"{entry.path}: cannot read: {exc.strerror or exc}") from None
            if stat.S_ISDIR(mode):
                rule = _dir_rule(name)
                if rule is None:
                    pending.append((Path(entry.path), path + "/"))
                else:
                    skipped.append(Skip(path, True, rule))
            elif stat.S_ISREG(mode):
                rule = _file_rule(name, at_root=not relative)
                if rule is None:
                    files.append((path, Path(entry.path)))
                else:
                    skipped.append(Skip(path, False, rule))
            else:  # symbolic links, sockets, fifos, devices
                skipped.append(Skip(path, False, PACKAGE_RULE_NON_REGULAR))
    files.sort(key=lambda item: item[0])
    skipped.sort(key=lambda skip: (skip.rule == "", skip.path))
    return files, skipped


def package_tree(directory: Union[str, "os.PathLike[str]"]) -> Package:
    """Build the package of the block folder ``directory``; raises PackageError."""
    root = Path(directory)
    if not root.is_dir():
        raise PackageError(f"{directory}: not a directory")
    if not (root / MANIFEST_FILENAME).is_file():
        raise PackageError(f"{directory}: no {MANIFEST_FILENAME} at the block's root; nothing to package")
    files, skipped = _walk(root)
    for name, _ in files:
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            raise PackageError(f"{root / name!r}: the file name is not valid UTF-8; rename it") from None
    buffer = io.BytesIO()
    total = 0
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=COMPRESS_LEVEL) as archive:
        for name, path in files:
            try:
                content = path.read_bytes()
            except OSError as exc:
                raise PackageError(f"{path}: cannot read: {exc.strerror or exc}") from None
            total += len(content)
            if total > BUNDLE_LIMITS.decompressed_bytes_max:
                raise PackageError(f"{directory}: the files to package add up to more than "
                                   f"{BUNDLE_LIMITS.decompressed_bytes_max} bytes, the most the platform accepts "
                                   "decompressed; leave large assets out")
            info = zipfile.ZipInfo(name, date_time=FIXED_DATE_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix, so that the mode below is read as one
            info.external_attr = FILE_MODE << 16
            archive.writestr(info, content, compress_type=zipfile.ZIP_DEFLATED, compresslevel=COMPRESS_LEVEL)
    return Package(data=buffer.getvalue(), files=[name for name, _ in files], skipped=skipped,
                   decompressed_bytes=total)


def build_package(directory: Union[str, "os.PathLike[str]"]) -> bytes:
    """The deterministic source zip of the block folder ``directory``, as the platform's CLI
    builds it (see the module's docstring). Raises ``PackageError`` (a ValueError)."""
    return package_tree(directory).data

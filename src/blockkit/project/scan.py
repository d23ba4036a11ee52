"""The block project around a manifest, read the way the lint rules need it.

A ``Project`` is made once per check (kept in ``RuleContext.cache``) and reads
each file only when a rule first asks, so a manifest checked without its
project, or a rule that never fires, costs nothing.

The source scan follows one principle: **a scan that could not read
everything proves no absence.** Rules that conclude "the code never does X"
look at ``SourceScan.complete`` and stay silent when it is false (a cap was
hit, a file or folder could not be read, nothing was read at all). Evidence
that something *is* there counts whatever else went wrong.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Optional

from blockkit.project.code import MODULE_REFERENCE_PATTERNS, is_source, line_of, strip_comments
from blockkit.platform import (
    BLOCKKIT_BRIDGE_MARKER,
    MANIFEST_FILENAME,
    PACKAGE_DEPENDENCY_SECTIONS,
    READY_MESSAGE,
    STORAGE_STORES,
)

if TYPE_CHECKING:
    from blockkit.project.entry import EntryGraph

# Folders that hold dependencies, build output or tooling, never the block's own
# code, skipped by name wherever they occur below the project root (never the
# root itself: a project may well live in a folder called "build").
SKIPPED_DIRS = frozenset({"node_modules", "dist", "build", "out", "coverage", "bower_components",
                          "jspm_packages", "__pycache__"})
# Bounds that keep lint fast on any tree; hitting one makes the scan incomplete.
MAX_SOURCE_FILES = 2000
MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_TOTAL_BYTES = 32 * 1024 * 1024
MAX_DIRS = 5000
# index.html and package.json are read whole up to this size.
MAX_PROJECT_FILE_BYTES = 2 * 1024 * 1024

# \bBLOCK_READY\b with the first \b written after the text, so that the regex engine
# searches for the text itself (see platform._word).
_READY = re.compile(rf"{re.escape(READY_MESSAGE)}(?<!\w{re.escape(READY_MESSAGE)})\b")
# Each pattern on its own: combined into one alternation, none of them could be
# searched for by its literal text, and the scan took ~0.1 s per MB of any source.
_STORE_PATTERNS: tuple[tuple[str, tuple[re.Pattern[str], ...]], ...] = tuple(
    (store.name, tuple(re.compile(p) for p in store.code_patterns)) for store in STORAGE_STORES
)
# Every regex the source scan runs over a file, by name. They read untrusted files of up
# to MAX_FILE_BYTES, so each must take linear time: benchmarks/bench_lint_scan.py
# times them (with strip_comments and find_root) on adversarial input.
SCAN_PATTERNS: dict[str, re.Pattern[str]] = {
    READY_MESSAGE: _READY,
    **{f"{name} {index}": pattern for name, patterns in _STORE_PATTERNS
       for index, pattern in enumerate(patterns, start=1)},
    # The entry graph's (blockkit.project.entry) run over the same files.
    **{f"module reference: {name}": pattern for name, pattern in MODULE_REFERENCE_PATTERNS.items()},
}


@dataclass(frozen=True)
class CodeHit:
    path: str  # relative to the project, with / separators
    line: int
    text: str  # what matched

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass
class SourceScan:
    """What a walk over the block's own source files found."""

    files_read: int = 0
    incomplete: Optional[str] = None  # why the scan cannot prove absence, if it cannot
    ready: Optional[CodeHit] = None  # first place that names READY_MESSAGE
    storage: dict[str, CodeHit] = field(default_factory=dict)  # store name -> first use

    @property
    def complete(self) -> bool:
        return self.incomplete is None and self.files_read > 0


@dataclass(frozen=True)
class JsonFile:
    """A JSON file of the project: absent, unreadable/invalid (``problem``), or parsed."""

    exists: bool
    data: Any = None
    problem: Optional[str] = None

    @property
    def usable(self) -> bool:
        return self.exists and self.problem is None


class Project:
    """A block project: the folder holding ``block.manifest.json``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._cache: dict[str, Any] = {}

    def _memo(self, key: str, compute: Any) -> Any:
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    # --- single files ----------------------------------------------------------

    def has_file(self, name: str) -> bool:
        return (self.root / name).is_file()

    def read_text(self, name: str) -> Optional[str]:
        """A project file's text, or None when it is absent, unreadable or too large."""
        return self._memo(f"text:{name}", lambda: _read_small_text(self.root / name))

    @property
    def package_json(self) -> JsonFile:
        return self._memo("package.json", lambda: _read_json(self.root / "package.json"))

    def depends_on(self, package: str) -> bool:
        data = self.package_json.data
        if not isinstance(data, dict):
            return False
        return any(isinstance(data.get(section), dict) and package in data[section]
                   for section in PACKAGE_DEPENDENCY_SECTIONS)

    def dependencies(self) -> frozenset[str]:
        """The names package.json's dependency sections declare (none without a usable one)."""
        data = self.package_json.data
        if not isinstance(data, dict):
            return frozenset()
        return frozenset(name for section in PACKAGE_DEPENDENCY_SECTIONS if isinstance(data.get(section), dict)
                         for name in data[section])

    # --- the block's source ----------------------------------------------------

    def entry_graph(self) -> "EntryGraph":
        """What index.html loads, followed once (see blockkit.project.entry)."""
        from blockkit.project.entry import resolve_entry_graph  # it reads files with read_regular, below

        return self._memo("entry-graph", lambda: resolve_entry_graph(self.root, self.dependencies(), _READY,
                                                                     MAX_FILE_BYTES))

    def scan(self, output_dir: Any = None) -> SourceScan:
        """Scan the block's source files once (per output directory to leave out)."""
        skipped = _output_dir_parts(output_dir)
        return self._memo(f"scan:{'/'.join(skipped or ())}", lambda: _Scanner(self.root, skipped).run())


def read_regular(path: Path, limit: int) -> bytes:
    """Up to ``limit`` bytes of ``path`` if it is a regular file; OSError otherwise.

    A checkout may hold ``index.html -> /dev/stdin``, a FIFO or a socket: opening or reading
    one would wait for ever (for the language server, on its own JSON-RPC input). So: stat
    first (nothing else is opened), open with ``O_NONBLOCK`` (a FIFO swapped in meanwhile does
    not block the open), then ``fstat`` the descriptor itself and read a bounded amount.
    A symlink to a regular file is read, as a linked folder is scanned.
    """
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise OSError(f"{path}: not a regular file")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path}: not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(limit)
    finally:
        os.close(fd)


def _read_small_text(path: Path) -> Optional[str]:
    try:
        raw = read_regular(path, MAX_PROJECT_FILE_BYTES + 1)
    except (OSError, ValueError):
        return None
    if len(raw) > MAX_PROJECT_FILE_BYTES:
        return None
    return raw.decode("utf-8", errors="replace")


def _read_json(path: Path) -> JsonFile:
    if not path.exists():
        return JsonFile(exists=False)
    text = _read_small_text(path) if path.is_file() else None
    if text is None:
        return JsonFile(exists=True, problem="cannot be read")
    try:
        return JsonFile(exists=True, data=json.loads(text.lstrip("\ufeff")))
    except ValueError as exc:
        return JsonFile(exists=True, problem=f"is not valid JSON ({exc})")
    except RecursionError:
        return JsonFile(exists=True, problem="is nested too deeply")


def _output_dir_parts(output_dir: Any) -> Optional[tuple[str, ...]]:
    """outputDir as path parts below the root, or None when it names no strict subfolder."""
    if not isinstance(output_dir, str) or "\\" in output_dir or "\x00" in output_dir:
        return None
    parts = tuple(p for p in PurePosixPath(output_dir).parts if p not in ("", "."))
    if not parts or parts[0] == "/" or ".." in parts:
        return None
    return parts


class _Scanner:
    """One walk over a project's source files, following symlinked folders once each."""

    def __init__(self, root: Path, output_dir: Optional[tuple[str, ...]]) -> None:
        self.root = root
        self.output_dir = output_dir
        self.result = SourceScan()
        self.total_bytes = 0
        self.dirs = 0
        self.visited: set[str] = set()

    def run(self) -> SourceScan:
        self._walk(self.root, ())
        return self.result

    def _incomplete(self, why: str) -> None:
        if self.result.incomplete is None:
            self.result.incomplete = why

    def _walk(self, folder: Path, parts: tuple[str, ...]) -> None:
        try:
            real = os.path.realpath(folder)
        except (OSError, ValueError):
            self._incomplete(f"cannot resolve {folder}")
            return
        if real in self.visited:
            return
        self.visited.add(real)
        self.dirs += 1
        if self.dirs > MAX_DIRS:
            self._incomplete(f"more than {MAX_DIRS} folders")
            return
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            self._incomplete(f"cannot list {folder}")
            return
        for entry in entries:
            if self.result.incomplete is not None and self._stopped():
                return
            name = entry.name
            try:
                is_dir = entry.is_dir()  # follows symlinks: a linked src/ is part of the project
                is_file = not is_dir and entry.is_file()
            except OSError:
                is_dir = is_file = False
            if is_dir:
                child = parts + (name,)
                if self._skip_dir(entry, child):
                    continue
                self._walk(Path(entry.path), child)
                continue
            if not is_source(PurePosixPath(name)):
                continue
            if not is_file:  # a dangling link or something unreadable where code should be
                self._incomplete(f"cannot read {'/'.join(parts + (name,))}")
                continue
            self._read(Path(entry.path), "/".join(parts + (name,)))

    def _stopped(self) -> bool:
        # Caps stop the walk; a single unreadable file does not.
        return (self.result.files_read >= MAX_SOURCE_FILES or self.total_bytes >= MAX_TOTAL_BYTES
                or self.dirs > MAX_DIRS)

    def _skip_dir(self, entry: os.DirEntry[str], parts: tuple[str, ...]) -> bool:
        name = entry.name
        if name.startswith(".") or name in SKIPPED_DIRS:
            return True
        if self.output_dir is not None and parts == self.output_dir:
            return True  # build output shows what the bundler inlined, not what the block's code does
        # Another block's project is not part of this one.
        return os.path.isfile(os.path.join(entry.path, MANIFEST_FILENAME))

    def _read(self, path: Path, relative: str) -> None:
        if self.result.files_read >= MAX_SOURCE_FILES:
            self._incomplete(f"more than {MAX_SOURCE_FILES} source files")
            return
        try:
            raw = read_regular(path, MAX_FILE_BYTES + 1)
        except (OSError, ValueError):
            self._incomplete(f"cannot read {relative}")
            return
        if len(raw) > MAX_FILE_BYTES:
            self._incomplete(f"{relative} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
            return
        self.total_bytes += len(raw)
        if self.total_bytes > MAX_TOTAL_BYTES:
            self._incomplete(f"more than {MAX_TOTAL_BYTES // (1024 * 1024)} MiB of source")
            return
        self.result.files_read += 1
        code = strip_comments(raw.decode("utf-8", errors="replace"), PurePosixPath(relative).suffix)
        if self.result.ready is None:
            match = _READY.search(code)
            if match:
                self.result.ready = CodeHit(relative, line_of(code, match.start()), match.group())
        if BLOCKKIT_BRIDGE_MARKER in code:
            return  # blockkit's bridge offers storage; the block's calls of its helpers are the use
        for name, patterns in _STORE_PATTERNS:
            if name not in self.result.storage:
                matches = [match for match in (pattern.search(code) for pattern in patterns) if match]
                if matches:
                    match = min(matches, key=lambda m: m.start())  # the first use in the file
                    self.result.storage[name] = CodeHit(relative, line_of(code, match.start()), match.group())

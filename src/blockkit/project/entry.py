"""The entry graph of a block: the files a browser loads, starting at index.html.

BK318 asks whether anything the host's iframe *runs* sends ``BLOCK_READY``; a
file that holds the message but that nothing loads does not answer the host.
This module follows what index.html loads, as the browser and Vite do:

- ``<script src>`` of a local path (document-relative or root-relative, also
  from Vite's ``public/``), taken literally as a browser fetches it;
- the imports of inline scripts, and of every module reached: static
  ``import``/``export … from``, ``import()`` and ``require()`` of a literal;
- relative (``./``, ``../``) and root-relative (``/src/…``) specifiers resolved
  as Vite resolves them: the path itself, then its extensions
  (.mjs .js .mts .ts .jsx .tsx .json), then ``/index`` with them; from a
  TypeScript module a ``.js`` specifier also names the ``.ts`` file.

A bare specifier naming a dependency of package.json is a package, not a file
here, and is not followed. Everything else it cannot follow makes the graph
**incomplete** (``gap`` says why): a URL off the project, a bare specifier that
names no dependency (a bundler alias), a computed ``import()``, a glob import,
a reference to a file that is not there, a path out of the project, a file too
large or unreadable, more than ``MAX_GRAPH_FILES`` files. An incomplete graph is
evidence of nothing missing: the caller falls back to its text scan and says so.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Optional

from blockkit.project.code import SCRIPT_SUFFIXES, is_source, line_of, module_references, strip_comments
from blockkit.project.html import find_scripts
from blockkit.project.scan import read_regular

INDEX_HTML = "index.html"
MAX_GRAPH_FILES = 200
# References (script src and specifiers) followed at most, duplicates not counted.
MAX_GRAPH_REFERENCES = 5000
# Vite's default resolve.extensions, in its order.
VITE_EXTENSIONS = (".mjs", ".js", ".mts", ".ts", ".jsx", ".tsx", ".json")
# From a TypeScript module, Vite resolves a specifier of the emitted extension to the source.
_TS_IMPORTERS = frozenset({".ts", ".tsx", ".mts", ".cts", ".vue", ".svelte"})
_TS_SOURCES = {".js": (".ts", ".tsx"), ".jsx": (".tsx",), ".mjs": (".mts",), ".cjs": (".cts",)}
# Vite import queries that load a file as data or in another context, never as a module of the page.
_NOT_RUN_QUERIES = frozenset({"raw", "url", "inline", "worker", "sharedworker", "worker&inline", "worker&url"})
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]{0,31}:")
# Files whose references are followed (markup files with a <script> block included).
_FOLLOWED = SCRIPT_SUFFIXES | {".vue", ".svelte"}


@dataclass
class EntryGraph:
    files: list[str] = field(default_factory=list)  # project-relative paths, index.html first
    ready: Optional[tuple[str, int]] = None  # (path, line) of the first loaded file that names the message
    gap: Optional[str] = None  # why the graph is incomplete, if it is

    @property
    def complete(self) -> bool:
        return self.gap is None


@dataclass(frozen=True)
class _Ref:
    spec: str
    base: Path  # the folder a relative specifier resolves against
    module: bool  # a module specifier (extension resolution, bare = package), else an HTML URL
    importer: str  # who names it, for messages
    importer_suffix: str


def resolve_entry_graph(root: Path, dependencies: frozenset[str], ready: "re.Pattern[str]",
                        max_file_bytes: int) -> EntryGraph:
    """Walk what ``root/index.html`` loads; ``ready`` is the message's pattern over comment-free code."""
    return _Walker(root, dependencies, ready, max_file_bytes).run()


class _Walker:
    def __init__(self, root: Path, dependencies: frozenset[str], ready: "re.Pattern[str]",
                 max_file_bytes: int) -> None:
        self.root = root
        self.norm_root = os.path.normpath(os.path.abspath(root))
        self.dependencies = dependencies
        self.ready_pattern = ready
        self.max_file_bytes = max_file_bytes
        self.graph = EntryGraph()
        self.seen: set[str] = set()
        self.queue: list[_Ref] = []
        self.queued: set[tuple[str, str, bool, bool]] = set()

    def _gap(self, why: str) -> None:
        if self.graph.gap is None:
            self.graph.gap = why

    def _read(self, path: Path, relative: str) -> Optional[str]:
        try:
            raw = read_regular(path, self.max_file_bytes + 1)
        except (OSError, ValueError):
            self._gap(f"{relative} cannot be read")
            return None
        if len(raw) > self.max_file_bytes:
            self._gap(f"{relative} is larger than {self.max_file_bytes // (1024 * 1024)} MiB")
            return None
        return raw.decode("utf-8", errors="replace")

    def _inspect(self, relative: str, code: str) -> None:
        self.graph.files.append(relative)
        if self.graph.ready is None:
            match = self.ready_pattern.search(code)
            if match:
                self.graph.ready = (relative, line_of(code, match.start()))

    def _queue_module_refs(self, code: str, base: Path, importer: str, suffix: str) -> None:
        specs, computed = module_references(code)
        if computed:
            offset, what = computed[0]
            self._gap(f"{importer} (line {line_of(code, offset)}) has an {what}, which no static reading can follow")
        for spec in specs:
            self._enqueue(_Ref(spec, base, True, importer, suffix))

    def _enqueue(self, ref: _Ref) -> None:
        key = (ref.spec, str(ref.base), ref.module, ref.importer_suffix in _TS_IMPORTERS)
        if key in self.queued:
            return
        if len(self.queued) >= MAX_GRAPH_REFERENCES:
            self._gap(f"the files index.html loads name more than {MAX_GRAPH_REFERENCES} modules")
            return
        self.queued.add(key)
        self.queue.append(ref)

    def run(self) -> EntryGraph:
        index = self.root / INDEX_HTML
        if not os.path.lexists(index):
            self._gap(f"the project has no {INDEX_HTML}")
            return self.graph
        html = self._read(index, INDEX_HTML)
        if html is None:
            return self.graph
        self.seen.add(os.path.realpath(index))
        self._inspect(INDEX_HTML, strip_comments(html, ".html"))
        for script in find_scripts(html):
            if script.kind == "data":
                continue
            where = f"{INDEX_HTML} (line {script.line})"
            if script.src is not None:
                self._enqueue(_Ref(script.src, self.root, False, where, ".html"))
            else:
                self._queue_module_refs(strip_comments(script.text, ".js"), self.root, where, ".js")
        position = 0
        while position < len(self.queue):
            ref = self.queue[position]
            position += 1
            target = self._resolve(ref)
            if target is None:
                continue
            real = os.path.realpath(target)
            if real in self.seen:
                continue
            self.seen.add(real)
            relative = Path(os.path.relpath(os.path.normpath(os.path.abspath(target)), self.norm_root)).as_posix()
            suffix = target.suffix.lower()
            if not is_source(PurePosixPath(target.name)):
                self.graph.files.append(relative)  # a stylesheet, JSON, an image: loaded, runs nothing
                continue
            if len(self.graph.files) >= MAX_GRAPH_FILES:
                self._gap(f"index.html loads more than {MAX_GRAPH_FILES} files")
                break
            text = self._read(target, relative)
            if text is None:
                continue
            code = strip_comments(text, suffix)
            self._inspect(relative, code)
            if suffix in _FOLLOWED:
                self._queue_module_refs(code, target.parent, relative, suffix)
        return self.graph

    # --- resolution ------------------------------------------------------------------

    def _resolve(self, ref: _Ref) -> Optional[Path]:
        """The file ``ref`` names, or None (after recording a gap, unless it is a package or data)."""
        spec = ref.spec.strip()
        shown = f"{ref.importer} loads {spec!r}" if not ref.module else f"{ref.importer} imports {spec!r}"
        if spec.startswith("//") or _SCHEME.match(spec):
            self._gap(f"{shown}, which is not a file of the project")
            return None
        path_part, _, query = spec.partition("?")
        path_part = path_part.partition("#")[0]
        if ref.module and query.lower() in _NOT_RUN_QUERIES:
            return None  # loaded as a string, a URL or a worker: not a module of the page
        if ref.module and not path_part.startswith(("./", "../", "/")) and path_part not in (".", ".."):
            if _package_name(path_part) in self.dependencies:
                return None  # a dependency: not a file here, and whether it sends the message is package.json's matter
            self._gap(f"{shown}, a bare specifier that names no dependency in package.json (a bundler alias?)")
            return None
        if not path_part:
            self._gap(f"{shown}, which names no file")
            return None
        if path_part.startswith("/"):
            base, rest = self.root, path_part.lstrip("/")
        else:
            base, rest = ref.base, path_part
        candidate = base / rest
        if not self._inside(candidate):
            self._gap(f"{shown}, which is outside the project")
            return None
        found = self._module_file(candidate, ref.importer_suffix) if ref.module else self._url_file(candidate, rest,
                                                                                                 path_part)
        if found is None:
            self._gap(f"{shown}, which names no file of the project")
        return found

    def _inside(self, path: Path) -> bool:
        # Lexically, as the source scan walks: a linked folder inside the project is part of it.
        norm = os.path.normpath(os.path.abspath(path))
        return norm == self.norm_root or norm.startswith(self.norm_root.rstrip(os.sep) + os.sep)

    def _url_file(self, candidate: Path, rest: str, path_part: str) -> Optional[Path]:
        if candidate.is_file():
            return candidate
        # Vite serves public/ at the root: <script src="/bridge.js"> may be public/bridge.js.
        public = self.root / "public" / (path_part.lstrip("/") if path_part.startswith("/") else rest)
        if self._inside(public) and public.is_file():
            return public
        return None

    def _module_file(self, candidate: Path, importer_suffix: str) -> Optional[Path]:
        if candidate.is_file():
            return candidate
        name = candidate.name
        if importer_suffix in _TS_IMPORTERS:
            for source_suffix in _TS_SOURCES.get(candidate.suffix.lower(), ()):
                other = candidate.with_name(name[: -len(candidate.suffix)] + source_suffix)
                if other.is_file():
                    return other
        for extension in VITE_EXTENSIONS:
            other = candidate.with_name(name + extension)
            if other.is_file():
                return other
        if candidate.is_dir():
            for extension in VITE_EXTENSIONS:
                other = candidate / f"index{extension}"
                if other.is_file():
                    return other
        return None


def _package_name(spec: str) -> str:
    parts = spec.split("/")
    return "/".join(parts[:2]) if spec.startswith("@") else parts[0]

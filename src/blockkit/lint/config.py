"""Lint settings from ``blockkit.toml`` or ``[tool.blockkit]`` in ``pyproject.toml``.

::

    select = ["BK3"]                      # codes or prefixes; default: every lint rule
    ignore = ["BK310"]
    [per-file-ignores]                    # glob (relative to the config file) -> codes
    "legacy/**/block.manifest.json" = ["BK301"]
    [severity]                            # code -> error | warning | info
    BK319 = "error"
    [[exceptions]]                        # JSON has no comments: excuse a finding by pointer
    pointer = "/appId"
    codes = ["BK301"]
    reason = "our deploy script still reads it"
    path = "apps/legacy/block.manifest.json"   # optional glob; default: every manifest

**Only lint rules (BK3xx) can be selected, ignored, re-graded or excepted.**
Parse, schema and server findings are the platform's verdict: it refuses such
a manifest whatever blockkit is told, so a setting that would hide one (or turn
an error into a warning) is a config error (exit 2), not a silent no-op.

An exception covers findings at its pointer and below it (``/goods`` covers
``/goods/0/kind``). Every other key, and every bad value, is a config error
naming the file and the key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from difflib import get_close_matches
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional

from blockkit.context import Config, ConfigError
from blockkit.jsstr import is_blank
from blockkit.report import SEVERITIES

# Keys blockkit reads from the config table, by who reads them.
CONTEXT_KEYS: tuple[str, ...] = ("tier", "app-domain", "stage", "allowed-origins", "granted-scopes")
LINT_KEYS: tuple[str, ...] = ("select", "ignore", "per-file-ignores", "severity", "exceptions")
# Tables other commands own; their contents are theirs to check.
OTHER_TABLES: tuple[str, ...] = ("context", "dev", "scaffold")
EXCEPTION_KEYS: tuple[str, ...] = ("pointer", "codes", "reason", "path")

_SELECTOR = re.compile(r"BK[0-9]{0,3}")
_POINTER = re.compile(r"(?:/(?:[^~/]|~[01])*)*")


@lru_cache(maxsize=1)
def lint_codes() -> frozenset[str]:
    from blockkit.rules import load_all

    return frozenset(code for code, rule in load_all().items() if rule.layer == "lint")


def matches(code: str, selectors: Iterable[str]) -> bool:
    return any(code.startswith(selector) for selector in selectors)


@dataclass(frozen=True)
class PointerException:
    """One ``[[exceptions]]`` entry: findings of ``codes`` at ``pointer`` (or below) are excused."""

    index: int
    pointer: str
    codes: tuple[str, ...]
    reason: str
    path: Optional[str] = None  # glob relative to the config file's folder

    def covers(self, code: str, pointer: str) -> bool:
        if not matches(code, self.codes):
            return False
        return pointer == self.pointer or pointer.startswith(self.pointer + "/") or self.pointer == ""

    def applies_to(self, relative_path: str) -> bool:
        return self.path is None or glob_match(self.path, relative_path)


@dataclass(frozen=True)
class LintConfig:
    path: Optional[Path] = None  # the config file, None when there is none
    table_pointer: str = ""  # where the settings sit in that file: "" or "/tool/blockkit"
    select: Optional[tuple[str, ...]] = None
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    severity: Mapping[str, str] = field(default_factory=dict)
    exceptions: tuple[PointerException, ...] = ()

    @property
    def folder(self) -> Path:
        return self.path.parent if self.path is not None else Path.cwd()

    def relative(self, manifest: Path) -> str:
        """``manifest`` relative to the config file's folder, with / separators."""
        return relative_posix(manifest, self.folder)

    def enabled(self, code: str, relative_path: str) -> bool:
        if self.select is not None and not matches(code, self.select):
            return False
        if matches(code, self.ignore):
            return False
        return not any(glob_match(glob, relative_path) and matches(code, codes)
                       for glob, codes in self.per_file_ignores)

    def severity_of(self, code: str, default: str) -> str:
        return self.severity.get(code, default)


def relative_posix(path: Path, folder: Path) -> str:
    import os

    try:
        return Path(os.path.relpath(path.resolve(), folder.resolve())).as_posix()
    except ValueError:  # another drive on Windows
        return path.resolve().as_posix()


@lru_cache(maxsize=256)
def _glob_regex(glob: str) -> re.Pattern[str]:
    # "**/" spans any number of folders; "*" and "?" stay within one path segment.
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out))


def glob_match(glob: str, relative_path: str) -> bool:
    glob = glob.removeprefix("./")
    if "/" not in glob:  # a bare name matches in any folder, as in .gitignore
        glob = "**/" + glob
    return _glob_regex(glob).fullmatch(relative_path) is not None


# --- reading -------------------------------------------------------------------------


class _Reader:
    def __init__(self, config: Config) -> None:
        self.path = config.path
        self.pyproject = config.path is not None and config.path.name == "pyproject.toml"
        self.where = "[tool.blockkit]" if self.pyproject else (config.path.name if config.path else "config")

    def error(self, message: str) -> ConfigError:
        return ConfigError(f"{self.path}: {message}")

    def selectors(self, key: str, value: Any) -> tuple[str, ...]:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(f"'{key}' must be a list of rule codes or prefixes such as \"BK3\"")
        out = []
        for raw in value:
            selector = raw.strip().upper()
            if not _SELECTOR.fullmatch(selector):
                raise self.error(f"'{key}': {raw!r} is not a rule code or prefix (e.g. \"BK301\" or \"BK3\")")
            if not any(code.startswith(selector) for code in lint_codes()):
                raise self.error(
                    f"'{key}': {raw!r} selects no lint rule; only lint rules (BK3xx) can be configured: "
                    "parse, schema and server findings are the platform's verdict and cannot be ignored")
            out.append(selector)
        return tuple(out)

    def lint_code(self, key: str, raw: Any) -> str:
        code = raw.strip().upper() if isinstance(raw, str) else ""
        if code not in lint_codes():
            if code and _SELECTOR.fullmatch(code) and len(code) == 5:
                raise self.error(f"'{key}': {raw} is not a lint rule; only lint rules (BK3xx) can be re-graded: "
                                 "parse, schema and server findings keep the platform's severity")
            raise self.error(f"'{key}': {raw!r} is not a lint rule code")
        return code

    def unknown(self, key: str, known: Iterable[str], where: str) -> ConfigError:
        close = get_close_matches(key, list(known), n=1, cutoff=0.6)
        tail = f"; did you mean '{close[0]}'?" if close else f"; known keys: {', '.join(known)}"
        return self.error(f"unknown key '{key}' in {where}{tail}")


def _normalise(table: Mapping[str, Any]) -> dict[str, Any]:
    return {str(k).replace("_", "-"): v for k, v in table.items()}


def read_lint_config(config: Config) -> LintConfig:
    """The lint settings of ``config`` (already found and parsed by blockkit.context); ConfigError when bad."""
    reader = _Reader(config)
    table = _normalise(config.raw)
    known = (*CONTEXT_KEYS, *LINT_KEYS, *OTHER_TABLES)
    for key in table:
        if key not in known:
            raise reader.unknown(key, known, reader.where)
    context = table.get("context")
    if context is not None:
        if not isinstance(context, dict):
            raise reader.error("'context' must be a table")
        for key in _normalise(context):
            if key not in CONTEXT_KEYS:
                raise reader.unknown(key, CONTEXT_KEYS, "[context]")

    select = reader.selectors("select", table["select"]) if "select" in table else None
    ignore = reader.selectors("ignore", table["ignore"]) if "ignore" in table else ()

    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise reader.error("'per-file-ignores' must be a table of glob = [codes]")
    per_file_ignores = tuple((str(glob), reader.selectors(f"per-file-ignores.\"{glob}\"", codes))
                             for glob, codes in per_file.items())

    grades = table.get("severity", {})
    if not isinstance(grades, dict):
        raise reader.error("'severity' must be a table of CODE = \"error\" | \"warning\" | \"info\"")
    severity: dict[str, str] = {}
    for raw_code, grade in grades.items():
        code = reader.lint_code("severity", raw_code)
        if grade not in SEVERITIES:
            raise reader.error(f"'severity.{raw_code}' must be one of {', '.join(SEVERITIES)}, not {grade!r}")
        severity[code] = grade

    return LintConfig(
        path=config.path,
        table_pointer="/tool/blockkit" if reader.pyproject else "",
        select=select,
        ignore=ignore,
        per_file_ignores=per_file_ignores,
        severity=severity,
        exceptions=_exceptions(reader, table.get("exceptions", [])),
    )


def _exceptions(reader: _Reader, value: Any) -> tuple[PointerException, ...]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise reader.error("'exceptions' must be an array of tables ([[exceptions]] entries)")
    out = []
    for index, raw in enumerate(value):
        entry = _normalise(raw)
        where = f"exceptions[{index}]"
        for key in entry:
            if key not in EXCEPTION_KEYS:
                raise reader.unknown(key, EXCEPTION_KEYS, where)
        pointer = entry.get("pointer")
        if not isinstance(pointer, str) or not _POINTER.fullmatch(pointer):
            raise reader.error(f"{where}: 'pointer' must be a JSON Pointer such as \"/appId\" or \"/targets/0\"")
        if "codes" not in entry:
            raise reader.error(f"{where}: 'codes' is required (the lint rules it excuses, e.g. [\"BK301\"])")
        codes = reader.selectors(f"{where}.codes", entry["codes"])
        if not codes:
            raise reader.error(f"{where}: 'codes' must name at least one lint rule")
        reason = entry.get("reason")
        if not isinstance(reason, str) or is_blank(reason):
            raise reader.error(f"{where}: 'reason' is required: say why this finding is accepted")
        path = entry.get("path")
        if path is not None and (not isinstance(path, str) or not path.strip()):
            raise reader.error(f"{where}: 'path' must be a glob such as \"apps/*/block.manifest.json\"")
        out.append(PointerException(index=index, pointer=pointer, codes=codes, reason=reason, path=path))
    return tuple(out)

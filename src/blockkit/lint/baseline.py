"""The lint baseline: findings a project accepted when it adopted ``blockkit lint``.

``blockkit lint --baseline FILE`` hides the findings FILE lists and reports the
rest; ``--update-baseline`` (re)writes FILE from today's findings. The file is
JSON, sorted, one entry per finding, so that it reviews well in a diff::

    {"version": 1,
     "entries": [{"path": "block.manifest.json", "code": "BK301", "pointer": "/appId",
                  "message": "unknown key \\"appId\\": ..."}]}

An entry is matched by (path, code, pointer) and nothing else: line numbers
move with every edit and messages are reworded between releases, while a JSON
Pointer names the same key until the key itself changes. ``path`` is the
manifest's path relative to the baseline file's folder, so the baseline works
from any working directory. ``message`` is for the reader only.

Only lint findings are recorded, for the reason ``blockkit.lint.config`` gives:
a baseline must never hide the platform's verdict.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional

from blockkit.context import ConfigError
from blockkit.jsstr import escape_lone_surrogates
from blockkit.lint.config import lint_codes, relative_posix
from blockkit.report import Finding

BASELINE_VERSION = 1
Key = tuple[str, str, str]  # (path, code, pointer)


@dataclass(frozen=True)
class Entry:
    index: int  # position in the file's "entries", for reporting a stale one
    path: str
    code: str
    pointer: str
    message: str = ""

    @property
    def key(self) -> Key:
        return (self.path, self.code, self.pointer)


@dataclass
class Baseline:
    path: Path
    entries: list[Entry] = field(default_factory=list)
    text: Optional[str] = None  # the file as read, for positions of stale entries

    @property
    def folder(self) -> Path:
        return self.path.parent

    def relative(self, manifest: Path) -> str:
        return relative_posix(manifest, self.folder)

    def counts(self) -> Counter[Key]:
        return Counter(entry.key for entry in self.entries)


def load(path: Path, *, missing_ok: bool = False) -> Baseline:
    """Read a baseline file; ConfigError (exit 2) when it cannot be used."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if missing_ok:
            return Baseline(path=path)
        raise ConfigError(f"{path}: no such baseline file; create it with --update-baseline") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the baseline: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ConfigError(f"{path}: the baseline is not valid JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("version") != BASELINE_VERSION or not isinstance(data.get("entries"), list):
        raise ConfigError(f"{path}: not a blockkit baseline (expected {{\"version\": {BASELINE_VERSION}, "
                          "\"entries\": [...]}); write one with --update-baseline")
    codes = lint_codes()
    entries = []
    for index, raw in enumerate(data["entries"]):
        if not (isinstance(raw, dict) and all(isinstance(raw.get(k), str) for k in ("path", "code", "pointer"))):
            raise ConfigError(f"{path}: entries[{index}] needs string \"path\", \"code\" and \"pointer\"")
        if raw["code"] not in codes:
            raise ConfigError(f"{path}: entries[{index}]: {raw['code']} is not a lint rule; a baseline can hold "
                              "only lint findings (BK3xx): platform findings cannot be baselined")
        message = raw.get("message")
        entries.append(Entry(index, raw["path"], raw["code"], raw["pointer"],
                             message if isinstance(message, str) else ""))
    return Baseline(path=path, entries=entries, text=text)


def render(entries: Iterable[Entry]) -> str:
    ordered = sorted(entries, key=lambda e: (e.path, e.code, e.pointer, e.message))
    document: dict[str, Any] = {
        "version": BASELINE_VERSION,
        "entries": [{"path": e.path, "code": e.code, "pointer": e.pointer, "message": e.message} for e in ordered],
    }
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    # A manifest key written "\ud800" reaches pointers and messages as a lone surrogate, which
    # UTF-8 cannot encode: write it back as the same JSON escape, which reads back to the same key.
    return escape_lone_surrogates(text)


def write(baseline: Baseline, entries: Iterable[Entry]) -> int:
    """Write ``entries`` to the baseline file atomically; returns how many were written."""
    entries = list(entries)
    text = render(entries)
    tmp = baseline.path.with_name(baseline.path.name + ".tmp")
    try:
        baseline.path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, baseline.path)
    except OSError as exc:
        raise ConfigError(f"{baseline.path}: cannot write the baseline: {exc.strerror or exc}") from None
    return len(entries)


def entry_for(path: str, finding: Finding) -> Entry:
    return Entry(index=-1, path=path, code=finding.code, pointer=finding.pointer, message=finding.message)

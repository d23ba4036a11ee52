"""Applying lint settings and the baseline to a run's reports.

``run_check`` (blockkit.commands.validate) calls, for each manifest,
``prepare`` (reads the lint config; a bad one is exit 2) and ``review`` (after
the check), then ``finish`` once at the end. Per lint finding, in order:

1. an exception that covers it excuses it (and counts as used);
2. select / ignore / per-file-ignores may drop it;
3. a severity override re-grades it;
4. a baseline entry with the same (path, code, pointer) hides it.

Findings of the other layers pass through untouched. ``finish`` reports
exceptions and baseline entries that matched nothing (BK390, BK391) in a
report of their own for the config or baseline file, located at the entry,
and writes the baseline when asked to.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Optional

from blockkit.context import Config
from blockkit.source import split_lines
from blockkit.lint import baseline as baseline_file
from blockkit.lint.baseline import Baseline, Entry, Key
from blockkit.lint.config import LintConfig, PointerException, read_lint_config
from blockkit.report import FileReport, Finding, Report
from blockkit.rules.base import REGISTRY
from blockkit.rules.lint.adoption import STALE_BASELINE_ENTRY, UNUSED_EXCEPTION


class LintPolicy:
    def __init__(self, baseline: Optional[Baseline] = None, *, update_baseline: bool = False) -> None:
        self.baseline = baseline
        self.update_baseline = update_baseline
        self.written: Optional[int] = None  # entries written by finish() in update mode
        self._configs: dict[Optional[Path], LintConfig] = {}
        # (config path, exception index) -> [applies to a checked manifest, excused a finding]
        self._exception_use: dict[tuple[Optional[Path], int], list[bool]] = {}
        self._unmatched: dict[Key, list[Entry]] = defaultdict(list)
        for entry in baseline.entries if baseline is not None else ():
            self._unmatched[entry.key].append(entry)
        self._checked: set[str] = set()  # baseline-relative paths of the manifests checked
        self._recorded: list[Entry] = []

    # --- per manifest --------------------------------------------------------------

    def prepare(self, manifest: Path, config: Config) -> LintConfig:
        """The lint settings that apply to ``manifest``; raises ConfigError when they are bad."""
        cached = self._configs.get(config.path)
        if cached is None:
            cached = self._configs[config.path] = read_lint_config(config)
        return cached

    def review(self, manifest: Path, config: Config, report: FileReport) -> None:
        lint = self.prepare(manifest, config)
        relative = lint.relative(manifest)
        exceptions = [e for e in lint.exceptions if e.applies_to(relative)]
        for exception in exceptions:
            self._exception_use.setdefault((lint.path, exception.index), [False, False])[0] = True
        base_path = self.baseline.relative(manifest) if self.baseline is not None else None
        if base_path is not None:
            self._checked.add(base_path)

        # The count of a lint rule's findings past the listing limit (BK010) goes with the rule.
        silenced = {id(summary) for code, summary in report.more.items()
                    if REGISTRY[code].layer == "lint" and not lint.enabled(code, relative)}
        kept: list[Finding] = []
        for finding in report.findings:
            if id(finding) in silenced:
                continue
            if finding.layer != "lint":
                kept.append(finding)
                continue
            excused = next((e for e in exceptions if e.covers(finding.code, finding.pointer)), None)
            if excused is not None:
                self._exception_use[(lint.path, excused.index)][1] = True
                continue
            if not lint.enabled(finding.code, relative):
                continue
            severity = lint.severity_of(finding.code, finding.severity)
            if severity != finding.severity:
                finding = replace(finding, severity=severity)  # type: ignore[arg-type]
            if base_path is not None and self._baselined(base_path, finding):
                continue
            kept.append(finding)
        report.findings = kept

    def _baselined(self, path: str, finding: Finding) -> bool:
        if self.update_baseline:
            self._recorded.append(baseline_file.entry_for(path, finding))
            return True
        waiting = self._unmatched.get((path, finding.code, finding.pointer))
        if waiting:
            waiting.pop(0)
            return True
        return False

    # --- once per run ----------------------------------------------------------------

    def finish(self, report: Report) -> None:
        """Add reports of unused exceptions and stale baseline entries; write the baseline if asked.

        Raises ConfigError when the baseline cannot be written.
        """
        for lint in self._configs.values():
            unused = [e for e in lint.exceptions
                      if self._exception_use.get((lint.path, e.index), [False, False]) == [True, False]]
            if unused and lint.path is not None:
                file = self._unused_exceptions_report(lint, unused)
                if file.findings:
                    report.files.append(file)
        if self.baseline is None:
            return
        if self.update_baseline:
            kept = [e for e in self.baseline.entries
                    if e.path not in self._checked and (self.baseline.folder / e.path).exists()]
            self.written = baseline_file.write(self.baseline, self._recorded + kept)
            return
        stale = sorted((e for entries in self._unmatched.values() for e in entries
                        if e.path in self._checked or not (self.baseline.folder / e.path).exists()),
                       key=lambda e: e.index)
        if stale:
            report.files.append(self._stale_entries_report(stale))

    def _unused_exceptions_report(self, lint: LintConfig, unused: list[PointerException]) -> FileReport:
        assert lint.path is not None
        text = _read(lint.path)
        file = FileReport(path=_display(lint.path), text=text)
        lines = split_lines(text or "")
        code = UNUSED_EXCEPTION.code
        if not lint.enabled(code, lint.relative(lint.path)):
            return file
        for exception in unused:
            line = _exception_line(text or "", lint.table_pointer != "", exception.index)
            width = len(lines[line - 1]) if line <= len(lines) else 0
            file.findings.append(Finding(
                code=code, severity=lint.severity_of(code, UNUSED_EXCEPTION.severity),  # type: ignore[arg-type]
                layer="lint",
                message=f"exception for {exception.pointer or '/'} ({', '.join(exception.codes)}) matches no "
                        "finding: the manifest no longer has what it excuses",
                pointer=f"{lint.table_pointer}/exceptions/{exception.index}",
                line=line, column=1, end_line=line, end_column=width + 1,
                hint="delete the exception, or point it at where the finding is now"))
        file.sort()
        return file

    def _stale_entries_report(self, stale: list[Entry]) -> FileReport:
        from blockkit.source import read_text

        assert self.baseline is not None
        text = self.baseline.text or ""
        source = read_text(text, _display(self.baseline.path))
        file = FileReport(path=source.path, text=text)
        for entry in stale:
            pointer = f"/entries/{entry.index}"
            line, column, end_line, end_column = source.locate(pointer, "open")
            gone = not (self.baseline.folder / entry.path).exists()
            why = f"{entry.path} no longer exists" if gone else f"{entry.path} has no such finding any more"
            file.findings.append(Finding(
                code=STALE_BASELINE_ENTRY.code, severity=STALE_BASELINE_ENTRY.severity, layer="lint",
                message=f"baseline entry {entry.code} at {entry.pointer or '/'} is stale: {why}",
                pointer=pointer, line=line, column=column, end_line=end_line, end_column=end_column,
                hint="run with --update-baseline to record the findings as they are now, or delete the entry"))
        file.sort()
        return file


def _read(path: Path) -> Optional[str]:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _display(path: Path) -> str:
    """A path as users like to read it: relative to the working directory when below it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if relative.startswith("..") else relative


# tomllib keeps no positions, so an entry is found by its [[...exceptions]] header.
_HEADERS = {
    False: re.compile(r"^[ \t]*\[\[[ \t]*exceptions[ \t]*\]\]", re.M),
    True: re.compile(r"^[ \t]*\[\[[ \t]*tool[ \t]*\.[ \t]*blockkit[ \t]*\.[ \t]*exceptions[ \t]*\]\]", re.M),
}
_INLINE_KEY = re.compile(r"^[ \t]*exceptions[ \t]*=", re.M)


def _exception_line(text: str, in_pyproject: bool, index: int) -> int:
    """1-based line of the ``index``-th exceptions entry in a TOML text (the key's line when written inline)."""
    headers = list(_HEADERS[in_pyproject].finditer(text))
    if index < len(headers):
        return text.count("\n", 0, headers[index].start()) + 1
    inline = _INLINE_KEY.search(text)
    return text.count("\n", 0, inline.start()) + 1 if inline else 1

"""Fixing one manifest: check, collect the fixers' edits, apply, re-check, until nothing changes.

Every pass re-parses the new text, so later edits use fresh positions. Edits
that collide within a pass wait for the next one. The result is refused (and
the original kept) if the new text does not parse: a fix must never turn a
readable manifest into an unreadable one.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from blockkit.context import Context
from blockkit.engine import ALL_LAYERS, check
from blockkit.fix.registry import FixTarget, load_fixers
from blockkit.fix.textedit import JsonText, apply_edits
from blockkit.report import FileReport, Finding
from blockkit.source import Source, read_text

NOT_UTF8 = "BK005"  # the parse rule for bytes that are not UTF-8

# Enough for any manifest: each pass removes at least one finding, and colliding edits are rare.
_MAX_PASSES = 32


@dataclass
class FixOutcome:
    path: str
    original: Optional[str]
    text: Optional[str]  # the fixed text; equal to ``original`` when nothing changed
    before: Optional[FileReport] = None  # the findings of the original text
    report: Optional[FileReport] = None  # the findings that remain after fixing
    applied: list[str] = field(default_factory=list)  # codes whose fixer changed the text, in order
    refused: Optional[str] = None  # why the file was left alone
    problems: list[str] = field(default_factory=list)  # fixers that failed (a bug), for the user to report

    @property
    def changed(self) -> bool:
        return self.text is not None and self.text != self.original

    @property
    def fixed(self) -> list[Finding]:
        """Findings of the original text that a fix made disappear (positions as in the original)."""
        if self.before is None or self.report is None:
            return []
        remaining = {_identity(f) for f in self.report.findings}
        codes = set(self.applied)
        return [f for f in self.before.findings if f.code in codes and _identity(f) not in remaining]


    def remaining_on_disk(self) -> Optional[FileReport]:
        """The findings that remain after fixing, placed in the ORIGINAL text (the file on disk,
        which ``--diff`` leaves as it is), as ``fixed`` places the findings it would fix: each
        takes the position of the same finding (code, pointer, message; else code and pointer)
        in the original report. One that only the fixed text has keeps its place there."""
        if self.report is None or self.before is None:
            return self.report
        exact = {_identity(f): f for f in self.before.findings}
        near: dict[tuple[str, str], Finding] = {}
        for f in self.before.findings:
            near.setdefault((f.code, f.pointer), f)
        placed = []
        for finding in self.report.findings:
            there = exact.get(_identity(finding)) or near.get((finding.code, finding.pointer))
            placed.append(finding if there is None else dataclasses.replace(
                finding, line=there.line, column=there.column, end_line=there.end_line, end_column=there.end_column))
        moved = FileReport(path=self.report.path, findings=placed, text=self.original, data=self.before.data,
                           more=dict(self.report.more))
        moved.sort()
        return moved


def _identity(finding: Finding) -> tuple[str, str, str]:
    return (finding.code, finding.pointer, finding.message)


def fixable_document(source: Source) -> Optional[str]:
    """None when ``source`` can be edited safely, else why not."""
    if source.text is None or not source.has_document:
        return "it cannot be parsed"
    if not isinstance(source.data, dict):
        return "it is not a JSON object"
    if any(code == NOT_UTF8 for code, *_ in source.problems):
        # The text holds U+FFFD where the unreadable bytes were: writing it back would destroy them.
        return "it is not valid UTF-8, and writing it back would lose the bytes that cannot be read"
    return None


def fix_source(source: Source, context: Optional[Context] = None, *, unsafe: bool = False,
               project_dir: Optional[Path] = None,
               review: Optional[Callable[[FileReport], None]] = None) -> FixOutcome:
    """Apply every available fix to ``source`` and return the outcome (nothing is written).

    ``review`` may filter each report before fixing, as lint's settings do: a finding
    it drops is neither fixed nor reported.
    """
    context = context or Context()

    def checked(current: Source) -> FileReport:
        report = check(current, context, layers=ALL_LAYERS, project_dir=project_dir)
        if review is not None:
            review(report)
        return report

    fixers = load_fixers()
    outcome = FixOutcome(path=source.path, original=source.text, text=source.text)
    refusal = fixable_document(source)
    if refusal is not None:
        outcome.refused = refusal
        outcome.report = outcome.before = checked(source)
        return outcome
    current = source
    for _ in range(_MAX_PASSES):
        report = checked(current)
        if outcome.before is None:
            outcome.before = report
        target = FixTarget(current, current.data, JsonText(current))
        by_code: dict[str, list[Finding]] = {}
        for finding in report.findings:
            candidate = fixers.get(finding.code)
            if candidate is not None and (unsafe or candidate.safety == "safe"):
                by_code.setdefault(finding.code, []).append(finding)
        proposals = []
        for code in sorted(by_code):
            try:
                edits = list(fixers[code].apply(target, by_code[code]))
            except Exception as exc:  # a bug in one fixer must not stop the others, nor crash
                outcome.problems.append(f"the fix for {code} failed: {type(exc).__name__}: {exc}")
                fixers = {c: f for c, f in fixers.items() if c != code}
                continue
            proposals.extend((code, edit) for edit in edits)
        new_text, accepted = apply_edits(target.editor.text, [edit for _, edit in proposals])
        if not accepted or new_text == target.editor.text:
            outcome.report = report
            break
        candidate_source = read_text(new_text, source.path)
        if fixable_document(candidate_source) is not None:  # pragma: no cover - a fixer bug
            outcome.refused = "a fix produced text that does not parse; the file was left unchanged"
            outcome.text = source.text
            outcome.applied.clear()
            outcome.report = outcome.before
            return outcome
        for code, edit in proposals:
            if edit in accepted and code not in outcome.applied:
                outcome.applied.append(code)
        current = candidate_source
        outcome.text = new_text
    else:  # pragma: no cover - only a fixer that never converges gets here
        outcome.report = checked(current)
    return outcome

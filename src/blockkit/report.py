"""Findings and reports: the one result object shared by the CLI and the library."""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, Literal, Optional

Severity = Literal["error", "warning", "info"]
Layer = Literal["parse", "schema", "server", "lint", "diff", "bundle"]  # diff: two versions; bundle: a zip
SEVERITIES: tuple[str, ...] = ("error", "warning", "info")
LAYERS: tuple[str, ...] = ("parse", "schema", "server", "lint", "diff", "bundle")

REPORT_FORMAT_VERSION = 1


@dataclass(frozen=True)
class Edit:
    """Replace ``text[start:end]`` (character offsets in the decoded source) with ``replacement``."""

    start: int
    end: int
    replacement: str


@dataclass(frozen=True)
class Fix:
    """An autofix attached to a finding; ``safe`` fixes are applied by plain ``blockkit fix``."""

    description: str
    safe: bool
    edits: tuple[Edit, ...] = ()


@dataclass(frozen=True)
class Finding:
    """One problem in a manifest: its rule's code, severity and layer, the message, and where
    (a JSON Pointer and 1-based line and column, with the end)."""

    code: str
    severity: Severity
    layer: Layer
    message: str
    pointer: str
    line: int
    column: int
    end_line: int
    end_column: int
    hint: Optional[str] = None
    fix: Optional[Fix] = None

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "layer": self.layer,
            "message": self.message,
            "pointer": self.pointer,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "hint": self.hint,
            "fixable": _fixable(self) if self.fix is None else ("safe" if self.fix.safe else "unsafe"),
        }


def _fixable(finding: Finding) -> Optional[str]:
    """What ``blockkit fix`` does with ``finding``: "safe", "unsafe" (only with ``--unsafe``) or None.

    The fixer registry is the truth (as for ``explain`` and the editor's quick fixes); it is read
    on the first finding that is written out, not when this module is imported, so the data model
    does not load the fixers' modules for a check that never shows its JSON.
    """
    from blockkit.fix.registry import finding_fixability

    return finding_fixability(finding)


_new_object = object.__new__
_set_attribute = object.__setattr__


def new_finding(code: str, severity: Severity, layer: Layer, message: str, pointer: str, line: int, column: int,
                end_line: int, end_column: int, hint: Optional[str] = None, fix: Optional[Fix] = None) -> Finding:
    """``Finding(...)`` with the same fields, built without the frozen ``__init__``.

    The generated ``__init__`` of a frozen dataclass sets each of the eleven fields through
    ``object.__setattr__``; the engine builds a Finding for every finding, and giving the
    instance its ``__dict__`` whole costs a third as much. The result is the same object:
    equal, hashed, pickled and shown as one built by ``Finding(...)`` (tests/test_report.py).
    """
    made = _new_object(Finding)
    _set_attribute(made, "__dict__", {
        "code": code, "severity": severity, "layer": layer, "message": message, "pointer": pointer, "line": line,
        "column": column, "end_line": end_line, "end_column": end_column, "hint": hint, "fix": fix,
    })
    return made


def fails(errors: int, warnings: int, strict: bool) -> bool:
    """Whether a file fails: an error, or under ``strict`` a warning (FileReport.ok and the
    text report's Tally, which knows a file by its counts, both ask this)."""
    return bool(errors or (strict and warnings))


# A finding's place in the sorted list: (line, column, code), read at C speed.
_sort_key = attrgetter("line", "column", "code")


@dataclass
class FileReport:
    """The verdict on one manifest."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    # Decoded text of the file (None when it could not be read as text); used for snippets and fixes.
    text: Optional[str] = field(default=None, repr=False)
    data: Any = field(default=None, repr=False)
    # Rules that found more than the engine lists: code -> the BK010 finding that counts the rest.
    more: dict[str, Finding] = field(default_factory=dict, repr=False)

    def count(self, severity: str) -> int:
        return [f.severity for f in self.findings].count(severity)

    @property
    def errors(self) -> int:
        return self.count("error")

    @property
    def warnings(self) -> int:
        return self.count("warning")

    def ok(self, strict: bool = False) -> bool:
        """No error, and under ``strict`` no warning either."""
        return not fails(self.errors, self.warnings, strict)

    def sort(self) -> None:
        self.findings.sort(key=_sort_key)

    def to_json(self, strict: bool = False) -> dict[str, Any]:
        return {
            "path": self.path,
            "ok": self.ok(strict),
            "diagnostics": [f.to_json() for f in self.findings],
        }


@dataclass
class Report:
    """The verdict on every file of one run (``strict``: warnings fail too)."""

    files: list[FileReport] = field(default_factory=list)
    strict: bool = False

    @property
    def findings(self) -> list[Finding]:
        return [f for file in self.files for f in file.findings]

    @property
    def errors(self) -> int:
        return sum(file.errors for file in self.files)

    @property
    def warnings(self) -> int:
        return sum(file.warnings for file in self.files)

    @property
    def ok(self) -> bool:
        return all(file.ok(self.strict) for file in self.files)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def to_json(self) -> dict[str, Any]:
        from blockkit.resources import schema_identity

        return {
            "version": REPORT_FORMAT_VERSION,
            "schema": schema_identity(),
            "files": [file.to_json(self.strict) for file in self.files],
            "summary": {
                "files": len(self.files),
                "errors": self.errors,
                "warnings": self.warnings,
                "infos": sum(file.count("info") for file in self.files),
            },
        }

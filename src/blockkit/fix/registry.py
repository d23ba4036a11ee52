"""The fixer registry: rule code -> the function that repairs what that rule reports.

Fixes live here rather than in the rules so that rule modules stay pure checks.
A fixer receives the file (its Source, document and an editor) and the
findings of its rule, and returns text edits; it must return no edit when
there is nothing left to fix, which is what makes ``blockkit fix`` idempotent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Literal, Optional

from blockkit.fix.textedit import JsonText
from blockkit.report import Edit, Finding
from blockkit.source import Source

Safety = Literal["safe", "unsafe"]


@dataclass(frozen=True)
class FixTarget:
    """One parsed manifest being fixed."""

    source: Source
    document: dict[str, Any]
    editor: JsonText


FixFunction = Callable[[FixTarget, list[Finding]], Iterable[Edit]]


def _always(finding: Finding) -> bool:
    return True


@dataclass(frozen=True)
class Fixer:
    code: str
    safety: Safety
    description: str  # what the fix does, in the imperative: shown by `fix` and `explain`
    apply: FixFunction
    # Which of its rule's findings the fixer repairs (UNKNOWN_KEY: only the stale appId).
    applies: Callable[[Finding], bool] = _always
    # What the fix does to one finding, for a quick fix's title (default: the description).
    title: Optional[Callable[[Finding], str]] = None

    def title_for(self, finding: Finding) -> str:
        return self.title(finding) if self.title is not None else self.description


FIXERS: dict[str, Fixer] = {}


def fixer(code: str, safety: Safety, description: str, *, applies: Callable[[Finding], bool] = _always,
          title: Optional[Callable[[Finding], str]] = None) -> Callable[[FixFunction], FixFunction]:
    def register(function: FixFunction) -> FixFunction:
        if code in FIXERS:
            raise ValueError(f"a fixer for {code} is registered twice")
        FIXERS[code] = Fixer(code, safety, description, function, applies, title)
        return function

    return register


def load_fixers() -> dict[str, Fixer]:
    import blockkit.fix.fixers  # noqa: F401  (registers every fixer)

    return FIXERS


def fixability(code: str) -> Optional[Safety]:
    """Whether ``blockkit fix`` repairs findings of rule ``code``, and how safely (None: no fix).

    This table, not a rule's own ``fixable`` attribute, is the truth: a fix exists only where a fixer does.
    """
    found = load_fixers().get(code)
    return found.safety if found is not None else None


def finding_fixability(finding: Finding) -> Optional[Safety]:
    """What ``blockkit fix`` does with this one finding: its fixer's safety, or None when no fixer
    repairs it (none for its rule, or one that leaves this finding to a person)."""
    found = load_fixers().get(finding.code)
    return found.safety if found is not None and found.applies(finding) else None

"""Everything there is to say about one rule, as data: what ``explain``, ``rules`` and the editor show.

Below the commands and the language server, so both read it without one reaching into the other.
"""

from __future__ import annotations

from typing import Any


def describe(rule: Any) -> dict[str, Any]:
    """Everything there is to say about a rule, as the JSON of ``explain`` and ``rules`` shows it."""
    from blockkit.fix import FIXERS, fixability

    safety = fixability(rule.code)
    fixer = FIXERS.get(rule.code)
    return {
        "code": rule.code,
        "name": rule.name,
        "layer": rule.layer,
        "severity": rule.severity,
        "stage": rule.stage,
        "fixable": safety,
        "autofix": fixer.description if fixer is not None else None,
        "summary": rule.doc.summary,
        "what": rule.doc.what,
        "why": rule.doc.why,
        "example": rule.doc.example,
        "fix": rule.doc.fix,
    }

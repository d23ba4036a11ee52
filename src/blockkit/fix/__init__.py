"""``blockkit fix``: surgical, idempotent autofixes keyed by rule code.

- ``textedit``: edits to JSON text located by the parser's spans;
- ``registry``: the fixer table (rule code -> fixer) and ``fixability``;
- ``fixers``: the fixes themselves;
- ``runner``: check, edit, re-check until nothing changes;
- ``atomic``: writing the result without ever leaving a half-written file.
"""

from __future__ import annotations

from blockkit.fix.registry import FIXERS, Fixer, fixability, load_fixers
from blockkit.fix.runner import FixOutcome, fix_source

__all__ = ["FIXERS", "FixOutcome", "Fixer", "fix_source", "fixability", "load_fixers"]

"""``blockkit diff`` and ``lint --against``: two versions of a manifest, compared as review would.

- ``semver``: Semantic Versioning precedence;
- ``rules``: the diff rules BK401-BK499 (docs, severities);
- ``compare``: the comparison, producing Findings positioned in the new file;
- ``git``: reading the old version from a git revision.
"""

from __future__ import annotations

from pathlib import Path

from blockkit.diff.compare import comparable, compare
from blockkit.diff.git import RevisionError, source_at_revision
from blockkit.report import Finding
from blockkit.source import Source

__all__ = ["RevisionError", "comparable", "compare", "findings_against_revision", "source_at_revision"]


def findings_against_revision(source: Source, path: Path, revision: str) -> list[Finding]:
    """Diff findings for the manifest ``source`` (read from ``path``) against its state at ``revision``.

    No findings when the manifest did not exist at ``revision`` (a new app) or
    when either side is not a manifest object. Raises RevisionError.
    """
    old = source_at_revision(path, revision)
    if old is None:
        return []
    return compare(old, source)

"""Validate a manifest before it is written, and again once it is on disk.

Both use the same library call the platform's pipeline uses, so a scaffold
can never disagree with ``blockkit validate``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from blockkit.context import Context
from blockkit.report import Finding


def _context(block_id: str) -> Context:
    # A new app is unverified and may be served only from its own origin.
    return Context(allowed_origins=Context().origins_for(block_id))


def check_document(manifest: dict[str, Any]) -> list[Finding]:
    from blockkit.api import validate

    report = validate(json.dumps(manifest), _context(manifest["blockId"]))
    return report.files[0].findings


def check_written(path: Path, block_id: str) -> list[Finding]:
    from blockkit.api import validate_file

    return validate_file(path, _context(block_id)).files[0].findings


def describe(findings: list[Finding]) -> str:
    return "\n".join(
        f"  {f.line}:{f.column}: {f.code} [{f.severity}] {f.message} ({f.pointer or '/'})" for f in findings
    )

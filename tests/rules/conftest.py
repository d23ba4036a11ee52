"""Helpers for the server-rule tests: write a real manifest file, validate it, look at findings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Optional

import pytest

import blockkit
from blockkit.context import Context
from blockkit.report import Finding
from sample_manifests import PAGE_BLOCK, changed

# A manifest every layer accepts; tests change one thing at a time.
VALID = changed(PAGE_BLOCK, **{"$schema": ..., "page": ...})


def manifest(**changes: Any) -> dict[str, Any]:
    """A copy of VALID with top-level keys replaced; a value of ... deletes the key."""
    return changed(VALID, **changes)


def iframe(**changes: Any) -> dict[str, Any]:
    """A copy of VALID's iframe with members replaced; a value of ... deletes the member."""
    return changed(VALID["iframe"], **changes)


Run = Callable[..., list[Finding]]


@pytest.fixture
def run(tmp_path: Path) -> Run:
    """Validate a manifest (a dict, or raw JSON text) written to a real file; return its findings."""
    counter = iter(range(10**6))

    def _run(document: Any, context: Optional[Context] = None, **context_fields: Any) -> list[Finding]:
        if context is None:
            context = Context(**context_fields)
        path = tmp_path / f"m{next(counter)}" / "block.manifest.json"
        path.parent.mkdir()
        text = document if isinstance(document, str) else json.dumps(document, indent=2, ensure_ascii=False)
        path.write_text(text, encoding="utf-8")
        report = blockkit.validate_file(path, context)
        findings = report.findings
        assert not [f for f in findings if f.code == "BK000"], findings
        return findings

    return _run


def codes(findings: list[Finding]) -> set[str]:
    return {f.code for f in findings}


def only(findings: list[Finding], code: str) -> list[Finding]:
    return [f for f in findings if f.code == code]


def at(findings: list[Finding], code: str) -> list[str]:
    """Pointers of the findings with ``code``, in report order."""
    return [f.pointer for f in findings if f.code == code]

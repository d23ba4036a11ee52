"""Fixtures for the lint tests; shared helpers live in lint_helpers.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional

import pytest
from lint_helpers import lint_file, write_project

from blockkit.context import Context
from blockkit.report import Finding

LintRun = Callable[..., list[Finding]]


@pytest.fixture
def lint(tmp_path: Path) -> LintRun:
    """lint(manifest, files=None, context=None, project=True) -> the lint-layer findings.

    The manifest is written to a real block.manifest.json; with ``project`` the
    folder around it is its block project (``files`` are written there).
    """
    counter = iter(range(10_000))

    def run(manifest: Any, files: Optional[dict[str, str]] = None, context: Optional[Context] = None,
            project: bool = True) -> list[Finding]:
        path = write_project(tmp_path / f"p{next(counter)}", manifest, files)
        return lint_file(path, context, project=project)

    return run

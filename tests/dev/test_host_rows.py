"""host_rows.ROWS: every row of the dev-host fidelity review is accounted for, with a test or a reason."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

from host_rows import REVIEW_ROWS, ROWS

HERE = Path(__file__).resolve().parent
OUTCOMES = {"fixed", "same", "spec", "deviation"}


@cache
def functions_of(file: str) -> frozenset[str]:
    tree = ast.parse((HERE / file).read_text(encoding="utf-8"))
    return frozenset(n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))


def test_every_row_of_the_review_is_there_once() -> None:
    assert sorted(ROWS) == list(REVIEW_ROWS)


@pytest.mark.parametrize("number", sorted(ROWS))
def test_row_is_accounted_for(number: int) -> None:
    row = ROWS[number]
    assert row.outcome in OUTCOMES
    if row.outcome == "fixed":
        assert row.tests, "a fixed row names its test"
    if row.outcome in ("spec", "deviation") or not row.tests:
        assert row.why, "a row kept as it is, or without a test, says why"
    for test in row.tests:
        file, _, name = test.partition("::")
        assert (HERE / file).exists(), f"{test}: no such file"
        assert name in functions_of(file), f"{test} does not exist"


def test_the_recorded_deviations_are_in_the_guide() -> None:
    guide = (HERE.parents[1] / "docs" / "dev.md").read_text(encoding="utf-8")
    assert "## What differs from the platform" in guide
    assert sum(1 for row in ROWS.values() if row.outcome in ("spec", "deviation")) >= 5

"""fidelity_rows.ROWS: every review row has a named test that exists, or a reason."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from fidelity_rows import ROWS

HERE = Path(__file__).resolve().parent
OUTCOMES = {"fixed", "same", "spec", "deviation"}


def functions_of(file: str) -> set[str]:
    tree = ast.parse((HERE / file).read_text(encoding="utf-8"))
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


@pytest.mark.parametrize("key", list(ROWS), ids=lambda k: f"{k[0]} | {k[1]}")
def test_row_is_accounted_for(key: tuple[str, str]) -> None:
    row = ROWS[key]
    assert row.outcome in OUTCOMES
    if row.outcome in ("fixed", "same"):
        assert row.tests, "a fixed or unchanged row names its test"
    else:
        assert row.why, "a row kept as it is says why"
    for test in row.tests:
        file, _, name = test.partition("::")
        assert name in functions_of(file), f"{test} does not exist"


def test_every_section_of_the_review_is_covered() -> None:
    sections = {k[0] for k in ROWS}
    for wanted in ("GET /models", "GET /models/{id}", "GET /model-versions/{id}", "GET /model-versions/by-hash/{hash}",
                   "POST /model-versions/by-hash", "GET /model-versions/mini/{id}", "GET /images", "GET /posts/{id}",
                   "GET /articles", "GET /collections", "GET /users", "GET /creators, /tags", "GET /me",
                   "GET /permissions/check", "GET /enums", "Vault", "Routes", "Shapes review"):
        assert wanted in sections

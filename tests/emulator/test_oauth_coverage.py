"""The OAuth coverage map names real tests, and every OAuth row of the spec has an entry."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import oauth_coverage
import pytest

REPO = Path(__file__).resolve().parents[2]
# shared/ sits beside the checkout (CI, /work/main); a worktree one level deeper finds it one up.
SPEC = next((base / "shared" / "spec" / "catalogue-and-oauth.md" for base in (REPO.parent, REPO.parent.parent)
             if (base / "shared" / "spec" / "catalogue-and-oauth.md").is_file()),
            REPO.parent / "shared" / "spec" / "catalogue-and-oauth.md")


def _defined(node_id: str) -> bool:
    path, _, name = node_id.partition("::")
    tree = ast.parse((REPO / path).read_text(encoding="utf-8"))
    return any(isinstance(n, ast.FunctionDef) and n.name == name for n in tree.body)


def _all_entries() -> list[str]:
    review = {t for _status, tests in oauth_coverage.REVIEW_ROWS.values() for t in tests}
    return sorted(review | {t for table in (oauth_coverage.ERRORS, oauth_coverage.STATES, oauth_coverage.LIMITS)
                            for tests in table.values() for t in tests})


@pytest.mark.parametrize("node_id", _all_entries())
def test_named_test_exists(node_id: str) -> None:
    assert _defined(node_id), f"{node_id} is named in oauth_coverage.py but not defined"


def _spec_rows() -> tuple[set[tuple[str, str]], set[tuple[str, str, str]], set[str]]:
    if not SPEC.is_file():
        pytest.skip("../shared/corpus is not present")  # the spec lives beside the checkout in shared/
    errors, states, limits = set(), set(), set()
    for line in SPEC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("OAuth "):
            status = cells[1]
            errors.add((cells[0], status))
        if len(cells) == 6 and cells[0] in ("Authorization code", "Refresh token", "Access token"):
            states.add((cells[0], cells[1], cells[2].replace("`", "")))
        if len(cells) == 3 and cells[2] == "OAuth":
            limits.add(cells[0])
    return errors, states, limits


def test_every_oauth_row_of_the_spec_is_mapped() -> None:
    errors, states, limits = _spec_rows()
    assert errors and states and limits
    assert errors == set(oauth_coverage.ERRORS), errors ^ set(oauth_coverage.ERRORS)
    assert states == set(oauth_coverage.STATES), states ^ set(oauth_coverage.STATES)
    assert limits == set(oauth_coverage.LIMITS), limits ^ set(oauth_coverage.LIMITS)
    assert all(re.fullmatch(r"[0-9]{3}.*|[a-z_]+", status) for _group, status in errors)


def test_every_review_row_has_a_status_and_fixed_rows_have_tests() -> None:
    statuses = {"fixed", "same", "spec", "ours", "platform", "held", "not"}
    for row, (status, tests) in oauth_coverage.REVIEW_ROWS.items():
        assert status in statuses, row
        assert tests or status == "not", f"{row}: only a row that is not emulated may have no test"
    security = {row for row in oauth_coverage.REVIEW_ROWS if re.fullmatch(r"[EH][0-9]{2}", row)}
    owned = {"E01", "E06", "E11", "E12", "E14", "E15", "E16", "E17", "E22"} | {f"H{n:02d}" for n in range(1, 12)}
    assert security == owned
    assert all(oauth_coverage.REVIEW_ROWS[f"H{n:02d}"][0] == "held" for n in range(1, 12))

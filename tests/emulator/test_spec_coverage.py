"""Every catalogue row of the spec is covered by tests that exist."""

from __future__ import annotations

import subprocess
import sys

import pytest

import spec_coverage
import spec_rows
from contract import REPO

ROWS = spec_rows.load()


@pytest.fixture(scope="module")
def collected() -> set[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests/emulator"],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    ids = {line.strip() for line in done.stdout.splitlines() if "::" in line}
    assert len(ids) > 1000
    return ids


def test_rows_are_read_from_the_spec_or_its_frozen_copy() -> None:
    assert len(ROWS.endpoints) == 23
    assert sum(len(e.params) for e in ROWS.endpoints) > 80
    assert len(ROWS.errors) >= 20


@pytest.mark.skipif(not spec_rows.SPEC.is_file(), reason="shared/ is absent: the frozen copy is what we have")
def test_frozen_copy_matches_the_spec() -> None:
    # Refresh with: python3 tests/emulator/spec_rows.py
    assert spec_rows.FROZEN.read_text(encoding="utf-8") == spec_rows.to_json(spec_rows.parse(spec_rows.SPEC.read_text(encoding="utf-8")))


def test_every_spec_row_is_mapped() -> None:
    mapping = spec_coverage.coverage(ROWS)
    keys = ROWS.keys()
    assert len(keys) == len(set(keys))
    assert set(mapping) == set(keys)
    assert all(mapping[k] for k in keys), [k for k in keys if not mapping[k]]


def test_no_hand_entry_names_a_row_the_spec_lacks() -> None:
    rows = {(r.group, r.status) for r in ROWS.errors}
    assert set(spec_coverage.ERRORS) == rows


def test_every_mapped_test_exists(collected: set[str]) -> None:
    mapping = spec_coverage.coverage(ROWS)
    missing = sorted({t for tests in mapping.values() for t in tests if t not in collected})
    assert not missing, "\n".join(missing[:40])


def test_shape_only_rows_are_the_unproducible_ones() -> None:
    # Rate limits without numbers, overload and internal failures: nothing else may be shape-only.
    statuses = {key.split(" | ")[1] for key in spec_coverage.uncovered_by_behaviour(ROWS)}
    assert statuses <= {"429", "500", "503"}

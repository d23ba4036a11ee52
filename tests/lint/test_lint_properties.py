"""Property-based: no manifest makes a lint rule crash, and every lint position lies inside the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lint_helpers import READY_JS, write_project

from blockkit.engine import ALL_LAYERS, check
from blockkit.source import read_text

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=12), children, max_size=6),
    max_leaves=30,
)
# The keys the lint rules read, real and stale, so that odd values reach them.
keys = st.sampled_from(
    ["$schema", "blockId", "scopes", "scopeJustifications", "auth", "tagline", "repository", "buildCommand",
     "outputDir", "iframe", "page", "goods", "targets", "bootSkeleton", "appId", "settings", "description"])
pages = st.fixed_dictionaries({}, optional={"path": json_values, "title": json_values,
                                             "buzzBudgetPerGen": json_values})
targets = st.lists(st.dictionaries(st.sampled_from(["slotId", "priority"]), json_values, max_size=2), max_size=3)
goods = st.lists(st.dictionaries(st.sampled_from(["id", "kind", "priceBuzz"]), json_values, max_size=3), max_size=3)
manifests = st.dictionaries(keys, json_values, max_size=10).flatmap(
    lambda base: st.fixed_dictionaries({}, optional={"page": pages, "targets": targets, "goods": goods}).map(
        lambda extra: {**base, **extra}))


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("project")
    write_project(root, {}, {"index.html": '<div id="root"></div>', "package.json": "{}", "app.js": READY_JS,
                             "src/store.ts": "useAppStorage();\nuseSharedStorage();\n"})
    return root


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(manifests, st.sampled_from([None, 2]))
def test_lint_never_crashes_and_positions_stay_inside(project: Path, document: dict, indent: object) -> None:
    text = json.dumps(document, indent=indent, ensure_ascii=False)
    report = check(read_text(text), layers=ALL_LAYERS, project_dir=project)
    assert not [f for f in report.findings if f.code == "BK000"], report.findings
    lines = text.split("\n")
    for f in report.findings:
        assert 1 <= f.line <= f.end_line <= len(lines), f
        assert 1 <= f.column <= len(lines[f.line - 1]) + 1, f
        assert 1 <= f.end_column <= len(lines[f.end_line - 1]) + 1, f

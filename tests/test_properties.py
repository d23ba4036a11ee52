"""Property-based: no input raises, and every position lies inside the file."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import blockkit

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=12), children, max_size=6),
    max_leaves=30,
)
manifest_keys = st.sampled_from(
    ["blockId", "version", "name", "tagline", "repository", "contentRating", "category", "renderMode", "auth",
     "trustTier", "scopes", "scopeJustifications", "buildCommand", "outputDir", "assetBundleUrl", "iframe",
     "page", "goods", "targets", "publicSettingsKeys", "bootSkeleton", "minApiVersion"])
manifest_like = st.dictionaries(manifest_keys, json_values, max_size=12)
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def assert_positions_inside(text: str, report: blockkit.Report) -> None:
    lines = text.split("\n")
    for f in report.findings:
        assert 1 <= f.line <= len(lines), f
        assert 1 <= f.column <= len(lines[f.line - 1]) + 1, f
        assert (f.end_line, f.end_column) >= (f.line, f.column), f
        assert 1 <= f.end_line <= len(lines), f
        assert 1 <= f.end_column <= len(lines[f.end_line - 1]) + 1, f


@SETTINGS
@given(st.binary(max_size=400))
def test_arbitrary_bytes_never_raise(raw: bytes) -> None:
    report = blockkit.validate(raw)
    text = raw.decode("utf-8", errors="replace")
    if b"\x00" not in raw:
        assert_positions_inside(text, report)


@SETTINGS
@given(st.text(max_size=300))
def test_arbitrary_text_never_raises(text: str) -> None:
    assert_positions_inside(text, blockkit.validate(text))


@SETTINGS
@given(json_values, st.sampled_from([None, 0, 2, "\t"]))
def test_arbitrary_json_never_raises(value: object, indent: object) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    report = blockkit.validate(text)
    assert_positions_inside(text, report)
    assert not [f for f in report.findings if f.code == "BK000"]


@SETTINGS
@given(manifest_like, st.sampled_from([None, 2]))
def test_manifest_shaped_json_never_raises(value: dict, indent: object) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    report = blockkit.validate(text)
    assert_positions_inside(text, report)
    assert not [f for f in report.findings if f.code == "BK000"], report.findings

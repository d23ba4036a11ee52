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


def _dump_with_repeats(value, draw_indent: bool) -> str:
    """JSON text in which objects are lists of pairs, so member names can repeat."""
    sep = "\n  " if draw_indent else ""
    if isinstance(value, tuple):  # an object as pairs
        return "{" + sep + ("," + sep).join(json.dumps(k) + ": " + _dump_with_repeats(v, draw_indent)
                                            for k, v in value[1]) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_dump_with_repeats(v, draw_indent) for v in value) + "]"
    return json.dumps(value)


objects_with_repeats = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda children: st.lists(children, max_size=4)
    | st.lists(st.tuples(st.sampled_from(["a", "b", "a/b", "~", "é", '"q"', "\\"]), children), max_size=5)
    .map(lambda pairs: ("object", pairs)),
    max_leaves=25,
)


@SETTINGS
@given(objects_with_repeats, st.booleans())
def test_fast_position_scanner_agrees_with_the_strict_parser(value, indent: bool) -> None:
    from blockkit.source import scan, scan_valid

    text = _dump_with_repeats(value, indent)
    strict = scan(text)
    assert strict.problem is None, text
    fast = scan_valid(text)
    assert (fast.values, fast.keys, fast.duplicates) == (strict.values, strict.keys, strict.duplicates), text


@SETTINGS
@given(st.text(alphabet=st.characters(codec=None, exclude_categories=())))
def test_utf16_length_counts_astral_characters_twice_and_lone_surrogates_once(value: str) -> None:
    from blockkit.jsstr import utf16_len

    assert utf16_len(value) == sum(2 if ord(ch) > 0xFFFF else 1 for ch in value)

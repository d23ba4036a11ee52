"""Property-based: no input raises, and every position lies inside the file."""

from __future__ import annotations

import json
import re

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
    lines = re.split(r"\r\n?|\n", text)  # the line breaks of editors: LF, CRLF and a lone CR
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
@given(objects_with_repeats, st.booleans())
def test_repeated_keys_are_reported_once_per_pointer_at_the_first_repeat(value, indent: bool) -> None:
    # The oracle: every repeat the strict scanner finds, by its pointer string, the first of each.
    from blockkit.engine import check
    from blockkit.source import read_text, scan

    text = _dump_with_repeats(value, indent)
    spans = scan(text)
    expected: dict[str, int] = {}
    for node in spans.duplicates:
        expected.setdefault(spans.pointer(node), spans.key_start[node])
    source = read_text(text)
    found = [(f.pointer, f.line, f.column) for f in check(source).findings if f.code == "BK009"]
    assert found == [(pointer, *source.position(start)) for pointer, start in
                     sorted(expected.items(), key=lambda item: item[1])], text


@SETTINGS
@given(st.text(alphabet=st.characters(codec=None, exclude_categories=())))
def test_utf16_length_counts_astral_characters_twice_and_lone_surrogates_once(value: str) -> None:
    from blockkit.jsstr import utf16_len

    assert utf16_len(value) == sum(2 if ord(ch) > 0xFFFF else 1 for ch in value)


# Strings made of the characters that trip validators up: lone surrogates, characters
# Python and JavaScript disagree on, invisible ones, and bits of real values.
_tricky_text = st.lists(
    st.sampled_from(["\ud800", "\udfff", "\u0085", "\u00a0", "\u200b", "\ufeff", "\x00", "\x1f", "\u2028",
                     "\u202e", "\x7f", "\U0001f600", "\u3000", "\n", "a", " ", "allow-scripts", "app_unlock",
                     "model.sidebar_top", "buzz:read:self", "https://", "github.com/a/b", "/", ".", "1"]),
    max_size=8).map("".join)
_tricky_values = st.recursive(
    st.none() | st.booleans() | st.integers() | _tricky_text,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(
        _tricky_text | st.sampled_from(["id", "kind", "slotId", "sandbox", "payload", "justification", "title"]),
        children, max_size=4),
    max_leaves=12,
)
_tricky_manifests = st.dictionaries(manifest_keys | _tricky_text, _tricky_values, max_size=10)


@SETTINGS
@given(_tricky_manifests, st.sampled_from(["all", "submit"]))
def test_tricky_strings_never_raise_and_messages_show_every_character(value: dict, stage: str) -> None:
    text = json.dumps(value, indent=1)  # ASCII, with \\uXXXX escapes for everything else
    report = blockkit.validate(text, blockkit.Context(stage=stage))
    assert_positions_inside(text, report)
    for finding in report.findings:
        assert finding.code != "BK000", finding
        assert finding.message.isprintable(), finding
        assert (finding.hint or "").isprintable(), finding

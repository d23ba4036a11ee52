"""The parse layer: every malformed input becomes a located finding, never an exception."""

from __future__ import annotations

import pytest

import blockkit
from blockkit.source import read_bytes, read_text, scan
from tests.conftest import codes


def only(report):
    (finding,) = [f for f in report.findings if f.layer == "parse"]
    return finding


@pytest.mark.parametrize(
    ("text", "message", "line", "column"),
    [
        ('{\n  "blockId": "demo",\n}', "trailing comma before '}'", 2, 20),
        ('{"scopes": ["a",]}', "trailing comma before ']'", 1, 16),
        ('// comment\n{}', "comments are not allowed in JSON", 1, 1),
        ('{\n  /* c */ "a": 1}', "comments are not allowed in JSON", 2, 3),
        ('{"a": NaN}', "NaN is not valid JSON", 1, 7),
        ('{"a": -Infinity}', "-Infinity is not valid JSON", 1, 7),
        ("{'a': 1}", "strings must use double quotes", 1, 2),
        ("{a: 1}", "member name 'a' must be in double quotes", 1, 2),
        ('{"a": "x\ny"}', "unescaped line break inside a string", 1, 9),
        ('{"a": "\\q"}', "invalid escape sequence in string", 1, 8),
        ('{"a": 1} {}', "unexpected character '{': expected the end of the file", 1, 10),
        ('{"a": 01}', "malformed number", 1, 7),
        ('{"a": 1', "unexpected end of file", 1, 8),
        ("", "the file is empty", 1, 1),
        ('{"a": tru}', "unexpected 'tru'", 1, 7),
    ],
)
def test_invalid_json_is_located(text: str, message: str, line: int, column: int) -> None:
    finding = only(blockkit.validate(text))
    assert finding.code == "BK002"
    assert message in finding.message
    assert (finding.line, finding.column) == (line, column)
    assert finding.severity == "error"


def test_bom_is_reported_and_rest_still_checked(manifest) -> None:
    import json

    text = "\ufeff" + json.dumps(manifest)
    report = blockkit.validate(text)
    assert codes(report) == ["BK003"]
    bom = report.findings[0]
    assert (bom.line, bom.column, bom.end_column) == (1, 1, 2)
    manifest["version"] = "1"
    assert sorted(codes(blockkit.validate("\ufeff" + json.dumps(manifest)))) == ["BK003", "BK104"]


def test_non_utf8_byte_is_located_and_rest_checked() -> None:
    raw = b'{\n  "name": "caf\xe9",\n  "blockId": "x"\n}'
    report = blockkit.validate(raw)
    bad = [f for f in report.findings if f.code == "BK005"]
    assert len(bad) == 1 and (bad[0].line, bad[0].column) == (2, 15)
    assert "0xE9" in bad[0].message
    assert "BK104" in codes(report) or "BK105" in codes(report)  # blockId "x" still checked


def test_utf16_file_is_named() -> None:
    raw = '{"a": 1}'.encode("utf-16")
    assert codes(blockkit.validate(raw)) == ["BK005"]
    assert "UTF-16" in blockkit.validate(raw).findings[0].message


def test_binary_file() -> None:
    assert codes(blockkit.validate(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")) == ["BK007"]


def test_file_over_one_mib(write_manifest) -> None:
    path = write_manifest(b"{" + b" " * (1024 * 1024) + b"}")
    report = blockkit.validate_file(path)
    assert codes(report) == ["BK006"]
    just_under = write_manifest(b"{" + b" " * (1024 * 1024 - 2) + b"}", "b/block.manifest.json")
    assert "BK006" not in codes(blockkit.validate_file(just_under))


@pytest.mark.parametrize(("text", "kind"), [("[]", "a list"), ('"x"', "a string"), ("3", "a number"),
                                            ("null", "null"), ("true", "a boolean")])
def test_document_that_is_not_an_object(text: str, kind: str) -> None:
    finding = only(blockkit.validate(text))
    assert finding.code == "BK008" and kind in finding.message
    assert (finding.line, finding.column) == (1, 1)


def test_duplicate_keys_keep_last_value_and_warn(manifest) -> None:
    text = '{"version": "bad", "version": "1.0.0", "iframe": {"minHeight": 1, "minHeight": 400}}'
    report = blockkit.validate(text)
    dups = [f for f in report.findings if f.code == "BK009"]
    assert [(f.pointer, f.line, f.column) for f in dups] == [("/version", 1, 20), ("/iframe/minHeight", 1, 67)]
    assert all(f.severity == "warning" for f in dups)
    # the kept (last) values are valid, so neither the version pattern nor the height range fires
    assert "BK104" not in codes(report) and "BK107" not in codes(report)


@pytest.mark.parametrize("depth", [255, 256])
def test_nesting_at_the_limit_parses(depth: int) -> None:
    text = '{"payload": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"
    assert "BK004" not in codes(blockkit.validate(text))


@pytest.mark.parametrize("depth", [257, 5000, 100_000])
def test_nesting_past_the_limit_is_a_finding(depth: int) -> None:
    text = '{"payload": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"
    finding = only(blockkit.validate(text))
    assert finding.code == "BK004"
    # the first bracket of level 257 (the root object is level 1, at column 1; level k opens at column 11 + k)
    assert finding.line == 1 and finding.column == 11 + 257


def test_scanner_spans_match_keys_and_values() -> None:
    text = '{\n  "a": {"b~/c": [10, {"d": "x"}]},\n  "e": null\n}'
    spans = scan(text)
    assert spans.problem is None
    assert text[slice(*spans.values["/a/b~0~1c/1/d"])] == '"x"'
    assert text[slice(*spans.keys["/a/b~0~1c"])] == '"b~/c"'
    assert text[slice(*spans.values["/e"])] == "null"
    assert text[slice(*spans.values[""])] == text


def test_escaped_key_is_decoded_for_its_pointer() -> None:
    source = read_text('{"\\u0061b": 1}')
    assert source.span("/ab", "key") == (1, 10)


def test_positions_count_characters_not_bytes() -> None:
    source = read_bytes('{"name": "héllo 😀", "x": 1}'.encode())
    assert source.locate("/x", "key") == (1, 21, 1, 24)


def test_fast_scanner_agrees_with_the_strict_one(corpus) -> None:
    from blockkit.source import scan_valid

    samples = [p.read_text(encoding="utf-8", errors="replace") for p in corpus]
    samples += ['{"a": [1, [2, {"b": [], "c": {}}], "x\\\\\\"y"], "k\\u00e9": -1.5e3, "a": true}', "[]", '"s"', "0"]
    samples += ['{"a": {"x": 1, "x": 2}, "a": {"x": 3, "y": [{"z": 1}, {"z": 2, "z": 3}]}, "a/b": {"~": ""}}']
    for text in samples:
        start = 1 if text.startswith("\ufeff") else 0
        strict = scan(text, start)
        if strict.problem is not None:
            continue
        fast = scan_valid(text, start)
        assert fast.values == strict.values
        assert fast.keys == strict.keys
        assert fast.duplicates == strict.duplicates


def test_an_integer_literal_of_any_length_parses_as_javascript_reads_it() -> None:
    # Python refuses integers of more than 4300 digits; JSON.parse reads them as Infinity.
    for digits in ("9" * 400, "9" * 5000, "-" + "9" * 5000):
        source = read_text('{"n": ' + digits + ', "m": 12}')
        assert source.problems == [] and source.data["n"] == float(digits) and source.data["m"] == 12
    assert read_text('{"n": ' + "9" * 308 + "}").data["n"] == int("9" * 308)  # a finite double: exact


@pytest.mark.parametrize(("encoding", "name"), [("utf-16-be", "UTF-16"), ("utf-16-le", "UTF-16"), ("utf-32", "UTF-32"),
                                                ("utf-32-le", "UTF-32"), ("utf-32-be", "UTF-32")])
def test_wide_encodings_are_named_even_without_a_byte_order_mark(encoding: str, name: str) -> None:
    # Their NUL bytes used to make them "binary", and a UTF-32 BOM was called UTF-16.
    finding = only(blockkit.validate('{"a": 1}'.encode(encoding)))
    assert finding.code == "BK005" and f"file is {name} encoded" in finding.message


def test_a_lone_carriage_return_ends_a_line() -> None:
    # JSON allows CR as whitespace; editors show it as a line break, so positions count it as one.
    report = blockkit.validate('{\r"blockId": "X",\r\n"version": "1"\r}')
    located = {(f.code, f.pointer): (f.line, f.column, f.end_line, f.end_column) for f in report.findings}
    assert located[("BK104", "/blockId")] == (2, 12, 2, 15)
    assert located[("BK104", "/version")] == (3, 12, 3, 15)


def test_a_duplicate_key_with_an_invisible_character_is_shown_escaped() -> None:
    import blockkit

    report = blockkit.validate('{"a/b\u200b": 1, "a/b\u200b": 2}')
    messages = [f.message for f in report.findings if f.code == "BK009"]
    assert messages == ['duplicate key "a/b\\u200b" in the manifest; the platform keeps the last value']


# --- positions without copies of the parent's name (issue 14, row 2) ------------------------------


def test_a_long_key_over_many_values_is_stored_once() -> None:
    # Review row 2: every stored pointer repeated the parent key; a 120 KB file took 1 GB.
    import tracemalloc

    key = "k" * 20_000
    text = '{"blockId":"abc","' + key + '":[' + ",".join(["0"] * 5000) + "]}"
    source = read_text(text)
    tracemalloc.start()
    try:
        spans = source.spans
        report = blockkit.validate(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000  # the old pointer map: 5000 copies of the key, 100 MB
    names = [name for kids in spans.children.values() if isinstance(kids, dict) for name in kids]
    assert names.count(key) == 1 and len(spans.value_start) == 5003
    assert source.span("/" + key + "/4999") == (len(text) - 3, len(text) - 2)
    assert report.findings  # missing keys: positions were needed


def test_pointers_resolve_through_escapes_and_fall_back_to_the_nearest_ancestor() -> None:
    text = '{"a/b": {"~": [10, {"": "x"}]}, "c": {"d": 1}}'
    source = read_text(text)
    assert text[slice(*source.span("/a~1b/~0/1/"))] == '"x"'
    assert text[slice(*source.span("/a~1b/~0/01"))] == "["  # not an index as JSON Pointer writes it
    assert text[slice(*source.span("/c/missing/deeper"))] == "{"
    assert source.span("/c/d", "key") == (text.index('"d"'), text.index('"d"') + 3)
    assert source.spans.pointer(len(source.spans.value_start) - 1) == "/c/d"


def test_a_deep_check_looks_at_brackets_outside_strings_only() -> None:
    from blockkit.source import _deeper_than

    assert _deeper_than("[" * 257 + "]" * 257, 256) and not _deeper_than("[" * 256 + "]" * 256, 256)
    assert not _deeper_than('{"a": "[[[[[[", "b\\"[[[[": [[]]}', 3)
    # Many brackets, little depth: valid, and no strict rescan of the whole text.
    text = '{"x": [' + ",".join(["[]"] * 5000) + "]}"
    assert read_text(text).problems == [] and not _deeper_than(text, 256)


@pytest.mark.parametrize(("text", "size"), [("abc", 3), ("é" * 10, 20), ("😀", 4), ("\ud800", 3)])
def test_utf8_length_counts_what_a_file_would_hold(text: str, size: int) -> None:
    from blockkit.source import utf8_length

    assert utf8_length(text) == size


def test_long_digit_runs_are_found_wherever_they_lie() -> None:
    import random
    import re

    from blockkit.source import _DOUBLE_DIGITS_MAX, has_long_digit_run

    exact = re.compile(f"[0-9]{{{_DOUBLE_DIGITS_MAX}}}")
    rng = random.Random(14)
    for _ in range(3000):
        run = rng.choice([_DOUBLE_DIGITS_MAX - 1, _DOUBLE_DIGITS_MAX, _DOUBLE_DIGITS_MAX + 1, rng.randrange(1, 700)])
        before = "".join(rng.choice('a "1,') for _ in range(rng.randrange(0, 900)))
        after = "".join(rng.choice('b "2]') for _ in range(rng.randrange(0, 900)))
        text = before + "7" * run + after
        assert has_long_digit_run(text) == bool(exact.search(text)), (len(before), run)
    assert not has_long_digit_run("")
    assert has_long_digit_run("9" * _DOUBLE_DIGITS_MAX)
    assert not has_long_digit_run("9" * (_DOUBLE_DIGITS_MAX - 1))


def test_the_reused_parser_starts_afresh_for_every_text() -> None:
    import threading

    repeated = read_text('{"a": 1, "a": {"b": 2}}')
    assert repeated.has_duplicates and repeated.repeated_names is None  # a repeated name holds an object
    clean = read_text('{"a": 1, "b": [1, 2]}')
    assert not clean.has_duplicates and clean.repeated_names == 0
    assert read_text('{"x": 1, "x": 2, "y": 3, "y": 4}').repeated_names == 2
    assert read_text('{"a": 1}').repeated_names == 0
    read_text('{"a": 1, "a": ')  # a parse that fails half way leaves nothing behind either
    assert read_text('{"a": 1}').repeated_names == 0
    long_int = read_text('{"n": ' + "9" * 400 + ', "n": 1}')
    assert long_int.repeated_names == 1 and long_int.data == {"n": 1}
    assert read_text('{"n": ' + "9" * 400 + "}").data == {"n": float("inf")}

    results: list[bool] = []

    def parse(text: str, duplicates: bool) -> None:
        for _ in range(300):
            results.append(read_text(text).has_duplicates == duplicates)

    threads = [threading.Thread(target=parse, args=('{"a": 1, "a": 2}', True)),
               threading.Thread(target=parse, args=('{"a": 1, "b": 2}', False))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 600 and all(results)


# split_lines: the str.split shortcut (no CR, no ends) gives the lines of the regex reading.
import json  # noqa: E402

from hypothesis import example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@given(st.text(alphabet="a \n\r\u2028\u0085\x0b\x0c{}", max_size=40))
def test_split_lines_matches_the_regex_reading(text: str) -> None:
    from blockkit.source import _LINE_BREAK, _LINE_WITH_END, split_lines

    expected = [_LINE_BREAK.sub("", line) for line in _LINE_WITH_END.findall(text)]
    assert split_lines(text) == expected
    assert split_lines(text, keepends=True) == _LINE_WITH_END.findall(text)


@pytest.mark.parametrize("extra", [-1, 0, 1, 2])
def test_read_path_reads_the_whole_file_up_to_one_byte_past_the_limit(tmp_path, extra: int) -> None:
    """read_path sizes its read by the file (not the limit): sizes around the limit still read as
    before, and a file past it is BK006."""
    from blockkit.engine import read_path
    from blockkit.platform import LIMITS

    size = LIMITS.file_bytes_max + extra
    body = b'{"a": "' + b"x" * (size - 10) + b'"}'
    body = body + b" " * (size - len(body))
    path = tmp_path / "m.json"
    path.write_bytes(body)
    source = read_path(path)
    if extra > 0:
        assert [p[0] for p in source.problems] == ["BK006"]
    else:
        assert source.problems == [] and source.data == {"a": "x" * (size - 10)}


def test_read_path_reads_on_when_the_file_grew_after_fstat(tmp_path, monkeypatch) -> None:
    """A file that grows between fstat and the read is read whole, as one read of the limit would."""
    import os as os_module

    from blockkit import engine

    path = tmp_path / "m.json"
    path.write_bytes(b"[1]")
    real_fstat = os_module.fstat

    def stale_fstat(fd: int):
        status = real_fstat(fd)
        with open(path, "ab") as handle:  # the file grows just after fstat looked
            handle.write(b"   " * 100)
        return status

    monkeypatch.setattr(engine.os, "fstat", stale_fstat)
    source = engine.read_path(path)
    assert source.text == "[1]" + "   " * 100 and source.data == [1]


# The parser's count of repeated names (the object_pairs_hook of blockkit.source._parser), held to a
# reading of the same text that keeps every member: generated texts with and without repeats, at
# any depth, under repeated names too, with escapes and colons in names and values.
# "\\u0061" is "a" spelled otherwise, "\\u003a" is ":".
_dup_names = st.sampled_from(["a", "b", "a:b", "\\u0061", "\\u003a"]) | st.sampled_from([":", "\\\""])
_dup_scalars = st.sampled_from(['1', '-2.5e3', 'true', 'null', '"x"', '":"', '"a\\u003a"', '"{\\"a\\": 1}"'])


def _member_lists(children):
    return st.lists(st.tuples(_dup_names, children), max_size=6)


_dup_values = st.recursive(
    _dup_scalars,
    lambda children: _member_lists(children).map(lambda members: ("o", members))
    | st.lists(children, max_size=3).map(lambda items: ("a", items)),
    max_leaves=12,
)


def _json_text(value, space: str) -> str:
    if isinstance(value, str):
        return value
    kind, parts = value
    if kind == "a":
        return "[" + f",{space}".join(_json_text(item, space) for item in parts) + "]"
    return "{" + f",{space}".join(f'"{name}":{space}{_json_text(item, space)}' for name, item in parts) + "}"


def _reference_repeats(text: str) -> tuple[bool, int, bool]:
    """(seen, repeated, nested) from a parse that keeps each object's members as a list."""
    import json

    objects: list[list] = []

    def keep(pairs):
        objects.append(pairs)
        return pairs

    json.loads(text, object_pairs_hook=keep)
    seen, repeated, nested = False, 0, False
    for pairs in objects:
        names = [name for name, _ in pairs]
        again = {name for name in names if names.count(name) > 1}
        seen = seen or bool(again)
        repeated += len(again)
        nested = nested or any(isinstance(value, list) for name, value in pairs if name in again)
    return seen, repeated, nested


@settings(max_examples=150, deadline=None)
@example(("o", [("a", "1"), ("b", "1"), ("\\u0061", "2"), ("b", "2")]), "")
@given(_member_lists(_dup_values).map(lambda members: ("o", members)), st.sampled_from(["", " ", "\n  "]))
def test_repeated_names_are_counted_as_a_reading_that_keeps_them(document, space: str) -> None:
    import json

    text = _json_text(document, space)
    seen, repeated, nested = _reference_repeats(text)
    source = read_text(text)
    assert source.parsed and source.data == json.loads(text)
    assert source.has_duplicates == seen
    assert source.repeated_names == (None if nested else repeated)


@settings(max_examples=300, deadline=None)
@example(" \n{} \r\n")
@example("{} x")
@example("")
@example("\ufeff[1]")
@example('{"a": NaN}')
@given(st.text(alphabet=' \t\n\r{}[]:,"\\0123456789.eE+-atrufnlsNI\ufeff', max_size=30)
       | st.builds(lambda value, space: space + json.dumps(value) + space, st.recursive(
           st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
           lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3),
           max_leaves=10), st.sampled_from(["", " ", "\n\t"])))
def test_the_direct_scanner_call_reads_as_json_decode(text: str) -> None:
    """source._decode calls the C scanner itself; JSONDecoder.decode gives the same document or refuses."""
    import math

    from blockkit.source import _decode, _parser, _reject_constant

    for start in (0, 1) if text[:1] == "\ufeff" else (0,):
        try:
            expected = json.JSONDecoder(parse_constant=_reject_constant).decode(text[start:])
        except (ValueError, RecursionError):
            expected = ValueError
        try:
            got = _decode(_parser(False)[1], text, start)
        except (ValueError, RecursionError):
            got = ValueError
        if isinstance(expected, float) and math.isinf(expected):
            assert got == expected
        else:
            assert json.dumps(got, default=repr) == json.dumps(expected, default=repr), text

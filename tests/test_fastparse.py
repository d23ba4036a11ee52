"""blockkit.fastparse: orjson answers only where the json path would build the same document.

Every test compares a read through fastparse with a read through the json path alone
(``source._fast`` set to False), down to the report's findings and positions, and says
which of the two answered where that matters: a fallback the fast path relies on must be
taken, or the comparison could pass by luck.
"""

from __future__ import annotations

import importlib
import json
import math
import random
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import blockkit
from blockkit import fastparse, source
from blockkit.engine import ALL_LAYERS, check
from blockkit.platform import LIMITS
from tests.conftest import OWN_CORPUS, SHARED_CORPUS, corpus_files

REPO = Path(__file__).resolve().parents[1]


def _state(src: source.Source) -> tuple[Any, ...]:
    """Everything a Source carries out of the parse layer (repr tells 1 from 1.0 from True, -0.0 from 0.0)."""
    return (repr(src.data), src.problems, src.has_duplicates, src.repeated_names, src.parsed, src.has_document)


def _findings(src: source.Source) -> list[tuple[Any, ...]]:
    return [(f.code, f.message, f.pointer, f.line, f.column, f.end_line, f.end_column, f.hint)
            for f in check(src, layers=ALL_LAYERS).findings]


def _read(monkeypatch: pytest.MonkeyPatch, use_fast: bool, value: Any) -> source.Source:
    with monkeypatch.context() as patch:
        patch.setattr(source, "_fast", fastparse if use_fast else False)
        return source.read_bytes(value) if isinstance(value, bytes) else source.read_text(value)


def same(monkeypatch: pytest.MonkeyPatch, value: Any, findings: bool = True) -> None:
    """The fast path and the json path read ``value`` alike (and report it alike)."""
    fast, slow = _read(monkeypatch, True, value), _read(monkeypatch, False, value)
    assert _state(fast) == _state(slow)
    if findings:
        assert _findings(fast) == _findings(slow)


def answered(text: str) -> bool:
    """Whether fastparse itself answers for ``text`` (no fallback to the json path)."""
    return fastparse.parse(text.encode("utf-8", "surrogatepass")) is not fastparse.NOT_PARSED


# Texts orjson would read differently from the json path, or not at all: each must fall back.
FALLBACKS = {
    "u64 + 1": '{"n": 18446744073709551616}',  # orjson: a float
    "below i64": '{"n": -9223372036854775809}',  # orjson: a float
    "19 digits": '{"n": 9999999999999999999}',
    "digits in a string": '{"id": "12345678901234567890123"}',  # conservative: any run of 19
    "400 digits": '{"n": ' + "9" * 400 + "}",  # JSON.parse: Infinity (BK schema finding)
    "5000 digits": '{"n": ' + "1" * 5000 + "}",  # beyond Python's int limit
    "1e400": '{"n": 1e400}',  # orjson raises; the json path reads inf
    "-1e400": '{"n": -1e400}',
    "past max double": '{"n": 1.7976931348623159e308}',
    "lone high surrogate": '{"s": "\\ud800"}',  # orjson raises; json keeps it
    "lone low surrogate": '{"s": "x\\udc00y"}',
    "swapped surrogates": '{"s": "\\udc00\\ud800"}',
    "repeated name": '{"a": 1, "a": 2}',
    "repeated, three": '{"a": 1, "b": 2, "a": 3, "a": 4}',
    "repeated, nested": '{"o": {"b": 1, "b": {"c": [1]}}, "p": 2}',
    "repeated object": '{"x": {"k": ":"}, "x": {"k": ":"}}',
    "repeated in a list": '[{"a": 1}, {"a": 2, "a": 3}]',
    "repeated, escaped alike": '{"a": 1, "\\u0061": 2}',
    # A colon written as \u003a in a string the dump writes raw: it would make up for the
    # repeated member's colon, so the colon count must not be trusted where \u003 appears.
    "colon escape balancing a repeat": '{"a": 1, "a": 2, "s": "\\u003a"}',
    "colon escape, capital": '{"a": 1, "a": 2, "s": "\\u003A"}',
    "NaN": '{"n": NaN}',
    "Infinity": '{"n": Infinity}',
    "-Infinity": '{"n": -Infinity}',
    "trailing comma": '{"a": 1,}',
    "comment": '// c\n{"a": 1}',
    "control character": '{"a": "x\ty"}',
    "trailing data": '{"a": 1} x',
    "two documents": '{} {}',
    "form feed": '\x0c{"a": 1}',
    "no-break space": '\u00a0{}',
    "vertical tab": '\x0b{}',
    "unit separator after": '{}\x1f',
    "line separator": '\u2028{}',
    "zero-width no-break space inside": '{\ufeff}',
    "space inside a number": '{"n": - 1}',
    "plus exponent without digits": '{"n": 1e+}',
    "leading zero": '{"n": 01}',
    "empty": "",
    "only space": "  \n",
    "single quotes": "{'a': 1}",
    "deep": "[" * 300 + "]" * 300,
    "deep objects": '{"a":' * 300 + "1" + "}" * 300,
    "too deep for json": "[" * 1100 + "]" * 1100,
}

# Texts it answers for: the same document, no finding from the parse layer.
ANSWERS = {
    "object": '{"a": 1, "b": [true, false, null], "c": {"d": "e"}}',
    "-0": '{"n": -0}',
    "-0.0": '{"n": -0.0}',
    "exponents": '{"a": 1E5, "b": 1e+5, "c": 1e-5, "d": 0.1e1, "e": 1e01, "f": 1e-400}',
    "subnormal": '{"n": 4.9e-324, "m": 2.4703282292062328e-324, "h": 2.4703282292062327e-324}',
    "max double": '{"n": 1.7976931348623157e308, "m": 1.7976931348623158e308}',
    "odd exponents": "[0e400, 0.0e-99999, 1e-99999, 123e-400, -0e0, 1.5e308, -0.0e5, 1e-320, 5E-0]",
    "18 digits": '{"n": 999999999999999999, "m": -999999999999999999}',
    "2^53 + 1": '{"n": 9007199254740993, "f": 9007199254740993.0}',
    "escapes": '{"s": "\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\ud83d\\ude00 \\u0000"}',
    "escaped quote before colon": '{"s": "a\\":b", "t": "\\": "}',
    "colon in names and values": '{"a:b": "c:d", ":": ":", "u": "https://x.example:8080/"}',
    "value starting with a colon": '{"a": ":x", "b": " :y"}',
    "non-ASCII": '{"name": "caf\u00e9 \u2028 \U0001f600", "\u00e9": 1}',
    "spacing": ' \r\n\t{ "a" : 1 ,\r\n"b"\t:\n[ ] , "c" :{ } }\n\n',
    "top-level list": "[1, 2]",
    "top-level string": '"x"',
    "top-level number": "12",
    "null": "null",
    "100 deep": "[" * 100 + "]" * 100,
    "DEL": '{"a": "\x7f"}',
}


@pytest.mark.parametrize("name", sorted(FALLBACKS))
def test_what_orjson_could_read_differently_falls_back(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    text = FALLBACKS[name]
    assert not answered(text)
    same(monkeypatch, text)


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_orjson_answers_alike(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    text = ANSWERS[name]
    assert answered(text)
    same(monkeypatch, text)


@pytest.mark.parametrize("raw", [
    b'\xef\xbb\xbf{"a": 1}',  # byte order mark
    b'{"a": "\xff"}',  # invalid UTF-8
    b'{"a": "\xed\xa0\x80"}',  # an encoded surrogate (invalid UTF-8)
    b'{"a": 1}\x00',  # NUL
    b'\xff\xfe{\x00}\x00',  # UTF-16
    b'{"a": 1, "a": 2}',
    b'{"n": 18446744073709551616}',
    b'{"a": "\xc3\xa9"}',
])
def test_bytes_alike(monkeypatch: pytest.MonkeyPatch, raw: bytes) -> None:
    same(monkeypatch, raw)


def test_a_text_with_a_lone_surrogate_character_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    # A str (not bytes) may hold a surrogate that UTF-8 cannot encode: orjson never sees it.
    same(monkeypatch, '{"s": "\ud800"}')


def test_orjson_dumps_bounds_the_depth() -> None:
    """fastparse skips the depth check because orjson.dumps refuses documents deeper than the
    limit; if a future orjson writes them, the depth check runs (next test)."""
    assert fastparse._dump_bounds_depth() is fastparse._DEPTH_BOUNDED
    deep: Any = []
    for _ in range(LIMITS.nesting_max):
        deep = [deep]
    if fastparse._DEPTH_BOUNDED:
        with pytest.raises(orjson.JSONEncodeError):
            orjson.dumps(deep)


@pytest.mark.parametrize("depth", [250, 254, 255, 256, 257, 258])
def test_near_the_depth_limit_alike(monkeypatch: pytest.MonkeyPatch, depth: int) -> None:
    # Whether orjson answers here depends on its version (3.8 writes 255 levels, 3.13 fewer);
    # past LIMITS.nesting_max it must not.
    for text in ("[" * depth + "]" * depth, '{"a":' * depth + "1" + "}" * depth):
        if depth > LIMITS.nesting_max:
            assert not answered(text)
        same(monkeypatch, text)


class _Unbounded:
    """orjson, but with a dumps that writes any depth (as json does)."""

    JSONDecodeError = orjson.JSONDecodeError
    JSONEncodeError = orjson.JSONEncodeError
    loads = staticmethod(orjson.loads)

    @staticmethod
    def dumps(data: Any) -> bytes:
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()


@pytest.mark.parametrize("depth", [255, 256, 257, 300])
def test_without_orjsons_depth_bound_the_brackets_are_counted(monkeypatch: pytest.MonkeyPatch, depth: int) -> None:
    monkeypatch.setattr(fastparse, "orjson", _Unbounded)
    monkeypatch.setattr(fastparse, "_DEPTH_BOUNDED", fastparse._dump_bounds_depth())
    assert fastparse._DEPTH_BOUNDED is False
    for text in ("[" * depth + "]" * depth, '{"a":' * depth + "1" + "}" * depth):
        assert answered(text) is (depth <= LIMITS.nesting_max)
        same(monkeypatch, text)


def _corpus() -> list[Path]:
    return corpus_files(OWN_CORPUS) + corpus_files(SHARED_CORPUS) + sorted(REPO.glob("tests/**/*.json"))


def test_every_corpus_and_test_file_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _corpus()
    assert len(paths) > 40
    fast = 0
    for path in paths:
        raw = path.read_bytes()
        same(monkeypatch, raw)
        fast += fastparse.parse(raw) is not fastparse.NOT_PARSED
    assert fast > len(paths) // 2  # the comparison is mostly of orjson's documents


def test_a_repeated_member_put_into_each_corpus_manifest_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    tried = 0
    for path in _corpus():
        text = path.read_bytes().decode("utf-8", "replace")
        try:
            document = json.loads(text)
        except ValueError:
            continue
        if not isinstance(document, dict) or not document:
            continue
        # The first member written again at the end, and once more with its value emptied.
        first = next(iter(document))
        for value in (document[first], None):
            body = json.dumps(document, indent=2)
            repeated = body[:-2] + f',\n  {json.dumps(first)}: {json.dumps(value)}\n}}'
            assert not answered(repeated)
            same(monkeypatch, repeated)
            tried += 1
    assert tried > 40


def test_floats_round_as_the_json_path_does() -> None:
    rnd = random.Random(13)
    for _ in range(20000):
        x = struct.unpack("<d", rnd.getrandbits(64).to_bytes(8, "little"))[0]
        if not math.isfinite(x):
            continue
        digits = "".join(rnd.choice("0123456789") for _ in range(rnd.randint(1, 30)))
        for literal in (repr(x), f"{rnd.randint(0, 9)}.{digits}e{rnd.randint(-340, 320)}", f"-0.{digits}"):
            data = fastparse.parse(f"[{literal}]".encode())
            if data is fastparse.NOT_PARSED:  # beyond the doubles, or 19 digits in a row
                continue
            assert struct.pack("<d", data[0]) == struct.pack("<d", float(literal)), literal


def test_the_switch_to_orjson(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process reads with the json path until FAST_PARSE_AFTER reads (orjson's import costs
    more than a few reads save), then with fastparse; at once when orjson is imported anyway."""
    monkeypatch.setattr(source, "FAST_PARSE_AFTER", 3)
    monkeypatch.setattr(source, "_fast", None)
    monkeypatch.setattr(source, "_reads", 0)
    monkeypatch.delitem(sys.modules, "orjson")  # fastparse holds its own reference
    assert [source._fast_parser() for _ in range(3)] == [None, None, fastparse]
    assert source._fast_parser() is fastparse
    monkeypatch.setattr(source, "_fast", None)
    monkeypatch.setattr(source, "_reads", 0)
    monkeypatch.setitem(sys.modules, "orjson", orjson)
    assert source._fast_parser() is fastparse


def test_an_orjson_that_does_not_bound_its_recursion_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before 3.9.15 orjson.loads overflowed the native stack on deep nesting (a crash, not an
    exception), and dumps was unsafe until 3.11.6: with such an orjson, fastparse does not
    import and every text goes through the json path."""
    assert fastparse._recent_enough(fastparse.ORJSON_MIN)
    assert fastparse._recent_enough("3.13.0") and fastparse._recent_enough(orjson.__version__)
    for old in ("3.8.3", "3.9.14", "3.11.5", "", "unknown"):
        assert not fastparse._recent_enough(old), old
    monkeypatch.setattr(orjson, "__version__", "3.8.3")
    monkeypatch.delitem(sys.modules, "blockkit.fastparse")
    monkeypatch.delattr(blockkit, "fastparse")  # as in a process that never imported it
    with pytest.raises(ImportError, match=r"orjson 3\.8\.3 can overflow the stack.*needs orjson >= 3\.11\.6"):
        importlib.import_module("blockkit.fastparse")
    monkeypatch.setattr(source, "_fast", None)
    monkeypatch.setattr(source, "_reads", source.FAST_PARSE_AFTER)
    assert source._fast_parser() is None and source._fast is False
    assert [f.code for f in check(source.read_text("[" * 300 + "]" * 300)).findings] == ["BK004"]


def test_deep_nesting_in_a_process_that_uses_orjson_is_bk004_not_a_crash() -> None:
    """With orjson imported first, blockkit parses with it at once; half a megabyte of brackets
    (within the 1 MiB file limit) crashed the whole process with orjson 3.8 (SIGSEGV)."""
    code = ("import orjson, blockkit, blockkit.source as s\n"
            "r = blockkit.validate('[' * 300000 + ']' * 300000)\n"
            "print(' '.join(f.code for f in r.files[0].findings), s._fast is not None)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout.split() == ["BK004", "True"]


# JSON-like texts with repeated names, long digit runs, escapes and odd spacing, valid or not.
_NAMES = st.sampled_from(["a", "b", "a:b", "\\u0061", "\\u003a", "\\\"", ":", "\u00e9"])
_SCALARS = st.sampled_from(["1", "-0", "0.5e3", "1e400", "18446744073709551616", "9" * 19, "true", "null",
                            '"x"', '":"', '"\\":"', '"\\u003a"', '"\\ud800"', "NaN", '"t\\u003A"', "-1.0E-2"])
_SPACE = st.sampled_from(["", " ", "\n", "\r\n\t", "\x0c"])


@st.composite
def _json_like(draw: Any, depth: int = 0) -> str:
    if depth > 3 or draw(st.booleans()):
        return draw(_SCALARS)
    if draw(st.booleans()):
        items = draw(st.lists(_json_like(depth + 1), max_size=4))  # type: ignore[call-arg]
        return "[" + draw(_SPACE) + ",".join(items) + "]"
    members = draw(st.lists(st.tuples(_NAMES, _json_like(depth + 1)), max_size=4))  # type: ignore[call-arg]
    return "{" + ",".join(f'"{name}"{draw(_SPACE)}:{draw(_SPACE)}{value}' for name, value in members) + "}"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_json_like(), before=_SPACE, after=_SPACE)
def test_generated_texts_alike(monkeypatch: pytest.MonkeyPatch, text: str, before: str, after: str) -> None:
    same(monkeypatch, before + text + after)


def test_long_digit_runs_are_found_wherever_they_fall() -> None:
    """The search looks at every 9th byte first: a run of 19 is found at every offset, 18 never."""
    for offset in range(20):
        for length, found in ((18, False), (19, True), (25, True)):
            raw = b"x" * offset + b"7" * length + b"y" * 30
            assert fastparse._long_digit_run(raw) is found, (offset, length)
            assert fastparse._long_digit_run(b"1 2 3 4 5 6 7 8 9 " + raw) is found, (offset, length)
    # two digits 9 bytes apart, in no run of 19: looked at closely, not found
    assert not fastparse._long_digit_run(b"2026-11-24T02:50:00Z " * 20)


@pytest.mark.parametrize("raw", [
    b"", b"{", b"\xfe", b"\xff", b"\xfe\xff\x00{", b"\xff\xfe{\x00", b"\xff\xfe\x00\x00{\x00\x00\x00",
    b"\x00\x00\xfe\xff", b"\x00\x00\x00{", b"{\x00\x00\x00", b"\x00{\x00}", b"{\x00}\x00", b"\xff{}", b"\xfe{}",
    b"{}" + b" " * 9000 + b"\x00", b"{}\x00", b"\xef\xbb\xbf{}",
])
def test_encodings_and_binary_files_are_told_apart_as_before(raw: bytes) -> None:
    """read_bytes asks _wide_encoding only when a NUL or an FE/FF first byte makes it possible."""
    expected: Any = None
    wide = source._wide_encoding(raw)
    if wide is not None:
        expected = "BK005"
    elif raw.find(b"\x00", 0, 8192) >= 0:
        expected = "BK007"
    problems = source.read_bytes(raw).problems
    if expected is None:
        assert not [p for p in problems if p[0] in ("BK005", "BK007") and p[1].startswith(("file is", "binary"))]
    else:
        assert problems[0][0] == expected and len(problems) == 1

"""blockkit's 1-based character columns <-> LSP's 0-based code-unit positions."""

from __future__ import annotations

import pytest

from blockkit.lsp.positions import UTF8, UTF16, UTF32, LineIndex
from blockkit.source import read_text


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


@pytest.mark.parametrize("text", [
    '{"name": "😀 x", "tagline": "a😀😀b"}\n',
    '{\r\n  "name": "é😀",\r  "x": 1\n}',
    '{"name": "a\u2028b😀", "k": 1}',  # U+2028 is no line break in LSP (nor in JSON text)
])
def test_every_offset_round_trips(text: str) -> None:
    index = LineIndex(text, UTF16)
    for offset in range(len(text) + 1):
        if text[offset - 1:offset + 1] == "\r\n":
            continue  # between the CR and LF of one line break: no position
        line, unit = index.position(offset)
        # the UTF-16 column is the prefix of the line measured in UTF-16 units
        assert unit == _utf16(text[index.starts[line]:offset])
        assert index.offset(line, unit) == offset


def test_astral_character_counts_two_units_in_utf16_four_in_utf8_one_in_utf32() -> None:
    text = '{"a": "😀b"}'
    at_b = text.index("b")
    assert LineIndex(text, UTF16).position(at_b) == (0, at_b + 1)
    assert LineIndex(text, UTF8).position(at_b) == (0, at_b + 3)
    assert LineIndex(text, UTF32).position(at_b) == (0, at_b)


def test_inside_a_surrogate_pair_means_the_character_start() -> None:
    text = "😀x"
    assert LineIndex(text, UTF16).offset(0, 1) == 0
    assert LineIndex(text, UTF16).offset(0, 2) == 1


def test_past_the_end_of_a_line_means_its_end_and_past_the_last_line_the_end_of_the_text() -> None:
    text = "ab\r\ncd"
    index = LineIndex(text)
    assert index.offset(0, 99) == 2
    assert index.offset(7, 0) == len(text)


def test_finding_columns_convert_as_the_engine_counts_them() -> None:
    text = '{\r\n "tagline": "😀😀", "x": "é😀y"\r}'
    source = read_text(text)
    index = LineIndex(text)
    for pointer in ("/tagline", "/x"):
        start, end = source.span(pointer)
        line, column, end_line, end_column = source.positions(start, end)
        assert index.from_column(line, column) == index.position(start)
        assert index.from_column(end_line, end_column) == index.position(end)

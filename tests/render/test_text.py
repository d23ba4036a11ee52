"""The text renderer: snippets quote the line the position names."""

from __future__ import annotations

import pytest

from blockkit.engine import check
from blockkit.render.text import render_file
from blockkit.source import read_text, split_lines


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\u0085"])  # JSON allows these raw in strings
def test_a_raw_separator_inside_a_string_does_not_shift_the_snippet(separator: str) -> None:
    text = f'{{\n  "name": "a{separator}b",\n  "version": "1.0"\n}}\n'
    report = check(read_text(text, "m.json"))
    version = next(f for f in report.findings if f.pointer == "/version")
    assert (version.line, version.column) == (3, 14)
    rendered = "\n".join(render_file(report))
    assert '3 |   "version": "1.0"' in rendered


def test_split_lines_breaks_where_positions_do() -> None:
    assert split_lines("a\r\nb\rc\nd\u2028e") == ["a", "b", "c", "d\u2028e"]
    assert split_lines("a\r\nb\n", keepends=True) == ["a\r\n", "b\n"]
    assert split_lines("") == []

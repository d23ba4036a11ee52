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


# --- control characters (issue 14, row 7) -------------------------------------------------------

_RAW_CONTROLS = [chr(c) for c in (*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F, 0x9B, 0x9D)]


def _assert_inert(output: str) -> None:
    assert not any(ch in output for ch in _RAW_CONTROLS), repr(output)
    assert not any(line.startswith("::") for line in output.splitlines()), output


def test_a_path_with_a_line_feed_and_escapes_is_printed_escaped() -> None:
    report = check(read_text('{"a": 1}', "dir\n::error::PWN\x1b[31m\x1b]0;TITLE\x07/block.manifest.json"))
    output = "\n".join(render_file(report))
    _assert_inert(output)
    assert output.startswith("dir\\u000a::error::PWN\\u001b[31m\\u001b]0;TITLE\\u0007/block.manifest.json:1:1:")


def test_a_repeated_key_with_control_characters_is_quoted_escaped() -> None:
    text = '{"\\n::error::PWN\\u001b[31m": {"a": 1, "a": 2}}'
    report = check(read_text(text, "m.json"))
    output = "\n".join(render_file(report))
    _assert_inert(output)
    assert 'duplicate key "a" in ["\\n::error::PWN\\u001b[31m"]' in output


def test_a_snippet_shows_control_characters_as_pictures_and_keeps_the_carets_aligned() -> None:
    # An invalid file: the snippet is the raw line, with an OSC title and a clear-screen sequence.
    text = '{"a": "\x1b]0;TITLE\x07\x1b[2J", "b": x}'
    report = check(read_text(text, "m.json"))
    lines = render_file(report)
    _assert_inert("\n".join(lines))
    at = next(i for i, line in enumerate(lines) if line.startswith("1 | "))
    snippet, carets = lines[at], lines[at + 1]
    assert snippet == '1 | {"a": "\u241b]0;TITLE\u2407\u241b[2J", "b": x}'
    # BK002 points at the raw ESC (a control character inside a string): the caret is under its picture.
    assert report.findings[0].code == "BK002" and report.findings[0].column == 8
    assert snippet[carets.index("^")] == "\u241b"


def test_a_long_line_is_cut_before_it_is_escaped() -> None:
    # A 1 MB line and 100 findings: the window is cut first, so rendering stays cheap.
    text = '{"scopes": [' + ",".join(['"x\\u001b"'] * 120) + "]" + " " * 500_000 + "}"
    report = check(read_text(text, "m.json"))
    lines = render_file(report)
    _assert_inert("\n".join(lines))
    assert max(map(len, lines)) < 400


def test_the_report_joined_from_file_blocks_is_the_report_line_by_line() -> None:
    from blockkit.render.text import file_block, join_blocks, render, summary_line
    from blockkit.report import Report

    texts = ['{"blockId": 5,\n "version": "x"}', "{}", '{"a": 1', "[]"]
    report = Report(files=[check(read_text(text, f"m{i}.json")) for i, text in enumerate(texts)])
    report.files.append(check(read_text('{"blockId": "ok"}', "clean.json")))
    report.files[-1].findings.clear()  # a file without findings writes no lines at all
    for color in (False, True):
        lines = [line for file in report.files for line in render_file(file, color=color)]
        expected = "\n".join([*lines, summary_line(report)]) + "\n"
        blocks = [file_block(file, color=color) for file in report.files]
        assert blocks[-1] == ""
        assert all(block.endswith("\n") for block in blocks[:-1])
        assert join_blocks(blocks, summary_line(report)) == render(report, color=color) == expected


@pytest.mark.parametrize("strict", [False, True])
def test_a_tally_of_counts_says_what_the_summary_of_the_reports_says(strict: bool) -> None:
    from blockkit.render.text import Tally, severity_counts, summary_line
    from blockkit.report import Finding, Report

    def finding(severity: str) -> Finding:
        return Finding("BK999", severity, "lint", "m", "", 1, 1, 1, 2)  # type: ignore[arg-type]

    mixes = [[], ["error"], ["warning"], ["info"], ["error", "warning", "warning"], ["info", "info", "warning"]]
    for chosen in ([0], [0, 0], [3], [2], [2, 3], [1, 2, 3, 4, 5], list(range(6)) * 3):
        report = Report(strict=strict)
        for i in chosen:
            report.files.append(check(read_text("{}", f"m{i}.json")))
            report.files[-1].findings[:] = [finding(severity) for severity in mixes[i]]
        tally = Tally(strict)
        for file in report.files:
            tally.add(*severity_counts(file))
        assert tally.line() == summary_line(report)
        assert (1 if tally.failing else 0) == report.exit_code

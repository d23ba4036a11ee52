"""What the block controls reaches the terminal escaped (review rows 17 and 45, issue 14 row 13)."""

from __future__ import annotations

import pytest

from blockkit.dev.check import READY, CheckResult, ConsoleError
from blockkit.dev.terminal import LINE_LIMIT, printable
from blockkit.dev.verdict import render_text


@pytest.mark.parametrize(
    "raw, shown",
    [
        ("\x1b]0;PWNED\x07", "\\x1b]0;PWNED\\x07"),  # OSC: retitles the window
        ("\x1b[2J", "\\x1b[2J"),  # CSI: clears the screen
        ("\x9b2J", "\\x9b2J"),  # the one-byte C1 CSI
        ("a\nb\r\tc\x7f", "a\\x0ab\\x0d\\x09c\\x7f"),
        ("x\u2028y\u2029z", "x\\u2028y\\u2029z"),  # line and paragraph separators
        ("\u202egnp.exe", "\\u202egnp.exe"),  # a bidi override that reverses what follows
        ("lone \ud800", "lone \\ud800"),
        ("café 🎉 ok", "café 🎉 ok"),
    ],
)
def test_printable(raw: str, shown: str) -> None:
    assert printable(raw) == shown


def test_a_long_text_is_cut_and_says_so() -> None:
    shown = printable("\x1b" + "a" * (LINE_LIMIT * 5))
    assert len(shown) < LINE_LIMIT + 60 and shown.endswith(f"... ({LINE_LIMIT * 4 + 1} more characters)")


def test_the_text_verdict_escapes_what_the_block_sent() -> None:
    hostile = "\x1b]0;PWNED\x07\n::error::PWN"
    result = CheckResult(
        block_id="b\x1b[31m",
        surface="page",
        outcome=READY,
        handshake_ms=5.0,
        attempts=1,
        sent_types=[hostile],
        violations=[{"kind": "unknown-type", "type": hostile, "explanation": f"the host knows no message {hostile}"}],
        console_errors=[ConsoleError("block", hostile)],
    )
    text = render_text(result)
    assert "\x1b" not in text and "\x07" not in text
    assert not any(line.startswith("::") for line in text.splitlines())
    assert len(text.splitlines()) == 5  # verdict, two headings, one violation, one console error

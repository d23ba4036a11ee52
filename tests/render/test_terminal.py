"""render.terminal: what reaches a terminal or a CI log is escaped, on the fast path too."""

from __future__ import annotations

import sys

from blockkit.render.terminal import _UNSAFE, visible, visible_line


def test_every_unsafe_character_is_unprintable() -> None:
    # visible() returns printable text unchanged without running its regex: that is exact only
    # while no character the regex escapes counts as printable.
    assert [hex(code) for code in range(sys.maxunicode + 1)
            if _UNSAFE.match(chr(code)) and chr(code).isprintable()] == []


def test_unprintable_but_safe_text_is_left_as_it_is() -> None:
    # U+00AD (soft hyphen) and U+200B are unprintable yet safe: the regex path keeps them.
    assert visible("a\u00adb\u200bc") == "a\u00adb\u200bc"
    assert visible_line("a\u00adb") == "a\u00adb"


def test_escapes_and_pictures() -> None:
    assert visible("x\x1b[2J\n::error::y\u202e") == "x\\u001b[2J\\u000a::error::y\\u202e"
    assert visible_line("a\tb\x1b") == "a\u2409b\u241b"
    assert visible("plain text, ünïcode ✓") == "plain text, ünïcode ✓"

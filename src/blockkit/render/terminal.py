"""Text that a terminal or a CI log shows as text, whatever the manifest or its path holds.

A path, a key or a source line can hold control characters: ESC starts terminal
escape sequences (CSI colours, OSC window titles and hyperlinks), and a line feed
starts a fresh log line, which GitHub Actions reads as a workflow command
(``::error::...``) when it begins with ``::``. Everything blockkit prints as plain
text goes through one of these two functions, so none of that reaches the reader raw.
"""

from __future__ import annotations

import re

# C0 controls (TAB included: it is expanded or escaped, never printed raw), DEL, C1 controls,
# the Unicode line and paragraph separators, and the bidirectional controls that reorder what
# follows them on screen (the "Trojan Source" characters).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def visible(text: str) -> str:
    """``text`` with every unsafe character written as a JSON-style escape (``\\u001b``)."""
    if text.isprintable():  # every unsafe character is unprintable: most text is done at C speed
        return text
    return _UNSAFE.sub(_escape, text)


def _picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # the Control Pictures block: U+241B for ESC
    if code == 0x7F:
        return "\u2421"
    return "\ufffd"


def visible_line(line: str) -> str:
    """A source line for a snippet: every unsafe character replaced by one visible character
    (its control picture, such as U+241B for ESC), so the carets below stay aligned."""
    if line.isprintable():
        return line
    return _UNSAFE.sub(_picture, line)

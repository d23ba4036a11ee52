"""Text from a block, made safe to print in the developer's terminal.

Message types, console errors and manifest strings come from the block, and a
block is anyone's code. Printed raw, an ESC starts a terminal control sequence
(OSC retitles the window or writes the clipboard on some terminals, CSI clears
the screen), and a newline starts a fresh line that CI reads as a workflow
command (``::error::``). So every character Python does not call printable
(controls, ESC, DEL, C1, line and paragraph separators, bidi and other format
characters, lone surrogates) is written as an escape, and a long text is cut.
"""

from __future__ import annotations

# Far more than any real message type or explanation needs; a block that posts a
# 1 MB type still prints one readable line.
LINE_LIMIT = 2000


def printable(text: str, limit: int = LINE_LIMIT) -> str:
    """``text`` on one line with nothing a terminal would act on: escapes instead, cut at ``limit``."""
    if len(text) > limit:
        text = text[:limit] + f"... ({len(text) - limit} more characters)"
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else _escape(ch) for ch in text)


def _escape(ch: str) -> str:
    code = ord(ch)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"

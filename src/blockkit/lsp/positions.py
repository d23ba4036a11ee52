"""Character offsets in a text <-> LSP positions.

blockkit counts columns in characters (code points) and breaks lines at LF, CRLF and a lone
CR (``blockkit.source.split_lines``); LSP counts in the negotiated encoding's code units
(UTF-16 unless the client offers another) and breaks lines at the same three. An astral
character (an emoji, say) is one character, two UTF-16 units and four UTF-8 bytes.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Callable

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"
_BREAK = re.compile(r"\r\n?|\n")


def _utf16_units(text: str) -> int:
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF) if not text.isascii() else len(text)


def _utf8_units(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass")) if not text.isascii() else len(text)


_UNITS: dict[str, Callable[[str], int]] = {UTF16: _utf16_units, UTF8: _utf8_units, UTF32: len}


class LineIndex:
    """The line starts of one text, and conversions between offsets and (line, unit) positions."""

    __slots__ = ("text", "starts", "encoding", "_units")

    def __init__(self, text: str, encoding: str = UTF16) -> None:
        self.text = text
        starts = [0]
        if "\r" in text:
            starts.extend(m.end() for m in _BREAK.finditer(text))
        else:
            find = text.find
            i = find("\n")
            while i != -1:
                starts.append(i + 1)
                i = find("\n", i + 1)
        self.starts = starts
        self.encoding = encoding if encoding in _UNITS else UTF16
        self._units = _UNITS[self.encoding]

    def _line_end(self, line: int) -> int:
        """Offset just past the last character of ``line`` (its line break excluded)."""
        if line + 1 < len(self.starts):
            end = self.starts[line + 1]
            while end > self.starts[line] and self.text[end - 1] in "\r\n":
                end -= 1
            return end
        return len(self.text)

    def position(self, offset: int) -> tuple[int, int]:
        """0-based (line, code unit) of a character offset (clamped to the text)."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        return line, self._units(self.text[start:offset])

    def offset(self, line: int, units: int) -> int:
        """The character offset of a 0-based (line, code unit) position; past the end of a line
        means its end (as LSP says), a line past the last means the end of the text; a
        position inside a character (half a surrogate pair) means that character's start."""
        if line < 0:
            return 0
        if line >= len(self.starts):
            return len(self.text)
        start, end = self.starts[line], self._line_end(line)
        if units <= 0:
            return start
        segment = self.text[start:end]
        if self.encoding == UTF32 or segment.isascii():
            return start + min(units, len(segment))
        count = 0
        for index, ch in enumerate(segment):
            width = self._units(ch)
            if count + width > units:
                return start + index
            count += width
        return end

    def from_column(self, line: int, column: int) -> tuple[int, int]:
        """A blockkit 1-based (line, character column) as a 0-based LSP (line, unit) position."""
        line0 = max(line - 1, 0)
        if line0 >= len(self.starts):
            return self.position(len(self.text))
        return self.position(min(self.starts[line0] + max(column - 1, 0), self._line_end(line0)))

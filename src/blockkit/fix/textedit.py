"""Surgical edits to JSON text, located by the parser's spans.

A fix never re-serialises the document: it replaces, removes or inserts the
few characters it must, so every other byte (key order, indentation, line
endings, the final newline or its absence) stays exactly as the user wrote it.
JSON allows only whitespace between tokens, so the separators next to a
member can be found by skipping whitespace from its span.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any, Iterable, Optional

from blockkit.jsstr import escape_lone_surrogates
from blockkit.report import Edit
from blockkit.source import Source

_JSON_WS = " \t\r\n"
_LEADING_WS = re.compile(r"^([ \t]+)\S", re.MULTILINE)


class JsonText:
    """A parsed manifest's text with the operations fixes need, each returning an Edit."""

    def __init__(self, source: Source) -> None:
        if source.text is None:
            raise ValueError("no text to edit")
        self.source = source
        self.text = source.text
        self.spans = source.spans
        self.newline = "\r\n" if "\r\n" in self.text else "\n"
        self.indent_unit = detect_indent(self.text)

    # --- looking around --------------------------------------------------------

    def value_span(self, pointer: str) -> Optional[tuple[int, int]]:
        return self.spans.values.get(pointer)

    def key_span(self, pointer: str) -> Optional[tuple[int, int]]:
        return self.spans.keys.get(pointer)

    def _back(self, pos: int) -> int:
        """Index of the last non-whitespace character before ``pos`` (-1 if none)."""
        i = pos - 1
        while i >= 0 and self.text[i] in _JSON_WS:
            i -= 1
        return i

    def _fwd(self, pos: int) -> int:
        """Index of the first non-whitespace character at or after ``pos``."""
        i, n = pos, len(self.text)
        while i < n and self.text[i] in _JSON_WS:
            i += 1
        return i

    def line_indent(self, pos: int) -> str:
        start = self.text.rfind("\n", 0, pos) + 1
        end = start
        while end < len(self.text) and self.text[end] in " \t":
            end += 1
        return self.text[start:end]

    # --- edits -------------------------------------------------------------------

    def replace_value(self, pointer: str, value: Any) -> Optional[Edit]:
        span = self.value_span(pointer)
        if span is None:
            return None
        raw = self.text[span[0]:span[1]]
        return Edit(span[0], span[1], dump_scalar(value, ascii_only=raw.isascii()))

    def remove(self, pointer: str) -> Optional[Edit]:
        """Remove an object member (key and value) or an array item, with exactly one separator."""
        span = self.value_span(pointer)
        if span is None:
            return None
        key = self.key_span(pointer)
        start = key[0] if key is not None else span[0]
        end = span[1]
        before = self._back(start)
        if before < 0:
            return None  # the root value itself: nothing to remove it from
        if self.text[before] == ",":
            # Not the first: take the comma before it, so a following member keeps its own.
            return Edit(self._back(before) + 1, end, "")
        opener = self.text[before]
        closer = {"{": "}", "[": "]"}.get(opener)
        after = self._fwd(end)
        if closer is None or after >= len(self.text):
            return None
        if self.text[after] == ",":
            # The first of several: remove up to where the next one starts.
            return Edit(start, self._fwd(after + 1), "")
        if self.text[after] == closer:
            # The only one: leave an empty container.
            return Edit(before + 1, after, "")
        return None

    def insert_first(self, pointer: str, key: str, value: Any) -> Optional[Edit]:
        """Insert ``"key": value`` as the first member of the object at ``pointer``."""
        span = self.value_span(pointer)
        if span is None or self.text[span[0]] != "{":
            return None
        first = self._fwd(span[0] + 1)
        if self.text[first] == "}":
            return self._fill_empty(span, [(key, value)])
        lead = self.text[span[0] + 1:first]
        inline = self._inline_gap(pointer)
        member = self._member(key, value, self._colon(pointer), lead, inline)
        return Edit(first, first, member + "," + (lead if "\n" in lead else inline))

    def insert_last(self, pointer: str, members: Iterable[tuple[str, Any]]) -> Optional[Edit]:
        """Append members to the object at ``pointer``, indented like its last member."""
        members = list(members)
        span = self.value_span(pointer)
        if not members or span is None or self.text[span[0]] != "{":
            return None
        closing = span[1] - 1
        last_end = self._back(closing)
        if last_end == span[0]:
            return self._fill_empty(span, members)
        last_key = self._last_key_start(pointer, last_end + 1)
        if last_key is None:
            return None
        lead = self.text[self._back(last_key) + 1:last_key]
        colon = self._colon(pointer)
        inline = self._inline_gap(pointer)
        gap = lead if "\n" in lead else inline
        added = "".join("," + gap + self._member(k, v, colon, lead, inline) for k, v in members)
        return Edit(last_end + 1, last_end + 1, added)

    # --- helpers -----------------------------------------------------------------------

    def _members(self, pointer: str) -> list[tuple[int, int, int]]:
        """(key start, key end, value start) of the object's members that the spans know, in order."""
        return self.spans.members(pointer)

    def _last_key_start(self, pointer: str, last_value_end: int) -> Optional[int]:
        for ks, _, vs in reversed(self._members(pointer)):
            if vs < last_value_end:
                return ks
        return None

    def _colon(self, pointer: str) -> str:
        """The key-value separator this file uses (": " by default)."""
        for parent in (pointer, ""):
            members = self._members(parent)
            if members:
                _, ke, vs = members[0]
                return self.text[ke:vs]
        return ": "

    def _member(self, key: str, value: Any, colon: str, lead: str, gap: str) -> str:
        """``"key": value`` written in the style of the members around it (``lead`` precedes them).

        ``gap`` is what follows a comma when members share a line.
        """
        indent = lead.rsplit("\n", 1)[1] if "\n" in lead else None
        return json.dumps(key, ensure_ascii=False) + colon + self._value(value, colon, indent, gap)

    def _value(self, value: Any, colon: str, indent: Optional[str], gap: str) -> str:
        if isinstance(value, list):
            # Lists only ever come from a fixer's defaults: always written on one line.
            return "[" + ("," + gap).join(self._value(v, colon, None, gap) for v in value) + "]"
        if not isinstance(value, dict):
            return dump_scalar(value)
        if indent is None or not value:  # one-line style
            return "{" + ("," + gap).join(json.dumps(k, ensure_ascii=False) + colon + self._value(v, colon, None, gap)
                                          for k, v in value.items()) + "}"
        inner = indent + self.indent_unit
        body = ("," + self.newline).join(
            inner + json.dumps(k, ensure_ascii=False) + colon + self._value(v, colon, inner, gap)
            for k, v in value.items()
        )
        return "{" + self.newline + body + self.newline + indent + "}"

    def _inline_gap(self, pointer: str) -> str:
        """What this file writes after a comma between members on one line (usually " " or "")."""
        for parent in (pointer, ""):
            for key_start, _, _ in self._members(parent)[1:]:
                gap = self.text[self._back(key_start) + 1:key_start]
                if "\n" not in gap:
                    return gap
        # No two members share a line: a file that writes "key":value is compact throughout.
        return " " if self._colon(pointer).endswith((" ", "\t")) else ""

    def _fill_empty(self, span: tuple[int, int], members: list[tuple[str, Any]]) -> Edit:
        colon = self._colon("")
        gap = self._inline_gap("")
        if "\n" not in self.text.strip():
            # A one-line document stays on one line.
            return Edit(span[0], span[1], self._value(dict(members), colon, None, gap))
        return Edit(span[0], span[1], self._value(dict(members), colon, self.line_indent(span[0]), gap))


def dump_scalar(value: Any, ascii_only: bool = False) -> str:
    """JSON for a new value; strings keep the file's choice of escaping non-ASCII characters.

    A lone surrogate (from a "\\ud800" escape in the file) stays an escape: as a
    character it cannot be written in UTF-8 at all.
    """
    text = json.dumps(value, ensure_ascii=ascii_only)
    return text if ascii_only else escape_lone_surrogates(text)


def detect_indent(text: str) -> str:
    """The file's indentation unit: a tab, or the most common smallest step of spaces."""
    widths: Counter[int] = Counter()
    for match in _LEADING_WS.finditer(text):
        leading = match.group(1)
        if "\t" in leading:
            return "\t"
        widths[len(leading)] += 1
    if not widths:
        return "  "
    smallest = min(widths)
    return " " * smallest


def apply_edits(text: str, edits: Iterable[Edit]) -> tuple[str, list[Edit]]:
    """Apply the edits that do not overlap an earlier one; return the new text and the edits applied.

    Edits that collide are left for the next pass, which sees the new text's own positions.
    """
    accepted: list[Edit] = []
    for edit in edits:
        if any(_collides(edit, other) for other in accepted):
            continue
        accepted.append(edit)
    out = text
    for edit in sorted(accepted, key=lambda e: (e.start, e.end), reverse=True):
        out = out[: edit.start] + edit.replacement + out[edit.end:]
    return out, accepted


def _collides(a: Edit, b: Edit) -> bool:
    if a.start == a.end and b.start == b.end:
        return a.start == b.start  # two insertions at one point: their order would be a guess
    if a.start == a.end:
        return b.start < a.start < b.end
    if b.start == b.end:
        return a.start < b.start < a.end
    return a.start < b.end and b.start < a.end

"""Positions of a few pointers in a small valid document, without the whole tree.

A finding needs the position of its pointer, and a real manifest with findings has
a handful of them. ``Spans`` (blockkit.source) records every key and value of the
text, one regex step at a time in Python, which costs more than everything else a
validation does. Here only the containers on the way to a pointer are opened:
their members are found one regex match each, and every value passed over is
skipped by the C ``json`` scanner. Each container is opened once per document.

The answers are exactly those of ``Source.span`` over the full tree. That holds for
text that ``json.loads`` accepted and that repeats no member name (with repeats the
tree's numbering matters to BK009); ``Source`` uses this only then, and only for
texts up to ``LAZY_TEXT_MAX`` characters, so a hostile file (where every finding
could open large containers again) keeps the tree and its bounds.
"""

from __future__ import annotations

import json
import re
from typing import Union

# Larger texts use the full tree (blockkit.source.Spans). Real manifests are a few kilobytes.
LAZY_TEXT_MAX = 64 * 1024

_WS = re.compile(r"[ \t\n\r]*")
_STR = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_ATOM = r'[^ \t\n\r{}\[\],:"]+'  # a number, true, false or null
# Separators, then a member name (1), its colon and the start of its value (2): a whole
# scalar (3) or the bracket that opens a container (4). Scalars are skipped by the match itself.
_MEMBER = re.compile(rf'[ \t\n\r,]*({_STR})[ \t\n\r]*:[ \t\n\r]*(?:({_STR}|{_ATOM})|([{{\[]))')
# Separators, then an array item: a whole scalar (1) or an opening bracket (2).
_ITEM = re.compile(rf'[ \t\n\r,]*(?:({_STR}|{_ATOM})|([{{\[]))')
_CLOSE = re.compile(r"[ \t\n\r]*[}\]]")
# The end of a scalar, or of a member name, found from where it starts (as Spans does).
_SCALAR = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[^ \t\n\r,:\]}]+')
# Skips one value at C speed. Integers go to float: a literal of thousands of digits must not fail here.
_SKIP = json.JSONDecoder(parse_int=float).scan_once

# An object's members: name -> (name start, value start); an array's items: value starts.
Children = Union[dict[str, tuple[int, int]], list[int]]


class LazySpans:
    """``span(pointer, at)`` with the answers of ``Source.span``, opening only what a pointer needs."""

    __slots__ = ("text", "root", "children", "ends")

    def __init__(self, text: str, start: int) -> None:
        self.text = text
        self.root = _WS.match(text, start).end()
        self.children: dict[int, Children] = {}  # container value start -> its children
        self.ends: dict[int, int] = {}  # container value start -> the offset after it

    def _open(self, node: int) -> Children | None:
        kids = self.children.get(node)
        if kids is not None:
            return kids
        text = self.text
        opener = text[node:node + 1]
        ends = self.ends
        if opener == "{":
            members: dict[str, tuple[int, int]] = {}
            pos = node + 1
            member = _MEMBER.match
            while True:
                found = member(text, pos)
                if found is None:
                    break
                if found.lastindex == 2:  # a scalar, skipped by the match
                    value, pos = found.span(2)
                else:  # a container, skipped by the C scanner
                    value = found.start(3)
                    pos = ends[value] = _SKIP(text, value)[1]
                raw = found.group(1)
                members[json.loads(raw) if "\\" in raw else raw[1:-1]] = (found.start(1), value)
            kids = members
        elif opener == "[":
            items: list[int] = []
            pos = node + 1
            item = _ITEM.match
            while True:
                found = item(text, pos)
                if found is None:
                    break
                if found.lastindex == 1:
                    value, pos = found.span(1)
                else:
                    value = found.start(2)
                    pos = ends[value] = _SKIP(text, value)[1]
                items.append(value)
            kids = items
        else:
            return None
        closed = _CLOSE.match(text, pos)
        if closed is None:  # not the valid JSON this needs: let the caller use the tree
            raise ValueError("container not closed")
        ends[node] = closed.end()
        self.children[node] = kids
        return kids

    def _value_span(self, node: int) -> tuple[int, int]:
        text = self.text
        if text[node:node + 1] in ("{", "["):
            end = self.ends.get(node)
            if end is None:
                end = self.ends[node] = _SKIP(text, node)[1]
            return (node, end)
        found = _SCALAR.match(text, node)
        return (node, found.end() if found else node)

    def span(self, pointer: str, at: str = "value") -> tuple[int, int]:
        """Offsets for a pointer; falls back to the nearest ancestor that has a position."""
        node, key, complete = self.root, -1, True
        if pointer:
            if pointer[0] != "/":
                complete = False
            else:
                for token in pointer[1:].split("/"):
                    kids = self._open(node)
                    if kids is None:
                        complete = False
                        break
                    if isinstance(kids, dict):
                        if "~" in token:
                            token = token.replace("~1", "/").replace("~0", "~")
                        child = kids.get(token)
                        if child is None:
                            complete = False
                            break
                        key, node = child
                    else:
                        # Array indices as JSON Pointer writes them: decimal, no sign, no leading zero.
                        if not (token.isascii() and token.isdigit()) or (len(token) > 1 and token[0] == "0"):
                            complete = False
                            break
                        index = int(token)
                        if index >= len(kids):
                            complete = False
                            break
                        key, node = -1, kids[index]
        if complete and at == "key" and key >= 0:
            found = _SCALAR.match(self.text, key)
            return (key, found.end() if found else key)
        found_span = self._value_span(node)
        if at == "open" or (not complete and found_span[1] - found_span[0] > 1):
            # a container reached by fallback: mark its opening character only
            start = found_span[0]
            return (start, start + 1) if self.text[start:start + 1] in "{[" else found_span
        return found_span

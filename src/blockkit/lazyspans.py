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
from typing import Optional, Union

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

class _Opened:
    """The children of one container read so far, and where reading goes on (-1: read to its end).

    An object's members: name -> (name start, value start); an array's items: value starts.
    """

    __slots__ = ("kids", "pos")

    def __init__(self, kids: Union[dict[str, tuple[int, int]], list[int]], pos: int) -> None:
        self.kids = kids
        self.pos = pos


class LazySpans:
    """``span(pointer, at)`` with the answers of ``Source.span``, reading only what a pointer needs.

    A container is read member by member until the wanted one is found, and later
    lookups go on from there: with no repeated names, the first member of a name is
    the only one. A name that is not there reads the container to its end.
    """

    __slots__ = ("text", "root", "opened", "ends")

    def __init__(self, text: str, start: int) -> None:
        self.text = text
        self.root = _WS.match(text, start).end()
        self.opened: dict[int, _Opened] = {}  # container value start -> its children so far
        self.ends: dict[int, int] = {}  # container value start -> the offset after it

    def _member(self, node: int, name: str) -> Optional[tuple[int, int]]:
        """(name start, value start) of member ``name`` of the object at ``node``, or None."""
        opened = self.opened.get(node)
        if opened is None:
            opened = self.opened[node] = _Opened({}, node + 1)
        members: dict[str, tuple[int, int]] = opened.kids  # type: ignore[assignment]
        found_member = members.get(name)
        if found_member is not None or opened.pos < 0:
            return found_member
        text, ends, member = self.text, self.ends, _MEMBER.match
        pos = opened.pos
        while True:
            found = member(text, pos)
            if found is None:
                self._close(node, pos)
                opened.pos = -1
                return None
            if found.lastindex == 2:  # a scalar, skipped by the match
                value, pos = found.span(2)
            else:  # a container, skipped by the C scanner
                value = found.start(3)
                pos = ends[value] = _SKIP(text, value)[1]
            raw = found.group(1)
            key = json.loads(raw) if "\\" in raw else raw[1:-1]
            members[key] = entry = (found.start(1), value)
            if key == name:
                opened.pos = pos
                return entry

    def _item(self, node: int, index: int) -> Optional[int]:
        """The value start of item ``index`` of the array at ``node``, or None."""
        opened = self.opened.get(node)
        if opened is None:
            opened = self.opened[node] = _Opened([], node + 1)
        items: list[int] = opened.kids  # type: ignore[assignment]
        if index < len(items):
            return items[index]
        if opened.pos < 0:
            return None
        text, ends, item = self.text, self.ends, _ITEM.match
        pos = opened.pos
        while True:
            found = item(text, pos)
            if found is None:
                self._close(node, pos)
                opened.pos = -1
                return None
            if found.lastindex == 1:
                value, pos = found.span(1)
            else:
                value = found.start(2)
                pos = ends[value] = _SKIP(text, value)[1]
            items.append(value)
            if len(items) > index:
                opened.pos = pos
                return value

    def _close(self, node: int, pos: int) -> None:
        closed = _CLOSE.match(self.text, pos)
        if closed is None:  # not the valid JSON this needs: the caller uses the tree
            raise ValueError("container not closed")
        self.ends[node] = closed.end()

    def span(self, pointer: str, at: str = "value") -> tuple[int, int]:
        """Offsets for a pointer; falls back to the nearest ancestor that has a position."""
        text = self.text
        node, key, complete = self.root, -1, True
        if pointer:
            if pointer[0] != "/":
                complete = False
            else:
                for token in pointer[1:].split("/"):
                    opener = text[node:node + 1]
                    if opener == "{":
                        if "~" in token:
                            token = token.replace("~1", "/").replace("~0", "~")
                        child = self._member(node, token)
                        if child is None:
                            complete = False
                            break
                        key, node = child
                    elif opener == "[":
                        # Array indices as JSON Pointer writes them: decimal, no sign, no leading zero.
                        if not (token.isascii() and token.isdigit()) or (len(token) > 1 and token[0] == "0"):
                            complete = False
                            break
                        item = self._item(node, int(token))
                        if item is None:
                            complete = False
                            break
                        key, node = -1, item
                    else:  # a scalar has no children
                        complete = False
                        break
        if complete and at == "key" and key >= 0:
            found = _SCALAR.match(text, key)
            return (key, found.end() if found else key)
        if text[node:node + 1] in ("{", "["):
            if at == "open" or not complete:
                # a container reached by fallback: mark its opening character only
                return (node, node + 1)
            end = self.ends.get(node)
            if end is None:
                end = self.ends[node] = _SKIP(text, node)[1]
            return (node, end)
        found = _SCALAR.match(text, node)
        return (node, found.end() if found else node)

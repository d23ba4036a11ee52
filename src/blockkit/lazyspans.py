"""Positions of a few pointers in a small valid document, without the whole tree.

A finding needs the position of its pointer, and a real manifest with findings has
a handful of them. ``Spans`` (blockkit.source) records every key and value of the
text, one regex step at a time in Python, which costs more than everything else a
validation does. Here only the way to a pointer is read, with as few Python steps
as possible: the parsed document says whether a name or index is there at all; a
name, or a string item, spelled exactly once in the text is found with ``str.find``;
otherwise a name's places are checked by a regex that reads the object at its own
level, and, failing that, the object is read member by member (one regex match each,
values passed over skipped by the C ``json`` scanner). Answers are kept per document.

The answers are exactly those of ``Source.span`` over the full tree. That holds for
text that ``json.loads`` accepted and that repeats no member name (with repeats the
tree's numbering matters to BK009); ``Source`` uses this only then, and only for
texts up to ``blockkit.source.LAZY_TEXT_MAX`` characters, so a hostile file (where every finding
could open large containers again) keeps the tree and its bounds.
"""

from __future__ import annotations

import json
import re
from typing import Any, Optional, Union

_WS = re.compile(r"[ \t\n\r]*")
_STR = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_ATOM = r'[^ \t\n\r{}\[\],:"]+'  # a number, true, false or null
# Separators, then a member name (1), its colon and the start of its value (2): a whole
# scalar (3) or the bracket that opens a container (4). Scalars are skipped by the match itself.
_MEMBER = rf'[ \t\n\r,]*({_STR})[ \t\n\r]*:[ \t\n\r]*(?:({_STR}|{_ATOM})|([{{\[]))'
_CLOSE = re.compile(r"[ \t\n\r]*[}\]]")
# The end of a scalar, or of a member name, found from where it starts (as Spans does).
_SCALAR = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[^ \t\n\r,:\]}]+')
# Skips one value at C speed. Integers go to float: a literal of thousands of digits must not fail here.
_SKIP = json.JSONDecoder(parse_int=float).scan_once

# The inside of a container, as far as it goes at its own level: anything but brackets and quotes,
# whole strings, and whole containers nested up to _NESTED_MAX levels (deeper ones stop the match,
# and the C scanner skips them). In valid JSON a match ends exactly where a string or container
# begins, or where the container closes: never inside a string or inside a nested container.
# (Written "unrolled": the runs between strings and brackets cannot be split two ways, so a
# match that stops short gives back in linear time.)
_NESTED_MAX = 3
_PLAIN = r'[^\[\]{}"]*'


def _inside(depth: int) -> str:
    nested = rf"[{{\[]{_inside(depth - 1)}[}}\]]" if depth else None
    token = f"(?:{_STR}|{nested})" if nested else _STR
    return rf"{_PLAIN}(?:{token}{_PLAIN})*"


_compiled: dict[str, re.Pattern[str]] = {}


def _match(pattern: str) -> Any:
    """The ``match`` of a regex only some texts need, compiled on first use (each costs a few
    hundred microseconds, paid by every run of the command line otherwise)."""
    found = _compiled.get(pattern)
    if found is None:
        found = _compiled[pattern] = re.compile(pattern)
    return found.match


_INSIDE = _inside(_NESTED_MAX)


# Separators, then an array item: a whole scalar (1) or an opening bracket (2).
_ITEM = re.compile(rf'[ \t\n\r,]*(?:({_STR}|{_ATOM})|([{{\[]))')
_COLON = re.compile(r"[ \t\n\r]*:[ \t\n\r]*")
# Characters a member name must escape in JSON: a name without them has one spelling, unless the
# text uses \uXXXX or \/ escapes (checked once per text).
_MUST_ESCAPE = re.compile(r'["\\\x00-\x1f]')
# Names looked up by search in one object before it is read member by member instead: each search
# reads the object from its start, which is cheapest for a few names but not for many.
_SEARCHES_MAX = 8
_MISSING = (-1, -1)

# A name or string is "one-spelled" when it holds no character that JSON must escape
# (``_MUST_ESCAPE``): ``s.isprintable() and '"' not in s and "\\" not in s`` (some more, such
# as U+2028, also fail it: those are read the slower way). It is tested, and a spelling looked
# for "exactly once" in the text (two ``str.find``), written out where a finding needs it.


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

    With no repeated names, the first member of a name is the only one; with no ``\\u`` or
    ``\\/`` escape in the text, a name without characters JSON must escape is spelled one
    way only, ``"name"``. So a name the object has (says the document), spelled once in the
    text, is found by ``str.find``. Otherwise a place spelled so is taken once the regex
    ``_INSIDE`` has read the object from its start up to it at the object's own level
    (not inside a string or a nested container). A name that needs escapes, a text with
    such escapes, and an object asked for many names are read member by member
    (``_read_member``). An array's string item is found as ``_known_item`` says, other
    items one match each (``_item``).
    """

    __slots__ = ("text", "root", "document", "opened", "ends", "found", "searches", "one_spelling")

    def __init__(self, text: str, start: int, document: Any) -> None:
        self.text = text
        self.root = _WS.match(text, start).end()
        # The parsed document (json.loads of the text): it says which names and indices are
        # there, and whether a value is an object (a dict) or an array (a list), without reading
        # the text.
        self.document = document
        self.opened: dict[int, _Opened] = {}  # container value start -> its children so far
        # Value start -> the offset after it: containers, and strings found by their spelling.
        self.ends: dict[int, int] = {}
        # (object, name) -> its member, or _MISSING; (array, index) -> (-1, its value start) when
        # found by its spelling (``_known_item``).
        self.found: dict[tuple[int, Any], tuple[int, int]] = {}
        self.searches: dict[int, int] = {}  # object -> how many names were searched for in it
        # Whether every name without _MUST_ESCAPE characters is spelled ``"name"`` in the text
        # (a pass over the text at C speed; only texts up to LAZY_TEXT_MAX come here).
        self.one_spelling = "\\" not in text or ("\\u" not in text and "\\/" not in text)

    def _new_member(self, node: int, name: str) -> Optional[tuple[int, int]]:
        """(name start, value start) of member ``name`` of the object at ``node``, which the document
        says the object has, or None; for a name not looked up before in this object."""
        found: Optional[tuple[int, int]]
        # One-spelled, and spelled so exactly once? (written out: this runs for nearly every finding)
        if self.one_spelling and name.isprintable() and '"' not in name and "\\" not in name:
            spelled = f'"{name}"'
            text = self.text
            at = text.find(spelled)
            if at >= 0 and text.find(spelled, at + 1) < 0:
                # The member's name is spelled so somewhere, and only one place is: that is the name.
                found = (at, _COLON.match(text, at + len(spelled)).end())  # type: ignore[union-attr]
            else:
                searches = self.searches.get(node, 0)
                if searches < _SEARCHES_MAX:
                    self.searches[node] = searches + 1
                    found = self._search_member(node, spelled)
                else:
                    found = self._read_member(node, name)
        else:
            found = self._read_member(node, name)
        self.found[(node, name)] = _MISSING if found is None else found
        return found

    def _search_member(self, node: int, spelled: str) -> Optional[tuple[int, int]]:
        """``_new_member`` by search for the name's one spelling."""
        text, inside, find = self.text, _match(_INSIDE), self.text.find
        pos = node + 1  # always where a member, a value or the object's end may begin
        while True:
            at = find(spelled, pos)
            if at < 0:
                return None
            reached = inside(text, pos, at).end()
            if reached == at:  # a string at the object's own level: a name if a colon follows
                colon = _COLON.match(text, at + len(spelled))
                if colon is not None:
                    return (at, colon.end())
                pos = at + len(spelled)
                continue
            stop = text[reached]
            if stop == "}":  # the object ends before ``at``
                self.ends[node] = reached + 1
                return None
            # A string or container that goes on past ``at`` (or nests deeper than _INSIDE reads).
            pos = _SKIP(text, reached)[1]

    def _read_member(self, node: int, name: str) -> Optional[tuple[int, int]]:
        """``_new_member`` member by member: the object is read until the name is found, and later
        lookups go on from there."""
        opened = self.opened.get(node)
        if opened is None:
            opened = self.opened[node] = _Opened({}, node + 1)
        members: dict[str, tuple[int, int]] = opened.kids  # type: ignore[assignment]
        found_member = members.get(name)
        if found_member is not None or opened.pos < 0:
            return found_member
        text, ends, member = self.text, self.ends, _match(_MEMBER)
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

    def _known_item(self, node: int, index: int, items: list[Any]) -> Optional[int]:
        """``_item`` for an index the document has (``items``: the array in the document).

        A string item is found by its spelling when that cannot be mistaken: when the text
        spells it only once, or when every item before it is a string too, none the same,
        so that the first place after the opening bracket spelled so is the item. (The
        items before it have no quotes inside, so a place spelled so begins at one of their
        quotes: an opening quote would spell an equal item, and a closing one only the
        separators up to the next item, which a string of more than separators is not.)
        """
        wanted = items[index]
        # One-spelled, and spelled so exactly once? (written out: this runs for most findings in a list)
        if (type(wanted) is str and self.one_spelling and wanted.isprintable() and '"' not in wanted
                and "\\" not in wanted):
            key = (node, index)  # not in ``found``: span looked
            text = self.text
            spelled = f'"{wanted}"'
            at = text.find(spelled)
            # Spelled more than once (when not at all, the search below could not find it either).
            if at >= 0 and text.find(spelled, at + 1) >= 0:
                at = -1
                if index < _SEARCHES_MAX * 4 and wanted.strip(" \t\n\r,"):
                    earlier = items[:index]
                    if (wanted not in earlier and all(type(item) is str for item in earlier)
                            and _MUST_ESCAPE.search("".join(earlier)) is None):
                        at = text.find(spelled, node)
            if at >= 0:
                self.found[key] = (-1, at)
                self.ends[at] = at + len(spelled)  # where _SCALAR's match would end
                return at
        return self._item(node, index)

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

    def _end(self, node: int) -> int:
        """The offset after the container at ``node``."""
        end = self.ends.get(node)
        if end is None:
            if node == self.root:  # the whole document: only whitespace follows it
                end = len(self.text.rstrip(" \t\n\r"))
            else:
                end = _SKIP(self.text, node)[1]
            self.ends[node] = end
        return end

    def span(self, pointer: str, at: str = "value") -> tuple[int, int]:
        """Offsets for a pointer; falls back to the nearest ancestor that has a position."""
        text = self.text
        node, key = self.root, -1
        # The document's value at ``node``. json.loads builds a dict exactly for an object and a
        # list exactly for an array, so its type tells what the text has at ``node`` (an object,
        # an array or a scalar) without reading the text.
        value = self.document
        if pointer:
            if pointer[0] != "/":
                return self._reached(node)
            found = self.found
            for token in pointer[1:].split("/"):
                kind = type(value)
                if kind is dict:
                    if "~" in token:
                        token = token.replace("~1", "/").replace("~0", "~")
                    if token not in value:
                        return self._reached(node)
                    # A member looked up before (the answers of _new_member, kept in ``found``).
                    child = found.get((node, token))
                    if child is None:
                        child = self._new_member(node, token)
                        if child is None:
                            return self._reached(node)
                    elif child is _MISSING:
                        return self._reached(node)
                    key, node = child
                    value = value[token]
                elif kind is list:
                    # Array indices as JSON Pointer writes them: decimal, no sign, no leading zero.
                    if not (token.isascii() and token.isdigit()) or (len(token) > 1 and token[0] == "0"):
                        return self._reached(node)
                    index = int(token)
                    if index >= len(value):
                        return self._reached(node)
                    known = found.get((node, index))
                    item = known[1] if known is not None else self._known_item(node, index, value)
                    if item is None:
                        return self._reached(node)
                    key, node = -1, item
                    value = value[index]
                else:  # a scalar has no children
                    return self._reached(node)
        if at == "key" and key >= 0:
            matched = _SCALAR.match(text, key)
            return (key, matched.end() if matched else key)
        kind = type(value)
        if kind is dict or kind is list:
            if at == "open":
                return (node, node + 1)
            return (node, self._end(node))
        end = self.ends.get(node)
        if end is not None:  # a string found by its spelling
            return (node, end)
        matched = _SCALAR.match(text, node)
        return (node, matched.end() if matched else node)

    def _reached(self, node: int) -> tuple[int, int]:
        """``span`` of a pointer that goes past ``node``, the last place it has: a container's
        opening character, or a whole scalar."""
        if self.text[node:node + 1] in ("{", "["):
            return (node, node + 1)
        matched = _SCALAR.match(self.text, node)
        return (node, matched.end() if matched else node)

"""Reading a manifest: bytes -> text -> document, with a position for every key and value.

The fast path is the C ``json`` parser. Positions are computed only when a
finding needs one, by an iterative scanner (no recursion, so no depth limit)
that also diagnoses precisely why a document failed to parse.
"""

from __future__ import annotations

import json
import math
import re
import sys
import threading
from functools import cache
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Mapping
from typing import Any, Iterator, Optional, Union

from blockkit.platform import LIMITS

# Parse-layer findings produced here, as (code, message, hint, start, end) before positioning.
ParseProblem = tuple[str, str, Optional[str], int, int]

_WS = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_LITERALS = ("true", "false", "null")
_BAD_CONSTANTS = re.compile(r"-?(?:NaN|Infinity)\b")
_WORD = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


class _Dup:
    """What the object_pairs_hook of ``_parser`` saw: whether a member name repeats, as the
    platform reads it (the last value kept), and how many times.

    ``repeated`` counts (object, repeated name) pairs: one BK009 each, unless a repeated
    name holds an object or list (``nested``), under which two objects share one pointer.
    ``repeated`` and ``nested`` are set once ``seen`` is. ``objects`` counts the objects read.
    """

    __slots__ = ("seen", "repeated", "nested", "objects")

    def __init__(self) -> None:
        self.seen = False
        self.objects = 0
        self.repeated = 0
        self.nested = False

    def note(self, pairs: list[tuple[str, Any]]) -> None:
        """Count the repeated names of one object."""
        if not self.seen:
            self.seen, self.repeated, self.nested = True, 0, False
        seen: set[str] = set()
        again: set[str] = set()
        for name, value in pairs:
            if name in seen:
                again.add(name)
            seen.add(name)
        self.repeated += len(again)
        self.nested = self.nested or any(isinstance(value, (dict, list)) for name, value in pairs if name in again)


def _hook(found: _Dup) -> Any:
    """The object_pairs_hook: a dict, as the C parser builds without a hook, noting repeats in ``found``.

    A plain function (a call per object of the document costs less than a __call__ method).
    """
    note = found.note

    def hook(pairs: list[tuple[str, Any]], dict: Any = dict, len: Any = len) -> dict[str, Any]:
        found.objects += 1
        result = dict(pairs)
        if len(result) != len(pairs):
            note(pairs)
        return result

    return hook


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


# Per thread: (a _Dup, the scan_once of a JSONDecoder whose hook reports to it), without and with
# _parse_int. json.loads with options builds a decoder and its C scanner on every call, which costs
# as much as a small manifest's other parsing work; the _Dup is emptied for each parse.
_parsers = threading.local()


def _parser(long_ints: bool) -> tuple[_Dup, Any]:
    try:
        found = _parsers.long if long_ints else _parsers.short
    except AttributeError:
        found = _new_parser(long_ints)
    state = found[0]
    state.seen = False
    state.objects = 0
    return found


def _new_parser(long_ints: bool) -> tuple[_Dup, Any]:
    state = _Dup()
    decoder = json.JSONDecoder(object_pairs_hook=_hook(state), parse_constant=_reject_constant,
                               parse_int=_parse_int if long_ints else None)
    found = (state, decoder.scan_once)
    if long_ints:
        _parsers.long = found
    else:
        _parsers.short = found
    return found


def _decode(scan_once: Any, text: str, start: int) -> Any:
    """What ``JSONDecoder.decode(text[start:])`` returns, calling its C scanner directly (decode and
    raw_decode are Python functions around it, with two regex calls); ValueError if it would raise."""
    if text[start:start + 1] in _JSON_SPACE:
        start = _WS.match(text, start).end()
    try:
        data, end = scan_once(text, start)
    except StopIteration:  # no value where one must be
        raise ValueError("expecting a value") from None
    if end != len(text) and _WS.match(text, end).end() != len(text):
        raise ValueError("extra data")
    return data


_JSON_SPACE = frozenset(" \t\n\r")


# More digits than this and an integer is beyond every finite double.
_DOUBLE_DIGITS_MAX = 309
_DIGIT = re.compile("[0-9]")
_DIGIT_RUN = re.compile("[0-9]*")


def has_long_digit_run(text: str) -> bool:
    """Whether ``text`` holds _DOUBLE_DIGITS_MAX ASCII digits in a row.

    A regex search for such a run tries every offset of the text, which cost more than
    parsing it. A run that long covers at least one offset that is a multiple of
    _DOUBLE_DIGITS_MAX, so only the runs through those offsets are measured.
    """
    stride = _DOUBLE_DIGITS_MAX
    for found in _DIGIT.finditer(text[::stride]):
        at = found.start() * stride
        right = _DIGIT_RUN.match(text, at).end() - at  # type: ignore[union-attr]
        left = _DIGIT_RUN.match(text[max(0, at - stride):at][::-1]).end()  # type: ignore[union-attr]
        if left + right >= stride:
            return True
    return False


def _parse_int(digits: str) -> Any:
    """An integer literal as JSON.parse reads it: past the double range it is Infinity.

    Python would keep the exact integer (and refuse one of more than 4300 digits
    outright), which would make a valid file invalid JSON and make ``1e400`` and a
    400-digit literal, the same number to the platform, get different verdicts.
    """
    if len(digits) < _DOUBLE_DIGITS_MAX:
        return int(digits)
    value = float(digits)
    return value if math.isinf(value) else int(digits)




class _PointerView(Mapping[str, tuple[int, int]]):
    """``Spans.values`` / ``Spans.keys`` as a read-only mapping from JSON Pointer to offsets.

    Nothing is stored by pointer: a lookup walks the tree, and only iteration (tests,
    debugging) builds pointer strings, one at a time.
    """

    __slots__ = ("_spans", "_keys")

    def __init__(self, spans: "Spans", keys: bool) -> None:
        self._spans = spans
        self._keys = keys

    def __getitem__(self, pointer: str) -> tuple[int, int]:
        found = self.get(pointer)
        if found is None:
            raise KeyError(pointer)
        return found

    def get(self, pointer: str, default: Any = None) -> Any:  # type: ignore[override]
        spans = self._spans
        node, complete = spans.resolve(pointer)
        if not complete or node < 0:
            return default
        found = spans.key_span(node) if self._keys else spans.value_span(node)
        return default if found is None else found

    def __contains__(self, pointer: object) -> bool:
        return isinstance(pointer, str) and self.get(pointer) is not None

    def __iter__(self) -> Iterator[str]:
        spans = self._spans
        for node, pointer in spans.walk():
            if not self._keys or spans.key_start[node] >= 0:
                yield pointer

    def __len__(self) -> int:
        return sum(1 for _ in self)


# The end of a scalar, or of a member name, found again from where it starts.
_SCALAR = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[^ \t\n\r,:\]}]+')


class Spans:
    """Offsets (in characters of the decoded text) of every value and key, as a tree.

    Every value is a node, numbered in document order. A node stores three numbers: its
    parent, where its value starts and, for an object member, where its name starts.
    A container also stores where it ends, and its children (an object: name -> node,
    the last of repeated names winning, as in the parsed document; an array: its nodes
    in order). Where a scalar or a name ends is found again from the text when asked.
    So a key is stored once, however many values lie beneath it: a JSON Pointer is
    built only for a node that needs one (``pointer``) or resolved by walking down
    from the root (``resolve``).
    """

    __slots__ = ("text", "parent", "value_start", "key_start", "ends", "key_ends", "children", "duplicates",
                 "shadowed", "problem")

    def __init__(self, text: str = "") -> None:
        self.text = text
        self.parent = array("i")  # -1 for the root
        self.value_start = array("i")
        self.key_start = array("i")  # -1 when the node is not an object member
        self.ends: dict[int, int] = {}  # node -> its end: containers when closed, scalars once asked
        self.key_ends: dict[int, int] = {}  # node -> the end of its name, once asked
        self.children: dict[int, Union[dict[str, int], "array[int]"]] = {}
        # Nodes whose member name repeats an earlier one in the same object, in document order,
        # and the earlier ones that each of them replaced in ``children``.
        self.duplicates: list[int] = []
        self.shadowed: list[int] = []
        self.problem: Optional[ParseProblem] = None

    @property
    def values(self) -> _PointerView:
        return _PointerView(self, keys=False)

    @property
    def keys(self) -> _PointerView:
        return _PointerView(self, keys=True)

    def value_span(self, node: int) -> tuple[int, int]:
        start = self.value_start[node]
        end = self.ends.get(node)
        if end is None:
            if node in self.children:  # a container that was never closed (a scan that stopped)
                return (start, -1)
            found = _SCALAR.match(self.text, start)
            end = self.ends[node] = found.end() if found else start  # kept: a string can be long
        return (start, end)

    def key_span(self, node: int) -> Optional[tuple[int, int]]:
        start = self.key_start[node]
        if start < 0:
            return None
        end = self.key_ends.get(node)
        if end is None:
            found = _SCALAR.match(self.text, start)
            end = self.key_ends[node] = found.end() if found else start  # kept: a name can be long
        return (start, end)

    def member(self, node: int) -> tuple[int, int, str]:
        """(start, end, decoded name) of an object member's name."""
        start, end = self.key_span(node)  # type: ignore[misc]
        raw = self.text[start + 1:end - 1]
        return start, end, json.loads(self.text[start:end]) if "\\" in raw else raw

    def name(self, node: int) -> Optional[str]:
        """An object member's decoded name (None for the root and array items)."""
        span = self.key_span(node)
        return None if span is None else _decode_key(self.text[span[0]:span[1]])

    def resolve(self, pointer: str) -> tuple[int, bool]:
        """(the deepest node on the way to ``pointer``, whether it is the pointer's own node).

        The node is -1 when there is no root (nothing was read).
        """
        if not self.value_start:
            return -1, False
        if not pointer:
            return 0, True
        if pointer[0] != "/":
            return 0, False
        node = 0
        children = self.children
        for token in pointer[1:].split("/"):
            kids = children.get(node)
            if kids is None:
                return node, False
            if isinstance(kids, dict):
                if "~" in token:
                    token = token.replace("~1", "/").replace("~0", "~")
                child = kids.get(token)
            else:
                # Array indices as JSON Pointer writes them: decimal, no sign, no leading zero.
                if not (token.isascii() and token.isdigit()) or (len(token) > 1 and token[0] == "0"):
                    return node, False
                index = int(token)
                child = kids[index] if index < len(kids) else None
            if child is None:
                return node, False
            node = child
        return node, True

    def token(self, node: int) -> str:
        """The last reference token of ``node``'s pointer, unescaped (an array index in decimal)."""
        name = self.name(node)
        if name is not None:
            return name
        parent = self.parent[node]
        if parent < 0:
            return ""
        # An array's nodes are numbered in document order, so the index is a binary search away.
        return str(bisect_left(self.children[parent], node))  # type: ignore[arg-type]

    def pointer(self, node: int) -> str:
        """The JSON Pointer of ``node`` (built on demand: it repeats every ancestor's name)."""
        tokens = []
        while node > 0:
            tokens.append(self.token(node).replace("~", "~0").replace("/", "~1"))
            node = self.parent[node]
        return "".join("/" + token for token in reversed(tokens))

    def child_pointer(self, parent_pointer: str, node: int) -> str:
        """``pointer(node)`` when its parent's pointer is at hand (no walk up, no ancestor re-escaped)."""
        return parent_pointer + "/" + self.token(node).replace("~", "~0").replace("/", "~1")

    def walk(self) -> Iterator[tuple[int, str]]:
        """(node, pointer) of every value a pointer reaches, depth first.

        Each pointer is built when its node is reached, from its parent's: under a long
        key that is still one long string per node, so this is for small texts and tests.
        """
        if not self.value_start:
            return
        # (node, its parent's pointer, its own token): siblings share the parent's pointer string.
        stack: list[tuple[int, str, str]] = [(0, "", "")]
        while stack:
            node, parent, token = stack.pop()
            pointer = f"{parent}/{token}" if node else ""
            yield node, pointer
            kids = self.children.get(node)
            if isinstance(kids, dict):
                # Pushed in reverse so that they come out in document order.
                stack.extend((child, pointer, name.replace("~", "~0").replace("/", "~1"))
                             for name, child in reversed(kids.items()))
            elif kids is not None:
                stack.extend((kids[index], pointer, str(index)) for index in range(len(kids) - 1, -1, -1))

    def members(self, pointer: str) -> list[tuple[int, int, int]]:
        """(name start, name end, value start) of each member of the object at ``pointer``, in
        document order (the last of repeated names); empty when there is no such object."""
        node, complete = self.resolve(pointer)
        kids = self.children.get(node) if complete else None
        if not isinstance(kids, dict):
            return []
        found = []
        for child in kids.values():
            start, end = self.key_span(child)  # type: ignore[misc]
            found.append((start, end, self.value_start[child]))
        return sorted(found)


class _Builder:
    """Adds nodes to a Spans in document order (for ``scan``; ``scan_valid`` inlines the same steps)."""

    __slots__ = ("spans", "stack", "pending")

    def __init__(self, spans: Spans) -> None:
        self.spans = spans
        self.stack: list[int] = []  # open containers
        self.pending: tuple[str, int] = ("", -1)  # the name and name offset of the next member

    def value(self, start: int, container: Optional[str] = None) -> None:
        """Add a value (``container``: "o" or "a" when it opens one; its end comes with ``close``)."""
        spans = self.spans
        node = len(spans.value_start)
        key_start = -1
        parent = -1
        if self.stack:
            parent = self.stack[-1]
            kids = spans.children[parent]
            if isinstance(kids, dict):
                name, key_start = self.pending
                if name in kids:
                    spans.duplicates.append(node)
                    spans.shadowed.append(kids[name])
                kids[name] = node
            else:
                kids.append(node)
        spans.parent.append(parent)
        spans.value_start.append(start)
        spans.key_start.append(key_start)
        if container is not None:
            spans.children[node] = {} if container == "o" else array("i")
            self.stack.append(node)

    def key(self, name: str, start: int) -> None:
        self.pending = (name, start)

    def close(self, end: int) -> None:
        self.spans.ends[self.stack.pop()] = end


def _decode_key(raw: str) -> str:
    return json.loads(raw) if "\\" in raw else raw[1:-1]


def scan(text: str, start: int = 0, max_depth: Optional[int] = None) -> Spans:
    """Walk ``text`` as JSON without recursion, recording spans; stop at the first problem."""
    spans = Spans(text)
    build = _Builder(spans)
    n = len(text)
    # Stack frames: [kind, last comma offset, state]; kind "o" object / "a" array.
    # state: "first" (just opened), "value" (want value), "key" (want key), "comma" (want , or close)
    stack: list[list[Any]] = []
    pos = _WS.match(text, start).end()

    def problem(code: str, message: str, at: int, end: Optional[int] = None, hint: Optional[str] = None) -> Spans:
        spans.problem = (code, message, hint, at, end if end is not None else min(at + 1, max(n, at)))
        return spans

    state = "value"
    while True:
        if state == "value" or state == "first":
            if pos >= n:
                if stack:
                    return problem("BK002", "unexpected end of file: a bracket or brace is never closed", n,
                                   hint="close every { and [ that is opened")
                return problem("BK002", "the file is empty: expected a JSON object", n,
                               hint="a manifest is one JSON object: { ... }")
            ch = text[pos]
            if state == "first" and ch in "]}":
                frame = stack.pop()
                expected = "}" if frame[0] == "o" else "]"
                if ch != expected:
                    return problem("BK002", f"expected '{expected}' but found '{ch}'", pos)
                build.close(pos + 1)
                pos = _WS.match(text, pos + 1).end()
                state = "comma"
                continue
            if state == "first" and stack and stack[-1][0] == "o":
                state = "key"
                continue
            if ch == "{" or ch == "[":
                if max_depth is not None and len(stack) >= max_depth:
                    return problem("BK004", f"nesting deeper than {max_depth} levels", pos,
                                   hint="flatten the structure; no real manifest nests this deep")
                kind = "o" if ch == "{" else "a"
                stack.append([kind, 0, None])
                build.value(pos, kind)
                pos = _WS.match(text, pos + 1).end()
                state = "first"
                continue
            if ch == '"':
                m = _STRING.match(text, pos)
                if m is None:
                    return _string_problem(text, pos, problem)
                end = m.end()
            elif ch == "-" or ch.isdigit():
                bad = _BAD_CONSTANTS.match(text, pos)
                if bad:
                    return problem("BK002", f"{bad.group()} is not valid JSON", pos, bad.end(),
                                   hint="JSON has no NaN or Infinity; use a number or null")
                m = _NUMBER.match(text, pos)
                if m is None:
                    return problem("BK002", "malformed number", pos)
                end = m.end()
                if end < n and (text[end].isalnum() or text[end] in "._"):
                    return problem("BK002", "malformed number", pos, end + 1)
            else:
                for literal in _LITERALS:
                    if text.startswith(literal, pos):
                        end = pos + len(literal)
                        break
                else:
                    return _unexpected(text, pos, problem, wanted="a value")
            build.value(pos)
            pos = _WS.match(text, end).end()
            state = "comma"
            continue

        if not stack:
            # A complete top-level value has been read.
            if pos < n:
                return _unexpected(text, pos, problem, wanted="the end of the file",
                                   extra="only one JSON value may stand in a file")
            return spans

        frame = stack[-1]
        if state == "key":
            if pos >= n:
                return problem("BK002", "unexpected end of file inside an object", n)
            if text[pos] != '"':
                if text[pos] == "}" and frame[2] == "after-comma":
                    return problem("BK002", "trailing comma before '}'", frame[1], frame[1] + 1,
                                   hint="remove the comma after the last member")
                return _unexpected(text, pos, problem, wanted="a member name in double quotes")
            m = _STRING.match(text, pos)
            if m is None:
                return _string_problem(text, pos, problem)
            build.key(_decode_key(m.group()), pos)
            pos = _WS.match(text, m.end()).end()
            if pos >= n or text[pos] != ":":
                return _unexpected(text, pos, problem, wanted="':' after the member name")
            pos = _WS.match(text, pos + 1).end()
            state = "value"
            continue

        # state == "comma": after a value inside a container
        if pos >= n:
            return problem("BK002", "unexpected end of file: a bracket or brace is never closed",
                           n, hint="close every { and [ that is opened")
        ch = text[pos]
        close = "}" if frame[0] == "o" else "]"
        if ch == ",":
            comma = pos
            pos = _WS.match(text, pos + 1).end()
            if frame[0] == "a":
                if pos < n and text[pos] == "]":
                    return problem("BK002", "trailing comma before ']'", comma, comma + 1,
                                   hint="remove the comma after the last item")
                state = "value"
            else:
                frame[1] = comma
                frame[2] = "after-comma"
                state = "key"
            continue
        if ch == close:
            stack.pop()
            build.close(pos + 1)
            pos = _WS.match(text, pos + 1).end()
            state = "comma"
            continue
        return _unexpected(text, pos, problem, wanted=f"',' or '{close}'")


# One step per match, separators (whitespace and commas) skipped in the same step; a member is one
# step, name and value together, unless its value is a container. Valid JSON needs no more parsing.
_STR = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_ATOM = r'[^ \t\n\r{}\[\],:"]+'  # a number, true, false or null
_OPEN = r'[{\[](?:[ \t\n\r]*[}\]])?'  # an opening bracket, or a whole empty object or list
_STEP = re.compile(
    rf'[ \t\n\r,]*(?:({_STR})(?:[ \t\n\r]*:[ \t\n\r]*(?:({_STR})|({_ATOM})|({_OPEN})))?'  # 1 string or name, 2-4 its value
    rf'|({_OPEN})|([}}\]])|({_ATOM}))'  # 5 open, 6 close, 7 atom
)


def scan_valid(text: str, start: int = 0) -> Spans:
    """Spans of a text already known to be valid JSON: the fast path, one regex match per step."""
    return _ValidScan(text, start).run()


class _ValidScan:
    """The fast scan, resumable: ``run(duplicates=n)`` stops once n repeated names are found,
    so that the first repeats can be reported without reading the rest of a long file.

    It builds the same tree as ``scan`` (the steps of ``_Builder``, inlined for speed).
    """

    __slots__ = ("spans", "steps", "stack", "kids", "parent", "done")

    def __init__(self, text: str, start: int = 0) -> None:
        self.spans = Spans(text)
        self.steps = _STEP.finditer(text, start)
        self.stack: list[int] = []  # open containers
        self.kids: Any = None  # the children of the innermost open container
        self.parent = -1
        self.done = False

    def run(self, duplicates: Optional[int] = None) -> Spans:
        spans = self.spans
        if self.done:
            return spans
        parents, value_starts, key_starts = spans.parent.append, spans.value_start.append, spans.key_start.append
        ends, children, shadowed = spans.ends, spans.children, spans.shadowed.append
        found = spans.duplicates
        stack, kids, parent = self.stack, self.kids, self.parent
        node = len(spans.value_start) - 1
        for match in self.steps:
            group = match.lastindex
            if group == 6:  # close
                ends[stack.pop()] = match.end()
                parent = stack[-1] if stack else -1
                kids = children[parent] if stack else None
                continue
            node += 1
            parents(parent)
            value_starts(match.start(group))
            repeated = False
            if 2 <= group <= 4:  # an object member: its name (1) and value
                raw = match.group(1)
                name = json.loads(raw) if "\\" in raw else raw[1:-1]
                if name in kids:
                    found.append(node)
                    shadowed(kids[name])
                    repeated = True
                kids[name] = node
                key_starts(match.start(1))
            else:  # an array item, or the root
                if kids is not None:
                    kids.append(node)
                key_starts(-1)
            if group == 4 or group == 5:
                bracket = match.group(group)
                if len(bracket) == 1:
                    kids = children[node] = {} if bracket == "{" else array("i")
                    stack.append(node)
                    parent = node
                else:  # empty: opened and closed in one step
                    children[node] = {} if bracket[0] == "{" else array("i")
                    ends[node] = match.end()
            if repeated and duplicates is not None and len(found) >= duplicates:
                self.kids, self.parent = kids, parent
                return spans
        self.kids, self.parent = kids, parent
        self.done = True
        return spans


def _string_problem(text: str, pos: int, problem: Any) -> Spans:
    i = pos + 1
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            break
        if ch == "\\":
            if i + 1 < n and text[i + 1] in '"\\/bfnrt':
                i += 2
                continue
            if i + 1 < n and text[i + 1] == "u" and re.match(r"[0-9a-fA-F]{4}", text[i + 2:i + 6]):
                i += 6
                continue
            return problem("BK002", "invalid escape sequence in string", i, min(i + 2, n),
                           hint='valid escapes are \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX')
        if ord(ch) < 0x20:
            what = "line break" if ch in "\r\n" else f"control character U+{ord(ch):04X}"
            return problem("BK002", f"unescaped {what} inside a string", i, i + 1,
                           hint="write it as an escape such as \\n, or close the string first")
        i += 1
    return problem("BK002", "unterminated string", pos, n, hint='close the string with "')


def _unexpected(text: str, pos: int, problem: Any, wanted: str, extra: str = "") -> Spans:
    n = len(text)
    if pos >= n:
        return problem("BK002", f"unexpected end of file: expected {wanted}", n)
    if text.startswith("//", pos) or text.startswith("/*", pos):
        end = text.find("\n", pos) if text.startswith("//", pos) else text.find("*/", pos) + 2
        return problem("BK002", "comments are not allowed in JSON", pos, end if end > pos else n,
                       hint="remove the comment; keep notes in the README or a separate file")
    if text[pos] == "'":
        return problem("BK002", "strings must use double quotes", pos, pos + 1, hint="replace ' with \"")
    bad = _BAD_CONSTANTS.match(text, pos)
    if bad:
        return problem("BK002", f"{bad.group()} is not valid JSON", pos, bad.end(),
                       hint="JSON has no NaN or Infinity; use a number or null")
    word = _WORD.match(text, pos)
    if word and wanted.startswith("a member name"):
        return problem("BK002", f"member name {word.group()!r} must be in double quotes", pos, word.end(),
                       hint=f'write "{word.group()}"')
    if word:
        return problem("BK002", f"unexpected {word.group()!r}: expected {wanted}", pos, word.end(),
                       hint=extra or None)
    ch = text[pos]
    shown = repr(ch) if ch.isprintable() else f"U+{ord(ch):04X}"
    return problem("BK002", f"unexpected character {shown}: expected {wanted}", pos, pos + 1,
                   hint=extra or None)


class Source:
    """A manifest's text, its parsed document, the problems met while reading it, and positions."""

    __slots__ = ("path", "text", "data", "problems", "has_duplicates", "repeated_names", "_spans", "_scan",
                 "_line_starts", "parsed", "_lazy", "_counts", "_cr")

    def __init__(self, path: str, text: Optional[str], data: Any, problems: list[ParseProblem],
                 has_duplicates: bool = False, spans: Optional[Spans] = None) -> None:
        self.path = path
        self.text = text
        self.data = data
        self.problems = problems
        self.has_duplicates = has_duplicates
        # How many BK009 findings the parser counted (None: not known without the positions).
        self.repeated_names: Optional[int] = None
        self._spans = spans
        self._scan: Optional[_ValidScan] = None
        self._line_starts: Optional[list[int]] = None
        # Set by read_text when json.loads accepted the whole text: positions may then come
        # from blockkit.lazyspans, without the tree.
        self.parsed = False
        self._lazy: Any = None
        self._counts = 0  # positions found by counting line breaks (``_counted``)
        self._cr: Optional[bool] = None  # whether the text holds a CR, once asked

    @property
    def has_document(self) -> bool:
        """Whether there is a parsed document to validate further."""
        if self.text is None:
            return False
        return not any(code in FATAL_PROBLEMS for code, *_ in self.problems)

    @property
    def spans(self) -> Spans:
        if self._spans is None:
            text = self.text or ""
            if self.has_document:
                self._spans = self.spans_so_far()
            else:
                self._spans = scan(text, _content_start(text))
        return self._spans

    def spans_so_far(self, duplicates: Optional[int] = None) -> Spans:
        """The positions of a parsed document read up to its ``duplicates``-th repeated name (all of
        it when None): the first repeats without the cost of the rest of the file."""
        if self._scan is None:
            text = self.text or ""
            self._scan = _ValidScan(text, _content_start(text))
        return self._scan.run(duplicates)

    def span(self, pointer: str, at: str = "value") -> tuple[int, int]:
        """Offsets for a pointer; falls back to the nearest ancestor that has a position."""
        lazy = self._lazy
        if lazy is None and self.parsed and not self.has_duplicates:
            text = self.text or ""
            lazy = self._lazy = (_lazy_spans()(text, _content_start(text), self.data)
                                 if len(text) <= LAZY_TEXT_MAX else False)
        if lazy and self._spans is None:  # (once the tree is built, it answers)
            try:
                return lazy.span(pointer, at)  # type: ignore[no-any-return]
            except Exception:  # pragma: no cover - text json.loads accepted; the tree answers all the same
                self._lazy = False
        spans = self.spans
        node, complete = spans.resolve(pointer)
        if node < 0:
            return (0, 0)
        if complete and at == "key":
            key = spans.key_span(node)
            if key is not None:
                return key
        found = spans.value_span(node)
        if at == "open" or (not complete and found[1] - found[0] > 1):
            # a container reached by fallback: mark its opening character only
            return (found[0], found[0] + 1) if (self.text or "")[found[0]:found[0] + 1] in "{[" else found
        return found

    def _counted(self) -> bool:
        """Whether to find the next position by counting line breaks, not in the table of line starts.

        Counting (at C speed) costs a pass over the text up to the offset; the table costs a
        Python step per line, once. Counting wins for a few findings in a text without CR.
        """
        if self._line_starts is not None:
            return False
        self._counts += 1
        if self._counts > _COUNTED_MAX:
            return False
        if self._cr is None:
            self._cr = "\r" in (self.text or "")
        return not self._cr

    def _table(self) -> list[int]:
        starts = self._line_starts
        if starts is None:
            text = self.text or ""
            starts = [0]
            if "\r" in text:  # a lone CR (JSON whitespace) ends a line too, as in every editor
                starts.extend(m.end() for m in _LINE_BREAK.finditer(text))
            else:
                find = text.find
                i = find("\n")
                while i != -1:
                    starts.append(i + 1)
                    i = find("\n", i + 1)
            self._line_starts = starts
        return starts

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a character offset; columns count characters."""
        if self._counted():
            text = self.text or ""
            return text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)
        starts = self._table()
        line = bisect_right(starts, offset)
        return line, offset - starts[line - 1] + 1

    def positions(self, start: int, end: int) -> tuple[int, int, int, int]:
        """``position(start) + position(max(start, end))``, the end counted on from the start."""
        if end <= start:
            line, column = self.position(start)
            return line, column, line, column
        if self._line_starts is None:  # self._counted(), written out: every finding comes here
            counts = self._counts = self._counts + 1
            if counts <= _COUNTED_MAX:
                cr = self._cr
                if cr is None:
                    cr = self._cr = "\r" in (self.text or "")
                if not cr:
                    text = self.text or ""
                    line = text.count("\n", 0, start) + 1
                    end_line = line + text.count("\n", start, end)
                    return line, start - text.rfind("\n", 0, start), end_line, end - text.rfind("\n", 0, end)
        starts = self._table()
        line = bisect_right(starts, start)
        end_line = bisect_right(starts, end, line - 1)
        return line, start - starts[line - 1] + 1, end_line, end - starts[end_line - 1] + 1

    def locate(self, pointer: str, at: str = "value") -> tuple[int, int, int, int]:
        start, end = self.span(pointer, at)
        return self.positions(start, end)


# Positions counted before the table of line starts is built (Source._counted).
_COUNTED_MAX = 16
# Larger texts keep the full tree (Spans) for positions, not blockkit.lazyspans: a real manifest is a
# few kilobytes, and in a hostile file every finding could open large containers again.
LAZY_TEXT_MAX = 64 * 1024


@cache
def _lazy_spans() -> Any:
    """blockkit.lazyspans.LazySpans, imported on the first finding that needs a position."""
    from blockkit.lazyspans import LazySpans

    return LazySpans


_LINE_BREAK = re.compile(r"\r\n?|\n")
_LINE_WITH_END = re.compile(r"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+$")


def split_lines(text: str, keepends: bool = False) -> list[str]:
    """The lines of ``text`` as positions count them: broken at LF, CRLF and a lone CR only.

    ``str.splitlines`` also breaks at U+0085, U+2028, U+2029 and other separators,
    which JSON strings may hold raw, and would put a snippet on the wrong line.
    """
    if not keepends and "\r" not in text:
        # Only LF breaks lines: str.split at C speed gives the same lines (a final LF ends the last one).
        lines = text.split("\n")
        if not lines[-1]:
            lines.pop()
        return lines
    lines = _LINE_WITH_END.findall(text)
    return lines if keepends else [_LINE_BREAK.sub("", line) for line in lines]

# Problems after which there is no document to validate.
FATAL_PROBLEMS = frozenset({"BK002", "BK004", "BK006", "BK007"})


def _content_start(text: str) -> int:
    return 1 if text.startswith("\ufeff") else 0


def _wide_encoding(raw: bytes) -> Optional[str]:
    """"UTF-16" or "UTF-32" when ``raw`` is JSON text in one of them (by its byte order mark, or by
    where the NUL bytes fall around the first ASCII character, RFC 4627 §3); otherwise None."""
    if raw.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "UTF-32"
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "UTF-16"
    head = raw[:4]
    if len(head) == 4 and head.count(0) in (2, 3) and all(0 < b < 0x80 for b in head.replace(b"\x00", b"")):
        if head.count(0) == 3 and head[1:3] == b"\x00\x00":
            return "UTF-32"
        if head[0::2] == b"\x00\x00" or head[1::2] == b"\x00\x00":
            return "UTF-16"
    return None


def too_large(size: int, path: str = "<string>", what: str = "file is", unit: str = "bytes") -> Source:
    """The Source of a manifest over the size limit: BK006 and nothing else."""
    return Source(path, None, None, [(
        "BK006", f"{what} {size:,} {unit}, over the {LIMITS.file_bytes_max:,}-byte limit",
        "a manifest is a few kilobytes; is this the right file?", 0, 0)])


def utf8_length(text: str) -> int:
    """The length of ``text`` in UTF-8 (a lone surrogate as the 3 bytes it is written as), measured
    in slices so that a large text is never copied whole."""
    if text.isascii():
        return len(text)
    step = 1 << 16
    return sum(len(text[start:start + step].encode("utf-8", "surrogatepass")) for start in range(0, len(text), step))


def read_bytes(raw: bytes, path: str = "<string>") -> Source:
    if len(raw) > LIMITS.file_bytes_max:
        return too_large(len(raw), path)
    # UTF-16 and UTF-32 start with a byte order mark (FF or FE first, or 00 00 FE FF) or put a NUL
    # among the first 4 bytes: a text with no NUL near its start that begins below FE is neither.
    if raw.find(b"\x00", 0, 8192) >= 0 or raw[:1] >= b"\xfe":
        wide = _wide_encoding(raw)
        if wide is not None:
            return Source(path, None, None, [(
                "BK005", f"file is {wide} encoded; the platform reads manifests as UTF-8",
                "save the file as UTF-8 without a byte order mark", 0, 0)])
        if raw.find(b"\x00", 0, 8192) >= 0:
            return Source(path, None, None, [(
                "BK007", "binary file: this is not a JSON text", "point blockkit at block.manifest.json", 0, 0)])
    problems: list[ParseProblem] = []
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = raw.decode("utf-8", errors="replace")
        good = raw[: exc.start].decode("utf-8", errors="replace")
        offset = len(good)
        problems.append(("BK005", f"invalid UTF-8 byte 0x{raw[exc.start]:02X}; the platform reads manifests as UTF-8",
                         "save the file as UTF-8", offset, offset + 1))
        return read_text(text, path, problems)
    return _read(text, raw, path, problems)


def read_text(text: str, path: str = "<string>", problems: Optional[list[ParseProblem]] = None) -> Source:
    return _read(text, None, path, list(problems) if problems else [])


# blockkit.fastparse once this process uses it, False when it cannot (see _fast_parser).
_fast: Any = None
_reads = 0
# Reads after which a process imports orjson for blockkit.fastparse. Importing it costs about 8 ms
# (it loads datetime, uuid, zoneinfo and platform), which its speed pays back over about 2000 reads
# of a real manifest (4 us each): a one-shot CLI run never pays it, a long-lived process pays at most
# twice what it needed. A process that has imported orjson anyway uses it at once.
FAST_PARSE_AFTER = 2000


def _fast_parser() -> Any:
    """blockkit.fastparse, or None while this process reads with the json path only."""
    global _fast, _reads
    if _fast is None:
        _reads += 1
        if _reads < FAST_PARSE_AFTER and "orjson" not in sys.modules:
            return None
        try:
            from blockkit import fastparse
        except ImportError:  # no orjson, or one too old to parse untrusted text (fastparse.ORJSON_MIN)
            _fast = False
        else:
            _fast = fastparse
    return _fast or None


def _read(text: str, raw: Optional[bytes], path: str, problems: list[ParseProblem]) -> Source:
    """``read_text`` of ``text``, whose UTF-8 bytes are ``raw`` when the caller has them."""
    if not problems and text[:1] != "\ufeff":
        fast = _fast_parser()
        if fast is not None:
            if raw is None:
                try:
                    raw = text.encode("utf-8")
                except UnicodeEncodeError:  # a lone surrogate: the json path reads it
                    raw = b""
            data = fast.parse(raw) if raw else fast.NOT_PARSED
            if data is not fast.NOT_PARSED:
                # orjson's document, which the json path would build with no repeated name, within
                # the depth limit (blockkit.fastparse says why).
                source = Source(path, text, data, problems)
                source.parsed = True
                source.repeated_names = 0
                return source
    start = 0
    if text[:1] == "\ufeff":
        problems.append(("BK003", "file starts with a byte order mark (U+FEFF); JSON.parse rejects it",
                         "save the file as UTF-8 without BOM (blockkit fix removes it)", 0, 1))
        start = 1
    try:
        # Python reads a shorter integer literal as JSON.parse does: call _parse_int (a Python call for
        # every integer of the document) only when there may be a longer one.
        hook, scan_once = _parser(len(text) >= _DOUBLE_DIGITS_MAX and has_long_digit_run(text))
        data = _decode(scan_once, text, start)
    except (ValueError, RecursionError):
        # The C parser failed (or hit Python's recursion limit): let the scanner say precisely why.
        spans = scan(text, start, max_depth=LIMITS.nesting_max)
        if spans.problem is None:  # pragma: no cover - the two parsers disagree
            spans.problem = ("BK002", "the file is not valid JSON", None, start, start + 1)
        problems.append(spans.problem)
        return Source(path, text, None, problems, spans=spans)
    source = Source(path, text, data, problems, has_duplicates=hook.seen)
    source.parsed = True
    if not hook.seen:
        source.repeated_names = 0
    elif not hook.nested:
        source.repeated_names = hook.repeated
    # The depth limit must not depend on Python's recursion limit, so enforce it ourselves;
    # a document can only be that deep if it has that many brackets (and as many closing ones):
    # objects (the hook counted them; counting "{" in the text would cost a pass over it) and "[".
    if (len(text) > 2 * LIMITS.nesting_max and hook.objects + text.count("[") > LIMITS.nesting_max
            and _deeper_than(text, LIMITS.nesting_max)):
        # Only now the strict scanner, for the position of the first bracket too deep.
        deep = scan(text, start, max_depth=LIMITS.nesting_max)
        if deep.problem is not None:
            problems.append(deep.problem)
            source.data = None
            source.parsed = False
    return source


_NOT_BRACKET = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[^\[\]{}"]+')


def _deeper_than(text: str, limit: int) -> bool:
    """Whether valid JSON ``text`` nests more than ``limit`` levels: a count over its brackets
    alone (strings and everything else removed at C speed), instead of a full scan."""
    depth = 0
    for ch in _NOT_BRACKET.sub("", text):
        if ch == "[" or ch == "{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False

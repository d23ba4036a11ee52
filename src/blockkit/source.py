"""Reading a manifest: bytes -> text -> document, with a position for every key and value.

The fast path is the C ``json`` parser. Positions are computed only when a
finding needs one, by an iterative scanner (no recursion, so no depth limit)
that also diagnoses precisely why a document failed to parse.
"""

from __future__ import annotations

import json
import math
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any, Optional

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
    """object_pairs_hook that keeps the last value, as the platform does, and notes duplicates."""

    __slots__ = ("seen",)

    def __init__(self) -> None:
        self.seen = False

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result = dict(pairs)
        if len(result) != len(pairs):
            self.seen = True
        return result


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


# More digits than this and an integer is beyond every finite double.
_DOUBLE_DIGITS_MAX = 309


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




@dataclass
class Spans:
    """Offsets (in characters of the decoded text) of every value and key, by JSON Pointer."""

    values: dict[str, tuple[int, int]] = field(default_factory=dict)
    keys: dict[str, tuple[int, int]] = field(default_factory=dict)
    duplicates: list[tuple[str, int, int]] = field(default_factory=list)  # (pointer, key start, key end)
    problem: Optional[ParseProblem] = None


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _decode_key(raw: str) -> str:
    return json.loads(raw) if "\\" in raw else raw[1:-1]


def scan(text: str, start: int = 0, max_depth: Optional[int] = None) -> Spans:
    """Walk ``text`` as JSON without recursion, recording spans; stop at the first problem."""
    spans = Spans()
    values, keys = spans.values, spans.keys
    n = len(text)
    # Stack frames: [kind, pointer, start offset, index or None, seen keys, state]
    # kind "o" object / "a" array. state: "first" (just opened), "value" (want value),
    # "key" (want key), "colon", "comma" (want , or close)
    stack: list[list[Any]] = []
    pos = _WS.match(text, start).end()
    pending_pointer = ""  # pointer of the next value to be read

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
                values[frame[1]] = (frame[2], pos + 1)
                pos = _WS.match(text, pos + 1).end()
                state = "comma"
                continue
            if state == "first" and stack and stack[-1][0] == "o":
                state = "key"
                continue
            value_pointer = pending_pointer
            if ch == "{" or ch == "[":
                if max_depth is not None and len(stack) >= max_depth:
                    return problem("BK004", f"nesting deeper than {max_depth} levels", pos,
                                   hint="flatten the structure; no real manifest nests this deep")
                stack.append(["o" if ch == "{" else "a", value_pointer, pos, 0, set(), None])
                pos = _WS.match(text, pos + 1).end()
                if ch == "[":
                    pending_pointer = value_pointer + "/0"
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
            values[value_pointer] = (pos, end)
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
                if text[pos] == "}" and frame[5] == "after-comma":
                    return problem("BK002", "trailing comma before '}'", frame[3], frame[3] + 1,
                                   hint="remove the comma after the last member")
                return _unexpected(text, pos, problem, wanted="a member name in double quotes")
            m = _STRING.match(text, pos)
            if m is None:
                return _string_problem(text, pos, problem)
            name = _decode_key(m.group())
            pointer = frame[1] + "/" + _escape(name)
            if name in frame[4]:
                spans.duplicates.append((pointer, pos, m.end()))
            frame[4].add(name)
            keys[pointer] = (pos, m.end())
            pending_pointer = pointer
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
                frame[3] += 1
                pending_pointer = frame[1] + "/" + str(frame[3])
                state = "value"
            else:
                frame[3] = comma
                frame[5] = "after-comma"
                state = "key"
            continue
        if ch == close:
            stack.pop()
            values[frame[1]] = (frame[2], pos + 1)
            pos = _WS.match(text, pos + 1).end()
            state = "comma"
            continue
        return _unexpected(text, pos, problem, wanted=f"',' or '{close}'")


# One token per match, whitespace skipped in the same step. A string followed by ':' is a member
# name (group 1 with group 2), so no parser state is needed to tell keys from values.
_TOKEN = re.compile(r'[ \t\n\r]*(?:("[^"\\]*(?:\\.[^"\\]*)*")([ \t\n\r]*:)?|([{\[])|([}\]])|(,)|([^ \t\n\r{}\[\],:"]+))')


def scan_valid(text: str, start: int = 0) -> Spans:
    """Spans of a text already known to be valid JSON: the fast path, one regex match per token."""
    spans = Spans()
    values, keys = spans.values, spans.keys
    # Frames: [pointer, start, index] (index is None for an object)
    stack: list[list[Any]] = []
    pointer = ""  # pointer of the value about to be read
    for match in _TOKEN.finditer(text, start):
        group = match.lastindex
        if group == 1:  # a string value
            values[pointer] = match.span(1)
        elif group == 2:  # a member name and its colon
            raw = match.group(1)
            frame = stack[-1]
            name = json.loads(raw) if "\\" in raw else raw[1:-1]
            pointer = frame[0] + "/" + name.replace("~", "~0").replace("/", "~1")
            span = match.span(1)
            # A pointer already recorded inside this same object is a repeated member name (one
            # recorded before the object opened belongs to an earlier duplicate of an ancestor).
            seen = keys.get(pointer)
            if seen is not None and seen[0] > frame[1]:
                spans.duplicates.append((pointer, span[0], span[1]))
            keys[pointer] = span
        elif group == 3:  # open
            if match.group(3) == "{":
                stack.append([pointer, match.start(3), None])
            else:
                stack.append([pointer, match.start(3), 0])
                pointer = pointer + "/0"
        elif group == 4:  # close
            frame = stack.pop()
            values[frame[0]] = (frame[1], match.end())
        elif group == 5:  # comma
            frame = stack[-1]
            if frame[2] is not None:
                frame[2] += 1
                pointer = frame[0] + "/" + str(frame[2])
        else:  # number, true, false, null
            values[pointer] = match.span(6)
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

    __slots__ = ("path", "text", "data", "problems", "has_duplicates", "_spans", "_line_starts")

    def __init__(self, path: str, text: Optional[str], data: Any, problems: list[ParseProblem],
                 has_duplicates: bool = False, spans: Optional[Spans] = None) -> None:
        self.path = path
        self.text = text
        self.data = data
        self.problems = problems
        self.has_duplicates = has_duplicates
        self._spans = spans
        self._line_starts: Optional[list[int]] = None

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
                self._spans = scan_valid(text, _content_start(text))
            else:
                self._spans = scan(text, _content_start(text))
        return self._spans

    def span(self, pointer: str, at: str = "value") -> tuple[int, int]:
        """Offsets for a pointer; falls back to the nearest ancestor that has a position."""
        spans = self.spans
        if at == "key" and pointer in spans.keys:
            return spans.keys[pointer]
        probe = pointer
        while True:
            found = spans.values.get(probe)
            if found is not None:
                if at == "open" or (probe != pointer and found[1] - found[0] > 1):
                    # a container reached by fallback: mark its opening character only
                    return (found[0], found[0] + 1) if (self.text or "")[found[0]:found[0] + 1] in "{[" else found
                return found
            if not probe:
                return (0, 0)
            probe = probe.rsplit("/", 1)[0]

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a character offset; columns count characters."""
        if self._line_starts is None:
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
        line = bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1] + 1

    def locate(self, pointer: str, at: str = "value") -> tuple[int, int, int, int]:
        start, end = self.span(pointer, at)
        line, column = self.position(start)
        end_line, end_column = self.position(max(end, start))
        return line, column, end_line, end_column


_LINE_BREAK = re.compile(r"\r\n?|\n")
_LINE_WITH_END = re.compile(r"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+$")


def split_lines(text: str, keepends: bool = False) -> list[str]:
    """The lines of ``text`` as positions count them: broken at LF, CRLF and a lone CR only.

    ``str.splitlines`` also breaks at U+0085, U+2028, U+2029 and other separators,
    which JSON strings may hold raw, and would put a snippet on the wrong line.
    """
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
    if len(head) == 4 and all(0 < b < 0x80 for b in head.replace(b"\x00", b"")) and head.count(0) in (2, 3):
        if head.count(0) == 3 and head[1:3] == b"\x00\x00":
            return "UTF-32"
        if head[0::2] == b"\x00\x00" or head[1::2] == b"\x00\x00":
            return "UTF-16"
    return None


def read_bytes(raw: bytes, path: str = "<string>") -> Source:
    if len(raw) > LIMITS.file_bytes_max:
        return Source(path, None, None, [(
            "BK006", f"file is {len(raw):,} bytes, over the {LIMITS.file_bytes_max:,}-byte limit",
            "a manifest is a few kilobytes; is this the right file?", 0, 0)])
    wide = _wide_encoding(raw)
    if wide is not None:
        return Source(path, None, None, [(
            "BK005", f"file is {wide} encoded; the platform reads manifests as UTF-8",
            "save the file as UTF-8 without a byte order mark", 0, 0)])
    if b"\x00" in raw[:8192]:
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


def read_text(text: str, path: str = "<string>", problems: Optional[list[ParseProblem]] = None) -> Source:
    problems = list(problems or [])
    start = 0
    if text.startswith("\ufeff"):
        problems.append(("BK003", "file starts with a byte order mark (U+FEFF); JSON.parse rejects it",
                         "save the file as UTF-8 without BOM (blockkit fix removes it)", 0, 1))
        start = 1
    hook = _Dup()
    try:
        data = json.loads(text[start:] if start else text, object_pairs_hook=hook,
                          parse_constant=_reject_constant, parse_int=_parse_int)
    except (ValueError, RecursionError):
        # The C parser failed (or hit Python's recursion limit): let the scanner say precisely why.
        spans = scan(text, start, max_depth=LIMITS.nesting_max)
        if spans.problem is None:  # pragma: no cover - the two parsers disagree
            spans.problem = ("BK002", "the file is not valid JSON", None, start, start + 1)
        problems.append(spans.problem)
        return Source(path, text, None, problems, spans=spans)
    source = Source(path, text, data, problems, has_duplicates=hook.seen)
    # The depth limit must not depend on Python's recursion limit, so enforce it ourselves;
    # a document can only be that deep if it has that many brackets.
    if text.count("[") + text.count("{") > LIMITS.nesting_max:
        deep = scan(text, start, max_depth=LIMITS.nesting_max)
        if deep.problem is not None:
            problems.append(deep.problem)
            source.data = None
    return source

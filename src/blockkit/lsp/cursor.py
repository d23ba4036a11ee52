"""Where an offset lies in a JSON text that may be half typed.

A forgiving walk over the tokens (strings may be unterminated, commas and colons missing)
that keeps the stack of open containers. It answers what completion and hover need: is
the offset on a key or a value (or where one is expected), the JSON Pointer of it, the
string token under the offset, and the keys the enclosing object already has.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Optional, Union

# One token: a string (possibly unterminated at the end of its line), a punctuator, or a
# run of other non-space characters (numbers, true/false/null, garbage).
_TOKEN = re.compile(r'"(?:[^"\\\r\n]|\\.)*(?:"|(?=[\r\n])|$)|[{}\[\]:,]|[^\s{}\[\]:,"]+', re.S)


def escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def pointer_of(path: list[Union[str, int]]) -> str:
    return "".join(f"/{escape(str(part))}" for part in path)


def decode_string(raw: str) -> str:
    """The value of a string token, unterminated or with bad escapes as best it can."""
    body = raw[1:-1] if len(raw) >= 2 and _terminated(raw) else raw[1:]
    try:
        return json.loads(f'"{body}"')
    except ValueError:
        return body


@dataclass
class _Frame:
    kind: str  # "object" or "array"
    path: list[Union[str, int]]
    keys: list[str] = field(default_factory=list)
    expect: str = "key"  # object: key, colon, value, comma; array: value, comma
    key: Optional[str] = None
    index: int = 0


@dataclass
class Place:
    """What is at an offset.

    ``role``: "key" (on or where a key of ``container`` goes), "value" (on or where the value at
    ``pointer`` goes), or None (nothing to say: punctuation, after the document).
    """

    role: Optional[str]
    pointer: str  # the key's member, or the value's pointer
    container: str  # the pointer of the object (key) or of the value's parent
    path: list[Union[str, int]]
    token: Optional[tuple[int, int]] = None  # the string or word token under the offset
    text: str = ""  # that token's decoded text (string) or raw text (word)
    is_string: bool = False
    keys: list[str] = field(default_factory=list)  # keys present in the enclosing object


def locate(text: str, offset: int) -> Place:
    stack: list[_Frame] = []
    found: Optional[Place] = None
    top_done = False

    def here(role: Optional[str], span: Optional[tuple[int, int]] = None, raw: str = "") -> Place:
        frame = stack[-1] if stack else None
        if frame is None:
            return Place(role if not top_done else None, "", "", [], span, raw)
        if role == "key":
            key = decode_string(raw) if raw.startswith('"') else raw
            path = frame.path + [key] if span else list(frame.path)
            return Place("key", pointer_of(path), pointer_of(frame.path), path, span,
                         key if span else "", raw.startswith('"'), frame.keys)
        part: Union[str, int] = (frame.key or "") if frame.kind == "object" else frame.index
        path = frame.path + [part]
        value = decode_string(raw) if raw.startswith('"') else raw
        return Place(role, pointer_of(path), pointer_of(frame.path), path, span, value,
                     raw.startswith('"'), frame.keys if frame.kind == "object" else [])

    for match in _TOKEN.finditer(text):
        start, end, raw = match.start(), match.end(), match.group()
        punctuation = raw in "{}[]:,"
        if found is None and (offset < start or (offset == start and (punctuation or raw.startswith('"')))):
            found = here(_expected(stack, top_done))
        frame = stack[-1] if stack else None
        closed = raw.startswith('"') and len(raw) >= 2 and _terminated(raw)
        inside = (found is None and not punctuation and start < offset
                  and (offset < end or (offset == end and not closed)))
        if raw in "{[":
            if found is None and start < offset < end:
                found = here(None)
            path: list[Union[str, int]] = []
            if frame is not None:
                path = frame.path + ([frame.key or ""] if frame.kind == "object" else [frame.index])
                _after_value(frame)
            elif top_done:
                continue
            stack.append(_Frame("object" if raw == "{" else "array", path,
                                expect="key" if raw == "{" else "value"))
            continue
        if raw in "}]":
            if stack:
                stack.pop()
                if not stack:
                    top_done = True
            continue
        if frame is None:
            if inside:
                found = here("value" if not top_done else None, (start, end), raw)
            continue
        if raw == ":":
            if frame.kind == "object":
                frame.expect = "value"
            continue
        if raw == ",":
            if frame.kind == "object":
                frame.expect, frame.key = "key", None
            else:
                if frame.expect == "comma":
                    frame.index += 1
                frame.expect = "value"
            continue
        # a string or a word
        if frame.kind == "object" and frame.expect in ("key", "comma") and raw.startswith('"'):
            if inside:
                found = here("key", (start, end), raw)
            frame.key = decode_string(raw)
            frame.keys.append(frame.key)
            frame.expect = "colon"
            continue
        if frame.kind == "object" and frame.expect == "colon":
            frame.expect = "value"  # a missing colon: read on as if it were there
        if inside:
            found = here("value", (start, end), raw)
        _after_value(frame)
    if found is None:
        found = here(_expected(stack, top_done))
    return found


def _terminated(raw: str) -> bool:
    """Whether a string token ends with its closing quote (not an escaped one)."""
    backslashes = len(raw) - 1 - len(raw[:-1].rstrip("\\"))
    return raw.endswith('"') and backslashes % 2 == 0


def _after_value(frame: _Frame) -> None:
    frame.expect = "comma"


def _expected(stack: list[_Frame], top_done: bool) -> Optional[str]:
    if not stack:
        return None if top_done else "value"
    frame = stack[-1]
    if frame.kind == "object":
        if frame.expect == "key":
            return "key"
        if frame.expect == "value":
            return "value"
        return None
    return "value" if frame.expect == "value" else None

"""JavaScript string semantics, which the platform uses wherever it measures or
matches strings (PLATFORM.md §2)."""

from __future__ import annotations

import json
import math
import re
from json.encoder import encode_basestring
from typing import Any

# ECMAScript WhiteSpace + LineTerminator: what String.prototype.trim strips and
# what the sandbox attribute is split on. Unlike Python's str.strip it has
# U+FEFF and lacks U+0085 and U+001C..U+001F.
JS_WHITESPACE = (
    "\u0009\u000a\u000b\u000c\u000d\u0020\u00a0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_JS_WS_RUN = re.compile(f"[{re.escape(JS_WHITESPACE)}]+")


def js_trim(value: str) -> str:
    return value.strip(JS_WHITESPACE)


def js_split_whitespace(value: str) -> list[str]:
    """Split like ``value.trim().split(/\\s+/)`` would, dropping empty pieces."""
    return [token for token in _JS_WS_RUN.split(value) if token]


# What a browser splits a token-list attribute such as iframe@sandbox on: the HTML
# standard's ASCII whitespace, a narrower set than JavaScript's.
HTML_WHITESPACE = "\t\n\f\r "


def non_html_separators(value: str) -> list[str]:
    """JavaScript whitespace in ``value`` that a browser does not split a token list on."""
    return list(dict.fromkeys(ch for ch in value if ch in JS_WHITESPACE and ch not in HTML_WHITESPACE))


def utf16_len(value: str) -> int:
    """Length in UTF-16 code units, as JavaScript's ``.length`` counts it."""
    if value.isascii():
        return len(value)
    # surrogatepass: a lone surrogate (JSON allows "\\ud800") is one unit, as in JavaScript
    return len(value.encode("utf-16-le", "surrogatepass")) // 2


def is_blank(value: str) -> bool:
    return not js_trim(value)


def js_whitespace_lookalikes(value: str) -> list[str]:
    """Characters in ``value`` that other languages (or the eye) take for whitespace but
    JavaScript does not, such as U+0085 and U+200B: they join what they seem to separate."""
    return list(dict.fromkeys(ch for ch in value if ch not in JS_WHITESPACE and (ch.isspace() or not ch.isprintable())))


# --- JSON.stringify, for sizes the platform measures in serialised bytes ------------

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# A stand-in for a lone surrogate when a string is handed to a UTF-8 regex engine: like
# the surrogate (a code point under the "u" flag) it is one non-space, non-word
# character, so no pattern of the schema can tell the two apart.
_SURROGATE_STAND_IN = "\ufffd"


def without_lone_surrogates(value: str) -> str:
    """``value`` with each unpaired surrogate (JSON allows "\\ud800") replaced by U+FFFD."""
    if value.isascii():
        return value
    return _LONE_SURROGATE.sub(_SURROGATE_STAND_IN, value)


def js_number(value: float) -> str:
    """Number::toString as JSON.stringify writes it (non-finite numbers become null)."""
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "0"
    if value < 0:
        return "-" + js_number(-value)
    from decimal import Decimal  # only for the rare float in a payload

    sign, digits_tuple, exponent = Decimal(repr(value)).normalize().as_tuple()
    digits = "".join(map(str, digits_tuple))
    k = len(digits)
    n = int(exponent) + k  # the decimal point sits after n digits
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    e = n - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"


def escape_lone_surrogates(text: str) -> str:
    """``text`` with each unpaired surrogate written as its JSON escape, as JSON.stringify does.

    Python's json emits them raw, and UTF-8 cannot encode them; the escape reads back as the same value.
    """
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _js_string(value: str) -> str:
    return escape_lone_surrogates(json.dumps(value, ensure_ascii=False))


def js_stringify(value: Any) -> str:
    """JSON.stringify(value) for a JSON.parse result (compact, insertion order)."""
    if value is None or value is True or value is False:
        return json.dumps(value)
    if isinstance(value, str):
        return _js_string(value)
    if isinstance(value, int):
        if abs(value) < 2**53:
            return str(value)
        try:
            return js_number(float(value))  # JSON.parse reads every number as a double
        except OverflowError:
            return "null"
    if isinstance(value, float):
        return js_number(value)
    if isinstance(value, list):
        return "[" + ",".join(js_stringify(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{_js_string(str(k))}:{js_stringify(v)}" for k, v in value.items()) + "}"
    return "null"


# Names for the control characters that pass for whitespace somewhere (unicodedata has none).
_CONTROL_NAMES = {0x09: "CHARACTER TABULATION", 0x0A: "LINE FEED", 0x0B: "LINE TABULATION", 0x0C: "FORM FEED",
                  0x0D: "CARRIAGE RETURN", 0x1C: "FILE SEPARATOR", 0x1D: "GROUP SEPARATOR",
                  0x1E: "RECORD SEPARATOR", 0x1F: "UNIT SEPARATOR", 0x85: "NEXT LINE"}


def char_name(ch: str) -> str:
    """``U+0085 NEXT LINE``: a character as a message names it."""
    import unicodedata

    name = _CONTROL_NAMES.get(ord(ch)) or unicodedata.name(ch, "")
    return f"U+{ord(ch):04X} {name}".rstrip()


# --- values quoted in messages ------------------------------------------------------


def _escape_invisible(ch: str) -> str:
    code = ord(ch)
    if code > 0xFFFF:  # as JSON writes it: a surrogate pair
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def _visible(json_text: str) -> str:
    # Every character Python calls non-printable (controls, format characters such as
    # U+200B and U+FEFF, separators other than the space, lone surrogates, unassigned
    # code points) becomes a JSON escape, so the text still reads back as the same value.
    if json_text.isprintable():
        return json_text
    return "".join(ch if ch.isprintable() else _escape_invisible(ch) for ch in json_text)


# The longest a quoted value or key gets in a message: a key can be a megabyte long.
QUOTE_MAX = 80


def quote(value: str, limit: int = QUOTE_MAX) -> str:
    """``value`` as a JSON string literal in which no character is invisible, at most ``limit``
    characters long (a longer one is cut, and ends in "…" instead of its closing quote)."""
    # Only the head can be shown: each character takes at least one, so limit of them are plenty.
    head = value if len(value) <= limit else value[:limit]
    # What json.dumps(head, ensure_ascii=False) returns for a str (its encoder calls this very
    # function), without building a JSONEncoder on every call: a message quotes a value or two.
    return cut(_visible(encode_basestring(head)), limit)


def cut(text: str, limit: int) -> str:
    """``text`` shortened to fewer than ``limit`` characters plus "…", never inside an escape."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    i = 0
    while i < len(head):
        if head[i] == "\\":
            width = 6 if head[i + 1: i + 2] == "u" else 2
            if i + width > len(head):
                head = head[:i]
                break
            i += width
        else:
            i += 1
    return head + "…"


# json.dumps(value, ensure_ascii=False) builds this encoder on every call; one shared instance
# gives the same text (encode keeps no state between calls, so threads can share it).
_ENCODER = json.JSONEncoder(ensure_ascii=False)


def show(value: Any, limit: int = QUOTE_MAX) -> str:
    """A JSON rendering of ``value`` for messages: invisible characters escaped, at most ``limit`` characters."""
    if isinstance(value, str):
        return quote(value, limit)
    try:
        text = _ENCODER.encode(value)
    except (TypeError, ValueError):
        text = repr(value)
    return cut(_visible(text), limit)


# --- Number(string) ------------------------------------------------------------------------

_JS_DECIMAL = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|Infinity)", re.ASCII)
_JS_RADIX = re.compile(r"0(?:([xX])([0-9a-fA-F]+)|([oO])([0-7]+)|([bB])([01]+))", re.ASCII)


def js_string_to_number(value: str) -> float:
    """What JavaScript's ``Number(value)`` gives for a string: ``""`` and blanks are 0, hex/octal/binary
    literals count, ``Infinity`` does, anything else is NaN (Python's float() is wider: "nan", "1_0")."""
    text = js_trim(value)
    if not text:
        return 0.0
    radix = _JS_RADIX.fullmatch(text)
    if radix:
        digits = next(g for g in radix.groups()[1::2] if g is not None)
        base = {"x": 16, "o": 8, "b": 2}[next(g for g in radix.groups()[0::2] if g is not None).lower()]
        try:
            return float(int(digits, base))
        except OverflowError:  # past the largest double: JavaScript rounds to Infinity
            return math.inf
    if not _JS_DECIMAL.fullmatch(text):
        return math.nan
    return float(text.replace("Infinity", "inf"))

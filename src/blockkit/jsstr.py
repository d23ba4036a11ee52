"""JavaScript string semantics, which the platform uses wherever it measures or
matches strings (PLATFORM.md §2)."""

from __future__ import annotations

import re

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


def utf16_len(value: str) -> int:
    """Length in UTF-16 code units, as JavaScript's ``.length`` counts it."""
    if value.isascii():
        return len(value)
    # surrogatepass: a lone surrogate (JSON allows "\\ud800") is one unit, as in JavaScript
    return len(value.encode("utf-16-le", "surrogatepass")) // 2


def is_blank(value: str) -> bool:
    return not js_trim(value)

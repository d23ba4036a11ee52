"""JavaScript string semantics, which the platform uses wherever it measures or
matches strings (PLATFORM.md §2)."""

from __future__ import annotations

import json
import math
import re
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


def utf16_len(value: str) -> int:
    """Length in UTF-16 code units, as JavaScript's ``.length`` counts it."""
    if value.isascii():
        return len(value)
    # surrogatepass: a lone surrogate (JSON allows "\\ud800") is one unit, as in JavaScript
    return len(value.encode("utf-16-le", "surrogatepass")) // 2


def is_blank(value: str) -> bool:
    return not js_trim(value)


# --- JSON.stringify, for sizes the platform measures in serialised bytes ------------

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


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


def _js_string(value: str) -> str:
    text = json.dumps(value, ensure_ascii=False)
    # JSON.stringify escapes unpaired surrogates; Python would emit them raw.
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


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

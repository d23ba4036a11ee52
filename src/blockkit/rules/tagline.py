"""Server rule on the store tagline: its trimmed length in UTF-16 code units."""

from __future__ import annotations

from typing import Any, Iterator

from blockkit.jsstr import js_trim, utf16_len
from blockkit.platform import LIMITS
from blockkit.rules.base import Hit, RuleContext, rule
from blockkit.rules.guard import at, fits_utf16

# The trimmed tagline is no longer than the raw one, whose code points the schema caps.
_GUARD = at(["tagline"], fits_utf16(LIMITS.tagline_max))


@rule("BK201", "tagline-too-long", layer="server", severity="error", keys=("tagline",), guard=_GUARD)
def tagline_too_long(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """The trimmed tagline is longer than 140 UTF-16 code units.

    ## What it does
    Trims the tagline as JavaScript's `String.prototype.trim` does (which strips
    U+FEFF and U+3000 but not U+0085) and measures what is left in UTF-16 code
    units, as the server does. Characters outside the Basic Multilingual Plane,
    such as most emoji, count 2. A blank tagline is reported by the schema layer
    (BK104), and a raw tagline over 140 characters by BK105, so this rule only
    reports what those two miss.

    ## Why it matters
    The schema counts raw code points, the server counts trimmed UTF-16 units, and
    a manifest must pass both. 71 emoji pass the schema and are refused at review.

    ## Example
    "tagline": "🎨🎨🎨 ... 71 emoji ... 🎨"

    ## Fix
    Shorten the tagline until it is at most 140 UTF-16 code units after trimming
    (70 emoji, or 140 ASCII characters).
    """
    tagline = manifest.get("tagline")
    if not isinstance(tagline, str):
        return
    trimmed = js_trim(tagline)
    if not trimmed or len(tagline) > LIMITS.tagline_max:
        return  # blank: BK104; raw length over the cap: BK105
    units = utf16_len(trimmed)
    if units > LIMITS.tagline_max:
        yield Hit(
            "/tagline",
            f"tagline is {units} UTF-16 code units long after trimming; at most {LIMITS.tagline_max} are allowed",
            hint="emoji and other characters outside the Basic Multilingual Plane count 2; shorten the tagline",
        )

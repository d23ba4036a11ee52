"""Server rule: length caps counted in UTF-16 code units, as the server counts them."""

from __future__ import annotations

from typing import Any, Iterator

from blockkit.jsstr import utf16_len
from blockkit.platform import LIMITS
from blockkit.rules.base import Hit, RuleContext, as_dict, as_list, pointer_join, rule
from blockkit.rules.guard import at, each_item, fits_utf16
from blockkit.rules.server_support import human_path, iter_goods, only_ascii_strings

# Top-level string fields and their caps. The tagline (trimmed) is BK201 and a
# good's justification (trimmed) is BK212; `name` has no cap.
_TOP_LEVEL_CAPS: tuple[tuple[str, int], ...] = (
    ("blockId", LIMITS.block_id_max),
    ("repository", LIMITS.repository_max),
    ("buildCommand", LIMITS.build_command_max),
    ("outputDir", LIMITS.output_dir_max),
)
_PAGE_CAPS: tuple[tuple[str, int], ...] = (
    ("path", LIMITS.page_path_max),
    ("title", LIMITS.page_title_max),
    ("icon", LIMITS.page_icon_max),
)
_GOOD_CAPS: tuple[tuple[str, int], ...] = (
    ("id", LIMITS.good_id_max),
    ("title", LIMITS.good_title_max),
    ("description", LIMITS.good_description_max),
)


def capped_strings(manifest: dict[str, Any]) -> Iterator[tuple[tuple[Any, ...], Any, int]]:
    """(path, value, cap) for every string the server caps by its raw length.

    A path, not a pointer: the pointer is built only for a string that is too long
    (a hostile manifest can hold hundreds of thousands of goods).
    """
    for key, cap in _TOP_LEVEL_CAPS:
        yield (key,), manifest.get(key), cap
    page = as_dict(manifest.get("page"))
    for key, cap in _PAGE_CAPS:
        yield ("page", key), page.get(key), cap
    for index, item in enumerate(as_list(manifest.get("publicSettingsKeys"))):
        yield ("publicSettingsKeys", index), item, LIMITS.public_settings_key_len_max
    for scope, text in as_dict(manifest.get("scopeJustifications")).items():
        yield ("scopeJustifications", scope), text, LIMITS.scope_justification_max
    for index, good in iter_goods(manifest):
        for key, cap in _GOOD_CAPS:
            yield ("goods", index, key), good.get(key), cap


# Every string capped_strings yields fits its cap in UTF-16 units.
_GUARD = {"allOf": [
    *(at([key], fits_utf16(cap)) for key, cap in _TOP_LEVEL_CAPS),
    *(at(["page", key], fits_utf16(cap)) for key, cap in _PAGE_CAPS),
    at(["publicSettingsKeys"], each_item(fits_utf16(LIMITS.public_settings_key_len_max))),
    at(["scopeJustifications"], {"additionalProperties": fits_utf16(LIMITS.scope_justification_max)}),
    at(["goods"], each_item({"allOf": [at([key], fits_utf16(cap)) for key, cap in _GOOD_CAPS]})),
]}


@rule("BK224", "too-long-in-utf16", layer="server", severity="error", guard=_GUARD)
def too_long_in_utf16(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """A string fits the schema's cap in characters but not the server's in UTF-16 units.

    ## What it does
    Measures every capped string as JavaScript's `.length` does, in UTF-16 code
    units, where characters outside the Basic Multilingual Plane (most emoji)
    count 2: blockId (40), repository (200), buildCommand (128), outputDir (256),
    publicSettingsKeys items (64), scope justifications (500), page path (256),
    title (128) and icon (128), good id (64), title (80) and description (500).
    It reports only strings within the schema's cap in code points, since BK105
    already reports the others.

    ## Why it matters
    The schema counts code points, the server UTF-16 units, and a manifest must
    pass both: a 41-emoji good title passes the schema and is refused at review.

    ## Example
    "title": "🎁 ... 41 emoji ... 🎁"   (82 UTF-16 units; the cap is 80)

    ## Fix
    Shorten the string; count an emoji as two characters.
    """
    if only_ascii_strings(ctx):
        return  # an ASCII string is as long in UTF-16 units as in code points, which the schema caps
    for path, value, cap in capped_strings(manifest):
        if not isinstance(value, str) or len(value) > cap:
            continue  # other types: BK102; over the cap in code points: BK105
        units = utf16_len(value)
        if units > cap:
            pointer = pointer_join("", *path)
            yield Hit(pointer, f"{human_path(pointer)} is {units} UTF-16 code units long; at most {cap} are allowed",
                      hint="characters outside the Basic Multilingual Plane, such as most emoji, count 2")

"""Server rules on the goods catalogue (spec: goods entry and goods rules 1 and 3)."""

from __future__ import annotations

import json
from typing import Any, Iterator

from blockkit.jsstr import is_blank, js_stringify, js_trim, quote, utf16_len
from blockkit.platform import APP_UNLOCK, GOODS_PURCHASE_SCOPE, LIMITS
from blockkit.rules.base import Hit, RuleContext, as_list, declared_scopes, rule
from blockkit.rules.guard import all_of, at, each_item, fits_utf16, not_blank
from blockkit.rules.server_support import good_pointer, iter_goods, schema_reports_approve

# A goods entry that _app_unlocks yields.
_UNLOCK = {"type": "object", "required": ["kind"], "properties": {"kind": {"const": APP_UNLOCK}}}


def _each_good(schema: dict[str, Any]) -> dict[str, Any]:
    return at(["goods"], each_item(schema))


def _each_unlock(schema: dict[str, Any]) -> dict[str, Any]:
    return _each_good({"if": _UNLOCK, "then": schema})


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@rule("BK207", "goods-need-purchase-scope", layer="server", severity="error", keys=("goods",), guard={"anyOf": [
    at(["goods"], {"not": {"type": "array", "minItems": 1}}),
    {"required": ["scopes"], "properties": {"scopes": {"type": "array", "contains": {"const": GOODS_PURCHASE_SCOPE}}}},
]})
def goods_need_purchase_scope(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """A goods catalogue is declared without the `goods:purchase:self` scope.

    ## What it does
    Reports a non-empty `goods` list when `scopes` lacks `goods:purchase:self`
    (also for a catalogue holding only an `app_unlock`). The scope's
    justification is checked by BK203 once the scope is declared.

    ## Why it matters
    Selling needs the purchase capability, and the platform requires the scope and
    its justification for any catalogue; without them review refuses it.

    ## Example
    "scopes": ["user:read:self"],
    "goods": [{"id": "pack", "title": "Style pack", "priceBuzz": 100}]

    ## Fix
    "scopes": ["user:read:self", "goods:purchase:self"],
    "scopeJustifications": {"goods:purchase:self": "Sells the style pack declared in goods."}
    """
    if as_list(manifest.get("goods")) and GOODS_PURCHASE_SCOPE not in declared_scopes(manifest):
        yield Hit("/goods", f"a goods catalogue needs the \"{GOODS_PURCHASE_SCOPE}\" scope, which is not declared",
                  at="key", hint=f"add \"{GOODS_PURCHASE_SCOPE}\" to \"scopes\" and justify it in "
                                 "\"scopeJustifications\"")


# A schema cannot compare two goods' ids: the guard holds only for a single good.
@rule("BK208", "duplicate-good-id", layer="server", severity="error", keys=("goods",),
      guard=at(["goods"], {"maxItems": 1}))
def duplicate_good_id(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """Two goods share an id.

    ## What it does
    Reports every goods entry whose `id` was already used by an earlier entry,
    at the repeated id.

    ## Why it matters
    The id is the entitlement key: two goods with one id cannot be told apart once
    bought, and the platform refuses the catalogue.

    ## Example
    "goods": [{"id": "pack", ...}, {"id": "pack", ...}]

    ## Fix
    Give each good its own id. Do not rename an id that was already sold: that
    orphans the entitlements granted under it.
    """
    first: dict[str, int] = {}
    for index, good in iter_goods(manifest):
        good_id = good.get("id")
        if not isinstance(good_id, str):
            continue
        if good_id in first:
            yield Hit(good_pointer(index, "id"),
                      f"goods[{index}] repeats the id {quote(good_id)} of goods[{first[good_id]}]",
                      hint="ids must be unique; choose a new id for one of them")
        else:
            first[good_id] = index


def _app_unlocks(manifest: dict[str, Any]) -> Iterator[tuple[int, dict[str, Any]]]:
    for index, good in iter_goods(manifest):
        if good.get("kind") == APP_UNLOCK:
            yield index, good


@rule("BK209", "multiple-app-unlocks", layer="server", severity="error", stage="submit", keys=("goods",),
      guard=at(["goods"], {"not": {"contains": _UNLOCK, "minContains": LIMITS.app_unlocks_max + 1}}))
def multiple_app_unlocks(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """More than one good has kind `app_unlock`.

    ## What it does
    Reports each `app_unlock` good after the first, at its `kind`.

    ## Why it matters
    A manifest may declare at most one `app_unlock`; the platform refuses a second
    one at submit.

    ## Example
    "goods": [{"id": "unlock", "kind": "app_unlock", ...}, {"id": "unlock-pro", "kind": "app_unlock", ...}]

    ## Fix
    Keep one `app_unlock`; make the others ordinary goods (`"kind": "good"`) or remove them.
    """
    unlocks = list(_app_unlocks(manifest))
    if len(unlocks) <= LIMITS.app_unlocks_max:
        return
    first = unlocks[0][0]
    for index, _ in unlocks[LIMITS.app_unlocks_max:]:
        yield Hit(good_pointer(index, "kind"),
                  f"goods[{index}] is another \"{APP_UNLOCK}\" good (goods[{first}] is one already); "
                  f"at most {LIMITS.app_unlocks_max} is allowed",
                  hint="make it an ordinary good (\"kind\": \"good\") or remove it")


@rule("BK210", "app-unlock-price", layer="server", severity="error", stage="submit", keys=("goods",),
      guard=_each_unlock(at(["priceBuzz"], {"maximum": LIMITS.app_unlock_price_max})))
def app_unlock_price(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """An `app_unlock` good costs more than 5000 Buzz.

    ## What it does
    Reports the `priceBuzz` of an `app_unlock` good above 5000 (ordinary goods may
    cost up to 50000, which the schema checks).

    ## Why it matters
    The platform caps the price of unlocking an app and refuses a higher one at
    submit.

    ## Example
    {"id": "unlock", "kind": "app_unlock", "title": "Full app", "priceBuzz": 8000, ...}

    ## Fix
    Price the unlock at 5000 Buzz or less.
    """
    cap = LIMITS.app_unlock_price_max
    for index, good in _app_unlocks(manifest):
        price = good.get("priceBuzz")
        if _is_number(price) and price > cap:
            yield Hit(good_pointer(index, "priceBuzz"),
                      f"goods[{index}] is an \"{APP_UNLOCK}\" priced at {json.dumps(price)} Buzz; "
                      f"at most {cap} is allowed",
                      hint=f"set \"priceBuzz\" to {cap} or less")


@rule("BK211", "app-unlock-unjustified", layer="server", severity="error", stage="submit", keys=("goods",),
      guard=_each_unlock({"required": ["justification"],
                          "properties": {"justification": {"type": "string", **not_blank()}}}))
def app_unlock_unjustified(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """An `app_unlock` good has no justification.

    ## What it does
    Reports an `app_unlock` good whose `justification` is missing, or blank after
    JavaScript trimming. A missing one is reported at the good, a blank one at the
    justification.

    ## Why it matters
    Moderators decide on an unlock from its justification (it is never shown to
    the viewer); the platform refuses an unlock without one at submit.

    ## Example
    {"id": "unlock", "kind": "app_unlock", "title": "Full app", "priceBuzz": 500}

    ## Fix
    Add "justification": "Unlocks the batch mode; single runs stay free." (1-500
    characters after trimming).
    """
    for index, good in _app_unlocks(manifest):
        text = good.get("justification")
        if "justification" not in good or (not isinstance(text, str) and not schema_reports_approve(ctx)):
            yield Hit(good_pointer(index), f"goods[{index}] is an \"{APP_UNLOCK}\" without a justification",
                      at="open", hint="add \"justification\": \"<why the unlock is worth its price>\" for moderators")
        elif isinstance(text, str) and is_blank(text):
            yield Hit(good_pointer(index, "justification"),
                      f"the justification of \"{APP_UNLOCK}\" goods[{index}] is blank",
                      hint="write 1-500 characters for moderators")


@rule("BK212", "good-justification-length", layer="server", severity="error", keys=("goods",),
      guard=_each_good(at(["justification"], all_of(not_blank(), fits_utf16(LIMITS.good_justification_max)))))
def good_justification_length(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """A good's justification is blank or longer than 500 characters after trimming.

    ## What it does
    Trims each good's `justification` with JavaScript `trim` and reports it when
    nothing is left (ordinary goods; a blank unlock justification is BK211) or
    when more than 500 UTF-16 code units are left while the raw text passes the
    schema's 500-character cap (BK105 reports the rest).

    ## Why it matters
    A justification is optional on ordinary goods, but when present it must have
    1-500 characters after trimming; the server counts UTF-16 units, so emoji
    count 2.

    ## Example
    {"id": "pack", "title": "Style pack", "priceBuzz": 100, "justification": "   "}

    ## Fix
    Write a real justification, or remove the key from an ordinary good.
    """
    cap = LIMITS.good_justification_max
    for index, good in iter_goods(manifest):
        text = good.get("justification")
        if not isinstance(text, str):
            continue
        trimmed = js_trim(text)
        pointer = good_pointer(index, "justification")
        if not trimmed:
            if good.get("kind") != APP_UNLOCK:
                yield Hit(pointer, f"the justification of goods[{index}] is blank",
                          hint="write 1-500 characters, or remove \"justification\"")
        elif len(text) <= cap and utf16_len(trimmed) > cap:
            yield Hit(pointer, f"the justification of goods[{index}] is {utf16_len(trimmed)} UTF-16 code units "
                               f"long after trimming; at most {cap} are allowed",
                      hint="emoji and other characters outside the Basic Multilingual Plane count 2")


# --- payload size: the bytes of JSON.stringify(payload) in UTF-8 ---------------

def serialized_size(value: Any) -> int:
    return len(js_stringify(value).encode("utf-8"))


# A payload that cannot reach the cap (or one that is not an object): a few members, with
# short names and short strings or plain numbers as values. JSON.stringify writes a character
# in at most 6 bytes (\u001f; an astral one takes 4 bytes for its one code point), a number
# in at most 24 (-1.2345678901234567e-300), so each member takes at most
# 2 + 6 * name + 1 + max(2 + 6 * string, 24) + 1 bytes (its colon and comma), the braces 2.
_PAYLOAD_MEMBERS_MAX = 8
_PAYLOAD_NAME_MAX = 20
_PAYLOAD_STRING_MAX = 20
_SMALL_PAYLOAD = {"anyOf": [
    {"not": {"type": "object"}},
    {"type": "object", "maxProperties": _PAYLOAD_MEMBERS_MAX,
     "propertyNames": {"maxLength": _PAYLOAD_NAME_MAX},
     "additionalProperties": {"anyOf": [
         {"type": ["boolean", "null"]},
         {"type": "number", "minimum": -1e15, "maximum": 1e15},
         {"type": "string", "maxLength": _PAYLOAD_STRING_MAX},
     ]}},
]}
assert 2 + _PAYLOAD_MEMBERS_MAX * (2 + 6 * _PAYLOAD_NAME_MAX + 1 + max(2 + 6 * _PAYLOAD_STRING_MAX, 24) + 1) \
    <= LIMITS.good_payload_bytes_max


@rule("BK213", "good-payload-too-large", layer="server", severity="error", keys=("goods",),
      guard=_each_good(at(["payload"], _SMALL_PAYLOAD)))
def good_payload_too_large(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """A good's payload is over 2048 bytes serialised.

    ## What it does
    Serialises each good's `payload` as `JSON.stringify` does (compact, keys in
    their order, unpaired surrogates escaped) and counts the UTF-8 bytes of the
    result; more than 2048 is reported at the `payload` key.

    ## Why it matters
    The payload is copied verbatim onto every entitlement sold; the platform caps
    its size and refuses a larger one.

    ## Example
    "payload": {"presets": [ ... a few kilobytes of settings ... ]}

    ## Fix
    Keep the payload to an identifier or a small map ({"unlocks": "styles"}) and
    look the details up in the block.
    """
    cap = LIMITS.good_payload_bytes_max
    for index, good in iter_goods(manifest):
        payload = good.get("payload")
        if not isinstance(payload, dict):
            continue
        size = serialized_size(payload)
        if size > cap:
            yield Hit(good_pointer(index, "payload"),
                      f"the payload of goods[{index}] is {size} bytes serialised; at most {cap} are allowed",
                      at="key", hint="store an identifier in the payload and keep the details in the block")

"""Server rules on the `iframe` surface: required members, heights and sandbox tokens."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Optional

from blockkit.jsstr import char_name, js_split_whitespace, js_whitespace_lookalikes, quote
from blockkit.platform import (
    FORBIDDEN_SANDBOX_PAIR,
    IFRAME_DEFAULTS,
    IFRAME_REQUIRED_MEMBERS,
    SANDBOX_TOKENS_BY_TIER,
    TRUST_TIERS,
)
from blockkit.rules.base import Hit, RuleContext, rule
from blockkit.rules.guard import JS_SPACE, GuardResult, at
from blockkit.rules.server_support import string_span

if TYPE_CHECKING:
    from blockkit.context import Context

SANDBOX_POINTER = "/iframe/sandbox"


def _only_tokens(tokens: Iterable[str]) -> dict[str, Any]:
    """iframe.sandbox, when a string, holds only ``tokens`` between JavaScript whitespace."""
    names = sorted(tokens)
    assert all(name.replace("-", "").isalpha() for name in names)  # literal in a pattern
    return at(["iframe", "sandbox"],
              {"pattern": f"^{JS_SPACE}*(({'|'.join(names)})({JS_SPACE}+|$))*$"})


_TOKEN_GUARDS = {tier: _only_tokens(tokens) for tier, tokens in SANDBOX_TOKENS_BY_TIER.items()}


def _token_guard(context: "Context") -> GuardResult:
    return _TOKEN_GUARDS.get(context.tier, at(["iframe", "sandbox"], {"not": {"type": "string"}}))


def default_iframe_json() -> str:
    return json.dumps(dict(IFRAME_DEFAULTS))


@rule("BK214", "sandbox-token-not-allowed", layer="server", severity="error", keys=("iframe",), guard=_token_guard)
def sandbox_token_not_allowed(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """A sandbox token is not allowed at the app's trust tier.

    ## What it does
    Splits `iframe.sandbox` on JavaScript whitespace (a no-break space separates
    two tokens, U+0085 does not) and checks each token, case-sensitively, against
    the allowlist of the context's trust tier: `unverified` allows `allow-scripts`
    and `allow-forms`; `verified` adds `allow-popups`, `allow-modals`,
    `allow-pointer-lock` and `allow-downloads`; `internal` adds
    `allow-same-origin`. A token a higher tier allows is reported with that tier;
    any other token is never allowed.

    ## Why it matters
    The sandbox is what keeps a block away from the viewer's session. Review
    refuses tokens beyond the tier, and new apps are always `unverified`.

    ## Example
    "sandbox": "allow-scripts allow-forms allow-popups allow-popups-to-escape-sandbox"

    ## Fix
    "sandbox": "allow-scripts allow-forms"
    """
    sandbox, tokens = _sandbox_tokens(manifest, ctx)
    if sandbox is None:
        return
    tier = ctx.context.tier
    allowed = SANDBOX_TOKENS_BY_TIER.get(tier, frozenset())
    if allowed.issuperset(tokens):
        return
    for start, token in _tokens_with_offsets(sandbox):
        if token in allowed:
            continue
        lowest = _lowest_tier_allowing(token)
        if lowest is not None:
            message = (f"sandbox token {quote(token)} is allowed only from the {lowest} trust tier up; "
                       f"this app is {tier}")
            hint = "remove it; review raises the tier, the manifest cannot"
        else:
            message = f"sandbox token {quote(token)} is not allowed at any trust tier"
            folded = next((t for t in sorted(SANDBOX_TOKENS_BY_TIER[TRUST_TIERS[-1]]) if t.lower() == token.lower()), None)
            hint = (f"tokens are case-sensitive: write \"{folded}\"" if folded is not None
                    else _lookalike_hint(token) or f"allowed at {tier}: {', '.join(sorted(allowed))}")
        yield Hit(SANDBOX_POINTER, message, hint=hint,
                  span=string_span(ctx, SANDBOX_POINTER, start, start + len(token)))


def _sandbox_tokens(manifest: dict[str, Any], ctx: RuleContext) -> tuple[Optional[str], list[str]]:
    """(iframe.sandbox, its tokens), or (None, []) when it is not a string; split once per manifest."""
    iframe = manifest.get("iframe")
    sandbox = iframe.get("sandbox") if isinstance(iframe, dict) else None
    if not isinstance(sandbox, str):
        return None, []
    cached = ctx.cache.get(SANDBOX_POINTER)
    if cached is None or cached[0] is not sandbox:
        cached = ctx.cache[SANDBOX_POINTER] = (sandbox, js_split_whitespace(sandbox))
    return cached


def _lookalike_hint(token: str) -> Optional[str]:
    """Explain a token that holds a character which looks like, or elsewhere is, a separator."""
    odd = js_whitespace_lookalikes(token)
    if not odd:
        return None
    names = " and ".join(char_name(ch) for ch in odd)
    these = "it is" if len(odd) == 1 else "they are"
    return (f"{names} {these.split()[1]} not whitespace to the platform, so {these} part of this token rather "
            "than a separator; separate tokens with plain spaces and remove other invisible characters")


def _tokens_with_offsets(value: str) -> Iterator[tuple[int, str]]:
    """js_split_whitespace, keeping where each token starts."""
    position = 0
    for token in js_split_whitespace(value):
        position = value.index(token, position)
        yield position, token
        position += len(token)


def _lowest_tier_allowing(token: str) -> Optional[str]:
    return next((tier for tier in TRUST_TIERS if token in SANDBOX_TOKENS_BY_TIER[tier]), None)


# Both tokens are there only if both names are in the text.
@rule("BK215", "sandbox-same-origin-with-scripts", layer="server", severity="error", keys=("iframe",),
      guard=at(["iframe", "sandbox"], {"anyOf": [{"not": {"pattern": token}} for token in FORBIDDEN_SANDBOX_PAIR]}))
def sandbox_same_origin_with_scripts(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """`allow-same-origin` is combined with `allow-scripts`.

    ## What it does
    Reports an `iframe.sandbox` that holds both tokens, at every trust tier
    (including `internal`, where `allow-same-origin` alone is allowed).

    ## Why it matters
    A framed page with scripts and its own origin can reach into its frame and
    remove the sandbox attribute, so the sandbox protects nothing. The spec says
    the two must never be combined. (The platform today still lets `internal`
    apps do it; blockkit follows the spec.)

    ## Example
    "sandbox": "allow-scripts allow-same-origin"

    ## Fix
    "sandbox": "allow-scripts"
    """
    _, tokens = _sandbox_tokens(manifest, ctx)
    first, second = FORBIDDEN_SANDBOX_PAIR
    if first in tokens and second in tokens:
        yield Hit(SANDBOX_POINTER, f"iframe.sandbox combines \"{first}\" with \"{second}\", which lets the block "
                                   "lift its own sandbox; this is refused at every trust tier",
                  hint=f"remove \"{first}\"")


# An iframe with every member (a page without one is BK219's, which fails its own guard).
@rule("BK216", "iframe-member-missing", layer="server", severity="error",
      guard={"required": ["iframe"], "properties": {"iframe": {"required": list(IFRAME_REQUIRED_MEMBERS)}}})
def iframe_member_missing(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """The `iframe` object, or one of its members the server requires, is missing.

    ## What it does
    The platform always creates an `iframe` object, so on the server its
    `minHeight`, `maxHeight`, `resizable` and `sandbox` are all required
    (`maxHeight` may be `null`, meaning unbounded). Reports each missing member at
    the `iframe` object, and a manifest with no `iframe` at all at its top level
    (when a `page` is declared, BK219 reports that instead).

    ## Why it matters
    The schema lets these members be omitted, but review refuses the manifest
    without them.

    ## Example
    "iframe": {"minHeight": 600, "sandbox": "allow-scripts"}

    ## Fix
    "iframe": {"minHeight": 600, "maxHeight": null, "resizable": false, "sandbox": "allow-scripts"}
    """
    if "iframe" not in manifest:
        if "page" not in manifest:
            members = ", ".join(IFRAME_REQUIRED_MEMBERS)
            yield Hit("", f"the manifest has no \"iframe\" object; the server requires one with {members}",
                      at="open", hint=f"add \"iframe\": {default_iframe_json()}")
        return
    iframe = manifest["iframe"]
    if not isinstance(iframe, dict):
        return
    for member in IFRAME_REQUIRED_MEMBERS:
        if member not in iframe:
            note = " (null means unbounded)" if IFRAME_DEFAULTS.get(member, 0) is None else ""
            yield Hit("/iframe", f"iframe is missing \"{member}\", which the server requires{note}", at="open",
                      hint=f"add \"{member}\": {json.dumps(IFRAME_DEFAULTS.get(member))}")


def _height(value: Any) -> Optional[float]:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return None


# A schema cannot compare the two heights. It can show that one is not a number, or that
# a step lies between them (min <= step <= max): steps where real manifests' heights lie
# (600-4000, 320-800, 520-1600, 220-600 ...), the likeliest first. Other pairs run the check.
_HEIGHT_STEPS = (4000, 600, 800, 1200, 1600, 400, 1000, 2000, 300, 200, 900, 700, 500, 3000)
_HEIGHT_GUARD = at(["iframe"], {"anyOf": [
    {"properties": {"maxHeight": {"not": {"type": "number"}}}},
    *({"properties": {"minHeight": {"maximum": step}, "maxHeight": {"minimum": step}}} for step in _HEIGHT_STEPS),
    {"properties": {"minHeight": {"not": {"type": "number"}}}},
]})


@rule("BK217", "iframe-height-order", layer="server", severity="error", keys=("iframe",), guard=_HEIGHT_GUARD)
def iframe_height_order(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """`iframe.maxHeight` is smaller than `iframe.minHeight`.

    ## What it does
    When both heights are numbers, reports a `maxHeight` below `minHeight`
    (equal heights are fine; a `null` maxHeight is unbounded).

    ## Why it matters
    The host clamps the frame between the two; an inverted range has no valid
    height and the server refuses it.

    ## Example
    "iframe": {"minHeight": 800, "maxHeight": 600, ...}

    ## Fix
    "iframe": {"minHeight": 600, "maxHeight": 800, ...}
    """
    iframe = manifest.get("iframe")
    if not isinstance(iframe, dict):
        return
    low, high = _height(iframe.get("minHeight")), _height(iframe.get("maxHeight"))
    if low is not None and high is not None and high < low:
        yield Hit("/iframe/maxHeight",
                  f"iframe.maxHeight ({json.dumps(high)}) is smaller than iframe.minHeight ({json.dumps(low)})",
                  hint="make maxHeight at least minHeight, or null for no upper bound")

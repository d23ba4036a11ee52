"""Lint rules on where the block shows: model-slot targets and tier-bound sandbox tokens."""

from __future__ import annotations

import json
from typing import Any, Iterator, Optional

from blockkit.jsstr import char_name, js_split_whitespace, non_html_separators, quote
from blockkit.platform import DEFAULT_TIER, MODERATOR_ONLY_SLOTS, SANDBOX_TOKENS_BY_TIER, TRUST_TIERS
from blockkit.rules.base import Hit, RuleContext, as_dict, as_list, pointer_join, rule


@rule("BK310", "model-slot-target", layer="lint", severity="info")
def model_slot_target(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """A target names a model slot, which is open to moderators' apps only.

    ## What it does
    Reports each `targets` entry whose `slotId` is a model slot
    (`model.sidebar_top`, `model.below_images`, `model.actions_extra`).

    ## Why it matters
    At launch, model slots show blocks of moderators' apps only. The platform
    accepts a third-party app's target but never shows it, so the block is
    invisible on model pages however the review goes.

    ## Example
    "targets": [{"slotId": "model.sidebar_top"}]

    ## Fix
    Keep the target if the app is a moderator's (record that with an exception in
    `blockkit.toml`), and give other apps a `page` so viewers can reach the block.
    """
    for index, target in enumerate(as_list(manifest.get("targets"))):
        slot = as_dict(target).get("slotId")
        if isinstance(slot, str) and slot in MODERATOR_ONLY_SLOTS:
            yield Hit(pointer_join("/targets", index, "slotId"),
                      f"model slot {json.dumps(slot)} shows moderators' apps only at launch: the target is "
                      "accepted but not shown for other apps",
                      hint="declare a page so viewers can reach the block; keep the target for a moderator's app")


def _lowest_tier(token: str) -> Optional[str]:
    return next((tier for tier in TRUST_TIERS if token in SANDBOX_TOKENS_BY_TIER[tier]), None)


@rule("BK311", "sandbox-token-needs-tier", layer="lint", severity="info")
def sandbox_token_needs_tier(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """A sandbox token works only because of the app's trust tier.

    ## What it does
    When checking for a `verified` or `internal` app, reports each `iframe.sandbox`
    token that tier allows but a new (`unverified`) app may not use, naming the
    lowest tier that allows it. Tokens the checked tier refuses are server errors
    (not this rule), so with the default tier this rule never fires.

    ## Why it matters
    The manifest passes for this app only. Reused as a template, forked, or
    submitted for a new app (always `unverified`), it is refused at review.

    ## Example
    With --tier verified:
    "iframe": {"sandbox": "allow-scripts allow-popups", ...}

    ## Fix
    Keep the token if this app needs it and keeps its tier; otherwise use only
    `allow-scripts` and `allow-forms`.
    """
    tier = ctx.context.tier
    if tier == DEFAULT_TIER:
        return
    sandbox = as_dict(manifest.get("iframe")).get("sandbox")
    if not isinstance(sandbox, str):
        return
    allowed_here = SANDBOX_TOKENS_BY_TIER.get(tier, frozenset())
    allowed_new = SANDBOX_TOKENS_BY_TIER[DEFAULT_TIER]
    for token in dict.fromkeys(js_split_whitespace(sandbox)):
        if token in allowed_here and token not in allowed_new:
            needed = _lowest_tier(token)
            yield Hit("/iframe/sandbox",
                      f"sandbox token {json.dumps(token)} needs the {needed} tier: it passes for this {tier} app, "
                      f"but a new ({DEFAULT_TIER}) app with this manifest is refused",
                      hint=f"keep it only while the app stays {needed} or above")


@rule("BK320", "sandbox-separator-not-ascii", layer="lint", severity="warning", fixable="safe")
def sandbox_separator_not_ascii(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """`iframe.sandbox` separates tokens with whitespace that browsers do not split on.

    ## What it does
    Reports an `iframe.sandbox` string that holds JavaScript whitespace other than
    the HTML standard's ASCII whitespace (space, tab, line feed, form feed,
    carriage return): a no-break space, an ideographic space, U+000B and the like.

    ## Why it matters
    The platform splits the sandbox on JavaScript whitespace, so it sees the tokens
    you meant and accepts the manifest. The browser splits the iframe's `sandbox`
    attribute on ASCII whitespace only, so it sees one unknown token where you
    wrote two, and drops both: with `allow-scripts` gone, the block never runs.

    ## Example
    "sandbox": "allow-scripts\u00a0allow-forms"

    ## Fix
    "sandbox": "allow-scripts allow-forms" (`blockkit fix` rewrites the separators as spaces).
    """
    sandbox = as_dict(manifest.get("iframe")).get("sandbox")
    if not isinstance(sandbox, str):
        return
    odd = non_html_separators(sandbox)
    if odd:
        names = ", ".join(char_name(ch) for ch in odd)
        yield Hit("/iframe/sandbox",
                  f"iframe.sandbox {quote(sandbox)} separates tokens with {names}: the platform splits there, "
                  "but browsers split the sandbox attribute on ASCII whitespace only, so they see joined, "
                  "unknown tokens and grant none of them",
                  hint="separate the tokens with plain spaces")

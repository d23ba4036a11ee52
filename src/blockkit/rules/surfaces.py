"""Server rules on surfaces: render mode, the full page, and model-slot targets."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

from blockkit.jsstr import quote
from blockkit.platform import MODEL_SLOTS, PAGE_SLOT, RENDER_MODE_TIERS, TRUST_TIERS
from blockkit.rules.base import Hit, RuleContext, as_list, pointer_join, rule
from blockkit.rules.guard import GuardResult, at, each_item
from blockkit.rules.iframe import default_iframe_json

if TYPE_CHECKING:
    from blockkit.context import Context


def _render_mode_guard(context: "Context") -> GuardResult:
    refused = [mode for mode, tiers in RENDER_MODE_TIERS.items() if context.tier not in tiers]
    return at(["renderMode"], {"not": {"enum": refused}}) if refused else True


def _each_slot(schema: dict[str, Any]) -> dict[str, Any]:
    return at(["targets"], each_item(at(["slotId"], schema)))


@rule("BK218", "render-mode-needs-tier", layer="server", severity="error", keys=("renderMode",),
      guard=_render_mode_guard)
def render_mode_needs_tier(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """`renderMode` needs a higher trust tier than the app has.

    ## What it does
    Reports `renderMode` `inline` or `hybrid` unless the context's trust tier is
    `verified` or `internal`. `iframe`, the default, is open to every tier.

    ## Why it matters
    Inline rendering runs the block outside an iframe's isolation, so only
    reviewed publishers get it. New apps are always `unverified`.

    ## Example
    "renderMode": "inline"   (an unverified app)

    ## Fix
    Remove `renderMode` or set it to "iframe" until review raises the tier.
    """
    mode = manifest.get("renderMode")
    if not isinstance(mode, str) or mode not in RENDER_MODE_TIERS:
        return  # unknown modes are the schema's BK103
    tiers = RENDER_MODE_TIERS[mode]
    tier = ctx.context.tier
    if tier not in tiers:
        needed = " or ".join(t for t in TRUST_TIERS if t in tiers)
        yield Hit("/renderMode", f"renderMode \"{mode}\" needs the {needed} trust tier; this app is {tier}",
                  hint="use \"iframe\" (the default) until review raises the tier")


@rule("BK219", "page-without-iframe", layer="server", severity="error", keys=("page",),
      guard={"dependentRequired": {"page": ["iframe"]}})
def page_without_iframe(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """`page` is declared without an `iframe` object.

    ## What it does
    Reports `page` when the manifest has no `iframe` key.

    ## Why it matters
    The full-page surface runs the block in the platform's iframe, whose
    members (heights, resizing, sandbox) come from `iframe`; the server refuses a
    page without it.

    ## Example
    "page": {"path": "/", "title": "Demo"}   (and no "iframe")

    ## Fix
    Add "iframe": {"minHeight": 600, "maxHeight": null, "resizable": false, "sandbox": "allow-scripts allow-forms"}.
    """
    if "page" in manifest and "iframe" not in manifest:
        yield Hit("/page", "\"page\" needs an \"iframe\" object, and the manifest has none", at="key",
                  hint=f"add \"iframe\": {default_iframe_json()}")


def _slot_ids(manifest: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for index, target in enumerate(as_list(manifest.get("targets"))):
        if isinstance(target, dict):
            slot = target.get("slotId")
            if isinstance(slot, str) and slot:  # empty: the schema's BK105
                yield pointer_join("/targets", index, "slotId"), slot


@rule("BK220", "unknown-slot", layer="server", severity="error", keys=("targets",),
      guard=_each_slot({"anyOf": [{"not": {"type": "string"}}, {"enum": ["", *MODEL_SLOTS, PAGE_SLOT]}]}))
def unknown_slot(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """A target names a slot the platform does not have.

    ## What it does
    Reports a `targets[].slotId` that is not a registered model slot
    (`model.sidebar_top`, `model.below_images`, `model.actions_extra`). The page
    slot `app.page` is BK221.

    ## Why it matters
    The block is mounted only into registered slots; an unknown slot is refused at
    review (a typo would otherwise leave the block never shown).

    ## Example
    "targets": [{"slotId": "model.sidebar"}]

    ## Fix
    "targets": [{"slotId": "model.sidebar_top"}]
    """
    for pointer, slot in _slot_ids(manifest):
        if slot in MODEL_SLOTS or slot == PAGE_SLOT:
            continue
        from difflib import get_close_matches  # only for a slot that is not known

        close = get_close_matches(slot, MODEL_SLOTS, n=1, cutoff=0.6)
        hint = f"did you mean \"{close[0]}\"?" if close else f"known model slots: {', '.join(MODEL_SLOTS)}"
        yield Hit(pointer, f"slot {quote(slot)} is not a registered model slot", hint=hint)


@rule("BK221", "page-slot-as-target", layer="server", severity="error", keys=("targets",),
      guard=_each_slot({"not": {"const": PAGE_SLOT}}))
def page_slot_as_target(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """The page slot `app.page` is used as a target.

    ## What it does
    Reports a `targets[].slotId` of `app.page`.

    ## Why it matters
    `app.page` is where the platform mounts the full-page surface; a page is
    declared with `page`, and the server refuses the slot in `targets`.

    ## Example
    "targets": [{"slotId": "app.page"}]

    ## Fix
    Remove the target and declare "page": {"path": "/", "title": "Demo"}.
    """
    for pointer, slot in _slot_ids(manifest):
        if slot == PAGE_SLOT:
            hint = ("remove this target; the page is already declared in \"page\"" if "page" in manifest
                    else "remove this target and declare \"page\": {\"path\": \"/\", \"title\": \"...\"}")
            yield Hit(pointer, f"\"{PAGE_SLOT}\" is the page slot and cannot be a target; use \"page\" instead",
                      hint=hint)

"""Lint rules on repeated entries: scopes and targets listed twice."""

from __future__ import annotations

import json
from typing import Any, Iterator

from blockkit.rules.base import Hit, RuleContext, as_dict, as_list, pointer_join, rule


@rule("BK302", "duplicate-scope", layer="lint", severity="warning")
def duplicate_scope(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """A scope is listed more than once.

    ## What it does
    Reports every repeat of a scope in `scopes`, at the repeat, naming where the
    scope first appears.

    ## Why it matters
    A scope is granted once however often it is listed. The repeat says nothing to
    the platform but makes the list harder to review, and a diff that removes
    one copy looks like it drops a capability when it does not.

    ## Example
    "scopes": ["user:read:self", "ai:write:budgeted", "user:read:self"]

    ## Fix
    "scopes": ["user:read:self", "ai:write:budgeted"] (`blockkit fix` drops the repeats).
    """
    first: dict[str, int] = {}
    for index, scope in enumerate(as_list(manifest.get("scopes"))):
        if not isinstance(scope, str):
            continue
        if scope in first:
            yield Hit(pointer_join("/scopes", index),
                      f"scope {json.dumps(scope)} is listed again (first at scopes[{first[scope]}])",
                      hint="remove the repeat")
        else:
            first[scope] = index


@rule("BK303", "duplicate-target", layer="lint", severity="warning")
def duplicate_target(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """Two targets name the same slot.

    ## What it does
    Reports every `targets` entry whose `slotId` an earlier entry already names.

    ## Why it matters
    A block is mounted once per slot: the repeat adds nothing, counts against the
    limit of 16 targets, and usually hides a typo in the slot that was meant.

    ## Example
    "targets": [{"slotId": "model.sidebar_top"}, {"slotId": "model.sidebar_top"}]

    ## Fix
    Keep one entry per slot: "targets": [{"slotId": "model.sidebar_top"}]
    """
    first: dict[str, int] = {}
    for index, target in enumerate(as_list(manifest.get("targets"))):
        slot = as_dict(target).get("slotId")
        if not isinstance(slot, str):
            continue
        if slot in first:
            yield Hit(pointer_join("/targets", index, "slotId"),
                      f"slot {json.dumps(slot)} is targeted again (first in targets[{first[slot]}])",
                      hint="remove the repeated target, or name the slot you meant")
        else:
            first[slot] = index

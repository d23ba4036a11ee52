"""Lint rules on keys: unknown keys, and the manifest's ``$schema``."""

from __future__ import annotations

import json
from difflib import get_close_matches
from functools import lru_cache
from typing import Any, Iterator, Mapping, Optional

from blockkit.jsstr import quote, show
from blockkit.platform import SCHEMA_ID, STALE_TARGET_KEYS, STALE_TOP_LEVEL_KEYS
from blockkit.rules.base import Hit, RuleContext, as_dict, as_list, pointer_join, rule


@lru_cache(maxsize=None)
def _known_keys() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(top-level keys, keys of a targets entry), as the canonical schema defines them."""
    from blockkit.schema import load_schema

    properties = as_dict(load_schema().get("properties"))
    target_items = as_dict(as_dict(as_dict(properties.get("targets")).get("items")).get("properties"))
    return tuple(properties), tuple(target_items)


def _advice(key: str, known: tuple[str, ...], stale: Mapping[str, Optional[str]]) -> tuple[str, Optional[str]]:
    """(message tail, hint) for an unknown key."""
    if key in stale:
        instead = stale[key]
        if instead is None:
            return "a stale key the platform ignores", f"remove {quote(key)}"
        return ("a stale key the platform ignores",
                f"remove {quote(key)} (the nearest key the manifest does define is \"{instead}\")")
    close = get_close_matches(key, list(known), n=1, cutoff=0.75)
    if close:
        return "the platform ignores it", f"did you mean \"{close[0]}\"?"
    return "the platform ignores it", "remove it, or check the key's spelling against the manifest spec"


@rule("BK301", "unknown-key", layer="lint", severity="warning")
def unknown_key(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """A key the manifest format does not define.

    ## What it does
    Reports keys at the top level of the manifest and inside `targets` entries that
    the manifest spec does not define, with a "did you mean" for near misses
    (`scopeJustification`) and a note on stale keys real manifests still carry
    (`appId`, `settings`, `description`, `targets[].priority`). Unknown keys inside
    `iframe`, `page` and goods entries are schema errors (BK106), not this rule.

    ## Why it matters
    The platform accepts unknown keys here and silently ignores them. A misspelt
    key therefore looks set and does nothing: `scopeJustification` leaves every
    sensitive scope unjustified, and a stale `appId` suggests a binding that does
    not exist.

    ## Example
    "scopeJustification": {"ai:write:budgeted": "Generates images"}

    ## Fix
    Spell the key as the spec does ("scopeJustifications"), or delete it. `blockkit
    fix` removes a stale top-level `appId`.
    """
    top_level, target_keys = _known_keys()
    for key in manifest:
        if key not in top_level:
            tail, hint = _advice(key, top_level, STALE_TOP_LEVEL_KEYS)
            yield Hit(pointer_join("", key), f"unknown key {quote(key)}: {tail}", at="key", hint=hint)
    for index, target in enumerate(as_list(manifest.get("targets"))):
        for key in as_dict(target):
            if key not in target_keys:
                tail, hint = _advice(key, target_keys, STALE_TARGET_KEYS)
                yield Hit(pointer_join("/targets", index, key),
                          f"unknown key {quote(key)} in targets[{index}]: {tail}", at="key", hint=hint)


@rule("BK312", "schema-url-missing", layer="lint", severity="info")
def schema_url_missing(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """The manifest does not name its schema.

    ## What it does
    Reports a manifest without a `$schema` key.

    ## Why it matters
    The platform ignores `$schema`, but editors read it: with the canonical URL they
    complete keys and underline mistakes while you type, before any tool runs.

    ## Example
    {"blockId": "demo-block", "version": "1.0.0", ...}

    ## Fix
    Add "$schema": "https://civitai.com/schemas/app-block/v1.json" as the first key.
    """
    if "$schema" not in manifest:
        yield Hit("", "the manifest has no \"$schema\", so editors cannot validate it as you type", at="open",
                  hint=f"add \"$schema\": {json.dumps(SCHEMA_ID)}")


@rule("BK313", "schema-url-not-canonical", layer="lint", severity="warning")
def schema_url_not_canonical(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """`$schema` is not the canonical schema URL.

    ## What it does
    Reports a string `$schema` that is not exactly the canonical URL of the manifest
    schema, `https://civitai.com/schemas/app-block/v1.json`.

    ## Why it matters
    Editors validate against whatever `$schema` names: an old, local or misspelt URL
    gives you the wrong rules (or none) while the platform applies the real ones.

    ## Example
    "$schema": "http://civitai.com/schemas/app-block/v1"

    ## Fix
    "$schema": "https://civitai.com/schemas/app-block/v1.json" (`blockkit fix` sets it).
    """
    value = manifest.get("$schema")
    if isinstance(value, str) and value != SCHEMA_ID:
        yield Hit("/$schema", f"\"$schema\" is {show(value)}, not the canonical schema URL",
                  hint=f"use {json.dumps(SCHEMA_ID)}")

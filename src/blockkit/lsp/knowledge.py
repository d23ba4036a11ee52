"""What hover and completion say: the schema at a pointer, the platform's tables, the rule docs.

The facts come from where the CLI reads them: the bundled schema (its constraints and
descriptions), blockkit.platform (scopes and their sensitivity, slots, sandbox tokens by
tier, ratings, categories, limits) and the rules' own documentation (``blockkit explain``).
``PLATFORM_NOTES`` adds one line per key on what the platform does with it, written from the
spec, where the schema has no words.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional, Union

from blockkit import platform

# What the platform does with each key (pointer pattern, "*" for any array index).
PLATFORM_NOTES: dict[str, str] = {
    "/$schema": "Not read by the platform. Set it to the canonical schema URL and editors validate the file.",
    "/blockId": "Becomes the submission slug and the app's host name, `<blockId>.<app domain>`. Checked at submit.",
    "/version": "The version submitted for review; a new version is needed to change the approved goods.",
    "/name": "The app's display name in the store. Checked at submit.",
    "/tagline": ("Copied to the store listing when a moderator approves the version, and re-synced on each "
                 "later approved version."),
    "/repository": ("Shown on the store detail page, stored as `https://<host>/<owner>/<repo>`; removing the "
                    "key clears the link."),
    "/type": "Informational; the platform does nothing with it but refuses any value other than \"block\".",
    "/contentRating": "The maturity rating viewers and the host filter on.",
    "/category": ("Copied to the listing at approval unless a moderator set one; an unknown value is refused at "
                  "submit."),
    "/renderMode": ("How the host mounts the app: `iframe` for every tier; `inline` and `hybrid` need a "
                    "verified or internal tier."),
    "/auth": ("Which token the host hands the block: a block-scoped JWT, or (with `oauth`, when the server "
              "allows it and the viewer is signed in) an OAuth access token for the block's own client."),
    "/trustTier": "Owned by the server, which assigns it at approval; a manifest that sets it is refused.",
    "/scopes": ("The capabilities the block requests from the viewer; review grants a superset. Each must be a "
                "known scope."),
    "/scopeJustifications": ("Why each scope is needed, shown to moderators; required for every sensitive scope "
                             "(missing ones are refused at submit)."),
    "/minApiVersion": "Informational: the host bridge version the block expects.",
    "/buildCommand": ("The command the platform's builder runs; omit it for a static app. When set, outputDir "
                      "is required."),
    "/outputDir": "The folder the build writes and the platform serves, relative to the project.",
    "/publicSettingsKeys": "Settings keys anonymous viewers may read; omitted means none.",
    "/assetBundleUrl": ("A public https URL on an origin the app's OAuth client allows; private or off-origin "
                        "URLs are refused."),
    "/iframe": "The embedded surface; the server always creates it and fills in the members you leave out.",
    "/iframe/src": "Owned by the server, which stamps it at build or approval; setting it is refused.",
    "/iframe/minHeight": "The smallest height (px) the host gives the frame.",
    "/iframe/maxHeight": "The largest height (px) the host lets the frame grow to; null means unbounded.",
    "/iframe/resizable": "Whether the host honours the block's resize messages.",
    "/iframe/sandbox": ("The frame's sandbox tokens, space-separated; which tokens are allowed depends on the "
                        "trust tier."),
    "/bootSkeleton": ("True: index.html paints its own loading state inside #root, so the full-page host drops "
                      "its overlay at mount."),
    "/page": "The full-page surface, mounted at `/apps/run/<slug>`.",
    "/page/path": "The page's path under the app, starting with `/`.",
    "/page/title": "Shown in the host's chrome around the page.",
    "/page/icon": "The icon name shown with the page.",
    "/page/buzzBudgetPerGen": ("The Buzz one generation may spend with an `ai:write:budgeted` token; the server "
                               "clamps it to its cap."),
    "/goods": "The digital goods catalogue sold for Buzz; the approved catalogue is the one that can be sold.",
    "/goods/*/id": "The entitlement key: changing it orphans entitlements already granted.",
    "/goods/*/title": "Shown to the viewer at purchase.",
    "/goods/*/priceBuzz": ("Whole Buzz; at most 5000 for an `app_unlock`. The platform keeps 30 percent, the "
                           "owner gets 70."),
    "/goods/*/description": "Shown with the good.",
    "/goods/*/kind": "`good`, or `app_unlock` (at most one per manifest; recorded like any entitlement).",
    "/goods/*/justification": "For moderators only (required for an `app_unlock`); never shown to the viewer.",
    "/goods/*/payload": "Opaque data copied onto the entitlement; at most 2048 bytes serialized.",
    "/targets": "The model-page slots the app is mounted in.",
    "/targets/*/slotId": "A registered model-page slot (not the page slot).",
}

# What each scope lets the block do, written from its name and the spec's grouping.
SCOPE_GRANTS: dict[str, str] = {
    "models:read:self": "read the viewer's own models",
    "media:read:owned": "read media the viewer owns",
    "user:read:self": "read the viewer's profile (and, with `auth: oauth`, get an OAuth token)",
    "ai:write:budgeted": "run generations that spend the viewer's Buzz, within page.buzzBudgetPerGen",
    "buzz:read:self": "read the viewer's Buzz balance",
    "block:settings:read": "read the block's settings",
    "block:settings:write": "change the block's settings",
    "social:tip:self": "tip other users with the viewer's Buzz",
    "apps:storage:read": "read the app's per-viewer storage",
    "apps:storage:write": "write the app's per-viewer storage",
    "apps:storage:shared:read": "read the app's shared storage (what all viewers wrote)",
    "apps:storage:shared:write": "write to the app's shared storage, which other users see",
    "collections:read:self": "read the viewer's public collections",
    "collections:write:self": "add to and change the viewer's collections",
    "collections:read:private": "read the viewer's private collections",
    "goods:purchase:self": "sell the manifest's goods to the viewer for Buzz",
    "goods:read:self": "read back the viewer's entitlements to the app's goods",
    "posts:write:self": "publish posts as the viewer, which other users see",
}

SLOT_NOTES: dict[str, str] = {
    platform.PAGE_SLOT: "the full-page surface (declared with `page`, not in targets)",
    **{slot: "a model-page slot (shown for moderators' apps only at launch)" for slot in platform.MODEL_SLOTS},
}

ENUM_NOTES: dict[str, dict[str, str]] = {
    "/contentRating": {"g": "general audiences", "pg": "parental guidance", "pg13": "13 and over",
                       "r": "restricted: adults", "x": "explicit: adults only"},
    "/category": {"generation": "makes images or video", "games": "a game", "utility": "a tool",
                  "discovery": "helps viewers find content", "moderation": "for moderators",
                  "analytics": "statistics and insight", "other": "none of the above"},
    "/renderMode": {"iframe": "a sandboxed frame (every tier)", "inline": "in the host page (verified or internal)",
                    "hybrid": "frame and inline parts (verified or internal)"},
    "/auth": {"block-token": "a block-scoped JWT (the default)",
              "oauth": "an OAuth access token for the app's own client"},
    "/goods/*/kind": {"good": "an ordinary good (the default)", "app_unlock": "unlocks the app (at most one)"},
}

_INDEX = re.compile(r"/\d+(?=/|$)")


def pattern_of(pointer: str) -> str:
    """``/goods/3/id`` -> ``/goods/*/id``: the key of the tables above."""
    return _INDEX.sub("/*", pointer)


@lru_cache(maxsize=1)
def _schema() -> dict[str, Any]:
    from blockkit.schema import load_schema

    return load_schema()


def schema_at(path: list[Union[str, int]]) -> Optional[dict[str, Any]]:
    """The subschema for the value at ``path`` (None where the schema says nothing)."""
    node: Any = _schema()
    for part in path:
        if not isinstance(node, dict):
            return None
        if isinstance(part, int) or (isinstance(part, str) and part.isdigit() and "items" in node):
            node = node.get("items")
            continue
        properties = node.get("properties", {})
        if part in properties:
            node = properties[part]
        elif isinstance(node.get("additionalProperties"), dict):
            node = node["additionalProperties"]
        else:
            return None
    return node if isinstance(node, dict) else None


def allowed_keys(path: list[Union[str, int]]) -> list[str]:
    """The keys the schema allows in the object at ``path`` (closed or not), in schema order."""
    node = schema_at(path)
    if node is None:
        return []
    names = node.get("propertyNames", {}).get("enum")
    if names:
        return list(names)
    return [k for k, v in node.get("properties", {}).items() if not (isinstance(v, dict) and v.get("not") == {})]


def required_keys(path: list[Union[str, int]]) -> list[str]:
    node = schema_at(path) or {}
    return list(node.get("required", []))


def enum_values(path: list[Union[str, int]]) -> list[Any]:
    node = schema_at(path) or {}
    if "enum" in node:
        return list(node["enum"])
    if "const" in node:
        return [node["const"]]
    kind = node.get("type")
    if kind == "boolean" or (isinstance(kind, list) and "boolean" in kind):
        return [True, False]
    return []


def constraints(node: dict[str, Any]) -> list[str]:
    """The schema's constraints on a value, in words."""
    said: list[str] = []
    kind = node.get("type")
    if kind:
        said.append("type: " + (" or ".join(kind) if isinstance(kind, list) else kind))
    for key, words in (("minLength", "at least {} characters"), ("maxLength", "at most {} characters"),
                       ("minimum", "at least {}"), ("maximum", "at most {}"), ("exclusiveMinimum", "more than {}"),
                       ("maxItems", "at most {} items"), ("pattern", "pattern `{}`"), ("default", "default `{}`")):
        if key in node:
            value = node[key]
            if key == "default":
                import json

                value = json.dumps(value)
            said.append(words.format(value))
    if "enum" in node:
        said.append("one of " + ", ".join(f"`{v}`" for v in node["enum"]))
    if node.get("required"):
        said.append("requires " + ", ".join(f"`{k}`" for k in node["required"]))
    return said


def key_hover(path: list[Union[str, int]], tier: str) -> Optional[str]:
    """Markdown for a key: what it is (schema), what the platform does with it, its rules."""
    from blockkit.lsp.cursor import pointer_of

    pointer = pointer_of(path)
    pattern = pattern_of(pointer)
    parent = path[:-1]
    name = str(path[-1]) if path else ""
    if parent == ["scopeJustifications"]:
        scope = scope_hover(name, tier)
        return None if scope is None else f"Justification for {scope}"
    node = schema_at(path)
    note = PLATFORM_NOTES.get(pattern)
    if node is None and note is None:
        return None
    lines = [f"**`{name}`** ({pattern})"]
    if name in required_keys(parent):
        lines[0] += " (required)"
    if node is not None and node.get("description"):
        lines += ["", node["description"]]
    if note:
        lines += ["", note]
    if node is not None:
        said = constraints(node)
        if said:
            lines += ["", "; ".join(said)]
    rules = rules_for(pattern)
    if rules:
        lines += ["", "Rules: " + ", ".join(f"{code} ({summary})" for code, summary in rules)]
    return "\n".join(lines)


@lru_cache(maxsize=None)
def rules_for(pattern: str) -> list[tuple[str, str]]:
    """The rules whose documentation names the key (as `key` or the pointer)."""
    from blockkit.rules import load_all

    parts = [p for p in pattern.split("/")[1:] if p != "*"]
    if not parts:
        return []
    last = parts[-1]
    if len(parts) == 1:  # a top-level key, written as code: `name`, "name"
        wanted = re.compile(rf"[`\"]{re.escape(last)}[`\"]")
    else:  # a member, written with its parent: iframe.sandbox, goods[].priceBuzz, page.path
        wanted = re.compile(rf"{re.escape(parts[-2])}(?:\[\d*\])?\.{re.escape(last)}(?![\w-])"
                            rf"|[`\"]{re.escape(last)}[`\"]")
    found = []
    for code, rule in sorted(load_all().items()):
        if rule.layer == "parse" or (rule.keys is not None and parts[0] not in rule.keys):
            continue  # (a rule declares the top-level keys it reads)
        if rule.check is None and rule.layer == "lint":
            continue  # lint's reports on the config and baseline files, not on the manifest
        doc = rule.doc
        if wanted.search(doc.summary) or wanted.search(doc.what) or pattern in doc.what:
            found.append((code, doc.summary))
    return found[:8]


def scope_hover(scope: str, tier: str = "unverified") -> Optional[str]:
    info = platform.SCOPES.get(scope)
    if info is None:
        return None
    grants = SCOPE_GRANTS.get(scope, "")
    lines = [f"**`{scope}`**: lets the block {grants}."]
    if info.sensitive:
        lines.append("**Sensitive**: needs a scopeJustifications entry, and the viewer is asked to consent.")
    else:
        lines.append("Not sensitive.")
    if info.oauth_bit is not None:
        lines.append(f"OAuth bit {info.oauth_bit}: an OAuth client must allow it.")
    return "\n\n".join(lines)


def value_hover(path: list[Union[str, int]], value: str, tier: str) -> Optional[str]:
    from blockkit.lsp.cursor import pointer_of

    pattern = pattern_of(pointer_of(path))
    if pattern == "/scopes/*":
        return scope_hover(value, tier)
    if pattern == "/targets/*/slotId" and value in SLOT_NOTES:
        return f"**`{value}`**: {SLOT_NOTES[value]}."
    if pattern == "/iframe/sandbox":
        return sandbox_hover(value, tier)
    notes = ENUM_NOTES.get(pattern, {})
    if value in notes:
        return f"**`{value}`**: {notes[value]}."
    return None


def sandbox_hover(value: str, tier: str) -> str:
    allowed = platform.SANDBOX_TOKENS_BY_TIER.get(tier, frozenset())
    lines = [f"Sandbox tokens allowed at the `{tier}` tier: " + ", ".join(f"`{t}`" for t in sorted(allowed))]
    first, second = platform.FORBIDDEN_SANDBOX_PAIR
    lines.append(f"`{first}` with `{second}` is refused at every tier.")
    return "\n\n".join(lines)


def sandbox_tokens() -> list[tuple[str, list[str]]]:
    """Every sandbox token any tier allows, with the tiers that allow it."""
    tokens: dict[str, list[str]] = {}
    for tier in platform.TRUST_TIERS:
        for token in sorted(platform.SANDBOX_TOKENS_BY_TIER[tier]):
            tokens.setdefault(token, []).append(tier)
    return sorted(tokens.items())


def explain_markdown(code: str) -> Optional[str]:
    """``blockkit explain CODE`` as Markdown."""
    from blockkit.ruleinfo import describe
    from blockkit.rules import load_all

    rule = load_all().get(code)
    if rule is None:
        return None
    info = describe(rule)
    if info["fixable"] == "safe":
        fix = f"safe: `blockkit fix` will {info['autofix']}"
    elif info["fixable"] == "unsafe":
        fix = f"unsafe: `blockkit fix --unsafe` will {info['autofix']}"
    else:
        fix = "no"
    return (f"**{code}** ({info['name']}): {info['summary']}\n\n"
            f"{info['severity']}, {info['layer']} layer; autofix: {fix}\n\n"
            f"**What it does.** {info['what']}\n\n**Why it matters.** {info['why']}\n\n"
            f"**Example**\n\n```\n{info['example']}\n```\n\n**Fix.** {info['fix']}")


def rule_docs_uri(code: str, template: Optional[str] = None) -> Optional[str]:
    """Where the rule's documentation is: ``template`` with ``{code}`` filled in, or a Markdown
    page of ``blockkit explain CODE`` written once per version under the user's cache folder
    (always there, offline, and the text of the installed blockkit)."""
    if template:
        return template.replace("{code}", code)
    text = explain_markdown(code)
    if text is None:
        return None
    from blockkit._version import __version__

    folder = _cache_folder() / "rules" / __version__
    page = folder / f"{code}.md"
    if not page.is_file():
        try:
            folder.mkdir(parents=True, exist_ok=True)
            from blockkit.fix.atomic import write_file

            write_file(page, (f"<!-- blockkit explain {code} (blockkit {__version__}) -->\n\n{text}\n").encode("utf-8"))
        except OSError:
            return None
    return page.resolve().as_uri()


def _cache_folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME")
    return Path(base) / "blockkit" if base else Path.home() / ".cache" / "blockkit"

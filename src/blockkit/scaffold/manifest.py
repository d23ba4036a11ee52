"""The block.manifest.json a new block starts with.

Built as data and serialised with ``json``, not templated, so no answer can
break its syntax.
"""

from __future__ import annotations

import json
from typing import Any

from blockkit.jsstr import utf16_len
from blockkit.platform import (
    DEFAULT_TIER,
    IFRAME_DEFAULTS,
    IFRAME_REQUIRED_MEMBERS,
    LIMITS,
    SANDBOX_TOKENS_BY_TIER,
    SCHEMA_ID,
)
from blockkit.scaffold.catalog import TEMPLATES
from blockkit.scaffold.options import OAUTH, Answers
from blockkit.scaffold.package_managers import OUTPUT_DIR, PACKAGE_MANAGERS

INITIAL_VERSION = "0.1.0"
PAGE_PATH = "/"
# Model slots sit beside other content; the block grows with RESIZE_IFRAME
# between these bounds instead of taking a page's height.
MODEL_SLOT_MIN_HEIGHT = 120
MODEL_SLOT_MAX_HEIGHT = 800

SAMPLE_GOOD: dict[str, Any] = {
    "id": "supporter-pack",
    "title": "Supporter pack",
    "priceBuzz": 100,
    "description": "A thank-you pack for supporting this block.",
}


def sandbox_for(tier: str = DEFAULT_TIER) -> str:
    # The unverified tier's tokens, in the order the platform lists them:
    # a new app is always unverified.
    allowed = SANDBOX_TOKENS_BY_TIER[tier]
    order = ("allow-scripts", "allow-forms")
    return " ".join([t for t in order if t in allowed] + sorted(allowed - set(order)))


def _page_title(name: str) -> str:
    # page.title is capped while name is not; cut by JavaScript length.
    title = name
    while utf16_len(title) > LIMITS.page_title_max:
        title = title[:-1]
    return title.rstrip()


def build_manifest(answers: Answers) -> dict[str, Any]:
    manifest: dict[str, Any] = {
        "$schema": SCHEMA_ID,
        "blockId": answers.block_id,
        "version": INITIAL_VERSION,
        "name": answers.name,
    }
    if answers.tagline:
        manifest["tagline"] = answers.tagline
    if answers.repository:
        manifest["repository"] = answers.repository
    if answers.category:
        manifest["category"] = answers.category
    manifest["contentRating"] = answers.content_rating
    if answers.auth == OAUTH:
        manifest["auth"] = OAUTH
    scopes = answers.all_scopes
    manifest["scopes"] = list(scopes)
    justifications = {s: answers.justifications[s] for s in scopes if s in answers.justifications}
    if justifications:
        manifest["scopeJustifications"] = justifications

    iframe = dict(IFRAME_DEFAULTS)
    iframe["sandbox"] = sandbox_for()
    if answers.on_page:
        page: dict[str, Any] = {"path": PAGE_PATH, "title": _page_title(answers.name)}
        if answers.buzz_budget is not None:
            page["buzzBudgetPerGen"] = answers.buzz_budget
        manifest["page"] = page
    else:
        manifest["targets"] = [{"slotId": answers.surface}]
        iframe.update(minHeight=MODEL_SLOT_MIN_HEIGHT, maxHeight=MODEL_SLOT_MAX_HEIGHT, resizable=True)
    manifest["iframe"] = {key: iframe[key] for key in IFRAME_REQUIRED_MEMBERS}
    manifest["bootSkeleton"] = answers.boot_skeleton
    if answers.goods:
        manifest["goods"] = [dict(SAMPLE_GOOD)]
    if TEMPLATES[answers.template].builds and answers.package_manager:
        manifest["buildCommand"] = PACKAGE_MANAGERS[answers.package_manager].build_command
        manifest["outputDir"] = OUTPUT_DIR
    return manifest


def manifest_text(manifest: dict[str, Any]) -> str:
    return json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"

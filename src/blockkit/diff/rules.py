"""Rules of the diff layer (BK401-BK499): what review says about a new version of a manifest.

These rules compare two documents, so they have no single-document check
function; ``blockkit.diff.compare`` produces their findings.
"""

from __future__ import annotations

from blockkit.rules.base import declare


def _doc(summary: str, what: str, why: str, example: str, fix: str) -> str:
    return f"{summary}\n\n## What it does\n{what}\n\n## Why it matters\n{why}\n\n## Example\n{example}\n\n## Fix\n{fix}"


VERSION_NOT_INCREASED = declare("BK401", "version-not-increased", layer="diff", severity="error", doc=_doc(
    "The manifest changed but its version did not increase.",
    "Compares the two versions under Semantic Versioning precedence (semver.org §11, prerelease rules "
    "included: 1.0.0-alpha < 1.0.0-alpha.1 < 1.0.0-beta.2 < 1.0.0-beta.11 < 1.0.0-rc.1 < 1.0.0) and reports "
    "a new version that is lower than, or equal to, the old one while the manifest's content changed.",
    "A changed manifest ships as a new version: a price or catalogue change, for one, takes effect only through "
    "a new version and re-review, and a version that does not rise above the last one is not a newer version.",
    'old: "version": "1.2.0"    new: "version": "1.2.0-rc.1" (a prerelease ranks below its release)',
    'Raise the version: "version": "1.2.1" (or "1.3.0" for new features).'))

GOOD_REMOVED = declare("BK402", "good-removed", layer="diff", severity="warning", doc=_doc(
    "A good of the catalogue was removed.",
    "Reports each goods id present in the old catalogue and absent from the new one (unless it looks "
    "renamed, which BK403 reports). The finding points at the new catalogue.",
    "A good's id is the entitlement key: viewers who bought it keep an entitlement that the block no longer "
    "offers or recognises, so what they paid for may silently stop working.",
    'old: "goods": [{"id": "style-pack", ...}]    new: "goods": []',
    "Keep the good (a good can stay listed and simply not be promoted), or keep honouring its entitlement in "
    "the block's code before removing it."))

GOOD_RENAMED = declare("BK403", "good-renamed", layer="diff", severity="warning", doc=_doc(
    "A good's id changed.",
    "Reports a removed goods id and an added one that look like the same good: the same title, or every "
    "other field equal.",
    "The id is the entitlement key, so entitlements already sold under the old id are orphaned: the block "
    "looks up the new id and finds no purchase.",
    'old: {"id": "style-pack", "title": "Style pack", ...}    new: {"id": "styles", "title": "Style pack", ...}',
    'Keep the old id ("id": "style-pack") and change only the title or description.'))

GOOD_PRICE_CHANGED = declare("BK404", "good-price-changed", layer="diff", severity="info", doc=_doc(
    "A good's price changed.",
    "Reports each good whose `priceBuzz` differs between the two versions.",
    "The catalogue a moderator approved is the one that can be sold: a new price needs a new version and "
    "re-review before it can be charged.",
    'old: "priceBuzz": 100    new: "priceBuzz": 150',
    "Nothing to change if intended; ship it as a new version and expect review."))

CATALOGUE_CHANGED = declare("BK405", "catalogue-changed", layer="diff", severity="info", doc=_doc(
    "The goods catalogue changed.",
    "Reports a good that was added, and a good whose title, kind, description, justification or payload "
    "changed.",
    "Catalogue changes need a new version and re-review before they can be sold.",
    'new: "goods": [..., {"id": "supporter", "title": "Supporter badge", "priceBuzz": 20}]',
    "Nothing to change if intended; ship it as a new version and expect review."))

SCOPE_ADDED = declare("BK406", "scope-added", layer="diff", severity="info", doc=_doc(
    "A scope was added.",
    "Reports each scope the new version declares and the old one did not (sensitive scopes are BK407).",
    "Viewers consented to the old set of scopes; every new scope needs their consent again, and review "
    "checks it against what it granted.",
    'old: "scopes": ["user:read:self"]    new: "scopes": ["user:read:self", "models:read:self"]',
    "Nothing to change if the block needs the scope; otherwise remove it."))

SENSITIVE_SCOPE_ADDED = declare("BK407", "sensitive-scope-added", layer="diff", severity="warning", doc=_doc(
    "A sensitive scope was added.",
    "Reports each added scope that spends or reads the viewer's Buzz, reads private data, or writes data "
    "other users see (for example `ai:write:budgeted`, `goods:purchase:self`, `posts:write:self`).",
    "Viewers must consent again, review looks harder at these, and the scope needs a justification in "
    "`scopeJustifications` or the submission is refused.",
    'new: "scopes": ["user:read:self", "buzz:read:self"]',
    'Justify it: "scopeJustifications": {"buzz:read:self": "Shows the viewer\'s balance before a purchase."}'
    ", or drop the scope if the block can do without it."))

SCOPE_REMOVED = declare("BK408", "scope-removed", layer="diff", severity="info", doc=_doc(
    "A scope was removed.",
    "Reports each scope the old version declared and the new one does not.",
    "Code that still calls the API behind the scope will fail for viewers of the new version.",
    'old: "scopes": ["user:read:self", "apps:storage:write"]    new: "scopes": ["user:read:self"]',
    "Make sure the block no longer uses the scope, or keep it."))

BLOCK_ID_CHANGED = declare("BK409", "block-id-changed", layer="diff", severity="error", doc=_doc(
    "The blockId changed.",
    "Reports a new version whose `blockId` differs from the old one.",
    "The blockId is the submission slug and the host label `<blockId>.<app domain>`: a different id is a "
    "different app, with none of the old one's listing, consent or entitlements.",
    'old: "blockId": "gen-matrix"    new: "blockId": "gen-matrix-2"',
    'Keep the old id: "blockId": "gen-matrix". Start a new app deliberately with `blockkit new`.'))

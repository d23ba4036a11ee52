"""Lint rules on what flows to the store listing: the repository link and the tagline."""

from __future__ import annotations

import json
from typing import Any, Iterator

from blockkit.jsstr import is_blank, js_trim
from blockkit.rules.base import Hit, RuleContext, rule


@rule("BK314", "repository-not-stored-form", layer="lint", severity="warning")
def repository_not_stored_form(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """The repository link is accepted but stored in another form.

    ## What it does
    Reports a valid `repository` link that differs from the form the platform
    stores, `https://<host>/<owner>/<repo>`: a trailing `/` or `.git`, a query, a
    fragment, or upper case in the host. Invalid links are server errors (BK202).

    ## Why it matters
    The platform strips these parts and shows the stored link on the store page.
    The manifest then disagrees with what users see, and every version re-submits
    a value that changes on the way in.

    ## Example
    "repository": "https://GitHub.com/acme/demo-block.git"

    ## Fix
    "repository": "https://github.com/acme/demo-block" (`blockkit fix` rewrites it).
    """
    from blockkit.urls import normalize_repository

    value = manifest.get("repository")
    if not isinstance(value, str):
        return
    stored = normalize_repository(value)
    if stored is not None and stored != value:
        yield Hit("/repository", f"the platform stores this link as {json.dumps(stored)}",
                  hint=f"write {json.dumps(stored)}")


@rule("BK315", "tagline-surrounding-whitespace", layer="lint", severity="warning")
def tagline_surrounding_whitespace(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """The tagline starts or ends with whitespace.

    ## What it does
    Reports a `tagline` that JavaScript's `trim` would change (spaces, tabs, line
    breaks, no-break spaces, U+FEFF, ...). A tagline with nothing but whitespace is
    a schema error, not this rule.

    ## Why it matters
    The tagline flows to the store listing, and the server measures its trimmed
    length while the schema counts the raw one: stray whitespace shows up as odd
    spacing in the listing and makes the two length checks disagree.

    ## Example
    "tagline": " Remix any image in one click "

    ## Fix
    "tagline": "Remix any image in one click" (`blockkit fix` trims it).
    """
    value = manifest.get("tagline")
    if isinstance(value, str) and not is_blank(value) and js_trim(value) != value:
        yield Hit("/tagline", "the tagline has whitespace at its start or end",
                  hint=f"write {json.dumps(js_trim(value), ensure_ascii=False)}")

"""Lint rules on what the block can reach at run time: OAuth tokens and goods."""

from __future__ import annotations

import json
from typing import Any, Iterator

from blockkit.platform import APP_UNLOCK, GOODS_READ_SCOPE, OAUTH_USER_SCOPE
from blockkit.rules.base import Hit, RuleContext, as_dict, as_list, declared_scopes, pointer_join, rule


@rule("BK307", "oauth-without-user-scope", layer="lint", severity="warning")
def oauth_without_user_scope(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """`auth` is "oauth" but the host can never mint an OAuth token.

    ## What it does
    Reports `"auth": "oauth"` in a manifest that does not declare `user:read:self`.

    ## Why it matters
    The host mints an OAuth token only when `user:read:self` is declared (and the
    viewer is signed in); otherwise it hands the block a block token. A block
    written for the OAuth token then calls catalogue routes with a token they do
    not accept.

    ## Example
    "auth": "oauth",
    "scopes": ["models:read:self"]

    ## Fix
    Add "user:read:self" to `scopes`, or drop `auth` to use the block token.
    """
    if manifest.get("auth") == "oauth" and OAUTH_USER_SCOPE not in declared_scopes(manifest):
        yield Hit("/auth", f"auth is \"oauth\" but {OAUTH_USER_SCOPE} is not declared, so the host always hands "
                           "the block a block token instead",
                  hint=f"add \"{OAUTH_USER_SCOPE}\" to scopes, or remove \"auth\"")


@rule("BK308", "goods-without-read-scope", layer="lint", severity="warning")
def goods_without_read_scope(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """The block sells goods but cannot see what a viewer bought.

    ## What it does
    Reports a non-empty `goods` catalogue in a manifest that does not declare
    `goods:read:self`.

    ## Why it matters
    Selling needs `goods:purchase:self`; reading a viewer's entitlements back needs
    `goods:read:self`. Without it the block cannot tell a buyer from anyone else,
    so a purchase changes nothing the viewer can see.

    ## Example
    "scopes": ["goods:purchase:self"],
    "goods": [{"id": "pack", "title": "Pack", "priceBuzz": 100}]

    ## Fix
    "scopes": ["goods:purchase:self", "goods:read:self"]
    """
    goods = manifest.get("goods")
    if isinstance(goods, list) and goods and GOODS_READ_SCOPE not in declared_scopes(manifest):
        yield Hit("/goods", f"the manifest sells goods but does not declare {GOODS_READ_SCOPE}, so the block "
                            "cannot read back what a viewer bought", at="key",
                  hint=f"add \"{GOODS_READ_SCOPE}\" to scopes")


@rule("BK309", "app-unlock-not-gated", layer="lint", severity="info")
def app_unlock_not_gated(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """An `app_unlock` good does not lock anything yet.

    ## What it does
    Reports each good of kind `app_unlock`.

    ## Why it matters
    An unlock is recorded like any other entitlement, but no access gate on the
    platform reads it yet: viewers who did not buy it still open the app. Buyers
    who expect exclusivity will be surprised unless the block checks the
    entitlement itself.

    ## Example
    "goods": [{"id": "full", "title": "Full access", "priceBuzz": 500,
               "kind": "app_unlock", "justification": "Unlocks the editor"}]

    ## Fix
    Gate the unlocked features in the block's own code by reading the viewer's
    entitlements (with `goods:read:self`), or sell it as an ordinary good.
    """
    for index, good in enumerate(as_list(manifest.get("goods"))):
        if as_dict(good).get("kind") == APP_UNLOCK:
            good_id = as_dict(good).get("id")
            name = f" {json.dumps(good_id)}" if isinstance(good_id, str) else ""
            yield Hit(pointer_join("/goods", index, "kind"),
                      f"app_unlock good{name} does not gate entry: the platform does not check it yet",
                      hint="check the entitlement in the block's code (goods:read:self) before showing "
                           "what it unlocks")

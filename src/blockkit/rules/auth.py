"""Server rule on `auth`: an OAuth token cannot reach app storage."""

from __future__ import annotations

from typing import Any, Iterator

from blockkit.jsstr import quote
from blockkit.platform import OAUTH_AUTH, STORAGE_SCOPE_PREFIX
from blockkit.rules.base import Hit, RuleContext, declared_scopes, rule
from blockkit.rules.guard import at, each_item

# auth is not "oauth", or no declared scope is a storage scope.
_GUARD = {"anyOf": [at(["auth"], {"not": {"const": OAUTH_AUTH}}),
                    at(["scopes"], each_item({"not": {"pattern": "^" + STORAGE_SCOPE_PREFIX}}))]}
assert STORAGE_SCOPE_PREFIX.replace(":", "").isalpha()  # literal in a pattern


@rule("BK206", "oauth-with-storage-scope", layer="server", severity="error", stage="submit", keys=("auth",),
      guard=_GUARD)
def oauth_with_storage_scope(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """`auth: "oauth"` is combined with an `apps:storage:*` scope.

    ## What it does
    Reports `"auth": "oauth"` when any declared scope starts with `apps:storage:`.

    ## Why it matters
    App storage is reached through the host's postMessage bridge, which accepts
    only block JWTs, never an OAuth token. The platform refuses the combination at
    submit.

    ## Example
    "auth": "oauth",
    "scopes": ["user:read:self", "apps:storage:read"]

    ## Fix
    Keep `auth` at `block-token` (the default) while the block uses storage, or
    drop the storage scopes.
    """
    if manifest.get("auth") != OAUTH_AUTH:
        return
    storage = list(dict.fromkeys(s for s in declared_scopes(manifest) if s.startswith(STORAGE_SCOPE_PREFIX)))
    if storage:
        yield Hit("/auth", f"auth \"oauth\" cannot be combined with storage scopes ({', '.join(map(quote, storage))})",
                  hint="remove \"auth\" (block tokens reach storage), or drop the apps:storage:* scopes")

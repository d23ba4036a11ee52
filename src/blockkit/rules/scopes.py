"""Server rules on scopes: justifications for sensitive scopes, and the review grant."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any, Iterator

from blockkit.jsstr import is_blank, quote
from blockkit.platform import SCOPES, SENSITIVE_SCOPES
from blockkit.rules.base import Hit, RuleContext, as_dict, as_list, pointer_join, rule
from blockkit.rules.guard import GuardResult, not_blank
from blockkit.rules.server_support import schema_reports_approve

if TYPE_CHECKING:
    from blockkit.context import Context


def _declares(scope: str) -> dict[str, Any]:
    return {"required": ["scopes"], "properties": {"scopes": {"type": "array", "contains": {"const": scope}}}}


# Each declared sensitive scope has a string justification that is not blank.
_JUSTIFIED_GUARD = {"allOf": [
    {"if": _declares(scope),
     "then": {"required": ["scopeJustifications"], "properties": {"scopeJustifications": {
         "type": "object", "required": [scope], "properties": {scope: {"type": "string", **not_blank()}}}}}}
    for scope in sorted(SENSITIVE_SCOPES)
]}
# Each known scope with a justification is declared. Asked only when there are justifications
# (dependentSchemas); when they are not an object, "required" holds of them and the guard
# fails, where the check finds nothing: safe, and rare.
_DECLARED = [{"if": {"properties": {"scopeJustifications": {"required": [scope]}}}, "then": _declares(scope)}
             for scope in SCOPES]


def _undeclared_guard(context: "Context") -> GuardResult:
    if context.runs("approve"):  # schema_reports_approve: keys that are not scope ids are BK112's
        return {"dependentSchemas": {"scopeJustifications": {"allOf": _DECLARED}}}
    # Only the submit stage runs: keys that are not scope ids are reported here too.
    return {"dependentSchemas": {"scopeJustifications": {"allOf": [
        *_DECLARED, {"properties": {"scopeJustifications": {"propertyNames": {"enum": list(SCOPES)}}}}]}}}


def _granted_guard(context: "Context") -> GuardResult:
    if context.granted_scopes is None:
        return True  # the rule does not run without a known grant
    outside = sorted(set(SCOPES) - context.granted_scopes)
    if not outside:
        return True
    return {"properties": {"scopes": {"items": {"not": {"enum": outside}}}}}


def _first_occurrences(manifest: dict[str, Any]) -> Iterator[tuple[int, str]]:
    """(index, scope) for each distinct string in `scopes`, at its first position."""
    seen: set[str] = set()
    for index, scope in enumerate(as_list(manifest.get("scopes"))):
        if isinstance(scope, str) and scope not in seen:
            seen.add(scope)
            yield index, scope


@lru_cache(maxsize=1024)
def _unjustified(index: int, scope: str) -> Hit:
    """BK203's hit for a sensitive scope without a justification at ``/scopes/<index>``.

    Kept (a Hit is immutable): the same few scopes go unjustified at the same few places in
    manifest after manifest, and the strings cost more to build than to look up. ``scope`` is
    one of SENSITIVE_SCOPES, so the cache holds at most 7 entries per index.
    """
    return Hit(pointer_join("/scopes", index),
               f"sensitive scope \"{scope}\" has no justification in scopeJustifications",
               hint=f"add \"scopeJustifications\": {{\"{scope}\": \"<why the block needs it>\"}}")


@rule("BK203", "sensitive-scope-unjustified", layer="server", severity="error", stage="submit", keys=("scopes",),
      guard=_JUSTIFIED_GUARD)
def sensitive_scope_unjustified(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """A sensitive scope has no justification.

    ## What it does
    For each declared sensitive scope (`ai:write:budgeted`, `social:tip:self`,
    `goods:purchase:self`, `buzz:read:self`, `collections:read:private`,
    `apps:storage:shared:write`, `posts:write:self`), looks up its entry in
    `scopeJustifications` and reports it when the entry is missing or blank after
    JavaScript trimming. A missing entry is reported at the scope in `scopes`, a
    blank one at the justification.

    ## Why it matters
    These scopes spend or read the viewer's Buzz, read private data or write data
    other users see. The platform refuses the upload at submit without a reason
    a moderator can weigh.

    ## Example
    "scopes": ["buzz:read:self"]
    (no "scopeJustifications" entry for it)

    ## Fix
    "scopeJustifications": {"buzz:read:self": "Shows the viewer's balance before a paid generation."}
    """
    scopes = manifest.get("scopes")
    if not isinstance(scopes, list):
        return
    table = as_dict(manifest.get("scopeJustifications"))
    seen: set[str] = set()
    for index, scope in enumerate(scopes):
        # The first occurrence of each sensitive scope (as _first_occurrences, without a generator).
        if not isinstance(scope, str) or scope not in SENSITIVE_SCOPES or scope in seen:
            continue
        seen.add(scope)
        text = table.get(scope)
        if scope not in table or not isinstance(text, str):
            if scope in table and schema_reports_approve(ctx):
                continue  # a non-string justification is the schema's BK102
            yield _unjustified(index, scope)
        elif is_blank(text):
            if text == "" and schema_reports_approve(ctx):
                continue  # the schema's minLength (BK105) already says it is empty
            yield Hit(pointer_join("/scopeJustifications", scope),
                      f"the justification for sensitive scope \"{scope}\" is blank",
                      hint="say what the block does with the scope; moderators read it")


@rule("BK204", "justification-for-undeclared-scope", layer="server", severity="error", stage="submit",
      keys=("scopeJustifications",), guard=_undeclared_guard)
def justification_for_undeclared_scope(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """A scopeJustifications key names a scope the manifest does not declare.

    ## What it does
    Reports every key of `scopeJustifications` that is not listed in `scopes`.
    Keys that are not scope ids at all are the schema's BK112 (except when only
    the submit stage runs, where this rule reports them too).

    ## Why it matters
    Every key must also appear in `scopes`; the platform refuses the upload at
    submit otherwise. Usually the scope was dropped from `scopes` and its
    justification left behind, or the scope was never added.

    ## Example
    "scopes": ["user:read:self"],
    "scopeJustifications": {"buzz:read:self": "Shows the balance."}

    ## Fix
    Add the scope to `scopes` if the block uses it; otherwise delete the justification.
    """
    declared = {scope for scope in as_list(manifest.get("scopes")) if isinstance(scope, str)}
    for key in as_dict(manifest.get("scopeJustifications")):
        if key in declared:
            continue
        if key not in SCOPES and schema_reports_approve(ctx):
            continue  # BK112 reports keys that are not scope ids
        yield Hit(pointer_join("/scopeJustifications", key),
                  f"scopeJustifications has an entry for {quote(key)}, which is not declared in scopes", at="key",
                  hint=f"add {quote(key)} to \"scopes\", or delete this justification")


@rule("BK205", "scope-not-granted", layer="server", severity="error", keys=("scopes",), guard=_granted_guard)
def scope_not_granted(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """A declared scope is outside what review granted.

    ## What it does
    When the context carries the scopes review granted (`--granted-scope`,
    `granted-scopes` in blockkit.toml), reports each declared scope that is not
    among them. The declared scopes must be within the grant: equal to it or a
    subset of it. Without a known grant the rule does not run.

    ## Why it matters
    Review grants a superset of what the block requests; a token never carries a
    scope outside the grant, so a block that relies on one breaks in production.

    ## Example
    blockkit validate --granted-scope user:read:self
    with "scopes": ["user:read:self", "buzz:read:self"]

    ## Fix
    Remove the scope, or ask review to grant it.
    """
    granted = ctx.context.granted_scopes
    if granted is None:
        return
    listing = ", ".join(sorted(granted)) or "none"
    for index, scope in _first_occurrences(manifest):
        if scope in SCOPES and scope not in granted:  # unknown ids are the schema's BK103
            yield Hit(pointer_join("/scopes", index),
                      f"scope \"{scope}\" is not in the grant review gave this app",
                      hint=f"remove it, or ask review to grant it (granted: {listing})")

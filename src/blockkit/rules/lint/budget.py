"""Lint rules on the page's Buzz budget for ``ai:write:budgeted`` tokens (PLATFORM.md §4, §7)."""

from __future__ import annotations

from typing import Any, Iterator

from blockkit.platform import BUDGET_SCOPE, LIMITS
from blockkit.rules.base import Hit, RuleContext, as_dict, declared_scopes, rule

_BUDGET_KEY = "buzzBudgetPerGen"
_BUDGET_POINTER = f"/page/{_BUDGET_KEY}"


@rule("BK304", "budgeted-page-without-budget", layer="lint", severity="warning")
def budgeted_page_without_budget(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """A page spends Buzz on generations but sets no per-generation budget.

    ## What it does
    Reports a manifest that declares `ai:write:budgeted` and a `page` without
    `page.buzzBudgetPerGen`.

    ## Why it matters
    Without a budget the page's token gets the platform default of 10 Buzz per
    generation, which is too little for most models: generations fail for viewers
    even though everything works in development.

    ## Example
    "scopes": ["ai:write:budgeted"],
    "page": {"path": "/", "title": "Studio"}

    ## Fix
    "page": {"path": "/", "title": "Studio", "buzzBudgetPerGen": 200}
    (the platform clamps budgets to 1000).
    """
    page = manifest.get("page")
    if isinstance(page, dict) and BUDGET_SCOPE in declared_scopes(manifest) and _BUDGET_KEY not in page:
        yield Hit("/page", f"the page declares {BUDGET_SCOPE} but no {_BUDGET_KEY}, so each generation gets "
                           f"the default budget of {LIMITS.buzz_budget_default} Buzz", at="open",
                  hint=f"set page.{_BUDGET_KEY} to the Buzz one generation may spend "
                       f"(at most {LIMITS.buzz_budget_clamp})")


@rule("BK305", "budget-without-scope", layer="lint", severity="warning")
def budget_without_scope(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """A page budget is set but the manifest cannot spend Buzz.

    ## What it does
    Reports `page.buzzBudgetPerGen` in a manifest that does not declare
    `ai:write:budgeted`.

    ## Why it matters
    The budget only applies to `ai:write:budgeted` tokens. Without the scope the
    block gets no such token, so the budget does nothing and any generation the
    block attempts is refused.

    ## Example
    "scopes": ["user:read:self"],
    "page": {"path": "/", "title": "Studio", "buzzBudgetPerGen": 200}

    ## Fix
    Add "ai:write:budgeted" to `scopes` (with a `scopeJustifications` entry), or
    remove the budget.
    """
    page = manifest.get("page")
    if isinstance(page, dict) and _BUDGET_KEY in page and BUDGET_SCOPE not in declared_scopes(manifest):
        yield Hit(_BUDGET_POINTER, f"page.{_BUDGET_KEY} is set but {BUDGET_SCOPE} is not declared, "
                                   "so no token carries the budget", at="key",
                  hint=f"add \"{BUDGET_SCOPE}\" to scopes (with a justification), or remove the budget")


@rule("BK306", "budget-above-cap", layer="lint", severity="warning")
def budget_above_cap(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """The page budget is above what the platform grants.

    ## What it does
    Reports a `page.buzzBudgetPerGen` above 1000, the per-generation cap.

    ## Why it matters
    The platform clamps the budget to 1000 when it mints the token. A block that
    plans its generations around the larger number (an expensive model, a batch)
    fails at run time with an insufficient budget.

    ## Example
    "page": {"path": "/", "title": "Studio", "buzzBudgetPerGen": 5000}

    ## Fix
    "page": {"path": "/", "title": "Studio", "buzzBudgetPerGen": 1000}
    """
    budget = as_dict(manifest.get("page")).get(_BUDGET_KEY)
    if isinstance(budget, (int, float)) and not isinstance(budget, bool) and budget > LIMITS.buzz_budget_clamp:
        yield Hit(_BUDGET_POINTER, f"page.{_BUDGET_KEY} is {budget}, but the platform clamps it to "
                                   f"{LIMITS.buzz_budget_clamp} Buzz per generation",
                  hint=f"set it to at most {LIMITS.buzz_budget_clamp}")

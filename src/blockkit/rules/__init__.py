"""All rules. Importing this package registers every rule in ``REGISTRY``."""

from __future__ import annotations

import importlib

from blockkit.rules.base import REGISTRY, Hit, Rule, RuleContext, rule

# The modules that hold rules, named here rather than found by listing the package's
# folder at every start (tests/test_rule_modules.py holds these lists to the folder).
# Validation (parse, schema, server) needs only the first; lint and diff add the others.
VALIDATION_MODULES: tuple[str, ...] = (
    "asset_url", "auth", "goods", "iframe", "lengths", "repository", "scopes", "settings", "surfaces", "tagline",
)
LINT_MODULES: tuple[str, ...] = (
    "access", "adoption", "budget", "bundle", "duplicates", "keys", "listing", "project", "surfaces",
)
# Modules of the package that hold no rules.
HELPER_MODULES: tuple[str, ...] = ("base", "guard", "jsregex", "parse", "redos", "server_support")

_core_loaded = False
_all_loaded = False


def load_validation() -> dict[str, Rule]:
    """Import the rules that validation runs (parse, schema, server) and return the registry.

    ``blockkit validate`` needs only these; the lint and diff modules pull in an HTML parser,
    git plumbing and more, which a cold single-file run should not pay for.
    """
    global _core_loaded
    if not _core_loaded:
        import blockkit.rules.parse  # noqa: F401
        import blockkit.schema  # noqa: F401

        for name in VALIDATION_MODULES:
            importlib.import_module(f"{__name__}.{name}")
        _core_loaded = True
    return REGISTRY


def load_all() -> dict[str, Rule]:
    """Import every rule module once (validation, lint and diff rules) and return the registry."""
    global _all_loaded
    if not _all_loaded:
        load_validation()
        import blockkit.bundle.rules  # noqa: F401  (BK5xx: documented here, run by blockkit.bundle)
        import blockkit.diff.rules  # noqa: F401  (BK4xx: documented here, run by blockkit.diff)

        for name in LINT_MODULES:
            importlib.import_module(f"{__name__}.lint.{name}")
        _all_loaded = True
    return REGISTRY


__all__ = ["REGISTRY", "Hit", "Rule", "RuleContext", "load_all", "load_validation", "rule"]

"""All rules. Importing this package registers every rule in ``REGISTRY``."""

from __future__ import annotations

import importlib
import pkgutil

from blockkit.rules.base import REGISTRY, Hit, Rule, RuleContext, rule

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

        for info in pkgutil.iter_modules(__path__, prefix=__name__ + "."):
            if info.name.rsplit(".", 1)[-1] not in ("base", "parse", "lint"):
                importlib.import_module(info.name)
        _core_loaded = True
    return REGISTRY


def load_all() -> dict[str, Rule]:
    """Import every rule module once (validation, lint and diff rules) and return the registry."""
    global _all_loaded
    if not _all_loaded:
        load_validation()
        import blockkit.diff.rules  # noqa: F401  (BK4xx: documented here, run by blockkit.diff)

        for info in pkgutil.walk_packages(__path__, prefix=__name__ + "."):
            if info.name.rsplit(".", 1)[-1] not in ("base", "parse"):
                importlib.import_module(info.name)
        _all_loaded = True
    return REGISTRY


__all__ = ["REGISTRY", "Hit", "Rule", "RuleContext", "load_all", "load_validation", "rule"]

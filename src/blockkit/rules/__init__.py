"""All rules. Importing this package registers every rule in ``REGISTRY``."""

from __future__ import annotations

import importlib
import pkgutil

from blockkit.rules.base import REGISTRY, Hit, Rule, RuleContext, rule

_loaded = False


def load_all() -> dict[str, Rule]:
    """Import every rule module once (schema rules included) and return the registry."""
    global _loaded
    if not _loaded:
        import blockkit.rules.parse  # noqa: F401
        import blockkit.schema  # noqa: F401
        import blockkit.diff.rules  # noqa: F401  (BK4xx: documented here, run by blockkit.diff)

        for info in pkgutil.walk_packages(__path__, prefix=__name__ + "."):
            if info.name.rsplit(".", 1)[-1] not in ("base", "parse"):
                importlib.import_module(info.name)
        _loaded = True
    return REGISTRY


__all__ = ["REGISTRY", "Hit", "Rule", "RuleContext", "load_all", "rule"]

"""blockkit.rules names its rule modules instead of listing its folder: the names must be the folder's."""

from __future__ import annotations

import pkgutil

import blockkit.rules
import blockkit.rules.lint
from blockkit.rules import HELPER_MODULES, LINT_MODULES, VALIDATION_MODULES, load_all
from blockkit.rules.base import parse_doc


def _modules(package: object) -> set[str]:
    return {info.name for info in pkgutil.iter_modules(package.__path__) if not info.ispkg}  # type: ignore[attr-defined]


def test_the_validation_modules_are_the_package_modules() -> None:
    assert set(VALIDATION_MODULES) | set(HELPER_MODULES) == _modules(blockkit.rules)
    assert not set(VALIDATION_MODULES) & set(HELPER_MODULES)
    assert {info.name for info in pkgutil.iter_modules(blockkit.rules.__path__) if info.ispkg} == {"lint"}


def test_the_lint_modules_are_the_lint_package_modules() -> None:
    assert set(LINT_MODULES) == _modules(blockkit.rules.lint)


def test_every_rule_has_a_documentation_that_parses() -> None:
    """Docs are parsed on first use, not at import: every one of them must parse."""
    registry = load_all()
    assert len(registry) > 60
    for code, rule in registry.items():
        doc = rule.doc
        assert doc == parse_doc(code, rule.docstring)
        assert all((doc.summary, doc.what, doc.why, doc.example, doc.fix)), code

"""blockkit: validate, lint, scaffold and run app blocks.

``import blockkit`` is cheap: the validation stack loads on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from blockkit._version import __version__

if TYPE_CHECKING:
    from blockkit.api import load_manifest, validate, validate_file
    from blockkit.bundle import BundleReport, check_bundle
    from blockkit.bundle.package import build_package
    from blockkit.context import ConfigError, Context
    from blockkit.engine import UnreadableFile
    from blockkit.errors import InvalidManifestError
    from blockkit.models import Manifest
    from blockkit.report import FileReport, Finding, Report

_LAZY = {
    "validate": "blockkit.api",
    "validate_file": "blockkit.api",
    "load_manifest": "blockkit.api",
    "check_bundle": "blockkit.bundle",
    "BundleReport": "blockkit.bundle",
    "build_package": "blockkit.bundle.package",
    "Context": "blockkit.context",
    "ConfigError": "blockkit.context",
    "UnreadableFile": "blockkit.engine",
    "InvalidManifestError": "blockkit.errors",
    "Manifest": "blockkit.models",
    "Report": "blockkit.report",
    "FileReport": "blockkit.report",
    "Finding": "blockkit.report",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'blockkit' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)

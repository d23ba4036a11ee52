"""The one valid manifest the tests start from, and a way to change it one key at a time.

pytest puts this folder on ``sys.path`` (tests/conftest.py sits here without an
``__init__.py``), so any test imports it as ``sample_manifests``.
"""

from __future__ import annotations

import copy
from typing import Any

SCHEMA_URL = "https://civitai.com/schemas/app-block/v1.json"

# A page block that every layer accepts and no lint rule remarks on.
PAGE_BLOCK: dict[str, Any] = {
    "$schema": SCHEMA_URL,
    "blockId": "demo-block",
    "version": "1.0.0",
    "name": "Demo",
    "contentRating": "g",
    "scopes": ["user:read:self"],
    "iframe": {"minHeight": 400, "maxHeight": None, "resizable": False, "sandbox": "allow-scripts allow-forms"},
    "page": {"path": "/", "title": "Demo"},
}


def changed(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A deep copy of ``base`` with top-level keys replaced; a value of ``...`` deletes the key."""
    document = copy.deepcopy(base)
    for key, value in changes.items():
        if value is ...:
            document.pop(key, None)
        else:
            document[key] = value
    return document

"""Where the files that ship with blockkit (schema, templates) live.

In a wheel they sit under ``blockkit/_data``; in a source checkout (editable
install, or tests run from the repo) they are the top-level ``schema/`` and
``templates/`` folders.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


@lru_cache(maxsize=None)
def data_dir(name: str) -> Path:
    """Return the directory of shipped data called ``name`` (``schema`` or ``templates``)."""
    for candidate in (_PACKAGE_DIR / "_data" / name, _PACKAGE_DIR.parents[1] / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"blockkit is installed without its {name}/ data folder")


def schema_path() -> Path:
    return data_dir("schema") / "app-block.v1.json"


def templates_dir() -> Path:
    return data_dir("templates")


@lru_cache(maxsize=None)
def schema_identity() -> dict[str, str]:
    """The schema a verdict was made with: its ``$id`` and the sha256 of its bytes (report JSON's ``schema``)."""
    import hashlib

    from blockkit.platform import SCHEMA_ID

    return {"id": SCHEMA_ID, "sha256": hashlib.sha256(schema_path().read_bytes()).hexdigest()}

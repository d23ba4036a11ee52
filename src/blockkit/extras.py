"""Optional parts of blockkit and the install that brings each.

The core install (``pip install blockkit``) is what the pre-commit hook and the submission
pipeline need: validate, lint, fix, explain, rules, diff and new. The local platform
(``blockkit emulator``, ``blockkit dev``, the pytest plugin's fixtures) needs the
``server`` extra, named as ``moto[server]`` names the same split.
"""

from __future__ import annotations

from importlib.util import find_spec

# import name -> distribution, for the message
SERVER_MODULES = {
    "starlette": "starlette",
    "uvicorn": "uvicorn",
    "oauthlib": "oauthlib",
    "joserfc": "joserfc",
    "PIL": "Pillow",
    "jsonpatch": "jsonpatch",
    "blake3": "blake3",
}
SERVER_INSTALL = "pip install 'blockkit[server]'"


def missing_server_packages() -> list[str]:
    """The distributions of the server extra that are not installed (empty: all there)."""
    return [dist for module, dist in SERVER_MODULES.items() if find_spec(module) is None]


def server_missing_line(what: str) -> str | None:
    """One line saying which install brings ``what``, or None when the server extra is installed."""
    missing = missing_server_packages()
    if not missing:
        return None
    return f"{what} needs the local platform's packages ({', '.join(missing)}): {SERVER_INSTALL}"

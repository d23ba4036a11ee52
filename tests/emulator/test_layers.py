"""The local platform's floor plan holds: state below the rules, the rules below HTTP, no arrow up.

``src/blockkit/emulator/`` is laid out in layers (``emulator/__init__.py`` has the map):

====  ===============================================================================
0     the ground: ``errors.py``, ``facts.py``, ``options.py``, ``journal.py``
1     ``store/``: state (SQL per family, migrations, indexes, the clock)
2     ``state.py``: what every app shares (store, clock, options, urls)
3     ``services/``: the rules, no HTTP
4     ``http/``: the shared kit and one folder per origin; beside it ``seed/``, the generator
      that fills a new store (it uses the files service for the model files' hashes)
5     the building: ``runtime.py``, ``testing.py``, ``execrun.py``, ``datadir.py``,
      ``transfer.py``, ``journal_client.py``, the package itself
====  ===============================================================================

Every import inside the emulator (at the top of a module, inside a function, or for typing
only) must point to the same layer or a lower one. ``services/`` must not import starlette,
and nothing under ``emulator/`` imports ``blockkit.dev``. The graph is read from the source
with ``ast``, so a lazy import inside a function counts as much as one at the top.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

EMULATOR = Path(__file__).resolve().parents[2] / "src" / "blockkit" / "emulator"
PACKAGE = "blockkit.emulator"

GROUND = {"errors", "facts", "options", "journal"}
BUILDING = {"runtime", "testing", "execrun", "datadir", "transfer", "journal_client", "__init__"}
LAYER_NAMES = ["ground", "store", "state", "services", "http/seed", "building"]


def layer_of(module: str) -> int:
    """The layer of ``blockkit.emulator.<...>``."""
    parts = module.split(".")[2:] or ["__init__"]
    top = parts[0]
    if top in GROUND:
        return 0
    if top == "store":
        return 1
    if top == "state":
        return 2
    if top == "services":
        return 3
    if top in ("http", "seed"):
        return 4
    if top in BUILDING:
        return 5
    raise AssertionError(f"{module}: no layer for emulator/{top}; add it to tests/emulator/test_layers.py")


def module_name(path: Path) -> str:
    rel = path.relative_to(EMULATOR.parent.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, imported module) for every import in the file, lazy and typing-only ones included."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # "from blockkit.emulator import facts" imports the module blockkit.emulator.facts (and runs
            # the package's light __init__); "from blockkit.emulator.store import Store" imports the package.
            submodules = [f"{node.module}.{alias.name}" for alias in node.names if _is_module(f"{node.module}.{alias.name}")]
            if len(submodules) == len(node.names):
                found.extend((node.lineno, name) for name in submodules)
            else:
                found.append((node.lineno, node.module))
    return found


def _is_module(dotted: str) -> bool:
    path = EMULATOR.parent.parent / dotted.replace(".", "/")
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def sources() -> list[Path]:
    return sorted(p for p in EMULATOR.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_emulator_module_has_a_layer() -> None:
    names = [module_name(p) for p in sources()]
    assert len(names) > 90
    for name in names:
        layer_of(name)


def test_no_import_runs_from_a_lower_layer_up() -> None:
    upward = []
    for path in sources():
        me = module_name(path)
        mine = layer_of(me)
        for line, target in imports_of(path):
            if not target.startswith(PACKAGE + ".") and target != PACKAGE:
                continue
            theirs = layer_of(target)
            if theirs > mine:
                upward.append(f"{path.relative_to(EMULATOR)}:{line} ({LAYER_NAMES[mine]}) imports {target}"
                              f" ({LAYER_NAMES[theirs]})")
    assert upward == [], "imports that run up a layer:\n" + "\n".join(upward)


@pytest.mark.parametrize("folder, forbidden", [
    ("services", "starlette"),
    ("services", "uvicorn"),
    ("services", f"{PACKAGE}.http"),
    ("store", f"{PACKAGE}.services"),
    ("store", f"{PACKAGE}.http"),
    ("store", "starlette"),
])
def test_a_layer_never_imports_what_lies_above_it(folder: str, forbidden: str) -> None:
    hits = [f"{p.relative_to(EMULATOR)}:{line} imports {target}"
            for p in sources() if p.relative_to(EMULATOR).parts[0] == folder
            for line, target in imports_of(p) if target == forbidden or target.startswith(forbidden + ".")]
    assert hits == []


def test_nothing_in_the_emulator_imports_dev() -> None:
    hits = [f"{p.relative_to(EMULATOR)}:{line} imports {target}"
            for p in sources() for line, target in imports_of(p)
            if target == "blockkit.dev" or target.startswith("blockkit.dev.")]
    assert hits == []


def test_a_service_error_is_no_http_class() -> None:
    from blockkit.emulator.errors import ApiError
    from blockkit.emulator.services.errors import ServiceError

    assert issubclass(ServiceError, ApiError)
    assert ApiError.__module__ == "blockkit.emulator.errors"
    for base in ServiceError.__mro__:
        assert not base.__module__.startswith(("starlette", f"{PACKAGE}.http")), base


def test_the_layout_map_names_every_folder() -> None:
    import blockkit.emulator as emulator

    doc = emulator.__doc__ or ""
    folders = sorted(p.name for p in EMULATOR.iterdir() if p.is_dir() and (p / "__init__.py").exists())
    assert folders, "the emulator has folders"
    missing = [f for f in folders if f"{f}/" not in doc]
    assert missing == [], f"emulator/__init__.py's map does not name {missing}"
    for sub in ("services/orchestration", "services/oauth", "http/catalogue", "http/oauth",
                "http/orchestration", "http/blocks", "http/control"):
        assert (EMULATOR / sub / "__init__.py").exists(), sub
        assert f"{sub.split('/')[1]}/" in doc, f"the map does not name {sub}"
    named_files = {w for w in doc.replace(",", " ").split() if w.endswith(".py")}
    at_root = {p.name for p in EMULATOR.glob("*.py")}
    unnamed = at_root - named_files - {"__init__.py"}
    assert unnamed == set(), f"emulator/__init__.py's map does not name the root files {sorted(unnamed)}"

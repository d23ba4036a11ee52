"""Shared by the `blockkit new` tests: the option matrix and ways to run the real command."""

from __future__ import annotations

import importlib.util
import os
import sys
from itertools import product
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from blockkit.platform import MODEL_SLOTS

TEMPLATES = ("static", "vite", "react")
SURFACES = ("page", *MODEL_SLOTS)
PACKAGE_MANAGERS = ("npm", "pnpm", "yarn")
EXTRAS: dict[str, tuple[str, ...]] = {
    "plain": (),
    "goods": ("--goods",),
    "oauth": ("--auth", "oauth"),
    "goods+oauth": ("--goods", "--auth", "oauth"),
}


def combinations() -> list[Any]:
    """Every template x surface x package manager x goods/oauth combination."""
    combos = []
    for template, surface, extra in product(TEMPLATES, SURFACES, EXTRAS):
        managers: tuple[str | None, ...] = PACKAGE_MANAGERS if template != "static" else (None,)
        for manager in managers:
            ident = "-".join(p for p in (template, surface, manager, extra) if p)
            combos.append(pytest.param(template, surface, manager, extra, id=ident))
    return combos


def new_args(template: str, surface: str, manager: str | None, extra: str) -> list[str]:
    args = ["--defaults", "--template", template, "--surface", surface, *EXTRAS[extra]]
    if manager:
        args += ["--package-manager", manager]
    return args


def invoke(args: list[str], input: str | None = None) -> Result:
    from blockkit.commands.new import command

    return CliRunner().invoke(command, args, input=input, catch_exceptions=False)


def subprocess_env() -> dict[str, str]:
    """The environment for `python -m blockkit.cli` in a child process, wherever blockkit is imported from."""
    spec = importlib.util.find_spec("blockkit")
    assert spec and spec.submodule_search_locations
    package_parent = str(Path(next(iter(spec.submodule_search_locations))).parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH")) if p)
    env["NO_COLOR"] = "1"
    return env


BLOCKKIT = [sys.executable, "-m", "blockkit.cli"]


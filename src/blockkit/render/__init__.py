"""Renderers: a Report in, text out. Chosen once by ``--format``; checking code never prints."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from blockkit.report import Report

Renderer = Callable[..., str]

# format name -> module defining ``render(report, **options) -> str``
FORMATS: dict[str, str] = {
    "text": "blockkit.render.text",
    "json": "blockkit.render.json_",
    "github": "blockkit.render.github",
    "sarif": "blockkit.render.sarif",
    "junit": "blockkit.render.junit",
}


def get_renderer(name: str) -> Renderer:
    return importlib.import_module(FORMATS[name]).render


def render(report: "Report", fmt: str, **options: object) -> str:
    return get_renderer(fmt)(report, **options)

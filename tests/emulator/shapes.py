"""The shape of JSON answers: every key path with the types seen there, and the tables that hold them.

``shape_of(body)`` maps each key path to the set of type names seen at it, over every element
of every array (``items[].modelVersions[].files[].scannedAt``). Type names: ``object``,
``array``, ``string``, ``integer``, ``number`` (any JSON number; an integer seen where a
number is also seen is counted as a number), ``boolean``, ``null``, and two kinds of string:
``timestamp`` (``2024-01-02T03:04:05.678Z``) and ``timestamp-nz`` (a timestamp without time
zone as Postgres writes one in JSON: ``2024-01-02T03:04:05`` or ``...05.67``, no ``Z``).
Free-form objects (image ``meta``, ``earlyAccessConfig``, ``trainingDetails``, a Vault's
``meta``, the enums' lists, /me's ``buzzLimit`` budgets) are ``object`` with no paths below.

The per-route tables are in docs/platform-shapes.md ("Route shapes, key by key"): one table
per route, ``| `key path` | types | source |``; ``tables()`` reads them for
``test_shapes.py``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parents[2] / "docs" / "platform-shapes.md"
SECTION = "## Route shapes, key by key"

TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")
TIMESTAMP_NZ = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?")
# Keys whose value is free-form (any keys below): their paths end there.
OPAQUE = {"meta", "earlyAccessConfig", "trainingDetails", "details", "buzzLimit"}


def kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        if TIMESTAMP.fullmatch(value):
            return "timestamp"
        if TIMESTAMP_NZ.fullmatch(value):
            return "timestamp-nz"
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def shape_of(body: Any, into: dict[str, set[str]] | None = None, path: str = "", opaque: frozenset[str] = frozenset()
             ) -> dict[str, set[str]]:
    """Every key path of ``body`` (array elements merged) with the type names seen there, added to ``into``."""
    out: dict[str, set[str]] = {} if into is None else into
    if path:
        out.setdefault(path, set()).add(kind(body))
    last = path.rsplit(".", 1)[-1].removesuffix("[]")
    if last in OPAQUE or path in opaque:
        return out
    if isinstance(body, dict):
        for key, value in body.items():
            shape_of(value, out, f"{path}.{key}" if path else key, opaque)
    elif isinstance(body, list):
        for element in body:
            shape_of(element, out, f"{path}[]" if path else "[]", opaque)
    return out


def normalised(shape: dict[str, set[str]]) -> dict[str, frozenset[str]]:
    """An integer seen where a (non-integer) number is also seen counts as a number."""
    out: dict[str, frozenset[str]] = {}
    for path, kinds in shape.items():
        if "number" in kinds:
            kinds = (kinds - {"integer"}) | {"number"}
        out[path] = frozenset(kinds)
    return out


def tables(text: str | None = None) -> dict[str, dict[str, frozenset[str]]]:
    """The route tables of docs/platform-shapes.md: route -> key path -> type names."""
    text = DOCS.read_text(encoding="utf-8") if text is None else text
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    section = text[start:end if end != -1 else len(text)]
    out: dict[str, dict[str, frozenset[str]]] = {}
    route: str | None = None
    for line in section.splitlines():
        heading = re.fullmatch(r"### `([A-Z]+ [^`]+)`.*", line)
        if heading:
            route = heading.group(1)
            out[route] = {}
            continue
        row = re.fullmatch(r"\| `([^`]+)` \| ([a-z\-, ]+) \|.*", line)
        if row and route is not None:
            out[route][row.group(1)] = frozenset(k.strip() for k in row.group(2).split(","))
    return out


def render(shape: dict[str, frozenset[str]]) -> str:
    """A table body for ``shape`` (for writing the docs' table from what a route sends)."""
    order = {"object": 0, "array": 1, "string": 2, "timestamp": 3, "timestamp-nz": 4, "integer": 5, "number": 6,
             "boolean": 7, "null": 8}
    return "\n".join(f"| `{path}` | {', '.join(sorted(kinds, key=order.__getitem__))} | |"
                     for path, kinds in sorted(shape.items()))

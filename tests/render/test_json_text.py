"""render.json_.dumps_indented writes exactly what json.dumps(indent=2, ensure_ascii=False) writes."""

from __future__ import annotations

import enum
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import blockkit
from blockkit.render.json_ import dumps_indented


def _reference(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


class Level(enum.IntEnum):
    LOW = 1


@pytest.mark.parametrize("value", [
    {}, [], {"a": {}}, {"a": []}, [[], {}], "", None, True, False, 0, -7, 10**40, 1.5, -0.0, 1e300, 1e-7,
    float("nan"), float("inf"), -float("inf"),
    {"s": "quote \" backslash \\ tab \t nl \n cr \r nul \x00 esc \x1b del \x7f"},
    {"unicode": "ünïcødé ✓ 😀 \u2028 \u2029", "lone": "\ud800 x \udfff"},
    {"nested": [{"a": [1, [2, [3, {"b": None}]]]}]},
    # handed to json itself: tuples, subclasses, keys that are not strings
    {"t": (1, 2)}, {1: "a", None: "b", 2.5: "c", True: "d"}, {"e": Level.LOW}, [Level.LOW],
])
def test_tricky_values(value: Any) -> None:
    assert dumps_indented(value) == _reference(value)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(_json)
def test_any_json_value(value: Any) -> None:
    assert dumps_indented(value) == _reference(value)


def test_a_real_report(write_manifest, manifest) -> None:
    manifest["version"] = "1.0"
    manifest["tagline"] = "\ud800 \x1b" * 3
    report = blockkit.validate_file(write_manifest(manifest))
    assert report.findings
    assert dumps_indented(report.to_json()) == _reference(report.to_json())

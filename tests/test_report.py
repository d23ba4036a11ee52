"""blockkit.report: new_finding builds the very Finding that Finding(...) builds."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from blockkit.report import Edit, Finding, Fix, new_finding

CASES = [
    ("BK203", "error", "server", "sensitive scope", "/scopes/0", 3, 5, 3, 21, "add it", None),
    ("BK104", "warning", "schema", "m", "", 1, 1, 1, 1, None, Fix("remove", True, (Edit(0, 1, ""),))),
]


@pytest.mark.parametrize("values", CASES)
def test_new_finding_is_the_dataclass_built_by_its_init(values: tuple) -> None:
    made = new_finding(*values)
    expected = Finding(*values)
    assert type(made) is Finding
    assert made == expected and hash(made) == hash(expected)
    assert repr(made) == repr(expected)
    assert vars(made) == vars(expected) and list(vars(made)) == list(vars(expected))
    assert dataclasses.asdict(made) == dataclasses.asdict(expected)
    assert made.to_json() == expected.to_json()
    assert pickle.loads(pickle.dumps(made)) == expected
    assert copy.deepcopy(made) == expected
    assert dataclasses.replace(made, line=9) == dataclasses.replace(expected, line=9)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.line = 2  # type: ignore[misc]


def test_new_finding_sets_every_field_of_the_dataclass() -> None:
    # A field added to Finding must be added to new_finding too: its __dict__ would lack it.
    made = new_finding(*CASES[0])
    assert list(vars(made)) == [field.name for field in dataclasses.fields(Finding)]


def test_new_finding_defaults_hint_and_fix_to_none() -> None:
    made = new_finding("BK001", "error", "parse", "m", "", 1, 1, 1, 1)
    assert made == Finding("BK001", "error", "parse", "m", "", 1, 1, 1, 1)

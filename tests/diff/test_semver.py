from __future__ import annotations

import itertools

import pytest

from blockkit.diff.semver import compare, parse

# semver.org §11's own example, in increasing precedence.
ORDERED = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11",
           "1.0.0-rc.1", "1.0.0"]


def test_the_spec_example_is_in_order() -> None:
    for lower, higher in itertools.combinations(ORDERED, 2):
        assert compare(lower, higher) == -1, (lower, higher)
        assert compare(higher, lower) == 1, (higher, lower)
    shuffled = ORDERED[3:] + ORDERED[:3]
    assert sorted(shuffled, key=lambda v: parse(v).key()) == ORDERED  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("lower", "higher"),
    [
        ("1.9.0", "1.10.0"),  # numeric, not lexical
        ("1.0.10", "1.0.11"),
        ("0.9.9", "1.0.0"),
        ("2.0.0", "2.1.0"),
        ("1.0.0-2", "1.0.0-10"),  # numeric identifiers compare numerically
        ("1.0.0-999", "1.0.0-a"),  # numeric identifiers rank below alphanumeric ones
        ("1.0.0-1a", "1.0.0-a"),  # "1a" is alphanumeric: ASCII order, '1' < 'a'
        ("1.0.0-Beta", "1.0.0-alpha"),  # ASCII: uppercase sorts first
        ("1.0.0-alpha", "1.0.0-alpha.0"),  # a longer set wins when the shared part is equal
        ("1.0.0-a.b", "1.0.0-a.b.c"),
        ("1.0.0-rc.1", "1.0.0"),  # a prerelease ranks below its release
        ("1.0.0", "1.0.1-alpha"),  # ...but above the next one's prerelease
        ("1.0.0-x-y", "1.0.0-x-z"),  # hyphens belong to the identifier
    ],
)
def test_precedence(lower: str, higher: str) -> None:
    assert compare(lower, higher) == -1
    assert compare(higher, lower) == 1


def test_build_metadata_is_ignored_and_equal_is_zero() -> None:
    assert compare("1.0.0+build.1", "1.0.0+build.2") == 0
    assert compare("1.0.0-rc.1", "1.0.0-rc.1") == 0
    assert compare("1.0.0-01", "1.0.0-1") == 0  # lenient like the schema: leading zeros read as numbers


@pytest.mark.parametrize("text", ["1.0", "1.0.0.0", "v1.0.0", "1.0.0-", "1.0.0\n", "", "١.٠.٠", None, 100])
def test_not_a_version(text: object) -> None:
    assert parse(text) is None
    assert compare(text, "1.0.0") is None  # type: ignore[arg-type]

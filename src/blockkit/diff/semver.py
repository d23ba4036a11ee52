"""Semantic Versioning 2.0.0 precedence (semver.org §11), for comparing manifest versions.

Not PEP 440: ``packaging`` would order ``1.0.0-alpha.beta`` and ``1.0.0-rc.1``
by Python's rules, not semver's. Parsing is lenient where the manifest schema
is (leading zeros, empty identifiers): a version the schema accepts always
gets an order, and validity itself is the schema layer's concern.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import total_ordering
from typing import Optional, Union

_VERSION = re.compile(r"([0-9]+)\.([0-9]+)\.([0-9]+)(?:-([0-9A-Za-z.-]+))?(?:\+([0-9A-Za-z.-]+))?")
_NUMERIC = re.compile(r"[0-9]+")

Identifier = Union[int, str]


@total_ordering
@dataclass(frozen=True)
class _PrereleaseId:
    """One dot-separated prerelease identifier with §11.4's ordering."""

    value: Identifier

    def __lt__(self, other: "_PrereleaseId") -> bool:
        a, b = self.value, other.value
        if isinstance(a, int) and isinstance(b, int):
            return a < b  # §11.4.1: numerically
        if isinstance(a, int) != isinstance(b, int):
            return isinstance(a, int)  # §11.4.3: numeric identifiers have lower precedence
        return a < b  # type: ignore[operator]  # §11.4.2: ASCII order


@dataclass(frozen=True)
class Version:
    major: int
    minor: int
    patch: int
    prerelease: tuple[Identifier, ...] = ()
    text: str = ""

    def key(self) -> tuple:
        # §11.3: a version without prerelease ranks above any with one; §11.4.4: a longer
        # prerelease wins when all shorter identifiers are equal (tuple comparison does exactly that).
        ids = tuple(_PrereleaseId(i) for i in self.prerelease)
        return (self.major, self.minor, self.patch, len(ids) == 0, ids)

    def __lt__(self, other: "Version") -> bool:
        return self.key() < other.key()

    def __le__(self, other: "Version") -> bool:
        return self.key() <= other.key()

    def __gt__(self, other: "Version") -> bool:
        return self.key() > other.key()

    def __ge__(self, other: "Version") -> bool:
        return self.key() >= other.key()

    def same_precedence(self, other: "Version") -> bool:
        """Equal under §11, which ignores build metadata."""
        return self.key() == other.key()

    def __str__(self) -> str:
        return self.text


def parse(text: object) -> Optional[Version]:
    """The version ``text`` names, or None when it is not a semantic version."""
    if not isinstance(text, str):
        return None
    match = _VERSION.fullmatch(text)
    if match is None:
        return None
    major, minor, patch, pre, _build = match.groups()
    prerelease: tuple[Identifier, ...] = ()
    if pre is not None:
        prerelease = tuple(int(p) if _NUMERIC.fullmatch(p) else p for p in pre.split("."))
    return Version(int(major), int(minor), int(patch), prerelease, text)


def compare(a: str, b: str) -> Optional[int]:
    """-1, 0 or 1 as ``a`` has lower, equal or higher precedence than ``b``; None if either is not semver."""
    left, right = parse(a), parse(b)
    if left is None or right is None:
        return None
    if left.same_precedence(right):
        return 0
    return -1 if left < right else 1

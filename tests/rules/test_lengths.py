"""BK224: every length cap counted in UTF-16 code units, where the schema counts code points."""

from __future__ import annotations

from typing import Any, Callable

import pytest

from .conftest import Run, at, codes, manifest

E = "\U0001f381"  # 2 UTF-16 units
PURCHASE = {"goods:purchase:self": "Sells the goods declared below."}


def with_page(key: str) -> Callable[[str], dict[str, Any]]:
    return lambda value: manifest(page={"path": "/", "title": "Demo", key: value})


def with_good(key: str) -> Callable[[str], dict[str, Any]]:
    def build(value: str) -> dict[str, Any]:
        entry = {"id": "pack", "title": "Pack", "priceBuzz": 10, key: value}
        return manifest(scopes=["goods:purchase:self"], scopeJustifications=PURCHASE, goods=[entry])
    return build


# (field, pointer, cap, builder, prefix that keeps the schema's pattern happy)
CASES = [
    ("outputDir", "/outputDir", 256, lambda v: manifest(buildCommand="npm run build", outputDir=v), "d"),
    ("page.path", "/page/path", 256, with_page("path"), "/"),
    ("page.title", "/page/title", 128, with_page("title"), ""),
    ("page.icon", "/page/icon", 128, with_page("icon"), ""),
    ("publicSettingsKeys", "/publicSettingsKeys/1", 64, lambda v: manifest(publicSettingsKeys=["theme", v]), ""),
    ("scopeJustifications", "/scopeJustifications/user:read:self", 500,
     lambda v: manifest(scopeJustifications={"user:read:self": v}), ""),
    ("good.title", "/goods/0/title", 80, with_good("title"), ""),
    ("good.description", "/goods/0/description", 500, with_good("description"), ""),
]


def fill(prefix: str, units: int) -> str:
    """A string of exactly ``units`` UTF-16 units, mostly emoji."""
    body = units - len(prefix)
    return prefix + E * (body // 2) + ("x" if body % 2 else "")


@pytest.mark.parametrize(("field", "pointer", "cap", "build", "prefix"), CASES, ids=[c[0] for c in CASES])
def test_at_the_cap_in_utf16_units_passes(run: Run, field: str, pointer: str, cap: int, build: Any, prefix: str) -> None:
    assert run(build(fill(prefix, cap))) == []


@pytest.mark.parametrize(("field", "pointer", "cap", "build", "prefix"), CASES, ids=[c[0] for c in CASES])
def test_one_unit_over_fails_though_the_schema_passes(run: Run, field: str, pointer: str, cap: int, build: Any,
                                                       prefix: str) -> None:
    value = fill(prefix, cap + 1)
    assert len(value) <= cap  # within the schema's cap in code points
    findings = run(build(value))
    assert codes(findings) == {"BK224"}
    assert at(findings, "BK224") == [pointer]
    assert f"{cap + 1} UTF-16 code units" in findings[0].message and f"at most {cap}" in findings[0].message


@pytest.mark.parametrize(("field", "pointer", "cap", "build", "prefix"), CASES, ids=[c[0] for c in CASES])
def test_over_the_cap_in_code_points_is_the_schemas_alone(run: Run, field: str, pointer: str, cap: int, build: Any,
                                                           prefix: str) -> None:
    assert codes(run(build(prefix + "x" * (cap + 1 - len(prefix))))) == {"BK105"}


def test_block_id_counts_units_too(run: Run) -> None:
    # The pattern already refuses non-ASCII ids; both verdicts are reported.
    assert codes(run(manifest(blockId="a" + E * 20))) == {"BK104", "BK224"}
    assert "BK224" not in codes(run(manifest(blockId="a" + E * 19 + "a")))


def test_ascii_only_fields_count_units_too(run: Run) -> None:
    # Their patterns refuse emoji already; the unit count is still reported, never instead.
    assert codes(run(with_good("id")("p" + E * 32))) == {"BK104", "BK224"}
    build = manifest(buildCommand="npm run " + E * 61, outputDir="dist")
    assert codes(run(build)) == {"BK104", "BK224"}


def test_name_has_no_cap(run: Run) -> None:
    assert run(manifest(name=E * 5000)) == []


@pytest.mark.parametrize("value", [None, 3, ["x"], {"a": 1}])
def test_wrong_types_never_crash(run: Run, value: object) -> None:
    assert "BK224" not in codes(run(manifest(outputDir=value, page={"path": value, "title": value},
                                             publicSettingsKeys=[value])))

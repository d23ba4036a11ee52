from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from blockkit.diff import compare
from blockkit.source import read_text

OLD: dict[str, Any] = {
    "blockId": "shop-block",
    "version": "1.2.0",
    "name": "Shop",
    "contentRating": "g",
    "scopes": ["user:read:self", "goods:purchase:self", "goods:read:self", "apps:storage:write"],
    "goods": [
        {"id": "style-pack", "title": "Style pack", "priceBuzz": 100, "payload": {"unlocks": "styles"}},
        {"id": "supporter", "title": "Supporter badge", "priceBuzz": 20},
        {"id": "extra", "title": "Extra", "priceBuzz": 50},
    ],
}


def diff(old: dict[str, Any], new: dict[str, Any]) -> list[tuple[str, str, str]]:
    new_source = read_text(json.dumps(new, indent=2), "new.json")
    findings = compare(read_text(json.dumps(old, indent=2), "old.json"), new_source)
    return [(f.code, f.pointer, f.message) for f in findings]


def changed(**edits: Any) -> dict[str, Any]:
    new = copy.deepcopy(OLD)
    new["version"] = "1.3.0"
    new.update(edits)
    return new


def codes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    return [code for code, _, _ in diff(old, new)]


def test_identical_manifests_have_nothing_to_say() -> None:
    assert diff(OLD, copy.deepcopy(OLD)) == []


def test_a_version_bump_alone_is_fine() -> None:
    assert diff(OLD, changed()) == []


@pytest.mark.parametrize(("version", "message"), [
    ("1.2.0", 'version is still "1.2.0" although the manifest changed'),
    ("1.1.9", 'version "1.1.9" is lower than the previous "1.2.0"'),
    ("1.2.0-rc.1", 'version "1.2.0-rc.1" is lower than the previous "1.2.0"'),
])
def test_version_must_increase(version: str, message: str) -> None:
    new = changed(version=version, name="Shop 2")
    assert diff(OLD, new) == [("BK401", "/version", message)]


def test_prerelease_to_release_is_an_increase() -> None:
    old = dict(OLD, version="2.0.0-rc.2")
    assert codes(old, changed(version="2.0.0")) == []
    assert codes(old, changed(version="2.0.0-rc.10")) == []
    assert codes(old, changed(version="2.0.0-rc.1")) == ["BK401"]


def test_invalid_versions_are_left_to_the_schema() -> None:
    assert codes(OLD, changed(version="1.3")) == []


def test_removed_good_orphans_entitlements() -> None:
    new = changed(goods=OLD["goods"][:2])
    assert diff(OLD, new) == [("BK402", "/goods", 'good "extra" was removed (it was goods[2]): entitlements '
                                                  "already sold for it are orphaned")]


def test_removing_the_whole_catalogue_points_at_the_manifest() -> None:
    new = changed()
    del new["goods"]
    assert [(c, p) for c, p, _ in diff(OLD, new)] == [("BK402", "")] * 3


def test_renamed_good_is_detected_by_title_or_by_content() -> None:
    goods = copy.deepcopy(OLD["goods"])
    goods[0]["id"] = "styles"  # same title
    goods[2] = {"id": "bonus", "title": "Bonus", "priceBuzz": 50}  # new title: different good
    result = diff(OLD, changed(goods=goods))
    assert ("BK403", "/goods/0/id", 'good id "style-pack" was renamed to "styles": entitlements sold under '
                                    '"style-pack" are orphaned') in result
    # Sorted by position in the new file: the catalogue's "[" comes first.
    assert [(c, p) for c, p, _ in result] == [("BK402", "/goods"), ("BK403", "/goods/0/id"), ("BK405", "/goods/2")]
    # Same content under a new id and a new title is a rename too.
    goods = copy.deepcopy(OLD["goods"])
    goods[1] = {"id": "fan", "title": "Supporter badge", "priceBuzz": 20}
    assert codes(OLD, changed(goods=goods)) == ["BK403"]


def test_price_change_needs_re_review() -> None:
    goods = copy.deepcopy(OLD["goods"])
    goods[1]["priceBuzz"] = 25
    assert diff(OLD, changed(goods=goods)) == [
        ("BK404", "/goods/1/priceBuzz", 'price of good "supporter" changed from 20 to 25 Buzz: a new price needs '
                                        "a new version and re-review")]


def test_catalogue_changes_need_re_review() -> None:
    goods = copy.deepcopy(OLD["goods"])
    goods[0]["payload"] = {"unlocks": "more-styles"}
    del goods[1]["title"]  # (the schema reports the missing title; the diff reports the change)
    goods.append({"id": "new-thing", "title": "New thing", "priceBuzz": 5})
    result = diff(OLD, changed(goods=goods))
    assert [(c, p) for c, p, _ in result] == [("BK405", "/goods/0/payload"), ("BK405", "/goods/1"),
                                              ("BK405", "/goods/3")]
    assert result[1][2] == 'good "supporter": title removed: catalogue changes need a new version and re-review'


def test_reordered_goods_are_not_a_change() -> None:
    assert diff(OLD, changed(goods=list(reversed(OLD["goods"])))) == []


def test_scopes_added_and_removed() -> None:
    scopes = ["user:read:self", "goods:purchase:self", "goods:read:self", "models:read:self", "buzz:read:self",
              "buzz:read:self"]
    result = diff(OLD, changed(scopes=scopes))
    assert result == [
        ("BK408", "/scopes", 'scope "apps:storage:write" was removed (it was scopes[3])'),
        ("BK406", "/scopes/3", 'scope "models:read:self" was added: viewers must consent again'),
        ("BK407", "/scopes/4", 'sensitive scope "buzz:read:self" was added: viewers must consent again and it '
                               "needs a justification"),
    ]


def test_block_id_change_is_a_different_app() -> None:
    assert codes(OLD, changed(blockId="shop-block-2")) == ["BK409"]


def test_positions_are_in_the_new_file() -> None:
    new = changed(scopes=OLD["scopes"] + ["models:read:self"])
    text = json.dumps(new, indent=2)
    (finding,) = compare(read_text(json.dumps(OLD), "old.json"), read_text(text, "new.json"))
    line = text.splitlines()[finding.line - 1]
    assert line[finding.column - 1:finding.end_column - 1] == '"models:read:self"'


@pytest.mark.parametrize("broken", ['{"blockId": ', "[1, 2]", ""])
def test_nothing_to_compare_when_a_side_is_not_a_manifest(broken: str) -> None:
    good = read_text(json.dumps(OLD), "good.json")
    assert compare(read_text(broken, "x.json"), good) == []
    assert compare(good, read_text(broken, "x.json")) == []


def test_odd_types_never_raise() -> None:
    odd = {"version": 1, "scopes": "user:read:self", "goods": {"id": "x"}, "blockId": ["a"]}
    assert compare(read_text(json.dumps(OLD)), read_text(json.dumps(odd))) is not None
    weird_goods = changed(goods=[1, None, {"id": 5}, {"title": "no id"}, {"id": "extra", "priceBuzz": "50"}])
    assert set(codes(OLD, weird_goods)) <= {"BK402", "BK404", "BK405"}

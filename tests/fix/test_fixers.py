"""Each fix removes the finding it answers, edits nothing else, and then has nothing left to do."""

from __future__ import annotations

import json
from typing import Any

import pytest

from blockkit.fix import FIXERS, fix_source, fixability, load_fixers
from blockkit.platform import IFRAME_DEFAULTS, SCHEMA_ID
from blockkit.rules import load_all
from blockkit.source import read_text

BASE = """{
  "$schema": "https://civitai.com/schemas/app-block/v1.json",
  "blockId": "demo-block",
  "version": "1.0.0",
  "name": "Demo",
  "contentRating": "g",
  "scopes": ["user:read:self"],
  "iframe": {
    "minHeight": 400,
    "maxHeight": null,
    "resizable": false,
    "sandbox": "allow-scripts allow-forms"
  }
}
"""


def codes_of(text: str) -> set[str]:
    return {f.code for f in fix_source(read_text(text), unsafe=False).before.findings}


def fixed(text: str, unsafe: bool = False) -> str:
    outcome = fix_source(read_text(text), unsafe=unsafe)
    assert outcome.refused is None
    assert outcome.text is not None
    # Idempotent: a second run finds nothing more to do.
    assert not fix_source(read_text(outcome.text), unsafe=unsafe).changed
    return outcome.text


def test_the_base_manifest_needs_no_fix() -> None:
    assert not codes_of(BASE) & set(load_fixers())
    assert fixed(BASE, unsafe=True) == BASE


CASES: list[tuple[str, str, str, str, bool]] = [
    # (code, find, replace-with, expected text after fix, unsafe)
    ("BK312", '  "$schema": "https://civitai.com/schemas/app-block/v1.json",\n', "",
     BASE, False),
    ("BK313", f'"$schema": "{SCHEMA_ID}"', '"$schema": "http://civitai.com/schemas/app-block/v1"',
     BASE, False),
    ("BK110", '  "name": "Demo",\n', '  "name": "Demo",\n  "trustTier": "verified",\n', BASE, False),
    ("BK110", '    "minHeight": 400,\n', '    "src": "https://x.civit.ai/",\n    "minHeight": 400,\n', BASE, False),
    ("BK301", '  "blockId"', '  "appId": "app_123",\n  "blockId"', BASE, False),
    ("BK302", '["user:read:self"]', '["user:read:self", "user:read:self"]', BASE, False),
    ("BK315", '  "name": "Demo",\n', '  "name": "Demo",\n  "tagline": " Makes demos\\u00a0",\n',
     BASE.replace('  "name": "Demo",\n', '  "name": "Demo",\n  "tagline": "Makes demos",\n'), False),
    ("BK314", '  "name": "Demo",\n', '  "name": "Demo",\n  "repository": "https://github.com/acme/demo.git/",\n',
     BASE.replace('  "name": "Demo",\n', '  "name": "Demo",\n  "repository": "https://github.com/acme/demo",\n'), False),
    ("BK320", '"sandbox": "allow-scripts allow-forms"', '"sandbox": " allow-scripts\\u00a0\\u00a0allow-forms"',
     BASE, False),
    ("BK216", '    "resizable": false,\n', "", BASE.replace('    "resizable": false,\n', "").replace(
        '"sandbox": "allow-scripts allow-forms"\n', '"sandbox": "allow-scripts allow-forms",\n    "resizable": false\n'),
     True),
]


@pytest.mark.parametrize(("code", "find", "replace", "expected", "unsafe"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_fix_removes_its_finding(code: str, find: str, replace: str, expected: str, unsafe: bool) -> None:
    assert find in BASE
    broken = BASE.replace(find, replace, 1)
    assert code in codes_of(broken)
    assert fixed(broken, unsafe=unsafe) == expected


def test_only_the_stale_appid_is_removed_of_the_unknown_keys() -> None:
    broken = BASE.replace('  "blockId"', '  "appId": "a",\n  "settings": {},\n  "blockId"')
    result = fixed(broken)
    assert '"appId"' not in result
    assert '"settings": {}' in result  # a human must decide about data a block may read


def test_byte_order_mark_is_removed() -> None:
    assert "BK003" in codes_of("\ufeff" + BASE)
    assert fixed("\ufeff" + BASE) == BASE


def test_missing_iframe_is_added_whole_only_when_unsafe() -> None:
    start = BASE.index('  "iframe"')
    without = BASE[: start].rstrip().rstrip(",") + "\n}\n"
    assert "BK216" in codes_of(without)
    assert fixed(without, unsafe=False) == without
    result = json.loads(fixed(without, unsafe=True))
    assert result["iframe"] == dict(IFRAME_DEFAULTS)
    assert list(result)[-1] == "iframe"


def test_page_without_iframe_gets_one_when_unsafe() -> None:
    start = BASE.index('  "iframe"')
    page = BASE[: start] + '  "page": {"path": "/", "title": "Demo"}\n}\n'
    assert "BK219" in codes_of(page)
    assert json.loads(fixed(page, unsafe=True))["iframe"] == dict(IFRAME_DEFAULTS)


def test_a_blank_tagline_is_left_for_the_user() -> None:
    broken = BASE.replace('  "name": "Demo",\n', '  "name": "Demo",\n  "tagline": "   ",\n')
    assert fixed(broken) == broken


def test_several_fixes_in_one_run() -> None:
    broken = ("\ufeff" + BASE.replace('  "$schema": "https://civitai.com/schemas/app-block/v1.json",\n', "")
              .replace('  "blockId"', '  "appId": "a",\n  "trustTier": "internal",\n  "blockId"')
              .replace('["user:read:self"]', '["user:read:self", "user:read:self", "user:read:self"]'))
    assert fixed(broken) == BASE


def test_duplicate_keys_are_fixed_one_copy_at_a_time() -> None:
    broken = BASE.replace('  "name": "Demo",\n', '  "trustTier": "a",\n  "name": "Demo",\n  "trustTier": "b",\n')
    assert fixed(broken) == BASE


def _registry() -> dict[str, Any]:
    return load_all()


def test_every_fixer_answers_a_registered_rule() -> None:
    registry = _registry()
    for code in load_fixers():
        assert code in registry, f"fixer for unknown rule {code}"


def test_fixable_flags_are_honest() -> None:
    # A rule that declares itself fixable must have a fixer of the same safety.
    registry = _registry()
    load_fixers()
    for code, rule in registry.items():
        if rule.fixable is not None:
            assert fixability(code) == rule.fixable, code
    assert fixability("BK110") == "safe"
    assert fixability("BK216") == "unsafe"
    assert fixability("BK101") is None
    assert set(FIXERS) >= {"BK003", "BK110", "BK216", "BK219", "BK301", "BK302", "BK312", "BK313", "BK314",
                           "BK315"}

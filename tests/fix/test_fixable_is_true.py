"""``"fixable"`` in the JSON says what ``blockkit fix`` does to that finding, on every corpus manifest.

For each finding of each manifest in both corpora (and a few made here), the finding's fixer is
run on that finding alone: ``fixable`` is "safe"/"unsafe" exactly when the fixer produces an edit
the text takes, and null when there is no fixer or it leaves the finding to a person.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from blockkit.engine import ALL_LAYERS, check, read_path
from blockkit.fix import load_fixers
from blockkit.fix.registry import FixTarget, finding_fixability
from blockkit.fix.runner import fixable_document
from blockkit.fix.textedit import JsonText, apply_edits
from blockkit.source import read_text
from tests.conftest import corpus_file_params

MADE = {
    "server-owned": {"name": "x", "trustTier": "verified", "iframe": {"src": "https://x.example/"}},
    "stale-and-unknown": {"appId": "a", "somethingElse": 1, "name": "x"},
    "schema": {"$schema": "https://example.com/other.json", "name": "x"},
}


def _verdict(source):  # type: ignore[no-untyped-def]
    report = check(source, layers=ALL_LAYERS)
    fixers = load_fixers()
    results = []
    for finding in report.findings:
        fixer = fixers.get(finding.code)
        edits = [] if fixer is None else list(fixer.apply(FixTarget(source, source.data, JsonText(source)), [finding]))
        _, accepted = apply_edits(source.text or "", edits)
        does = (fixer.safety if fixer is not None and accepted else None)
        results.append((finding, does))
    return results


def _check(source) -> None:  # type: ignore[no-untyped-def]
    if not source.has_document or not isinstance(source.data, dict) or fixable_document(source) is not None:
        return
    for finding, does in _verdict(source):
        said = finding.to_json()["fixable"]
        assert said == does, f"{finding.code} at {finding.pointer!r}: JSON says {said!r}, fix does {does!r}"
        assert finding_fixability(finding) == said


@pytest.mark.parametrize("path", corpus_file_params())
def test_fixable_matches_what_fix_does_on_the_corpus(path: Path) -> None:
    _check(read_path(path))


@pytest.mark.parametrize("name", sorted(MADE))
def test_fixable_matches_what_fix_does_on_made_manifests(name: str) -> None:
    _check(read_text(json.dumps(MADE[name], indent=2), "block.manifest.json"))


def test_an_unknown_key_other_than_appid_is_not_fixable_but_appid_is() -> None:
    source = read_text(json.dumps(MADE["stale-and-unknown"]), "block.manifest.json")
    said = {f.pointer: f.to_json()["fixable"] for f in check(source, layers=ALL_LAYERS).findings
            if f.pointer in ("/appId", "/somethingElse")}
    assert said.get("/appId") == "safe"
    assert "/somethingElse" not in said or said["/somethingElse"] is None

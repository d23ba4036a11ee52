"""``blockkit diff`` over consecutive versions of apps: the real ones in ../shared/corpus/real
(where present), and the versions of one app in our own corpus (tests/fixtures/corpus/history).

Each expected result was read off the two files by hand (diff(1) of the pair is
quoted in the comment).
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest

from blockkit.diff import compare
from blockkit.engine import read_path

from tests.conftest import CORPUS, OWN_CORPUS, SHARED_MISSING

needs_shared = pytest.mark.skipif(not (CORPUS / "index.json").is_file(), reason=SHARED_MISSING)


def history(repo: str) -> list[dict]:
    """The repository's versions in index.json order (by date; the index lists them oldest first)."""
    entries = [e for e in json.loads((CORPUS / "index.json").read_text(encoding="utf-8"))
               if e.get("repo") == repo and e.get("kind") == "repo"]
    dates = [e["date"] for e in entries]
    assert dates == sorted(dates), f"{repo}: index.json is not in date order"
    return entries


def consecutive(repo: str, old_commit: str, new_commit: str) -> tuple[Path, Path]:
    commits = [e["commit"][:7] for e in history(repo)]
    position = commits.index(old_commit)
    assert commits[position + 1] == new_commit, f"{old_commit} -> {new_commit} are not consecutive"
    entries = history(repo)
    return CORPUS / "real" / entries[position]["file"], CORPUS / "real" / entries[position + 1]["file"]


def run_diff(old: Path, new: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "blockkit.cli", "diff", "--format", "json", *extra, str(old),
                           str(new)], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})


CASES = [
    # version 0.7.1 -> 0.7.2; "scopes" reflowed onto three lines: nothing review cares about
    ("ZacxDev/civitai-app-gen-matrix", "e4f21e8", "ed22d1a", 0, []),
    # 0.8.1 -> 0.8.1; + "scopeJustifications": {...}: changed without a new version
    ("ZacxDev/civitai-app-gen-matrix", "594df68", "eb46869", 1,
     [("BK401", "/version", 'version is still "0.8.1" although the manifest changed')]),
    # 0.1.3 -> 0.2.0; + "apps:storage:read", + "apps:storage:write"
    ("ZacxDev/civitai-app-model-benchmarking", "89316cd", "1141971", 0,
     [("BK406", "/scopes/2", 'scope "apps:storage:read" was added: viewers must consent again'),
      ("BK406", "/scopes/3", 'scope "apps:storage:write" was added: viewers must consent again')]),
    # 0.2.2 -> 0.1.3; + tagline, - "apps:storage:read", - "apps:storage:write", - scopeJustifications
    ("ZacxDev/civitai-app-model-benchmarking", "8bd0981", "1b3cff7", 1,
     [("BK401", "/version", 'version "0.1.3" is lower than the previous "0.2.2"'),
      ("BK408", "/scopes", 'scope "apps:storage:read" was removed (it was scopes[2])'),
      ("BK408", "/scopes", 'scope "apps:storage:write" was removed (it was scopes[3])')]),
    # 0.1.0 -> 0.1.0; + "collections:read:private" (sensitive)
    ("ZacxDev/civitai-app-playable-collections", "0b1c611", "6458aec", 1,
     [("BK401", "/version", 'version is still "0.1.0" although the manifest changed'),
      ("BK407", "/scopes/1", 'sensitive scope "collections:read:private" was added: viewers must consent again '
                             "and it needs a justification")]),
    # 0.1.0 -> 0.1.1; - "block:settings:read", - "block:settings:write", - "settings": {...}
    ("ZacxDev/civitai-app-playable-collections", "6458aec", "dd7cb41", 0,
     [("BK408", "/scopes", 'scope "block:settings:read" was removed (it was scopes[5])'),
      ("BK408", "/scopes", 'scope "block:settings:write" was removed (it was scopes[6])')]),
]


# One skip, not one per case, where the real corpus is absent.
_CASE_PARAMS = [pytest.param(*c, id=f"{c[0].split('/')[1]}-{c[1]}-{c[2]}") for c in CASES] \
    if (CORPUS / "index.json").is_file() else [pytest.param(*CASES[0], id="shared", marks=needs_shared)]


@pytest.mark.parametrize(("repo", "old", "new", "status", "expected"), _CASE_PARAMS)
def test_real_history(repo: str, old: str, new: str, status: int, expected: list[tuple[str, str, str]]) -> None:
    old_path, new_path = consecutive(repo, old, new)
    result = run_diff(old_path, new_path)
    assert result.returncode == status, result.stderr
    (file,) = json.loads(result.stdout)["files"]
    assert file["path"] == str(new_path)
    assert [(d["code"], d["pointer"], d["message"]) for d in file["diagnostics"]] == expected
    assert all(d["layer"] == "diff" for d in file["diagnostics"])


@needs_shared
def test_every_consecutive_pair_compares_cleanly() -> None:
    # No traceback and a verdict for every step of every history in the corpus.
    repos = {e["repo"] for e in json.loads((CORPUS / "index.json").read_text(encoding="utf-8"))
             if e.get("kind") == "repo" and e.get("date")}
    steps = 0
    for repo in sorted(repos):
        entries = history(repo)
        for before, after in itertools.pairwise(entries):
            new = read_path(CORPUS / "real" / after["file"])
            findings = compare(read_path(CORPUS / "real" / before["file"]), new)
            assert all(f.code.startswith("BK4") and f.line >= 1 for f in findings)
            steps += 1
    assert steps > 30


@needs_shared
def test_goods_changes_on_a_real_catalogue(tmp_path: Path) -> None:
    # The monetize starter is the corpus's manifest with a catalogue; its next version is made here.
    old = CORPUS / "real" / "civitai__civitai-app-starters__488bc22__starters_examples_monetize_block.manifest.json"
    document = json.loads(old.read_text(encoding="utf-8"))
    assert [g["id"] for g in document["goods"]] == ["style-pack", "supporter"]
    document["version"] = "0.2.0"
    document["goods"][0]["id"] = "styles"  # renamed: same title
    document["goods"][1]["priceBuzz"] = 30  # was 20
    new = tmp_path / "block.manifest.json"
    new.write_text(json.dumps(document, indent=2), encoding="utf-8")
    result = run_diff(old, new)
    assert result.returncode == 0
    (file,) = json.loads(result.stdout)["files"]
    assert [(d["code"], d["pointer"], d["severity"]) for d in file["diagnostics"]] == [
        ("BK403", "/goods/0/id", "warning"), ("BK404", "/goods/1/priceBuzz", "info")]
    assert run_diff(old, new, "--strict").returncode == 1


# Our own app's history: file n -> file n+1, with the exit status and the diff findings.
OWN_HISTORY = OWN_CORPUS / "history" / "trail-notes"
OWN_CASES = [
    # 0.1.0 -> 0.1.1; + tagline: nothing review cares about
    ("01-0.1.0.json", 0, []),
    # 0.1.1 -> 0.1.1; + "apps:storage:read", + "apps:storage:write" without a new version
    ("02-0.1.1.json", 1,
     [("BK401", "/version", 'version is still "0.1.1" although the manifest changed'),
      ("BK406", "/scopes/1", 'scope "apps:storage:read" was added: viewers must consent again'),
      ("BK406", "/scopes/2", 'scope "apps:storage:write" was added: viewers must consent again')]),
    # 0.1.1 -> 0.2.0; + "ai:write:budgeted" (sensitive, justified), + page budget
    ("03-0.1.1.json", 0,
     [("BK407", "/scopes/3", 'sensitive scope "ai:write:budgeted" was added: viewers must consent again and it '
                             "needs a justification")]),
    # 0.2.0 -> 0.1.9; - "apps:storage:read"
    ("04-0.2.0.json", 1,
     [("BK401", "/version", 'version "0.1.9" is lower than the previous "0.2.0"'),
      ("BK408", "/scopes", 'scope "apps:storage:read" was removed (it was scopes[1])')]),
    # 0.1.9 -> 1.0.0; + "goods:purchase:self" (sensitive), + three goods
    ("05-0.1.9.json", 0,
     [("BK407", "/scopes/3", 'sensitive scope "goods:purchase:self" was added: viewers must consent again and it '
                             "needs a justification"),
      ("BK405", "/goods/0", 'good "map-north" was added: catalogue changes need a new version and re-review'),
      ("BK405", "/goods/1", 'good "map-south" was added: catalogue changes need a new version and re-review'),
      ("BK405", "/goods/2", 'good "map-coast" was added: catalogue changes need a new version and re-review')]),
    # 1.0.0 -> 1.1.0; "map-north" renamed (same title), "map-south" 40 -> 50, "map-coast" removed
    ("06-1.0.0.json", 0,
     [("BK402", "/goods", 'good "map-coast" was removed (it was goods[2]): entitlements already sold for it are '
                          "orphaned"),
      ("BK403", "/goods/0/id", 'good id "map-north" was renamed to "map-north-ridge": entitlements sold under '
                               '"map-north" are orphaned'),
      ("BK404", "/goods/1/priceBuzz", 'price of good "map-south" changed from 40 to 50 Buzz: a new price needs a new '
                                      "version and re-review")]),
    # 1.1.0 -> 2.0.0; blockId "trail-notes" -> "trail-notebook"
    ("07-1.1.0.json", 1,
     [("BK409", "/blockId", 'blockId changed from "trail-notes" to "trail-notebook": that is a different app')]),
]


def test_our_history_is_covered_step_by_step() -> None:
    versions = sorted(p.name for p in OWN_HISTORY.glob("*.json"))
    assert [case[0] for case in OWN_CASES] == versions[:-1]


@pytest.mark.parametrize(("old", "status", "expected"), OWN_CASES, ids=[c[0] for c in OWN_CASES])
def test_own_history(old: str, status: int, expected: list[tuple[str, str, str]]) -> None:
    versions = sorted(OWN_HISTORY.glob("*.json"))
    old_path = OWN_HISTORY / old
    new_path = versions[versions.index(old_path) + 1]
    result = run_diff(old_path, new_path)
    assert result.returncode == status, result.stderr
    (file,) = json.loads(result.stdout)["files"]
    assert file["path"] == str(new_path)
    assert [(d["code"], d["pointer"], d["message"]) for d in file["diagnostics"]] == expected
    assert all(d["layer"] == "diff" for d in file["diagnostics"])


def test_every_version_of_our_corpus_compares_cleanly_with_every_other() -> None:
    # Not only neighbours: any two versions, either way round, give diff findings and no crash.
    versions = sorted(OWN_HISTORY.glob("*.json"))
    for before, after in itertools.permutations(versions, 2):
        findings = compare(read_path(before), read_path(after))
        assert all(f.code.startswith("BK4") and f.line >= 1 for f in findings)

"""``blockkit diff`` over real consecutive versions of apps in ../shared/corpus/real.

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

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"
pytestmark = pytest.mark.skipif(not (CORPUS / "index.json").is_file(), reason="../shared/corpus is not present")


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


@pytest.mark.parametrize(("repo", "old", "new", "status", "expected"), CASES,
                         ids=[f"{c[0].split('/')[1]}-{c[1]}-{c[2]}" for c in CASES])
def test_real_history(repo: str, old: str, new: str, status: int, expected: list[tuple[str, str, str]]) -> None:
    old_path, new_path = consecutive(repo, old, new)
    result = run_diff(old_path, new_path)
    assert result.returncode == status, result.stderr
    (file,) = json.loads(result.stdout)["files"]
    assert file["path"] == str(new_path)
    assert [(d["code"], d["pointer"], d["message"]) for d in file["diagnostics"]] == expected
    assert all(d["layer"] == "diff" for d in file["diagnostics"])


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

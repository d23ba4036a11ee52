"""Adopting lint on a legacy manifest with a baseline: only new findings count."""

from __future__ import annotations

import json
from pathlib import Path

from lint_helpers import clean, invoke, write_project

# Lint findings only (a stale key, a repeated scope); the platform accepts it.
LEGACY = clean(appId="123", scopes=["user:read:self", "models:read:self", "user:read:self"])


def lint(*args: str, cwd: Path | None = None):
    result = invoke("lint", *args, cwd=cwd)
    return result


def entries(path: Path) -> list[dict]:
    return json.loads(path.read_text())["entries"]


def test_update_writes_todays_lint_findings_and_hides_them(tmp_path: Path) -> None:
    write_project(tmp_path / "app", LEGACY)
    baseline = tmp_path / "lint-baseline.json"
    result = lint(str(tmp_path / "app"), "--baseline", str(baseline), "--update-baseline", "--strict")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "All checks passed" in result.stdout
    assert f"wrote 2 baseline entries to {baseline}" in result.stderr
    assert entries(baseline) == [
        {"path": "app/block.manifest.json", "code": "BK301", "pointer": "/appId",
         "message": 'unknown key "appId": a stale key the platform ignores'},
        {"path": "app/block.manifest.json", "code": "BK302", "pointer": "/scopes/2",
         "message": 'scope "user:read:self" is listed again (first at scopes[0])'},
    ]
    assert lint(str(tmp_path / "app"), "--baseline", str(baseline), "--strict").exit_code == 0


def test_only_new_findings_fail(tmp_path: Path) -> None:
    path = write_project(tmp_path, LEGACY)
    baseline = tmp_path / "baseline.json"
    lint(str(path), "--baseline", str(baseline), "--update-baseline")
    # Re-indented and with a key moved: lines change, pointers do not.
    manifest = dict(LEGACY, tagline=" Padded ")
    path.write_text(json.dumps({"tagline": manifest.pop("tagline"), **manifest}, indent=4))
    result = lint(str(path), "--baseline", str(baseline), "--strict", "--format", "json")
    assert result.exit_code == 1
    (file,) = json.loads(result.stdout)["files"]
    assert [d["code"] for d in file["diagnostics"]] == ["BK315"]


def test_a_baseline_works_from_any_working_directory(tmp_path: Path) -> None:
    write_project(tmp_path / "repo" / "app", LEGACY)
    lint("app", "--baseline", "ci/baseline.json", "--update-baseline", cwd=tmp_path / "repo")
    assert entries(tmp_path / "repo" / "ci" / "baseline.json")[0]["path"] == "../app/block.manifest.json"
    result = lint(str(tmp_path / "repo" / "app" / "block.manifest.json"), "--baseline",
                  str(tmp_path / "repo" / "ci" / "baseline.json"), "--strict", cwd=tmp_path)
    assert result.exit_code == 0, result.stdout


def test_a_fixed_finding_leaves_a_stale_entry_that_is_reported(tmp_path: Path) -> None:
    path = write_project(tmp_path, LEGACY)
    baseline = tmp_path / "baseline.json"
    lint(str(path), "--baseline", str(baseline), "--update-baseline")
    path.write_text(json.dumps(clean(scopes=LEGACY["scopes"]), indent=2))  # appId removed
    result = lint(str(path), "--baseline", str(baseline), "--format", "json")
    assert result.exit_code == 0  # a warning
    document = json.loads(result.stdout)
    stale = [f for f in document["files"] if f["path"].endswith("baseline.json")]
    (finding,) = stale[0]["diagnostics"]
    assert finding["code"] == "BK391" and finding["pointer"] == "/entries/0"
    assert (finding["line"], finding["column"]) == (4, 5)  # the entry's opening brace
    assert lint(str(path), "--baseline", str(baseline), "--strict").exit_code == 1
    # Recording again drops the stale entry.
    lint(str(path), "--baseline", str(baseline), "--update-baseline")
    assert [e["code"] for e in entries(baseline)] == ["BK302"]
    assert lint(str(path), "--baseline", str(baseline), "--strict").exit_code == 0


def test_entries_of_manifests_not_checked_are_kept_and_not_judged(tmp_path: Path) -> None:
    write_project(tmp_path / "a", LEGACY)
    write_project(tmp_path / "b", LEGACY)
    baseline = tmp_path / "baseline.json"
    lint(str(tmp_path), "--baseline", str(baseline), "--update-baseline")
    assert len(entries(baseline)) == 4
    write_project(tmp_path / "a", clean())  # a is fixed; b is not checked below
    result = lint(str(tmp_path / "a"), "--baseline", str(baseline), "--update-baseline")
    assert result.exit_code == 0
    assert {e["path"] for e in entries(baseline)} == {"b/block.manifest.json"}
    assert lint(str(tmp_path / "b"), "--baseline", str(baseline), "--strict").exit_code == 0


def test_entries_of_a_deleted_manifest_are_stale(tmp_path: Path) -> None:
    write_project(tmp_path / "a", LEGACY)
    write_project(tmp_path / "b", clean())
    baseline = tmp_path / "baseline.json"
    lint(str(tmp_path), "--baseline", str(baseline), "--update-baseline")
    (tmp_path / "a" / "block.manifest.json").unlink()
    result = lint(str(tmp_path / "b"), "--baseline", str(baseline))
    assert result.stdout.count("BK391") == 2 and "no longer exists" in result.stdout


def test_a_baseline_never_hides_the_platforms_verdict(tmp_path: Path) -> None:
    path = write_project(tmp_path, dict(LEGACY, scopes=["ai:write:budgeted"]))  # BK203: no justification
    baseline = tmp_path / "baseline.json"
    result = lint(str(path), "--baseline", str(baseline), "--update-baseline")
    assert result.exit_code == 1 and "BK203" in result.stdout
    assert {e["code"] for e in entries(baseline)} == {"BK301", "BK304"}
    # A hand-made entry for a platform finding is refused.
    baseline.write_text(json.dumps({"version": 1, "entries": [
        {"path": "block.manifest.json", "code": "BK203", "pointer": "/scopes/0"}]}))
    result = lint(str(path), "--baseline", str(baseline))
    assert result.exit_code == 2 and "platform findings cannot be baselined" in result.stderr


def test_baseline_usage_errors_are_exit_2(tmp_path: Path) -> None:
    path = write_project(tmp_path, LEGACY)
    result = lint(str(path), "--update-baseline")
    assert result.exit_code == 2 and "--update-baseline needs --baseline FILE" in result.stderr
    result = lint(str(path), "--baseline", str(tmp_path / "none.json"))
    assert result.exit_code == 2 and "no such baseline file" in result.stderr
    (tmp_path / "bad.json").write_text('{"entries": []}')
    result = lint(str(path), "--baseline", str(tmp_path / "bad.json"))
    assert result.exit_code == 2 and "not a blockkit baseline" in result.stderr


def test_a_key_written_as_a_lone_surrogate_escape_is_baselined(tmp_path: Path) -> None:
    # json.dumps writes the key as the escape "\ud800", which Python reads as a lone surrogate:
    # the pointer holds a character UTF-8 cannot encode, and writing the baseline crashed.
    path = write_project(tmp_path, dict(clean(), **{"\ud800": 1}))
    assert '"\\ud800"' in path.read_text(encoding="utf-8")
    baseline = tmp_path / "baseline.json"
    result = lint(str(path), "--baseline", str(baseline), "--update-baseline")
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 0, result.stdout + result.stderr
    assert [(e["code"], e["pointer"]) for e in entries(baseline)] == [("BK301", "/\ud800")]
    assert "\\ud800" in baseline.read_text(encoding="utf-8")
    again = lint(str(path), "--baseline", str(baseline), "--strict")
    assert again.exit_code == 0, again.stdout  # the entry matches: hidden, and not stale

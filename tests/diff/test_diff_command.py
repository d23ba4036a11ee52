"""``blockkit diff`` and ``blockkit lint --against`` as a user runs them, with a real git repository."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from blockkit.diff import RevisionError, source_at_revision
from sample_manifests import PAGE_BLOCK, changed

OLD = changed(PAGE_BLOCK, page=...)
NEW = dict(OLD, scopes=["user:read:self", "buzz:read:self"],
           scopeJustifications={"buzz:read:self": "Shows the viewer's balance before a purchase."})


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "blockkit.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "HOME": str(cwd or "/tmp")})


def write(path: Path, document: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return path


def test_diff_text_output_points_into_new(tmp_path: Path) -> None:
    old, new = write(tmp_path / "old.json", OLD), write(tmp_path / "new.json", NEW)
    result = run("diff", str(old), str(new))
    assert result.returncode == 1  # the version did not increase
    assert f"{new}:4:14: BK401 version is still \"1.0.0\" although the manifest changed" in result.stdout
    assert f"{new}:9:5: BK407 [warning] sensitive scope \"buzz:read:self\" was added" in result.stdout
    assert '9 |     "buzz:read:self"' in result.stdout


@pytest.mark.parametrize("fmt", ["github", "sarif", "junit", "json"])
def test_diff_speaks_every_format(tmp_path: Path, fmt: str) -> None:
    old, new = write(tmp_path / "old.json", OLD), write(tmp_path / "new.json", dict(NEW, version="1.1.0"))
    result = run("diff", "--format", fmt, str(old), str(new))
    assert result.returncode == 0, result.stderr
    assert "BK407" in result.stdout


def test_diff_accepts_block_directories(tmp_path: Path) -> None:
    write(tmp_path / "a" / "block.manifest.json", OLD)
    write(tmp_path / "b" / "block.manifest.json", dict(OLD, version="1.0.1"))
    result = run("diff", str(tmp_path / "a"), str(tmp_path / "b"))
    assert result.returncode == 0 and "All checks passed" in result.stdout


def test_unreadable_old_is_a_tool_failure(tmp_path: Path) -> None:
    new = write(tmp_path / "new.json", NEW)
    assert run("diff", str(tmp_path / "missing.json"), str(new)).returncode == 2
    broken = tmp_path / "old.json"
    broken.write_text("{,}", encoding="utf-8")
    result = run("diff", str(broken), str(new))
    assert result.returncode == 2
    assert "cannot compare against it: it cannot be parsed" in result.stderr


def test_unparseable_new_reports_its_parse_error(tmp_path: Path) -> None:
    old = write(tmp_path / "old.json", OLD)
    new = tmp_path / "new.json"
    new.write_text('{"blockId": "demo-block",}', encoding="utf-8")
    result = run("diff", "--format", "json", str(old), str(new))
    assert result.returncode == 1
    assert [d["code"] for d in json.loads(result.stdout)["files"][0]["diagnostics"]] == ["BK002"]


# --- git ------------------------------------------------------------------------------

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(repo: Path, *args: str) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(repo), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    write(root / "apps" / "demo" / "block.manifest.json", OLD)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "v1")
    return root


@needs_git
def test_source_at_revision(repo: Path) -> None:
    manifest = repo / "apps" / "demo" / "block.manifest.json"
    write(manifest, NEW)
    old = source_at_revision(manifest, "HEAD")
    assert old is not None and old.data == OLD
    assert old.path == f"HEAD:{manifest}"
    assert source_at_revision(repo / "apps" / "demo" / "other.json", "HEAD") is None  # not in that commit
    with pytest.raises(RevisionError, match="unknown revision"):
        source_at_revision(manifest, "no-such-branch")
    with pytest.raises(RevisionError):
        source_at_revision(manifest, "--output=/tmp/x")
    outside = repo.parent / "outside" / "block.manifest.json"
    write(outside, OLD)
    with pytest.raises(RevisionError, match="not inside a git repository"):
        source_at_revision(outside, "HEAD")


@needs_git
def test_lint_against_adds_the_diff_findings(repo: Path) -> None:
    manifest = repo / "apps" / "demo" / "block.manifest.json"
    write(manifest, NEW)
    result = run("lint", "--against", "HEAD", "--format", "json", str(manifest), cwd=repo)
    assert result.returncode == 1, result.stderr
    codes = [d["code"] for d in json.loads(result.stdout)["files"][0]["diagnostics"]]
    assert "BK401" in codes and "BK407" in codes
    write(manifest, dict(NEW, version="1.1.0"))
    result = run("lint", "--against", "HEAD", "--format", "json", str(manifest), cwd=repo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "BK407" in result.stdout and "BK401" not in result.stdout


@needs_git
def test_lint_against_a_new_manifest_or_a_bad_revision(repo: Path) -> None:
    fresh = write(repo / "apps" / "fresh" / "block.manifest.json", OLD)
    result = run("lint", "--against", "HEAD", "--format", "json", str(fresh), cwd=repo)
    assert result.returncode == 0  # nothing to compare with: a new app
    assert not any(d["code"].startswith("BK4") for d in json.loads(result.stdout)["files"][0]["diagnostics"])
    result = run("lint", "--against", "nope", str(fresh), cwd=repo)
    assert result.returncode == 2
    assert "--against nope: 'nope': unknown revision" in result.stderr

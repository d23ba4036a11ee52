"""The blockkit-validate hook, run by the real pre-commit program."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = [pytest.mark.precommit,
              pytest.mark.skipif(shutil.which("pre-commit") is None, reason="pre-commit is not installed")]


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})


def try_repo(project: Path, hook: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(project.parent / "pre-commit-home"), "NO_COLOR": "1"}
    return subprocess.run(["pre-commit", "try-repo", str(REPO), hook, "--all-files", "--color", "never"],
                          cwd=project, capture_output=True, text=True, env=env, timeout=600)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "user-project"
    root.mkdir()
    git(root, "init", "-q")
    return root


def test_hook_passes_a_good_manifest_and_fails_a_bad_one(project: Path, manifest) -> None:
    (project / "good").mkdir()
    (project / "good" / "block.manifest.json").write_text(json.dumps(manifest, indent=2))
    (project / "notes.json").write_text("{not json")  # not a manifest: the hook must ignore it
    git(project, "add", "-A")
    result = try_repo(project, "blockkit-validate")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "blockkit validate" in result.stdout and "Passed" in result.stdout

    manifest["iframe"]["sandbox"] = 7
    (project / "bad").mkdir()
    (project / "bad" / "block.manifest.json").write_text(json.dumps(manifest, indent=2))
    git(project, "add", "-A")
    result = try_repo(project, "blockkit-validate")
    assert result.returncode == 1
    assert "Failed" in result.stdout
    assert "bad/block.manifest.json:14:16: BK102" in result.stdout

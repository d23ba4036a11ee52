"""The blockkit-lint hook, run by the real pre-commit program with ``try-repo``.

try-repo installs the hook from this repository (HEAD plus uncommitted
changes) into its own environment, so this checks the hook definition, the
packaging and the command together, the way a user's commit runs them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from lint_helpers import READY_JS, clean, write_project

REPO = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.precommit,
              pytest.mark.skipif(shutil.which("pre-commit") is None, reason="pre-commit is not installed")]

_GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t"}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env={**os.environ, **_GIT_ENV})


def try_repo(project: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(project.parent / "pre-commit-home"), "NO_COLOR": "1"}
    return subprocess.run(["pre-commit", "try-repo", str(REPO), "blockkit-lint", "--all-files", "--color", "never"],
                          cwd=project, capture_output=True, text=True, env=env, timeout=600)


def test_lint_hook_passes_warnings_and_fails_what_the_config_makes_an_error(tmp_path: Path) -> None:
    project = tmp_path / "user-project"
    project.mkdir()
    git(project, "init", "-q")
    index = '<!doctype html><div id="root">Loading…</div><script src="./app.js"></script>'
    write_project(project / "good", clean(), {"index.html": index, "app.js": READY_JS})
    write_project(project / "legacy", clean(appId="42"), {"index.html": index, "app.js": READY_JS})
    (project / "notes.json").write_text("{not json")  # not a manifest: the hook must leave it alone
    git(project, "add", "-A")

    result = try_repo(project)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output  # a lint warning alone does not fail a commit
    assert "blockkit lint" in result.stdout and "Passed" in result.stdout

    # The project's own config turns the stale key into an error: now the commit fails,
    # and the hook says where, with the path as pre-commit passed it.
    (project / "legacy" / "blockkit.toml").write_text('[severity]\nBK301 = "error"\n')
    git(project, "add", "-A")
    result = try_repo(project)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "Failed" in result.stdout
    line = next(i for i, text in enumerate(json.dumps(clean(appId="42"), indent=2).splitlines(), 1)
                if '"appId"' in text)
    assert f"legacy/block.manifest.json:{line}:3: BK301 unknown key \"appId\"" in result.stdout
    assert "good/block.manifest.json" not in result.stdout

"""What `blockkit new` tells the developer once the files are written."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from click.testing import Result

RunNew = Callable[..., Result]


def test_a_block_inside_a_git_repository_says_where_the_hooks_belong(tmp_path: Path, run_new: RunNew) -> None:
    repo = tmp_path / "monorepo"
    (repo / ".git").mkdir(parents=True)
    result = run_new(repo / "blocks" / "inner-block", "--defaults")
    assert result.exit_code == 0, result.output
    assert f"inside the git repository at {repo}" in result.output
    assert str(repo / ".pre-commit-config.yaml") in result.output


def test_a_block_at_the_root_of_its_repository_needs_no_note(tmp_path: Path, run_new: RunNew) -> None:
    (tmp_path / ".git").mkdir()
    block = tmp_path / "own-repo"
    (block / ".git").mkdir(parents=True)
    result = run_new(block, "--defaults")
    assert result.exit_code == 0, result.output
    assert "git repository" not in result.output

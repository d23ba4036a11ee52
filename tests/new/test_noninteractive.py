"""Without a terminal `blockkit new` never prompts: it fails, listing every answer it lacks."""

from __future__ import annotations

import subprocess
from pathlib import Path

from new_helpers import BLOCKKIT, subprocess_env


def _run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*BLOCKKIT, "new", *map(str, args)],
        cwd=cwd,
        env=subprocess_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_no_terminal_lists_missing_answers(tmp_path: Path) -> None:
    result = _run("my-block", cwd=tmp_path)
    assert result.returncode == 2
    assert "missing answers (and no terminal to ask on)" in result.stderr
    for flag in ("--name NAME", "--template static|vite|react", "--content-rating g|pg|pg13|r|x"):
        assert flag in result.stderr
    # Optional questions take their defaults silently; they are not "missing".
    assert "--tagline" not in result.stderr and "--surface" not in result.stderr
    assert "--defaults" in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert not (tmp_path / "my-block").exists()


def test_no_input_with_required_flags_succeeds(tmp_path: Path) -> None:
    result = _run(
        "flagged", "--no-input", "--name", "Flagged", "--template", "static", "--content-rating", "pg", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert "Next steps:" in result.stdout and "blockkit lint" in result.stdout
    assert (tmp_path / "flagged" / "block.manifest.json").is_file()


def test_defaults_still_need_a_justification(tmp_path: Path) -> None:
    result = _run(
        "balance", "--defaults", "--scope", "buzz:read:self", "--scope", "collections:read:private", cwd=tmp_path
    )
    assert result.returncode == 2
    assert "--justify 'buzz:read:self=TEXT'" in result.stderr
    assert "--justify 'collections:read:private=TEXT'" in result.stderr
    assert "--name" not in result.stderr  # --defaults answered it
    assert not (tmp_path / "balance").exists()


def test_success_prints_next_steps_and_self_check(tmp_path: Path) -> None:
    result = _run("next-steps", "--defaults", "--template", "react", "-p", "yarn", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "Self-check: block.manifest.json is valid for a new (unverified) app." in lines
    steps = lines[lines.index("Next steps:") + 1 :]
    assert [s.strip() for s in steps[:5]] == [
        "cd next-steps",
        "yarn install",
        "yarn run dev  # keeps running; then, in a second terminal:",
        "blockkit dev --proxy http://localhost:5173",
        "blockkit lint",
    ]
    assert "Commit yarn.lock: the platform builds strictly from it." in result.stdout


def test_readme_runs_the_dev_server_and_the_host_in_two_terminals(tmp_path: Path) -> None:
    assert _run("two-terms", "--defaults", "--template", "vite", cwd=tmp_path).returncode == 0
    readme = (tmp_path / "two-terms" / "README.md").read_text()
    run_it = readme[readme.index("## Run it") : readme.index("## Files")]
    blocks = [b.strip().splitlines() for b in run_it.split("```")[1::2]]
    # `npm run dev` never returns, so the host command cannot follow it in the same block.
    dev_block = next(b for b in blocks if "npm run dev" in b)
    assert not any(line.startswith("blockkit dev") for line in dev_block)
    assert "second terminal" in run_it

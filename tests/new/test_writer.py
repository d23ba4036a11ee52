"""The target directory: refuse a non-empty one, and never overwrite what the developer changed."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

import pytest
from click.testing import Result

from blockkit.scaffold.config import digest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

RunNew = Callable[..., Result]


def _toml(block: Path) -> dict:
    return tomllib.loads((block / "blockkit.toml").read_text())


def test_refuses_a_non_empty_directory(tmp_path: Path, run_new: RunNew) -> None:
    block = tmp_path / "busy-block"
    block.mkdir()
    (block / "notes.txt").write_text("mine")
    result = run_new(block, "--defaults")
    assert result.exit_code == 2
    assert "is not empty (notes.txt)" in result.output and "--force" in result.output
    assert sorted(p.name for p in block.iterdir()) == ["notes.txt"]


def test_a_directory_with_only_git_counts_as_empty(tmp_path: Path, run_new: RunNew) -> None:
    block = tmp_path / "git-block"
    (block / ".git").mkdir(parents=True)
    assert run_new(block, "--defaults").exit_code == 0


def test_refuses_a_file_as_target(tmp_path: Path, run_new: RunNew) -> None:
    target = tmp_path / "a-file"
    target.write_text("x")
    result = run_new(target, "--defaults")
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_force_keeps_files_it_did_not_write(tmp_path: Path, run_new: RunNew) -> None:
    block = tmp_path / "has-readme"
    block.mkdir()
    (block / "README.md").write_text("my own readme\n")
    result = run_new(block, "--defaults", "--force")
    assert result.exit_code == 0, result.output
    assert "kept 1 file(s) blockkit did not write: README.md" in result.output
    assert (block / "README.md").read_text() == "my own readme\n"
    assert "README.md" not in _toml(block)["scaffold"]["files"]


def test_rerun_replaces_only_untouched_files(tmp_path: Path, run_new: RunNew) -> None:
    block = tmp_path / "upgrade-me"
    assert run_new(block, "--defaults", "--template", "vite", "--tagline", "First words").exit_code == 0
    # The developer edits one file and deletes another.
    (block / "src" / "main.ts").write_text("// my app\n")
    (block / "README.md").unlink()
    # Pretend an older blockkit wrote style.css differently, and recorded that.
    old_style = b"/* an older template */\n"
    (block / "src" / "style.css").write_bytes(old_style)
    toml_text = (block / "blockkit.toml").read_text()
    recorded = _toml(block)["scaffold"]["files"]["src/style.css"]
    (block / "blockkit.toml").write_text(toml_text.replace(recorded, digest(old_style)))

    # No flags: the answers of the first run are re-used, so nothing is missing.
    result = run_new(block, "--force")
    assert result.exit_code == 0, result.output
    assert (block / "src" / "main.ts").read_text() == "// my app\n"
    assert not (block / "README.md").exists()
    assert (block / "src" / "style.css").read_bytes() != old_style  # upgraded: it was untouched
    assert "kept 1 file(s) you changed: src/main.ts" in result.output
    assert "left out 1 file(s) you removed: README.md" in result.output
    assert '"tagline": "First words"' in (block / "block.manifest.json").read_text()
    # The kept files keep the hash of what blockkit wrote, so a third run still sees them as changed.
    files = _toml(block)["scaffold"]["files"]
    assert files["src/main.ts"] != digest(b"// my app\n")
    assert run_new(block, "--force").output.count("kept 1 file(s) you changed: src/main.ts") == 1


def test_rerun_keeps_the_developers_context(tmp_path: Path, run_new: RunNew) -> None:
    block = tmp_path / "ctx-block"
    assert run_new(block, "--defaults").exit_code == 0
    text = (block / "blockkit.toml").read_text().replace('tier = "unverified"', 'tier = "verified"')
    (block / "blockkit.toml").write_text(text + "\n[lint]\nignore = []\n")
    assert run_new(block, "--force", "--tagline", "Now with a tagline").exit_code == 0
    table = _toml(block)
    assert table["context"]["tier"] == "verified"
    assert table["lint"] == {"ignore": []}
    assert table["scaffold"]["answers"]["tagline"] == "Now with a tagline"


def test_blockkit_toml_records_context_and_answers(tmp_path: Path, run_new: RunNew) -> None:
    block = tmp_path / "recorded"
    args = ["--defaults", "--template", "react", "-p", "pnpm", "--goods", "--category", "games"]
    assert run_new(block, *args).exit_code == 0
    table = _toml(block)
    assert table["context"] == {"tier": "unverified", "allowed-origins": ["https://recorded.civit.ai"]}
    answers = table["scaffold"]["answers"]
    assert answers["template"] == "react" and answers["package-manager"] == "pnpm"
    assert answers["goods"] is True and answers["category"] == "games"
    assert "goods:purchase:self" in answers["justifications"]
    files = table["scaffold"]["files"]
    assert files["pnpm-lock.yaml"] == digest((block / "pnpm-lock.yaml").read_bytes())
    assert set(files) == {str(p.relative_to(block)) for p in block.rglob("*") if p.is_file()} - {"blockkit.toml"}


def test_a_path_through_a_file_is_refused_before_any_question(tmp_path: Path, run_new: RunNew) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    # No flags and no terminal: were the target checked late, this would list missing answers.
    result = run_new(tmp_path / "notes.txt" / "my-block")
    assert result.exit_code == 2
    assert "notes.txt is not a directory" in result.output and "missing answers" not in result.output


def test_a_file_in_the_way_of_a_folder_writes_nothing(tmp_path: Path, run_new: RunNew) -> None:
    block = tmp_path / "blocked"
    block.mkdir()
    (block / "src").write_text("a file where the template puts a folder")
    result = run_new(block, "--defaults", "--template", "vite", "--force")
    assert result.exit_code == 2
    assert "src" in result.output and "not a directory" in result.output
    # All or nothing: no file of the scaffold, no blockkit.toml, no temporary file.
    assert sorted(p.name for p in block.iterdir()) == ["src"]


def test_rerun_of_an_untouched_scaffold_changes_nothing(tmp_path: Path, run_new: RunNew) -> None:
    block = tmp_path / "steady"
    assert run_new(block, "--defaults", "--template", "react").exit_code == 0
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in block.rglob("*") if p.is_file()}
    result = run_new(block, "--force")
    assert result.exit_code == 0, result.output
    assert "Created" not in result.output
    assert "already up to date: 14 file(s), nothing written" in result.output
    after = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in block.rglob("*") if p.is_file()}
    assert after == before


def test_kept_files_are_reported_by_reason(tmp_path: Path, run_new: RunNew) -> None:
    block = tmp_path / "reasons"
    assert run_new(block, "--defaults", "--template", "static").exit_code == 0
    (block / "app.js").write_text("// mine\n")
    (block / "README.md").unlink()
    (block / "notes.md").write_text("not blockkit's\n")
    result = run_new(block, "--force")
    assert result.exit_code == 0, result.output
    assert "kept 1 file(s) you changed: app.js" in result.output
    assert "left out 1 file(s) you removed: README.md" in result.output
    assert "notes.md" not in result.output  # not a template file: none of new's business


def test_a_changed_file_with_a_newer_template_says_so(tmp_path: Path, run_new: RunNew) -> None:
    block = tmp_path / "behind"
    assert run_new(block, "--defaults", "--template", "static").exit_code == 0
    (block / "app.js").write_text("// mine\n")
    # Pretend an older blockkit wrote a different app.js: the template has changed since.
    toml_text = (block / "blockkit.toml").read_text()
    recorded = _toml(block)["scaffold"]["files"]["app.js"]
    (block / "blockkit.toml").write_text(toml_text.replace(recorded, digest(b"// older template\n")))
    result = run_new(block, "--force")
    assert result.exit_code == 0, result.output
    assert (block / "app.js").read_text() == "// mine\n"
    assert "the template has a newer version of app.js, not applied" in result.output


# --- symbolic links out of the target, planted staging files (review row 41) ---------------


def _vite(run_new: RunNew, block: Path) -> Result:
    return run_new(block, "--force", "--defaults", "--no-input", "--template", "vite", "--name", "Force Block")


def _tree(block: Path) -> list[str]:
    return sorted(str(p.relative_to(block)) for p in block.rglob("*"))


def test_a_folder_linked_out_of_the_target_is_refused_and_nothing_written(tmp_path: Path, run_new: RunNew) -> None:
    # The review's reproduction: src -> ../out, and a planted staging file -> ../v/victim.txt.
    block, out, victims = tmp_path / "repo", tmp_path / "out", tmp_path / "v"
    for folder in (block, out, victims):
        folder.mkdir()
    (victims / "victim.txt").write_text("VICTIM\n")
    (block / "src").symlink_to("../out")
    (block / ".index.html.blockkit-tmp").symlink_to("../v/victim.txt")
    result = _vite(run_new, block)
    assert result.exit_code == 2
    (line,) = result.output.splitlines()
    assert f"src is a symbolic link to {out}, outside {block}" in line and "nothing was written" in line
    assert (victims / "victim.txt").read_text() == "VICTIM\n"
    assert list(out.iterdir()) == []
    assert _tree(block) == [".index.html.blockkit-tmp", "src"]


def test_a_file_linked_out_of_the_target_is_refused(tmp_path: Path, run_new: RunNew) -> None:
    block = tmp_path / "repo"
    block.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("VICTIM\n")
    (block / "index.html").symlink_to(victim)
    result = _vite(run_new, block)
    assert result.exit_code == 2 and f"index.html is a symbolic link to {victim}, outside" in result.output
    assert victim.read_text() == "VICTIM\n" and _tree(block) == ["index.html"]


def test_a_planted_staging_file_is_neither_written_nor_removed(tmp_path: Path, run_new: RunNew) -> None:
    block = tmp_path / "repo"
    block.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("VICTIM\n")
    (block / ".index.html.blockkit-tmp").symlink_to(victim)
    result = _vite(run_new, block)
    assert result.exit_code == 0, result.output
    assert victim.read_text() == "VICTIM\n"
    assert (block / ".index.html.blockkit-tmp").is_symlink()
    index = block / "index.html"
    assert not index.is_symlink() and "<!doctype html>" in index.read_text().lower()
    assert not [p for p in block.rglob("*.blockkit-tmp") if not p.is_symlink()]  # no staging file left


def test_a_link_that_stays_inside_the_target_is_written_through(tmp_path: Path, run_new: RunNew) -> None:
    block = tmp_path / "repo"
    (block / "code").mkdir(parents=True)
    (block / "src").symlink_to("code")
    assert _vite(run_new, block).exit_code == 0
    assert (block / "src").is_symlink() and (block / "code" / "main.ts").is_file()


def test_a_failure_while_staging_removes_only_what_this_run_made(tmp_path: Path, run_new: RunNew,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from blockkit.scaffold import writer

    block = tmp_path / "repo"
    block.mkdir()
    (block / ".index.html.blockkit-tmp").write_text("mine\n")
    calls = []
    real_create = writer.create_exclusive

    def fail_on_the_third(*args, **kwargs):
        calls.append(args)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return real_create(*args, **kwargs)

    monkeypatch.setattr(writer, "create_exclusive", fail_on_the_third)
    result = _vite(run_new, block)
    assert result.exit_code == 2 and "No space left on device (nothing was written)" in result.output
    assert _tree(block) == [".index.html.blockkit-tmp"]
    assert (block / ".index.html.blockkit-tmp").read_text() == "mine\n"

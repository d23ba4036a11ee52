"""``blockkit fix`` as a user runs it: a real subprocess on real files."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

BROKEN = """{
  "appId": "app_1",
  "blockId": "demo-block",
  "version": "1.0.0",
  "name": "Demo",
  "contentRating": "g",
  "scopes": ["user:read:self", "user:read:self"],
  "iframe": {"src": "https://demo-block.civit.ai/", "minHeight": 400, "maxHeight": null, "resizable": false}
}"""
FIXED_SAFE = """{
  "$schema": "https://civitai.com/schemas/app-block/v1.json",
  "blockId": "demo-block",
  "version": "1.0.0",
  "name": "Demo",
  "contentRating": "g",
  "scopes": ["user:read:self"],
  "iframe": {"minHeight": 400, "maxHeight": null, "resizable": false}
}"""
FIXED_UNSAFE = FIXED_SAFE.replace('"resizable": false}', '"resizable": false, "sandbox": "allow-scripts allow-forms"}')


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "NO_COLOR": "1"}
    if "PYTHONPATH" in os.environ:  # a worktree's own code, not the installed copy
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return subprocess.run([sys.executable, "-m", "blockkit.cli", *args], capture_output=True, text=True,
                          cwd=cwd, env=env)


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    path = tmp_path / "block.manifest.json"
    path.write_text(BROKEN, encoding="utf-8")  # no final newline, on purpose
    path.chmod(0o640)
    return path


def test_fix_applies_safe_fixes_and_reports_what_remains(broken: Path) -> None:
    result = run("fix", str(broken))
    assert broken.read_text(encoding="utf-8") == FIXED_SAFE
    # The missing sandbox is an error only --unsafe fixes.
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{broken}: fixed 4 findings:" in result.stdout
    assert "BK110 iframe.src is server-owned" in result.stdout
    assert 'BK216 iframe is missing "sandbox"' in result.stdout
    assert "1 more can be fixed with --unsafe" in result.stdout
    assert stat.S_IMODE(broken.stat().st_mode) == 0o640
    assert sorted(os.listdir(broken.parent)) == ["block.manifest.json"]  # no temporary file left behind


def test_unsafe_fixes_everything_and_exits_0(broken: Path) -> None:
    result = run("fix", "--unsafe", str(broken))
    assert result.returncode == 0, result.stdout + result.stderr
    assert broken.read_text(encoding="utf-8") == FIXED_UNSAFE


def test_second_run_is_a_no_op(broken: Path) -> None:
    run("fix", "--unsafe", str(broken))
    before = broken.read_bytes()
    result = run("fix", "--unsafe", str(broken))
    assert result.returncode == 0
    assert "fixed" not in result.stdout.split("\n")[0]
    assert broken.read_bytes() == before


def test_diff_previews_and_never_writes(broken: Path) -> None:
    before = broken.read_bytes()
    mtime = broken.stat().st_mtime_ns
    result = run("fix", "--unsafe", "--diff", str(broken))
    assert broken.read_bytes() == before and broken.stat().st_mtime_ns == mtime
    assert result.returncode == 0
    assert result.stdout.startswith(f"--- {broken}\n+++ {broken}\n@@")
    assert '-  "appId": "app_1",\n' in result.stdout
    assert "\\ No newline at end of file" in result.stdout
    assert "would fix 5 findings" in result.stderr
    # The preview is a patch that produces exactly what `fix` would write.
    patch = broken.parent / "preview.patch"
    patch.write_text(result.stdout, encoding="utf-8")
    applied = subprocess.run(["patch", "-s", "-p0", "-i", str(patch)], cwd="/", capture_output=True, text=True)
    if applied.returncode == 127:  # pragma: no cover
        pytest.skip("patch(1) is not installed")
    assert applied.returncode == 0, applied.stderr
    assert broken.read_text(encoding="utf-8") == FIXED_UNSAFE


def test_unparseable_file_is_never_touched(tmp_path: Path) -> None:
    path = tmp_path / "block.manifest.json"
    path.write_text('{"appId": "x", "blockId": "demo-block",}', encoding="utf-8")
    before = path.read_bytes()
    result = run("fix", "--unsafe", str(path))
    assert result.returncode == 1
    assert path.read_bytes() == before
    assert "not fixed: it cannot be parsed" in result.stdout
    assert "BK002" in result.stdout


def test_missing_path_exits_2(tmp_path: Path) -> None:
    result = run("fix", str(tmp_path / "nope.json"))
    assert result.returncode == 2
    assert "no such file" in result.stderr


def test_a_link_inside_the_tree_is_kept_and_its_target_fixed(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "manifests").mkdir(parents=True)
    target = tree / "manifests" / "demo.json"
    target.write_text(BROKEN, encoding="utf-8")
    link = tree / "block.manifest.json"
    link.symlink_to(Path("manifests") / "demo.json")
    result = run("fix", str(tree))
    assert result.returncode == 1, result.stdout + result.stderr
    assert link.is_symlink()
    assert target.read_text(encoding="utf-8") == FIXED_SAFE
    assert f"{link}: a symbolic link: fixed its target, {target}" in result.stdout
    assert sorted(os.listdir(tree / "manifests")) == ["demo.json"]


# Review row 34: the manifest is a link to a file outside the directory being fixed.
@pytest.mark.parametrize("argument", ["tree", "manifest"])
def test_a_link_out_of_the_tree_is_refused_and_nothing_written(tmp_path: Path, argument: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "s.json"
    victim.write_text('{"appId":1,"k":2}\n', encoding="utf-8")
    tree = tmp_path / "t"
    tree.mkdir()
    (tree / "block.manifest.json").symlink_to(victim)
    for args in (("fix",), ("fix", "--diff"), ("fix", "--unsafe")):
        result = run(*args, str(tree if argument == "tree" else tree / "block.manifest.json"))
        assert result.returncode == 2, result.stdout + result.stderr
        assert result.stdout == ""
        (line,) = result.stderr.splitlines()
        assert f"not fixed: a symbolic link leads it to {victim}, outside {tree}" in line
        assert victim.read_text(encoding="utf-8") == '{"appId":1,"k":2}\n'
        assert sorted(os.listdir(outside)) == ["s.json"]  # no temporary file beside the target either
        assert (tree / "block.manifest.json").is_symlink()


def test_crlf_and_final_newline_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "block.manifest.json"
    path.write_bytes((BROKEN.replace("\n", "\r\n") + "\r\n").encode("utf-8"))
    run("fix", "--unsafe", str(path))
    assert path.read_bytes() == (FIXED_UNSAFE.replace("\n", "\r\n") + "\r\n").encode("utf-8")


def test_lint_settings_decide_what_is_fixed(broken: Path) -> None:
    # An ignored rule's findings do not exist for fix either: the user chose to keep them.
    (broken.parent / "blockkit.toml").write_text('ignore = ["BK302"]\n\n[[exceptions]]\npointer = "/appId"\n'
                                                 'codes = ["BK301"]\nreason = "kept for the old SDK"\n', encoding="utf-8")
    result = run("fix", str(broken))
    text = broken.read_text(encoding="utf-8")
    assert '"scopes": ["user:read:self", "user:read:self"]' in text
    assert '"appId": "app_1"' in text
    assert '"src"' not in text and '"$schema"' in text
    assert "BK302" not in result.stdout


def test_bad_config_exits_2_and_touches_nothing(broken: Path) -> None:
    (broken.parent / "blockkit.toml").write_text('ignore = [\n', encoding="utf-8")
    before = broken.read_bytes()
    result = run("fix", str(broken))
    assert result.returncode == 2
    assert broken.read_bytes() == before


def test_messages_quoting_a_lone_surrogate_do_not_crash(tmp_path: Path) -> None:
    path = tmp_path / "block.manifest.json"
    path.write_text(BROKEN.replace('"contentRating": "g"', '"contentRating": "\\ud800"'), encoding="utf-8")
    for args in (("fix",), ("fix", "--diff")):
        result = run(*args, str(path))
        assert result.returncode == 1, result.stderr
        assert "Traceback" not in result.stderr
        assert "\\ud800" in result.stdout + result.stderr


def test_read_only_file_is_not_replaced(broken: Path) -> None:
    broken.chmod(0o444)
    before = broken.read_bytes()
    result = run("fix", str(broken))
    assert result.returncode == 2
    assert broken.read_bytes() == before
    assert result.stderr.strip() == f"blockkit: error: {broken}: cannot write: the file is read-only"
    # Nothing was fixed, so the summary counts what the file still has.
    assert "Fixed 0 findings in 1 file; 2 errors" in result.stdout
    assert sorted(os.listdir(broken.parent)) == ["block.manifest.json"]


def test_a_file_that_is_not_utf8_is_never_touched(tmp_path: Path) -> None:
    # Decoding replaced the Latin-1 byte with U+FFFD; writing that back would destroy it.
    path = tmp_path / "block.manifest.json"
    path.write_bytes(BROKEN.replace('"Demo"', '"D\xe9mo"').encode("latin-1"))
    before = path.read_bytes()
    for args in (("fix", "--unsafe"), ("fix", "--unsafe", "--diff")):
        result = run(*args, str(path))
        assert path.read_bytes() == before
        assert result.returncode == 1, result.stdout + result.stderr
        assert "not fixed: it is not valid UTF-8" in result.stdout + result.stderr
        assert "BK005" in result.stdout + result.stderr
        assert not result.stdout.startswith("---")


def test_a_fixed_value_holding_a_lone_surrogate_escape_is_written(tmp_path: Path) -> None:
    # The tagline is written with a raw "é", so its fix keeps non-ASCII as is; its "\ud800"
    # escape must stay an escape, since UTF-8 cannot hold the character it stands for.
    path = tmp_path / "block.manifest.json"
    path.write_text(FIXED_UNSAFE.replace('"name": "Demo",', '"name": "Demo",\n  "tagline": " é\\ud800 ",'),
                    encoding="utf-8")
    result = run("fix", str(path))
    assert "Traceback" not in result.stderr
    assert result.returncode == 0, result.stdout + result.stderr
    assert '"tagline": "é\\ud800",' in path.read_text(encoding="utf-8")


SHIFTING = """{
  "$schema": "https://civitai.com/schemas/app-block/v1.json",
  "appId": "app_1",
  "blockId": "demo-block",
  "version": "1.0.0",
  "name": "Demo",
  "contentRating": "g",
  "scopes": ["user:read:self"],
  "iframe": {"src": "https://demo-block.civit.ai/", "minHeight": 400, "maxHeight": null, "resizable": false}
}
"""


def test_diff_places_the_remaining_findings_in_the_file_on_disk(tmp_path: Path) -> None:
    # Issue 21: with --diff, the findings that remain were placed in the text fix would write
    # (removing appId moves "iframe" from line 9 to line 8), while the "would fix" list of the
    # same output used the file on disk. Both now use the file on disk, which --diff leaves as it is.
    path = tmp_path / "block.manifest.json"
    path.write_text(SHIFTING, encoding="utf-8")
    result = run("fix", "--diff", str(path))
    assert path.read_text(encoding="utf-8") == SHIFTING
    lines = result.stderr.splitlines()
    assert f"{path}: would fix 2 findings:" in lines
    assert "  3:3 BK301 unknown key \"appId\": a stale key the platform ignores" in lines
    assert any(line.startswith("  9:") and " BK110 " in line for line in lines), lines
    remaining = [line for line in lines if " BK216 " in line]
    assert remaining == [f'{path}:9:13: BK216 iframe is missing "sandbox", which the server requires'], lines
    # The same position `lint` gives for the file on disk.
    lint = run("lint", str(path))
    assert f'{path}:9:13: BK216 iframe is missing "sandbox", which the server requires' in lint.stdout.splitlines()

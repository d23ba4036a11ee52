"""``blockkit validate`` as a user runs it: a real subprocess, real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from blockkit.platform import SCHEMA_ID


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    # PYTHONPATH passes through: a worktree that sets it to its src/ tests its own code.
    env = {"PATH": "/usr/bin:/bin", "NO_COLOR": "1", **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"}}
    return subprocess.run([sys.executable, "-m", "blockkit.cli", *args], capture_output=True, text=True,
                          cwd=cwd, env=env)


def test_valid_manifest_exits_0(write_manifest, manifest) -> None:
    result = run("validate", str(write_manifest(manifest)))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "All checks passed (1 file)." in result.stdout


def test_text_output_is_ruff_like_with_snippet_and_hint(write_manifest, manifest) -> None:
    manifest["version"] = "1.0"
    path = write_manifest(manifest)
    result = run("validate", str(path))
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0] == f'{path}:4:14: BK104 version "1.0" does not have the required form'
    assert lines[2] == '4 |   "version": "1.0",'
    assert lines[3] == "  |              ^^^^^"
    assert lines[4].startswith("  = hint:")
    assert lines[-1] == "Found 1 error, 0 warnings in 1 file (1 failing)."


def test_json_output_follows_the_contract(write_manifest, manifest) -> None:
    manifest["iframe"]["sandbox"] = 5
    path = write_manifest(manifest)
    result = run("validate", "--format", "json", str(path))
    assert result.returncode == 1
    doc = json.loads(result.stdout)
    assert doc["version"] == 1
    assert doc["schema"]["id"] == SCHEMA_ID and len(doc["schema"]["sha256"]) == 64
    (file,) = doc["files"]
    assert file["path"] == str(path) and file["ok"] is False
    diagnostic = file["diagnostics"][0]
    assert {k: diagnostic[k] for k in ("code", "severity", "layer", "pointer", "line", "column", "end_line", "end_column")} == {
        "code": "BK102", "severity": "error", "layer": "schema", "pointer": "/iframe/sandbox",
        "line": 14, "column": 16, "end_line": 14, "end_column": 17}
    assert doc["summary"] == {"files": 1, "errors": 1, "warnings": 0, "infos": 0}


def test_many_paths_and_directories(tmp_path: Path, manifest) -> None:
    for name in ("a", "b/c"):
        folder = tmp_path / name
        folder.mkdir(parents=True)
        (folder / "block.manifest.json").write_text(json.dumps(manifest))
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    result = run("validate", "--format", "json", str(tmp_path), str(bad))
    doc = json.loads(result.stdout)
    assert [Path(f["path"]).relative_to(tmp_path).as_posix() for f in doc["files"]] == [
        "a/block.manifest.json", "b/c/block.manifest.json", "bad.json"]
    assert result.returncode == 1


def test_default_path_is_the_manifest_in_the_current_directory(tmp_path: Path, manifest) -> None:
    (tmp_path / "block.manifest.json").write_text(json.dumps(manifest))
    assert run("validate", cwd=tmp_path).returncode == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run("validate", cwd=empty)
    assert result.returncode == 2
    assert result.stderr.strip() == "blockkit: error: block.manifest.json: no such file or directory"


def test_missing_path_exits_2_with_one_line_and_still_checks_the_rest(write_manifest, manifest) -> None:
    good = write_manifest(manifest)
    result = run("validate", "missing.json", str(good))
    assert result.returncode == 2
    assert result.stderr.splitlines() == ["blockkit: error: missing.json: no such file or directory"]
    assert "All checks passed (1 file)." in result.stdout


@pytest.mark.skipif(sys.platform == "win32" or __import__("os").geteuid() == 0, reason="root reads anything")
def test_unreadable_file_exits_2(write_manifest, manifest) -> None:
    path = write_manifest(manifest)
    path.chmod(0)
    result = run("validate", str(path))
    assert result.returncode == 2 and "permission denied" in result.stderr


def test_invalid_json_is_an_error_in_the_file_not_a_tool_failure(write_manifest) -> None:
    result = run("validate", str(write_manifest('{"a": 1,}')))
    assert result.returncode == 1
    assert "BK002 trailing comma before '}'" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_strict_makes_warnings_fail(write_manifest, manifest) -> None:
    text = json.dumps(manifest).replace('"name": "Demo"', '"name": "Demo", "name": "Demo"')
    path = write_manifest(text)
    assert run("validate", str(path)).returncode == 0
    assert run("validate", "--strict", str(path)).returncode == 1


def test_bad_option_is_a_usage_error(write_manifest, manifest) -> None:
    result = run("validate", "--tier", "gold", str(write_manifest(manifest)))
    assert result.returncode == 2 and "gold" in result.stderr


def test_bad_config_file_exits_2(tmp_path: Path, manifest) -> None:
    (tmp_path / "block.manifest.json").write_text(json.dumps(manifest))
    (tmp_path / "blockkit.toml").write_text("tier = 'gold'\n")
    result = run("validate", str(tmp_path))
    assert result.returncode == 2
    assert "unknown trust tier 'gold'" in result.stderr and "blockkit.toml" in result.stderr
    (tmp_path / "blockkit.toml").write_text("tier = [\n")
    result = run("validate", str(tmp_path))
    assert result.returncode == 2 and "invalid TOML" in result.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_a_config_that_is_not_a_regular_file_is_refused_without_waiting(tmp_path: Path, manifest) -> None:
    (tmp_path / "block.manifest.json").write_text(json.dumps(manifest))
    pipe = tmp_path / "pipe.toml"
    os.mkfifo(pipe)
    result = run("validate", "--config", str(pipe), str(tmp_path))  # a FIFO opened for reading would block
    assert result.returncode == 2 and result.stderr == f"blockkit: error: {pipe}: is not a regular file\n"
    (tmp_path / "folder.toml").mkdir()
    result = run("validate", "--config", str(tmp_path / "folder.toml"), str(tmp_path))
    assert result.returncode == 2 and "is a directory" in result.stderr
    result = run("validate", "--config", str(tmp_path / "absent.toml"), str(tmp_path))
    assert result.returncode == 2 and "absent.toml: config file not found" in result.stderr


def test_context_from_pyproject_and_flags_win(tmp_path: Path, manifest) -> None:
    manifest["renderMode"] = "inline"
    (tmp_path / "block.manifest.json").write_text(json.dumps(manifest))
    (tmp_path / "pyproject.toml").write_text("[tool.blockkit]\ntier = 'verified'\n")
    assert run("validate", str(tmp_path)).returncode == 0
    assert run("validate", "--tier", "unverified", str(tmp_path)).returncode == 1


def test_output_file(write_manifest, manifest, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = run("validate", "--format", "json", "--output", str(out), str(write_manifest(manifest)))
    assert result.returncode == 0 and result.stdout == ""
    assert json.loads(out.read_text())["summary"]["errors"] == 0


def test_version_and_help_do_not_import_the_validation_stack() -> None:
    code = (
        "import sys\n"
        "from blockkit.cli import main\n"
        "for argv in (['--version'], ['--help'], ['validate', '--help']):\n"
        "    try:\n"
        "        main(argv)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "heavy = [m for m in ('jsonschema', 'referencing', 'regress', 'pydantic', 'blockkit.engine', 'blockkit.schema') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout + result.stderr
    assert "blockkit, version" in result.stdout


def write_batch(folder: Path, manifest: dict, count: int, vary: Callable[[dict, int], None]) -> list[Path]:
    """``count`` manifest files: every 3rd with a bad version, every 7th not JSON, ``vary`` for more."""
    paths = []
    for i in range(count):
        doc = json.loads(json.dumps(manifest))
        if i % 3 == 0:
            doc["version"] = f"v{i}"
        vary(doc, i)
        path = folder / f"m{i:04d}.json"
        path.write_text(json.dumps(doc, indent=2) if i % 7 else "{broken")
        paths.append(path)
    return paths


def test_a_large_batch_is_checked_in_parallel_with_the_same_verdicts(tmp_path: Path, manifest) -> None:
    import blockkit
    from blockkit.commands.validate import PARALLEL_MIN_FILES

    def sandbox(doc: dict, i: int) -> None:
        if i % 5 == 0:
            doc["iframe"]["sandbox"] = "allow-scripts allow-popups"

    paths = write_batch(tmp_path, manifest, PARALLEL_MIN_FILES + 20, sandbox)
    (tmp_path / "m0001.json").unlink()  # one unreadable path in the middle of the batch
    result = run("validate", "--format", "json", *map(str, paths))
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"blockkit: error: {paths[1]}: no such file or directory"]
    got = json.loads(result.stdout)["files"]
    expected = [blockkit.validate_file(p).to_json()["files"][0] for p in paths if p.exists()]
    assert got == expected


@pytest.mark.parametrize("extra", [[], ["--strict"]])
def test_a_large_batch_s_text_report_is_written_in_the_workers_as_it_would_be_at_the_end(
        tmp_path: Path, manifest, extra: list[str]) -> None:
    # Each file's part of the text report is written where the file is checked, then joined.
    import blockkit
    from blockkit.commands.validate import PARALLEL_MIN_FILES
    from blockkit.render import render
    from blockkit.report import Report

    def long_tagline(doc: dict, i: int) -> None:
        if i % 4 == 0:
            doc["tagline"] = "x" * 200

    paths = write_batch(tmp_path, manifest, PARALLEL_MIN_FILES + 40, long_tagline)
    result = run("validate", *extra, *map(str, paths))
    expected = Report(files=[blockkit.validate_file(p).files[0] for p in paths], strict=bool(extra))
    assert result.stdout == render(expected, "text", color=False)
    assert result.returncode == expected.exit_code == 1
    assert result.stderr == ""


@pytest.mark.parametrize("copies", [1, "parallel"])
def test_validate_does_not_import_the_lint_diff_emulator_or_dev_layers(write_manifest, manifest, copies) -> None:
    from blockkit.commands.validate import PARALLEL_MIN_FILES

    path = write_manifest(manifest)
    count = PARALLEL_MIN_FILES if copies == "parallel" else 1  # the pool path loads rules before forking
    code = (
        "import sys\n"
        "from blockkit.cli import main\n"
        f"try:\n    main(['validate'] + [{str(path)!r}] * {count})\nexcept SystemExit as exc:\n    print('exit', exc.code)\n"
        "print(sorted(m for m in sys.modules if m.startswith(('blockkit.lint', 'blockkit.diff', 'blockkit.rules.lint', "
        "'html.parser', 'blockkit.emulator', 'blockkit.dev', 'blockkit.fix', 'blockkit.scaffold', 'blockkit.models', "
        "'blockkit.render.sarif', 'blockkit.render.json_', 'blockkit.render.junit', 'blockkit.render.github', 'blockkit.commands.lint', 'blockkit.commands.dev'))))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    lines = result.stdout.strip().splitlines()
    assert lines[-2:] == ["exit 0", "[]"], result.stdout + result.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to see the pool start")
def test_ctrl_c_during_a_parallel_run_exits_130_with_one_line(tmp_path: Path, manifest) -> None:
    import signal
    import time

    from blockkit.commands.validate import PARALLEL_MIN_FILES

    text = json.dumps(manifest, indent=2)
    paths = []
    for i in range(PARALLEL_MIN_FILES * 50):  # several seconds of work on two cores
        path = tmp_path / f"m{i:05d}.json"
        path.write_text(text)
        paths.append(str(path))
    # Python leaves SIGINT ignored when it starts with it ignored, as a background job of a
    # non-interactive shell does (CI, a loop run with &): give the run a terminal's default.
    code = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); from blockkit.cli import main; main()"
    process = subprocess.Popen([sys.executable, "-c", code, "validate", *paths],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 30
    while not _children(process.pid):  # wait until the pool's workers are checking files
        assert process.poll() is None and time.monotonic() < deadline, "the run ended before its pool started"
        time.sleep(0.02)
    os.killpg(process.pid, signal.SIGINT)  # as a terminal's Ctrl-C does: the whole process group
    interrupted = time.monotonic()
    try:
        _, err = process.communicate(timeout=60)
    finally:
        # Whatever happened, nothing of this run may be left behind (a leftover worker keeps
        # stderr open, which is how a hang showed before); SIGKILL ends any that is.
        leftovers = _group_members(process.pid)
        if leftovers:
            os.killpg(process.pid, signal.SIGKILL)
    # Exit latency for benchmarks/loop_ctrl_c.sh (pytest -s shows it); not asserted here.
    print(f"ctrl-c exit latency: {time.monotonic() - interrupted:.3f} s")
    assert process.returncode == 130, err
    assert err.strip() == "blockkit: interrupted", err
    assert leftovers == [], "processes of the interrupted run are still running"


def _group_members(pgid: int) -> list[int]:
    """Process ids in process group ``pgid`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def _children(pid: int) -> list[int]:
    """Process ids whose parent is ``pid`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


# --- untrusted paths (issue 14, rows 6 and 7) -----------------------------------------------------


def _env() -> dict[str, str]:
    # The blockkit under test, wherever it is imported from (a worktree's src/ or the installed one).
    import importlib.util

    spec = importlib.util.find_spec("blockkit")
    assert spec is not None and spec.submodule_search_locations
    package_parent = str(Path(next(iter(spec.submodule_search_locations))).parent)
    return {"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "PYTHONPATH": package_parent}


def _run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "blockkit.cli", *args], capture_output=True, text=True,
                          env=_env(), timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
@pytest.mark.parametrize("how", ["file", "directory", "walk", "fix"])
def test_a_fifo_named_like_a_manifest_is_refused_at_once(tmp_path: Path, how: str) -> None:
    # Review row 16: it hung forever (no writer ever opens the other end).
    folder = tmp_path / "deep" if how == "walk" else tmp_path
    folder.mkdir(exist_ok=True)
    fifo = folder / "block.manifest.json"
    os.mkfifo(fifo)
    target = {"file": fifo, "directory": tmp_path, "walk": tmp_path, "fix": tmp_path}[how]
    command = "fix" if how == "fix" else "validate"
    result = _run(command, str(target), timeout=30)
    assert result.returncode == 2
    assert result.stderr == f"blockkit: error: {fifo}: is a named pipe (FIFO), not a file\n"


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_a_character_device_named_explicitly_is_still_read_up_to_the_limit() -> None:
    result = _run("validate", "--format", "json", "/dev/zero")
    assert result.returncode == 1
    (finding,) = json.loads(result.stdout)["files"][0]["diagnostics"]
    assert finding["code"] == "BK006"


def test_an_error_line_about_a_path_with_a_line_feed_stays_one_line(tmp_path: Path) -> None:
    # Review row 19: the raw line feed started a "::error" workflow command on stderr.
    result = _run("validate", "--format", "github", str(tmp_path / "nope\n::error file=x::PWN\x1b[2J"))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "\x1b" not in result.stderr
    assert "nope\\u000a::error file=x::PWN\\u001b[2J: no such file or directory" in result.stderr


def test_text_output_of_a_hostile_manifest_has_no_raw_control_characters(tmp_path: Path) -> None:
    # Review row 17: the repeated-key message put the raw key (a real line feed and ESC) in the output.
    folder = tmp_path / "j"
    folder.mkdir()
    (folder / "block.manifest.json").write_text('{"\\n::error::PWN\\u001b[31m": {"a":1,"a":2}}', encoding="utf-8")
    result = _run("lint", str(folder))
    assert result.returncode == 1
    assert not [line for line in result.stdout.splitlines() if line.startswith("::")]
    assert "\x1b" not in result.stdout

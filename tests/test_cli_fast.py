"""``blockkit validate`` and ``lint`` without click: the fast argument parser must change nothing.

Every argument list below runs twice in a fresh forked process (tests/cli_paths_harness.py):
once as users run it, and once with every argument list sent to click. Standard output,
standard error, the exit status and the files written must be the same, byte for byte; and
the runs the fast parser should take must really skip click (and the others must not).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from blockkit.commands import _options
from blockkit.commands._options import parse_fast

HARNESS = Path(__file__).with_name("cli_paths_harness.py")

# (id, argv, expected to run without click, extra) — extra: cwd (below the scratch folder), stdin,
# env, files the run writes, a patch that makes the command fail inside.
CASES: list[tuple[str, list[str], bool, dict[str, Any]]] = [
    ("default-path", ["validate"], True, {"cwd": "proj"}),
    ("default-path-missing", ["validate"], True, {"cwd": "emptydir"}),
    ("one-good", ["validate", "good.json"], True, {}),
    ("one-bad", ["validate", "bad.json"], True, {}),
    ("good-and-bad", ["validate", "good.json", "bad.json"], True, {}),
    ("option-after-paths", ["validate", "warn.json", "--strict"], True, {}),
    ("strict", ["validate", "--strict", "warn.json"], True, {}),
    ("strict-twice", ["validate", "--strict", "--strict", "warn.json"], True, {}),
    ("strict-with-value", ["validate", "--strict=yes", "warn.json"], False, {}),
    *[(f"format-{fmt}", ["validate", "--format", fmt, "bad.json", "good.json"], True, {})
      for fmt in ("text", "json", "github", "sarif", "junit")],
    ("format-equals", ["validate", "--format=json", "bad.json"], True, {}),
    ("format-twice", ["validate", "--format", "json", "--format=github", "bad.json"], True, {}),
    ("format-bad-value", ["validate", "--format", "JSON", "bad.json"], False, {}),
    ("format-missing-value", ["validate", "bad.json", "--format"], False, {}),
    ("format-value-like-option", ["validate", "--format", "--strict", "bad.json"], False, {}),
    ("format-empty", ["validate", "--format=", "bad.json"], False, {}),
    ("output-long", ["validate", "--format", "json", "--output", "out.json", "bad.json"], True,
     {"writes": ["out.json"]}),
    ("output-equals", ["validate", "--output=out.txt", "bad.json"], True, {"writes": ["out.txt"]}),
    ("output-short", ["validate", "-o", "out.txt", "bad.json"], True, {"writes": ["out.txt"]}),
    ("output-short-attached", ["validate", "-oout.txt", "bad.json"], True, {"writes": ["out.txt"]}),
    ("output-short-equals", ["validate", "-o=out.txt", "bad.json"], False, {"writes": ["=out.txt"]}),
    ("output-directory", ["validate", "--output", "adir", "bad.json"], False, {}),
    ("output-sarif-after-paths", ["validate", "bad.json", "--format", "sarif", "--output", "out.sarif"], True,
     {"writes": ["out.sarif"]}),
    ("output-unwritable", ["validate", "--output", "nodir/out.txt", "bad.json"], True, {}),
    ("output-dash", ["validate", "--output", "-", "bad.json"], False, {"writes": ["-"]}),
    ("tier", ["validate", "--tier", "verified", "bad.json"], True, {}),
    ("tier-equals", ["validate", "--tier=internal", "bad.json"], True, {}),
    ("tier-twice", ["validate", "--tier", "verified", "--tier", "unverified", "inline.json"], True, {}),
    ("tier-bad", ["validate", "--tier", "gold", "bad.json"], False, {}),
    ("tier-missing", ["validate", "--tier"], False, {}),
    ("origins", ["validate", "--allowed-origin", "https://a.example", "--allowed-origin=https://b.example",
                 "bad.json"], True, {}),
    ("scopes", ["validate", "--granted-scope", "user:read:self", "good.json", "bad.json"], True, {}),
    ("scope-unknown", ["validate", "--granted-scope", "nope:scope", "bad.json"], True, {}),
    ("app-domain", ["validate", "--app-domain", "example.org", "bad.json"], True, {}),
    ("app-domain-empty", ["validate", "--app-domain=", "bad.json"], True, {}),
    ("stage", ["validate", "--stage", "submit", "bad.json"], True, {}),
    ("stage-bad", ["validate", "--stage", "bogus", "bad.json"], False, {}),
    ("config", ["validate", "--config", "cfg/blockkit.toml", "inline.json"], True, {}),
    ("config-missing", ["validate", "--config", "missing.toml", "bad.json"], True, {}),
    ("config-directory", ["validate", "--config", "cfg", "bad.json"], False, {}),
    ("config-invalid", ["validate", "badcfg"], True, {}),
    ("double-dash", ["validate", "--", "-weird.json"], True, {}),
    ("double-dash-option-name", ["validate", "good.json", "--", "--strict", "--"], True, {}),
    ("dash-name-without-double-dash", ["validate", "-weird.json"], False, {}),
    ("stdin", ["validate", "-"], True, {"stdin": "BAD"}),
    ("stdin-filename", ["validate", "-", "--stdin-filename", "sub/block.manifest.json"], True, {"stdin": "BAD"}),
    ("stdin-filename-equals", ["validate", "--stdin-filename=cfg/x.json", "-"], True, {"stdin": "INLINE"}),
    ("stdin-twice", ["validate", "-", "-"], True, {"stdin": "GOOD"}),
    ("stdin-invalid-json", ["validate", "-"], True, {"stdin": '{"a": 1,}'}),
    ("missing-file", ["validate", "missing.json"], True, {}),
    ("missing-and-good", ["validate", "missing.json", "good.json"], True, {}),
    ("directory-tree", ["validate", "tree"], True, {}),
    ("directory-empty", ["validate", "emptydir"], True, {}),
    ("empty-path", ["validate", ""], True, {"cwd": "proj"}),
    ("control-characters-in-path", ["validate", "nope\n::error::x\x1b[2J"], True, {}),
    ("hostile-manifest", ["validate", "hostile.json"], True, {}),
    ("force-color-to-a-file", ["validate", "bad.json"], True, {"env": {"FORCE_COLOR": "1"}}),
    ("no-color", ["validate", "bad.json"], True, {"env": {"NO_COLOR": "1", "FORCE_COLOR": "1"}}),
    ("unknown-option", ["validate", "--bogus", "bad.json"], False, {}),
    ("prefix-of-an-option", ["validate", "--form", "json", "bad.json"], False, {}),
    ("unknown-short", ["validate", "-x", "bad.json"], False, {}),
    ("help", ["validate", "--help"], False, {}),
    ("help-short", ["validate", "-h"], False, {}),
    ("help-after-paths", ["validate", "bad.json", "--help"], False, {}),
    ("version-is-not-a-validate-option", ["validate", "--version"], False, {}),
    ("group-version", ["--version"], False, {}),
    ("group-option-first", ["-h", "validate"], False, {}),
    ("completion", ["validate", "bad.json"], False, {"env": {"_BLOCKKIT_COMPLETE": "bash_complete",
                                                             "COMP_WORDS": "blockkit validate", "COMP_CWORD": "1"}}),
    ("internal-error", ["validate", "bad.json"], True, {"patch": "error"}),
    ("internal-error-debug", ["validate", "bad.json"], True, {"patch": "error", "env": {"BLOCKKIT_DEBUG": "1"}}),
    ("interrupted", ["validate", "bad.json"], True, {"patch": "interrupt"}),
    ("cleanup-fails-under-interrupt", ["validate", "bad.json"], True, {"patch": "cleanup-under-interrupt"}),
    ("lint", ["lint", "tree", "--format", "json"], True, {}),
    ("lint-text", ["lint", "bad.json", "warn.json"], True, {}),
    ("lint-update-baseline", ["lint", "--baseline", "base.json", "--update-baseline", "tree"], True,
     {"writes": ["base.json"]}),
    ("lint-update-baseline-alone", ["lint", "--update-baseline", "tree"], True, {}),
    ("lint-baseline-directory", ["lint", "--baseline", "adir", "tree"], False, {}),
    ("lint-help", ["lint", "--help"], False, {}),
]


def _write_tree(root: Path, manifest: dict[str, Any]) -> dict[str, str]:
    def dump(doc: Any) -> str:
        return json.dumps(doc, indent=2)

    good = dump(manifest)
    bad_doc = json.loads(good)
    bad_doc["version"] = "1.0"
    bad_doc["iframe"]["sandbox"] = "allow-scripts allow-same-origin"
    bad = dump(bad_doc)
    inline_doc = json.loads(good)
    inline_doc["renderMode"] = "inline"  # an error for unverified apps only
    inline = dump(inline_doc)
    files = {
        "good.json": good,
        "bad.json": bad,
        "inline.json": inline,
        "warn.json": good.replace('"name": "Demo"', '"name": "Demo", "name": "Demo"', 1),
        "-weird.json": bad,
        "hostile.json": '{"\\n::error::PWN\\u001b[31m": {"a":1,"a":2}}',
        "proj/block.manifest.json": good,
        "tree/a/block.manifest.json": good,
        "tree/b/c/block.manifest.json": bad,
        "cfg/blockkit.toml": "tier = 'verified'\n",
        "badcfg/blockkit.toml": "tier = [\n",
        "badcfg/block.manifest.json": good,
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for folder in ("emptydir", "adir"):
        (root / folder).mkdir()
    return {"GOOD": good, "BAD": bad, "INLINE": inline}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    from sample_manifests import PAGE_BLOCK

    root = tmp_path_factory.mktemp("fastcli")
    texts = _write_tree(root, json.loads(json.dumps(PAGE_BLOCK)))
    assert '"name": "Demo"' in texts["GOOD"]
    cases = []
    for _, argv, _, extra in CASES:
        stdin = extra.get("stdin", "")
        cases.append({"argv": argv, "cwd": str(root / extra.get("cwd", "")), "stdin": texts.get(stdin, stdin),
                      "env": {"NO_COLOR": "", **extra.get("env", {})}, "writes": extra.get("writes", []),
                      "patch": extra.get("patch")})
    env = {key: value for key, value in os.environ.items()
           if key not in ("NO_COLOR", "FORCE_COLOR", "BLOCKKIT_DEBUG", "_BLOCKKIT_CLICK_ONLY")
           and not key.endswith("_COMPLETE")}
    done = subprocess.run([sys.executable, str(HARNESS)], input=json.dumps(cases), capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return {case_id: result for (case_id, *_), result in zip(CASES, json.loads(done.stdout))}


@pytest.mark.parametrize(("case_id", "argv", "fast", "extra"), CASES, ids=[case[0] for case in CASES])
def test_both_parsers_give_the_same_run(results: dict[str, dict[str, Any]], case_id: str, argv: list[str],
                                        fast: bool, extra: dict[str, Any]) -> None:
    ours, theirs = results[case_id]["fast"], results[case_id]["click"]
    assert theirs["click"], "the reference run did not go through click"
    assert ours["click"] is not fast, "fast path taken" if not fast else "click was loaded"
    if extra.get("env", {}).get("BLOCKKIT_DEBUG"):
        # The traceback's frames differ (click's own are not in the fast one); its last line may not.
        assert ours["status"] == theirs["status"] == 1
        assert ours["stdout"] == theirs["stdout"]
        assert ours["stderr"].splitlines()[-1] == theirs["stderr"].splitlines()[-1]
        assert ours["stderr"].startswith("Traceback")
        return
    assert (ours["status"], ours["stdout"], ours["stderr"]) == (theirs["status"], theirs["stdout"], theirs["stderr"])
    assert ours["files"] == theirs["files"]
    for name in extra.get("writes", []):
        if fast:
            assert name in ours["files"], f"{name} was not written"


def test_the_matrix_means_something(results: dict[str, dict[str, Any]]) -> None:
    """The runs differ from each other as they should: exit statuses 0, 1, 2 and 130 all occur,
    and the usage errors are click's."""
    statuses = {result["fast"]["status"] for result in results.values()}
    assert {0, 1, 2, 130} <= statuses
    assert "Error: Invalid value for '--tier'" in results["tier-bad"]["fast"]["stderr"]
    assert results["interrupted"]["fast"]["stderr"] == "\nblockkit: interrupted\n"
    assert results["cleanup-fails-under-interrupt"]["fast"]["stderr"] == "\nblockkit: interrupted\n"
    assert results["cleanup-fails-under-interrupt"]["fast"]["status"] == 130
    assert results["internal-error"]["fast"]["stderr"] == (
        "blockkit: internal error: RuntimeError: rule table is empty \\u001b[2J (a bug in blockkit; please "
        "report it, with the traceback that BLOCKKIT_DEBUG=1 shows)\n")
    assert "\x1b" not in results["force-color-to-a-file"]["fast"]["stdout"]
    assert json.loads(results["output-long"]["fast"]["files"]["out.json"])["summary"]["errors"] >= 1


def test_the_parser_keeps_click_s_defaults_and_value_forms() -> None:
    values = parse_fast(["b.json", "--allowed-origin=https://x", "-oOUT", "--allowed-origin", "https://y", "a.json"],
                        _options.VALIDATE)
    assert values == {"paths": ("b.json", "a.json"), "fmt": "text", "strict": False, "output": Path("OUT"),
                      "stdin_filename": None, "tier": None, "allowed_origins": ("https://x", "https://y"),
                      "granted_scopes": (), "app_domain": None, "stage": None, "config": None}


@pytest.mark.parametrize("command", ["validate", "lint"])
def test_the_click_command_has_exactly_the_table_s_options(command: str) -> None:
    import importlib

    module = importlib.import_module(f"blockkit.commands.{command}")
    params = [param for param in module.command.params if param.name != "help"]
    assert [param.name for param in params] == ["paths", *(option.dest for option in module.OPTIONS)]
    for param, option in zip(params[1:], module.OPTIONS):
        assert tuple(param.opts + param.secondary_opts) == option.flags


def test_validate_of_one_file_loads_no_click(write_manifest, manifest) -> None:
    path = write_manifest(manifest)
    env = {key: value for key, value in os.environ.items() if key != "_BLOCKKIT_CLICK_ONLY"}
    code = ("import sys\nfrom blockkit.cli import main\n"
            f"try:\n    main(['validate', {str(path)!r}])\nexcept SystemExit as exc:\n    print('exit', exc.code)\n"
            "print(sorted(m for m in sys.modules if m == 'click' or m.startswith('click.')))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.stdout.strip().splitlines()[-2:] == ["exit 0", "[]"], result.stdout + result.stderr


def test_argument_lists_of_other_than_strings_go_to_click() -> None:
    from blockkit.commands._run import run_fast

    assert run_fast(["validate", Path("x.json")]) is None  # type: ignore[list-item]  # returned: click parses it
    assert run_fast(["validate", "--help"]) is None
    assert run_fast(["rules"]) is None


# The process's own command line ends without the interpreter's teardown (commands/_run.py
# exit_at_once) when our entry point is __main__ (the console script, python -m blockkit); a
# caller that passes its own arguments, or another script calling main(), gets SystemExit as from click.
_TEARDOWN = ("import atexit, sys\natexit.register(print, 'teardown ran', file=sys.stderr)\n"
             "sys.argv = ['blockkit', 'validate', *sys.argv[1:]]\nfrom blockkit.cli import main\n")


@pytest.mark.parametrize(("content", "status"), [(None, 0), ({"blockId": 5}, 1), ("missing", 2)])
def test_the_command_line_ends_at_once_with_its_status_and_every_byte(write_manifest, manifest, tmp_path: Path,
                                                                        content: Any, status: int) -> None:
    if content == "missing":
        path = tmp_path / "missing.json"
    else:
        path = write_manifest(manifest if content is None else content)
    env = {key: value for key, value in os.environ.items() if key != "_BLOCKKIT_CLICK_ONLY"}
    script = tmp_path / "bin" / "blockkit"  # named as the console script is
    script.parent.mkdir()
    script.write_text(_TEARDOWN + "main()\n")
    fast = subprocess.run([sys.executable, str(script), str(path)], capture_output=True, env=env)
    # The same run in a caller's hands (arguments given): SystemExit, then the usual teardown.
    usual = subprocess.run([sys.executable, "-c", _TEARDOWN + "main(sys.argv[1:])\n", str(path)],
                           capture_output=True, env=env)
    assert fast.returncode == usual.returncode == status
    assert b"teardown ran" not in fast.stderr and b"teardown ran" in usual.stderr
    assert fast.stdout == usual.stdout
    assert fast.stderr == usual.stderr.replace(b"teardown ran\n", b"")


def test_another_script_calling_main_keeps_its_except_and_atexit(write_manifest, manifest, tmp_path: Path) -> None:
    path = write_manifest(manifest)
    env = {key: value for key, value in os.environ.items() if key != "_BLOCKKIT_CLICK_ONLY"}
    caught = _TEARDOWN + "try:\n    main()\nexcept SystemExit as exc:\n    print('caught', exc.code)\n"
    script = tmp_path / "wrapper.py"
    script.write_text(caught)
    for argv in ([sys.executable, str(script), str(path)], [sys.executable, "-c", caught, str(path)]):
        result = subprocess.run(argv, capture_output=True, env=env)
        assert result.returncode == 0 and result.stdout.endswith(b"caught 0\n"), result
        assert b"teardown ran" in result.stderr


def test_python_m_blockkit_takes_the_fast_exit(write_manifest, manifest) -> None:
    path = write_manifest(manifest)
    env = {key: value for key, value in os.environ.items() if key != "_BLOCKKIT_CLICK_ONLY"}
    code = "import atexit, runpy, sys\natexit.register(print, 'teardown ran', file=sys.stderr)\n" \
           "sys.argv = ['blockkit', 'validate', sys.argv[1]]\nrunpy.run_module('blockkit', run_name='__main__')\n"
    result = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, env=env)
    assert result.returncode == 0 and b"teardown ran" not in result.stderr, result


def test_a_fast_exit_is_not_taken_when_it_could_differ(monkeypatch: pytest.MonkeyPatch) -> None:
    from blockkit.commands import _run

    exits: list[int] = []
    monkeypatch.setattr(_run.os, "_exit", exits.append)
    _run.exit_at_once(SystemExit("a message"))  # printed by the interpreter: its exit
    _run.exit_at_once(SystemExit(300))
    assert exits == []

    class Broken:
        def flush(self) -> None:
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", Broken())
    # A closed pipe ends the run quietly with 141, as everywhere (issue 21), not at once.
    with pytest.raises(SystemExit) as closed:
        _run.exit_at_once(SystemExit(1))
    assert closed.value.code == _run.CLOSED_OUTPUT == 141
    assert exits == []
    monkeypatch.undo()
    monkeypatch.setattr(_run.os, "_exit", exits.append)
    _run.exit_at_once(SystemExit(None))
    _run.exit_at_once(SystemExit(2))
    assert exits == [0, 2]


def test_the_start_up_runs_without_the_cyclic_collector_and_a_run_leaves_it_as_it_was(write_manifest,
                                                                                     manifest) -> None:
    import gc

    from blockkit.commands import _run

    path = write_manifest(manifest)
    seen: list[bool] = []
    real = _run._run_fast

    def spy(argv: list[str]) -> None:
        seen.append(gc.isenabled())
        real(argv)

    assert gc.isenabled()
    try:
        _run._run_fast = spy  # type: ignore[assignment]
        with pytest.raises(SystemExit):
            _run.run_fast(["validate", str(path)])
        assert seen == [False] and gc.isenabled()
        gc.disable()  # a caller that keeps it off finds it off
        with pytest.raises(SystemExit):
            _run.run_fast(["validate", str(path)])
        assert not gc.isenabled()
    finally:
        _run._run_fast = real  # type: ignore[assignment]
        gc.enable()


def test_a_large_batch_is_checked_with_the_collector_back_on(monkeypatch: pytest.MonkeyPatch, write_manifest,
                                                             manifest, tmp_path: Path) -> None:
    import gc

    from blockkit import forkpool
    from blockkit.commands import _run
    from blockkit.commands.validate import PARALLEL_MIN_FILES

    paths = [str(write_manifest(manifest, f"m{i}.json")) for i in range(PARALLEL_MIN_FILES)]
    seen: list[bool] = []
    real = forkpool.map_forked

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(forkpool, "map_forked", spy)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    try:
        with pytest.raises(SystemExit) as done:
            _run.run_fast(["validate", *paths])
    finally:
        gc.enable()
    assert done.value.code == 0
    assert seen == [True]


def test_a_command_line_the_fast_parser_leaves_to_click_is_offered_to_it_once() -> None:
    code = ("import sys\nfrom blockkit.commands import _run\ncalls = []\nreal = _run.run_fast\n"
            "def spy(argv):\n    calls.append(list(argv))\n    return real(argv)\n_run.run_fast = spy\n"
            "sys.argv = ['blockkit', 'validate', '--help']\nfrom blockkit.cli import main\n"
            "try:\n    main()\nexcept SystemExit as exc:\n    print('exit', exc.code, calls)\n")
    env = {key: value for key, value in os.environ.items() if key != "_BLOCKKIT_CLICK_ONLY"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.stdout.splitlines()[-1] == "exit 0 [['validate', '--help']]", result.stdout + result.stderr


def test_a_path_argument_is_accepted_exactly_when_click_would(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import click

    from blockkit.commands._options import _path_ok

    readable = tmp_path / "ok.json"
    readable.write_text("{}")
    unreadable = tmp_path / "locked.json"
    unreadable.write_text("{}")
    real_access = os.access
    # As root every file reads; a refused read is simulated for this one path, for click too.
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: os.fspath(path) != str(unreadable)
                        and real_access(path, mode, **kw))

    def click_accepts(value: str) -> bool:
        try:
            click.Path(path_type=str).convert(value, None, None)
        except click.BadParameter:
            return False
        return True

    for value in (str(readable), str(tmp_path), str(tmp_path / "missing.json"), str(unreadable)):
        assert _path_ok(value, dir_okay=True) == click_accepts(value), value
    assert _path_ok(str(unreadable), dir_okay=True) is False
    assert _path_ok("a\0b", dir_okay=True) is False  # click's own error, whatever it is

"""``blockkit dev`` refuses bad input with one line and exit 2, never a traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from blockkit.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dev"


def run(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(main, ["dev", *args], env=env)


def assert_one_line_usage_error(result: Any, fragment: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("blockkit dev: ") and fragment in lines[0]


def test_no_manifest(tmp_path: Path) -> None:
    assert_one_line_usage_error(run(str(tmp_path)), "no manifest here")


def test_unparseable_manifest(tmp_path: Path) -> None:
    (tmp_path / "block.manifest.json").write_text('{"blockId": "x",}')
    assert_one_line_usage_error(run(str(tmp_path)), "not valid JSON")


def test_unknown_surface(tmp_path: Path, manifest: dict[str, Any]) -> None:
    (tmp_path / "block.manifest.json").write_text(json.dumps(manifest))
    assert_one_line_usage_error(run(str(tmp_path), "--surface", "sidebar"), "not a surface")


def test_unbuilt_output_dir(tmp_path: Path, manifest: dict[str, Any]) -> None:
    manifest.update(buildCommand="npm run build", outputDir="dist")
    (tmp_path / "block.manifest.json").write_text(json.dumps(manifest))
    assert_one_line_usage_error(run(str(tmp_path)), "run `npm run build` first")


def test_output_dir_outside_the_block(tmp_path: Path, manifest: dict[str, Any]) -> None:
    block = tmp_path / "block"
    block.mkdir()
    manifest.update(outputDir="../")
    (block / "block.manifest.json").write_text(json.dumps(manifest))
    assert_one_line_usage_error(run(str(block)), "leaves the block directory")



@pytest.mark.parametrize("output_dir", [None, "dist"])
def test_a_block_without_index_html_is_refused(tmp_path: Path, manifest: dict[str, Any], output_dir: str | None) -> None:
    # Served anyway, it is a 404 in the frame and a 37 s wait for a BLOCK_READY that cannot come.
    manifest.pop("buildCommand", None)
    manifest.pop("outputDir", None)
    root = tmp_path
    if output_dir is not None:
        manifest.update(buildCommand="npm run build", outputDir=output_dir)
        root = tmp_path / output_dir
        root.mkdir()
        (tmp_path / "index.html").write_text("<!doctype html><title>source</title>")
    (root / "main.js").write_text("")
    (tmp_path / "block.manifest.json").write_text(json.dumps(manifest))
    # --check with no browser: a command that got past the block's files stops at once, not hangs.
    result = run(str(tmp_path), "--check", env={"BLOCKKIT_CHROMIUM": "/nonexistent/chromium"})
    assert_one_line_usage_error(result, f"no index.html in {root.resolve()}")

@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--context", "modelId"], "KEY=VALUE"),
        (["--context", "modelId=1"], "has no 'modelId'"),
        (["--proxy", "localhost:5173"], "give the dev server's URL"),
    ],
)
def test_bad_flags(args: list[str], fragment: str) -> None:
    assert_one_line_usage_error(run(str(FIXTURES / "handshake"), *args), fragment)


def test_check_with_a_browser_variable_naming_nothing_is_a_usage_error() -> None:
    result = run(str(FIXTURES / "handshake"), "--check", env={"BLOCKKIT_BROWSER": "/nonexistent/chromium"})
    assert_one_line_usage_error(result, "$BLOCKKIT_BROWSER /nonexistent/chromium: no such file")


def test_check_without_any_browser_says_both_ways_to_get_one(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    # An empty PATH and an empty Playwright download folder: no Chromium anywhere. A fresh
    # process, since the lookup starts Playwright's driver and the browser tests hold one.
    env = {k: v for k, v in os.environ.items() if k not in ("BLOCKKIT_BROWSER", "BLOCKKIT_CHROMIUM")}
    env.update(PATH=str(tmp_path), PLAYWRIGHT_BROWSERS_PATH=str(tmp_path))
    result = subprocess.run(
        [sys.executable, "-m", "blockkit.cli", "dev", str(FIXTURES / "handshake"), "--check"],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )
    assert result.returncode == 2 and result.stdout == ""
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("blockkit dev: --check found no Chromium")
    for way in ("python -m playwright install chromium", "apt-get install chromium", "--browser PATH", "$BLOCKKIT_BROWSER"):
        assert way in line


def test_browser_without_check_is_a_usage_error() -> None:
    assert_one_line_usage_error(run(str(FIXTURES / "handshake"), "--browser", "/usr/bin/chromium"), "add --check")


@pytest.mark.parametrize("name", ["evil example", "user@evil.example", "evil.example:99999", "[::1", "a..b", ""])
def test_a_malformed_allowed_host_is_a_usage_error(name: str) -> None:
    assert_one_line_usage_error(run(str(FIXTURES / "handshake"), "--allowed-host", name), "--allowed-host")


def test_the_command_is_listed() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert "dev" in result.output and "Run a block in a local host" in result.output


def test_a_port_in_use_is_named(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = str(taken.getsockname()[1])
        result = run(str(FIXTURES / "handshake"), "--host-port", port, "--trace", str(tmp_path / "t.jsonl"))
    assert_one_line_usage_error(result, f"cannot listen on 127.0.0.1:{port} for the host page")
    assert not (tmp_path / "t.jsonl").exists()


@pytest.mark.parametrize("mode", [[], ["--check"]])
def test_a_proxy_to_a_dead_dev_server_is_refused_at_once(tmp_path: Path, mode: list[str]) -> None:
    import socket
    import subprocess
    import sys

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{closed_port}"
    # A subprocess, so that a command that serves on anyway times out instead of hanging the suite.
    result = subprocess.run(
        [sys.executable, "-m", "blockkit.cli", "dev", str(FIXTURES / "handshake"), "--proxy", url,
         "--trace", str(tmp_path / "t.jsonl"), *mode],
        capture_output=True, text=True, timeout=30, check=False,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == "" and "Traceback" not in result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"blockkit dev: --proxy {url}: nothing answers at 127.0.0.1:{closed_port}")
    assert "start the dev server first" in line


def test_a_directory_that_does_not_exist_is_named_as_such(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-block"
    assert_one_line_usage_error(run(str(missing)), f"{missing}: no such directory")


def test_the_trace_path_is_absolute_for_a_relative_block_dir(tmp_path: Path, monkeypatch: Any) -> None:
    # The host page shows it in a browser, far from the terminal's working directory.
    from blockkit.dev.session import DevOptions, DevSession

    shutil.copytree(FIXTURES / "handshake", tmp_path / "blk")
    monkeypatch.chdir(tmp_path)
    session = DevSession(DevOptions(block_dir=Path("blk")))
    assert session.trace_path == tmp_path / "blk" / ".blockkit" / "dev-trace.jsonl"
    relative = DevSession(DevOptions(block_dir=Path("blk"), trace_path=Path("t.jsonl")))
    assert relative.trace_path == tmp_path / "t.jsonl"

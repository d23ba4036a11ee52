"""`-` reads a manifest from standard input (validate and lint); `--stdin-filename` names it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import blockkit


def run(*args: str, stdin: bytes, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "blockkit.cli", *args], input=stdin, capture_output=True,
                          cwd=cwd, env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1"})


def _json(result: subprocess.CompletedProcess[bytes]) -> dict[str, Any]:
    return json.loads(result.stdout)


def test_validate_reads_standard_input_with_the_same_verdict_as_the_file(tmp_path: Path, manifest) -> None:
    manifest["version"] = "1.0"
    text = json.dumps(manifest, indent=2).encode()
    result = run("validate", "-", "--format", "json", stdin=text, cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    [file] = _json(result)["files"]
    assert file["path"] == "<stdin>"
    assert file["diagnostics"] == blockkit.validate(text).to_json()["files"][0]["diagnostics"]


def test_stdin_filename_names_the_manifest_and_finds_its_settings(tmp_path: Path, manifest) -> None:
    block = tmp_path / "blocks" / "one"
    block.mkdir(parents=True)
    (block / "blockkit.toml").write_text('tier = "verified"\n')
    manifest["iframe"]["sandbox"] = "allow-scripts allow-popups"  # allowed for verified apps only
    text = json.dumps(manifest).encode()
    name = "blocks/one/block.manifest.json"
    with_settings = run("validate", "-", "--stdin-filename", name, stdin=text, cwd=tmp_path)
    assert with_settings.returncode == 0, with_settings.stdout + with_settings.stderr
    without = run("validate", "-", "--format", "json", stdin=text, cwd=tmp_path)
    assert [d["code"] for d in _json(without)["files"][0]["diagnostics"]] == ["BK214"]
    named = run("validate", "-", "--stdin-filename", name, "--tier", "unverified", stdin=text, cwd=tmp_path)
    assert named.stdout.decode().startswith(f"{name}:")


def test_lint_of_standard_input_reads_the_project_at_stdin_filename(tmp_path: Path, manifest) -> None:
    (tmp_path / "index.html").write_text('<div id="root"></div><script src="app.js"></script>')
    (tmp_path / "app.js").write_text("document.title = 'no handshake here';\n")
    text = json.dumps(manifest).encode()
    result = run("lint", "-", "--stdin-filename", "block.manifest.json", "--format", "json", stdin=text,
                 cwd=tmp_path)
    codes = [d["code"] for d in _json(result)["files"][0]["diagnostics"]]
    assert "BK318" in codes  # the project beside the named file was read
    anonymous = run("lint", "-", "--format", "json", stdin=text, cwd=tmp_path)
    assert "BK318" not in [d["code"] for d in _json(anonymous)["files"][0]["diagnostics"]]


def test_standard_input_is_read_once_and_never_fixed(tmp_path: Path, manifest) -> None:
    text = json.dumps(manifest).encode()
    twice = run("validate", "-", "-", stdin=text, cwd=tmp_path)
    assert twice.returncode == 2
    assert twice.stderr.decode().splitlines() == ["blockkit: error: -: standard input can be read only once"]
    fixed = run("fix", "-", stdin=text, cwd=tmp_path)
    assert fixed.returncode == 2
    assert fixed.stderr.decode().splitlines() == [
        "blockkit: error: -: blockkit fix edits files in place, so it cannot fix standard input"]


def test_oversized_standard_input_is_a_finding_not_a_hang(tmp_path: Path) -> None:
    huge = b'{"name": "' + b"x" * (2 * 1024 * 1024) + b'"}'
    result = run("validate", "-", "--format", "json", stdin=huge, cwd=tmp_path)
    assert result.returncode == 1
    assert [d["code"] for d in _json(result)["files"][0]["diagnostics"]] == ["BK006"]

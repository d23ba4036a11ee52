"""``blockkit package``: a scaffolded block with planted files, packaged and judged from the command line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

TOKEN = "b7e6d5c4a3f2e1d0c9b8a7f6"


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "NO_COLOR": "1", **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"}}
    return subprocess.run([sys.executable, "-m", "blockkit.cli", *args], capture_output=True, text=True,
                          cwd=cwd, env=env)


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("scaffold")
    result = run("new", str(base / "blk"), "--name", "Demo Block", "--defaults")
    assert result.returncode == 0, result.stdout + result.stderr
    return base / "blk"


@pytest.fixture
def block(scaffolded: Path, tmp_path: Path) -> Path:
    """The scaffold, with what a real folder holds beside the source."""
    root = tmp_path / "blk"
    shutil.copytree(scaffolded, root, symlinks=True)
    (root / ".env.development.local").write_text(f"VITE_LIVE_BLOCK_TOKEN={TOKEN}\n")
    (root / "node_modules" / "react").mkdir(parents=True)
    (root / "node_modules" / "react" / "index.js").write_text("module.exports = {}\n")
    (root / "dist").mkdir()
    (root / "dist" / "index.js").write_text("built\n")
    os.symlink("index.html", root / "alias.html")
    (root / "src" / "config.js").write_text(f"// settings\n\nexport const API_KEY = '{TOKEN}';\n")
    return root


def test_the_zip_holds_exactly_what_the_rules_allow(block: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.zip"
    result = run("package", str(block), "--out", str(out))
    assert result.returncode == 0, result.stdout + result.stderr
    names = zipfile.ZipFile(out).namelist()
    expected = sorted(
        p.relative_to(block).as_posix() for p in block.rglob("*")
        if p.is_file() and not p.is_symlink() and p.relative_to(block).parts[0] not in ("node_modules", "dist")
        and p.name != ".env.development.local"
    )
    assert names == expected
    assert "src/config.js" in names and "block.manifest.json" in names
    skipped = [line for line in result.stdout.splitlines() if line.startswith("Skipped")]
    assert skipped == ["Skipped 4 path(s): .env.development.local (.env*), alias.html (not a regular file), "
                       "dist/, node_modules/"]


def test_the_credential_is_found_by_path_line_and_name_and_its_value_appears_nowhere(block: Path,
                                                                                      tmp_path: Path) -> None:
    out = tmp_path / "out.zip"
    text = run("package", str(block), "--out", str(out))
    as_json = run("package", str(block), "--format", "json")
    for result in (text, as_json):
        assert TOKEN not in result.stdout + result.stderr
    assert f"{block.as_posix()}/src/config.js:3:14: BK520 [warning]" in text.stdout
    assert "API_KEY" in text.stdout
    document = json.loads(as_json.stdout)
    [config] = [f for f in document["files"] if f["path"].endswith("src/config.js")]
    assert [(d["code"], d["line"]) for d in config["diagnostics"]] == [("BK520", 3)]
    # Planted where the rules exclude it, the same token is not scanned: it does not ship.
    assert not any(f["path"].endswith(".env.development.local") for f in document["files"])


def test_the_size_report_in_text_and_json(block: Path) -> None:
    text = run("package", str(block))
    assert text.returncode == 0, text.stdout + text.stderr
    lines = text.stdout.splitlines()
    assert any(line.startswith("  compressed:") for line in lines)
    assert any(line.startswith("  decompressed:") for line in lines)
    assert any(line.startswith("  request body:") for line in lines)
    document = json.loads(run("package", str(block), "--format", "json").stdout)
    sizes = document["bundle"]["sizes"]
    assert sizes["request_body"] == len('{"bundleBase64":""}') + sizes["base64"]
    assert sizes["base64"] == 4 * ((sizes["compressed"] + 2) // 3)
    assert sizes["decompressed"] == sum(f["sizeBytes"] for f in document["bundle"]["file_summary"]["files"])
    assert document["package"]["skipped"][0] == {"path": ".env.development.local", "dir": False, "rule": ".env*"}
    assert document["summary"]["errors"] == 0 and document["summary"]["warnings"] == 1


def test_a_large_asset_is_an_error_with_its_size_and_the_limit(block: Path) -> None:
    (block / "public").mkdir(exist_ok=True)
    (block / "public" / "big.bin").write_bytes(os.urandom(12 * 1024 * 1024))
    result = run("package", str(block))
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{block.as_posix()}/public/big.bin:1:1: BK505 " in result.stdout
    assert "12582912 bytes" in result.stdout and "10485760" in result.stdout
    assert "BK512" in result.stdout  # 12 MiB of noise: over the proxy's body limit too


def test_the_manifest_verdict_uses_the_projects_context(block: Path) -> None:
    manifest = json.loads((block / "block.manifest.json").read_text())
    manifest["iframe"]["sandbox"] = "allow-scripts allow-popups"
    (block / "block.manifest.json").write_text(json.dumps(manifest, indent=2))
    refused = run("package", str(block))
    assert refused.returncode == 1 and "block.manifest.json" in refused.stdout
    (block / "blockkit.toml").write_text('tier = "verified"\n')
    assert run("package", str(block)).returncode == 0
    assert run("package", str(block), "--tier", "unverified").returncode == 1


def test_an_existing_out_file_is_never_replaced_without_force(block: Path, tmp_path: Path) -> None:
    out = tmp_path / "mine.zip"
    out.write_bytes(b"my work")
    result = run("package", str(block), "--out", str(out))
    assert result.returncode == 2
    assert result.stderr.strip() == f"blockkit: error: {out}: already exists; pass --force to replace it"
    assert out.read_bytes() == b"my work"
    assert run("package", str(block), "--out", str(out), "--force").returncode == 0
    assert zipfile.is_zipfile(out)


def test_the_same_tree_gives_the_same_zip(block: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "1.zip", tmp_path / "2.zip"
    assert run("package", str(block), "--out", str(first)).returncode == 0
    os.utime(block / "index.html", (1_500_000_000, 1_500_000_000))
    assert run("package", str(block), "--out", str(second)).returncode == 0
    assert first.read_bytes() == second.read_bytes()


def test_the_version_guard_against_a_previous_bundle(block: Path, tmp_path: Path) -> None:
    previous = tmp_path / "previous.zip"
    assert run("package", str(block), "--out", str(previous)).returncode == 0
    (block / "index.html").write_text("<!doctype html><p>changed</p>\n")
    manifest = json.loads((block / "block.manifest.json").read_text())
    manifest["name"] = "Renamed"
    (block / "block.manifest.json").write_text(json.dumps(manifest, indent=2))
    result = run("package", str(block), "--previous", str(previous), "--format", "json")
    assert result.returncode == 1
    document = json.loads(result.stdout)
    assert "BK401" in [d["code"] for f in document["files"] for d in f["diagnostics"]]
    summary = document["bundle"]["file_summary"]
    assert summary["changed"] == ["block.manifest.json", "index.html"] and summary["added"] == []
    assert document["bundle"]["manifest_diff"]["kind"] == "update"


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    missing = run("package", str(tmp_path / "nothing"))
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "not a directory" in missing.stderr
    (tmp_path / "empty").mkdir()
    empty = run("package", str(tmp_path / "empty"))
    assert empty.returncode == 2 and "no block.manifest.json" in empty.stderr
    assert "Traceback" not in missing.stderr + empty.stderr


def test_explain_knows_the_bundle_rules() -> None:
    result = run("explain", "BK520")
    assert result.returncode == 0
    assert "never the value" in result.stdout and "blockkit package" in result.stdout

"""``blockkit dev --approved``: the approved version comes out of the local platform's store, unpacked
safely and built as the platform builds it, and the dev host serves it instead of the working tree."""

from __future__ import annotations

import io
import json
import os
import stat
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from blockkit.bundle.extract import BundleExtractError, extract_bundle
from blockkit.cli import main
from blockkit.dev.approved import build_steps, prepare_approved
from blockkit.dev.errors import DevError
from blockkit.dev.session import DevOptions, DevSession
from blockkit.emulator.seed import ensure_seeded
from blockkit.emulator.services import publish_requests as service
from blockkit.emulator.store import Store
from blockkit.emulator.store.clock import Clock


def zipped(files: dict[str, str | bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def manifest(block_id: str, version: str = "1.0.0", **extra: Any) -> str:
    return json.dumps({"blockId": block_id, "version": version, "name": f"Block {block_id}",
                       "page": {"path": "/", "title": "T"}, **extra})


def approve(data: Path, bundle: bytes) -> str:
    """Submit ``bundle`` as a seeded moderator and approve it; the request id."""
    from blockkit.emulator.store import users

    with Store.open(data) as store:
        ensure_seeded(store, 1, "small")
        with store.read() as db:
            user = next(u for u in users.list_users(db) if u.id > 0 and u.is_moderator and not u.deleted)
        who = service.Submitter(user.id, user.username, user.status, True, "apiKey", "k")
        created = service.submit_version(store, Clock(store), who, bundle)
        service.approve(store, Clock(store), created["publishRequestId"])
    return str(created["publishRequestId"])


def working_tree(parent: Path, block_id: str, marker: str = "working tree") -> Path:
    block = parent / "block"
    block.mkdir()
    (block / "block.manifest.json").write_text(manifest(block_id, "9.9.9"))
    (block / "index.html").write_text(f"<p>{marker}</p>")
    return block


# --- unpacking ----------------------------------------------------------------------------------

def test_extract_writes_every_file_and_nothing_else(tmp_path: Path) -> None:
    names = extract_bundle(zipped({"block.manifest.json": manifest("abc"), "a/b/c.txt": "deep"}), tmp_path / "out")
    assert names == ["a/b/c.txt", "block.manifest.json"]
    assert (tmp_path / "out" / "a" / "b" / "c.txt").read_text() == "deep"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging folder left


@pytest.mark.parametrize("name", ["../escape.txt", "/abs.txt", "a/../../escape.txt"])
def test_extract_refuses_a_name_that_leaves_the_folder(tmp_path: Path, name: str) -> None:
    with pytest.raises(BundleExtractError, match="unpacked"):
        extract_bundle(zipped({"block.manifest.json": manifest("abc"), name: "x"}), tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "escape.txt").exists()
    assert list(tmp_path.iterdir()) == []


def test_extract_refuses_a_symlink_entry(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("block.manifest.json", manifest("abc"))
        link = zipfile.ZipInfo("link")
        link.create_system = 3
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, "/etc/passwd")
    with pytest.raises(BundleExtractError, match="symbolic link"):
        extract_bundle(buffer.getvalue(), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_extract_refuses_a_duplicate_and_an_existing_destination(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("block.manifest.json", manifest("abc"))
        archive.writestr("index.html", "one")
        archive.writestr("index.html", "two")
    with pytest.raises(BundleExtractError, match="appears 2 times"):
        extract_bundle(buffer.getvalue(), tmp_path / "out")
    (tmp_path / "there").mkdir()
    with pytest.raises(BundleExtractError, match="already exists"):
        extract_bundle(zipped({"block.manifest.json": manifest("abc")}), tmp_path / "there")


# --- the approved version ----------------------------------------------------------------------

def test_a_static_approved_version_is_unpacked_and_reused(tmp_path: Path) -> None:
    data = tmp_path / "data"
    request_id = approve(data, zipped({"block.manifest.json": manifest("static-one"),
                                       "index.html": "<p>approved</p>"}))
    block = working_tree(tmp_path, "static-one")
    source, label = prepare_approved(block, data)
    assert source == data / "approved" / "static-one" / request_id / "src"
    assert (source / "index.html").read_text() == "<p>approved</p>"
    assert request_id in label and "1.0.0" in label
    (source / "index.html").write_text("<p>touched</p>")
    again, _ = prepare_approved(block, data)  # a ready version is not unpacked again
    assert again == source and (again / "index.html").read_text() == "<p>touched</p>"


def test_no_approved_version_is_one_clear_line(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with Store.open(data) as store:
        ensure_seeded(store, 1, "small")
    block = working_tree(tmp_path, "never-approved")
    with pytest.raises(DevError, match="no approved version of never-approved"):
        prepare_approved(block, data)
    with pytest.raises(DevError, match="no local platform data"):
        prepare_approved(block, tmp_path / "nowhere")


def test_build_steps_are_the_frozen_install_then_the_build(tmp_path: Path) -> None:
    (tmp_path / "package-lock.json").write_text("{}")
    assert build_steps(tmp_path, "npm run build") == [["npm", "ci"], ["npm", "run", "build"]]
    (tmp_path / "package-lock.json").unlink()
    (tmp_path / "pnpm-lock.yaml").write_text("lockfileVersion: '9.0'\n")
    assert build_steps(tmp_path, "pnpm run build") == [["pnpm", "install", "--frozen-lockfile"],
                                                       ["pnpm", "run", "build"]]
    with pytest.raises(DevError, match="no yarn.lock"):
        build_steps(tmp_path, "yarn build")


def fake_npm(bin_dir: Path, *, fail_build: bool = False) -> Path:
    """An ``npm`` that logs its arguments; ``ci`` needs the lockfile, ``run build`` writes dist/."""
    bin_dir.mkdir()
    log = bin_dir / "calls.log"
    script = bin_dir / "npm"
    build = ('echo "error: the build broke" >&2; exit 3' if fail_build
             else 'mkdir -p dist && cp src.html dist/index.html')
    script.write_text(f"""#!/bin/sh
echo "$*" >> {log}
case "$1" in
  ci) test -f package-lock.json || exit 9; mkdir -p node_modules ;;
  run) {build} ;;
esac
""")
    script.chmod(0o755)
    return log


def built_bundle(block_id: str) -> bytes:
    return zipped({"block.manifest.json": manifest(block_id, buildCommand="npm run build", outputDir="dist"),
                   "package.json": '{"name": "x", "scripts": {"build": "vite build"}}',
                   "package-lock.json": '{"lockfileVersion": 3, "packages": {}}',
                   "src.html": "<p>built from the approved bundle</p>"})


def test_a_built_approved_version_runs_the_frozen_install_and_the_build(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    log = fake_npm(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    data = tmp_path / "data"
    approve(data, built_bundle("built-one"))
    block = working_tree(tmp_path, "built-one")
    source, _ = prepare_approved(block, data)
    assert log.read_text().splitlines() == ["ci", "run build"]
    assert (source / "dist" / "index.html").read_text() == "<p>built from the approved bundle</p>"
    session = DevSession(DevOptions(block_dir=source, platform_dir=tmp_path / "dev-data"))
    assert session.source.root == (source / "dist").resolve()


def test_a_failed_build_is_one_line_and_is_tried_again_next_time(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    fake_npm(tmp_path / "bin", fail_build=True)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    data = tmp_path / "data"
    approve(data, built_bundle("broken-one"))
    block = working_tree(tmp_path, "broken-one")
    result = CliRunner().invoke(main, ["dev", str(block), "--approved", "--data", str(data)])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert lines[-1].startswith("blockkit dev: approved broken-one 1.0.0")
    assert "the build failed: `npm run build` exited 3: error: the build broke" in lines[-1]
    assert "Traceback" not in result.output
    with pytest.raises(DevError, match="exited 3"):  # nothing half-built was kept as ready
        prepare_approved(block, data)


def test_data_without_approved_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["dev", str(tmp_path), "--data", str(tmp_path)])
    assert result.exit_code == 2
    assert result.output.strip() == "blockkit dev: --data names where --approved reads the approved version; " \
                                    "add --approved"


def test_approved_with_proxy_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["dev", str(tmp_path), "--approved", "--proxy", "http://localhost:5173"])
    assert result.exit_code == 2
    assert "cannot be combined with --proxy" in result.output


def test_a_dev_runs_own_folder_is_never_packaged(tmp_path: Path) -> None:
    # `blockkit dev` keeps its trace and the local platform's data (with its signing key) in DIR/.blockkit.
    from blockkit.bundle.package import build_package

    block = working_tree(tmp_path, "packaged-one")
    (block / ".blockkit" / "emulator").mkdir(parents=True)
    (block / ".blockkit" / "emulator" / "block-token-key.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    (block / ".blockkit" / "dev-trace.jsonl").write_text("{}\n")
    with zipfile.ZipFile(io.BytesIO(build_package(block))) as archive:
        assert archive.namelist() == ["block.manifest.json", "index.html"]


def test_a_block_id_the_platform_refuses_is_one_line(tmp_path: Path) -> None:
    block = working_tree(tmp_path, "../../escape")
    with pytest.raises(DevError, match="is not one the platform accepts"):
        prepare_approved(block, tmp_path / "data")


def test_a_real_npm_build_of_the_approved_bundle(tmp_path: Path) -> None:
    # npm itself: `npm ci` from a lockfile with no dependencies needs no network, then `npm run build`.
    import shutil

    assert shutil.which("npm"), "npm is needed for this test (it is on the CI image)"
    package = {"name": "real-built", "version": "1.0.0", "private": True,
               "scripts": {"build": "node build.js"}}
    lock = {"name": "real-built", "version": "1.0.0", "lockfileVersion": 3, "requires": True,
            "packages": {"": {"name": "real-built", "version": "1.0.0"}}}
    build_js = ("const fs = require('fs'); fs.mkdirSync('dist', {recursive: true});"
                " fs.writeFileSync('dist/index.html', '<p>built by npm</p>');")
    data = tmp_path / "data"
    approve(data, zipped({"block.manifest.json": manifest("real-built", buildCommand="npm run build",
                                                          outputDir="dist"),
                          "package.json": json.dumps(package), "package-lock.json": json.dumps(lock),
                          "build.js": build_js}))
    source, _ = prepare_approved(working_tree(tmp_path, "real-built"), data)
    assert (source / "dist" / "index.html").read_text() == "<p>built by npm</p>"

"""``blockkit dev --approved``: run the block's approved version from a local platform's store.

The working tree names the block (its manifest's ``blockId``); the local platform's data directory
(``--data``) holds the approved publish request and its bundle. The bundle is unpacked with the
bundle module's capped, traversal-proof reader into ``<data>/approved/<blockId>/<request id>/``,
and for a block with a ``buildCommand`` built there as the platform builds it: the package
manager's frozen install from the bundle's lockfile, then the build command. The dev host then
serves that folder (its ``outputDir`` when set) instead of the working tree.

A version already unpacked (and built) is reused: a request's bundle never changes once approved.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from pathlib import Path

from blockkit.dev.errors import DevError
from blockkit.platform import MANIFEST_FILENAME

CACHE_DIR = "approved"
SOURCE_DIR = "src"
READY_MARKER = ".ready"
# How long the frozen install and the build may each take.
BUILD_TIMEOUT_S = 900


def working_block_id(block_dir: Path) -> str:
    path = block_dir / MANIFEST_FILENAME
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DevError(f"no {MANIFEST_FILENAME} in {block_dir}: --approved reads the blockId from it") from None
    except (OSError, ValueError) as exc:
        raise DevError(f"{path}: cannot read the blockId: {exc}") from None
    block_id = manifest.get("blockId") if isinstance(manifest, dict) else None
    if not isinstance(block_id, str) or not block_id:
        raise DevError(f"{path}: no blockId; --approved serves the approved version of the block it names")
    return block_id


def prepare_approved(block_dir: Path, data_dir: Path) -> tuple[Path, str]:
    """The folder to serve the approved version from (unpacked, built), and a line saying which."""
    from blockkit.bundle.extract import BundleExtractError, extract_bundle
    from blockkit.emulator.errors import EmulatorError
    from blockkit.emulator.services.publish_requests import approved_bundle
    from blockkit.emulator.store import DB_FILENAME, Store

    from blockkit.emulator.services.publish_requests import SLUG_REGEX

    block_id = working_block_id(block_dir)
    if not SLUG_REGEX.fullmatch(block_id) or len(block_id) > 40:
        raise DevError(f"{block_dir / MANIFEST_FILENAME}: blockId {block_id!r} is not one the platform accepts, so "
                       "it has no approved version")
    if not (data_dir / DB_FILENAME).is_file():
        raise DevError(f"{data_dir}: no local platform data here (--data names the directory "
                       "'blockkit emulator start --data' used)")
    try:
        with Store.open(data_dir, check=False) as store:
            served = approved_bundle(store, block_id)
    except EmulatorError as exc:
        raise DevError(f"{data_dir}: {exc}") from None
    if served is None:
        raise DevError(f"no approved version of {block_id} in {data_dir}: submit it (blockkit submit) and approve it "
                       "(blockkit emulator submissions approve ID --data DIR) first")
    request, bundle = served
    home = data_dir / CACHE_DIR / block_id / request.id
    source = home / SOURCE_DIR
    label = f"approved {block_id} {request.version} ({request.id})"
    if (home / READY_MARKER).is_file() and source.is_dir():
        return source, label
    if home.exists():
        shutil.rmtree(home)  # an earlier run stopped half-way (its build failed): start again
    home.mkdir(parents=True)
    try:
        extract_bundle(bundle, source)
    except BundleExtractError as exc:
        raise DevError(f"{label}: {exc}") from None
    _build(source, label)
    (home / READY_MARKER).write_text(request.id + "\n", encoding="utf-8")
    return source, label


def _manifest_of(source: Path) -> dict[str, object]:
    try:
        manifest = json.loads((source / MANIFEST_FILENAME).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DevError(f"the approved bundle's {MANIFEST_FILENAME} cannot be read: {exc}") from None
    return manifest if isinstance(manifest, dict) else {}


def build_steps(source: Path, build_command: str) -> list[list[str]]:
    """The frozen install the platform runs, then the build command, as argument lists."""
    from blockkit.platform import LOCKFILES
    from blockkit.scaffold.package_managers import PACKAGE_MANAGERS

    try:
        build = shlex.split(build_command)
    except ValueError as exc:
        raise DevError(f"buildCommand {build_command!r} cannot be read: {exc}") from None
    if not build:
        raise DevError("buildCommand is empty")
    tool = build[0]
    manager = PACKAGE_MANAGERS.get(tool)
    if manager is None:
        # npx, vite or another tool: the lockfile present says which manager installs.
        present = [name for name, pm in PACKAGE_MANAGERS.items() if (source / pm.lockfile).is_file()]
        if tool in LOCKFILES and (source / LOCKFILES[tool]).is_file():
            present = ["npm"]
        manager = PACKAGE_MANAGERS[present[0]] if present else None
    steps: list[list[str]] = []
    if manager is not None:
        if not (source / manager.lockfile).is_file():
            raise DevError(f"the approved bundle has no {manager.lockfile}: the platform's frozen install "
                           f"({manager.frozen_install}) fails without it")
        steps.append(shlex.split(manager.frozen_install))
    elif (source / "package.json").is_file():
        raise DevError("the approved bundle has a package.json but no lockfile: the platform's frozen install fails")
    steps.append(build)
    return steps


def _build(source: Path, label: str) -> None:
    manifest = _manifest_of(source)
    build_command = manifest.get("buildCommand")
    if not isinstance(build_command, str) or not build_command.strip():
        return  # a static block: its files are served as they are
    for step in build_steps(source, build_command):
        shown = " ".join(step)
        executable = shutil.which(step[0])
        if executable is None:
            raise DevError(f"{label}: cannot build: {step[0]} is not on PATH (needed for `{shown}`)")
        try:
            done = subprocess.run([executable, *step[1:]], cwd=source, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, errors="replace", timeout=BUILD_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise DevError(f"{label}: the build failed: `{shown}` ran past {BUILD_TIMEOUT_S} s") from None
        except OSError as exc:
            raise DevError(f"{label}: the build failed: `{shown}`: {exc.strerror or exc}") from None
        if done.returncode != 0:
            lines = [line.strip() for line in (done.stderr or done.stdout or "").splitlines() if line.strip()]
            last = f": {lines[-1][:200]}" if lines else ""
            raise DevError(f"{label}: the build failed: `{shown}` exited {done.returncode}{last}")

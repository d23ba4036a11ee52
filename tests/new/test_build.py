"""The built templates install from their lockfiles and build with the real package
managers, and the result answers the host's handshake in a real browser."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from new_helpers import BLOCKKIT, invoke, subprocess_env

from blockkit.scaffold.package_managers import PACKAGE_MANAGERS

BRIDGE_ID = "blockkit-bridge/1"  # a string the bridge sends, so it survives minifying

# One scaffold per package manager, each exercising different optional code paths.
BUILDS = {
    "npm": ["--surface", "page"],
    "pnpm": ["--surface", "model.sidebar_top", "--goods"],
    "yarn": ["--surface", "page", "--goods", "--auth", "oauth", "--tagline", "Built by yarn"],
}

pytestmark = pytest.mark.skipif(shutil.which("npm") is None, reason="needs node and npm")


def _tool(manager: str) -> list[str]:
    pinned = PACKAGE_MANAGERS[manager].package_manager_field
    if pinned is None:
        return [manager]
    # The exact version package.json pins, fetched from the npm registry like any package.
    return ["npm", "exec", "--yes", f"--package={pinned}", "--", manager]


def _run(command: list[str], cwd: Path) -> None:
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{' '.join(command)} failed:\n{result.stdout}\n{result.stderr}"


def _install_and_build(block: Path, manager: str) -> None:
    frozen = PACKAGE_MANAGERS[manager].frozen_install.split()[1:]
    install = ["ci", "--prefer-offline", "--no-audit", "--no-fund"] if manager == "npm" else frozen
    lockfile = block / PACKAGE_MANAGERS[manager].lockfile
    before = lockfile.read_bytes()
    _run([*_tool(manager), *install], block)
    assert lockfile.read_bytes() == before, "the install changed the shipped lockfile"
    _run([*_tool(manager), "run", "build"], block)


def _scaffold(tmp_path: Path, *args: str) -> Path:
    block = tmp_path / "built-block"
    result = invoke([str(block), "--defaults", *args])
    assert result.exit_code == 0, result.output
    return block


@pytest.mark.slow
@pytest.mark.parametrize("manager", list(BUILDS))
@pytest.mark.parametrize("template", ["vite", "react"])
def test_real_install_and_build(tmp_path: Path, template: str, manager: str) -> None:
    block = _scaffold(tmp_path, "--template", template, "--package-manager", manager, *BUILDS[manager])
    _install_and_build(block, manager)
    dist = block / "dist"
    html = (dist / "index.html").read_text()
    assert 'id="root"' in html and "boot-skeleton" in html
    bundle = "".join(p.read_text() for p in (dist / "assets").glob("*.js"))
    assert BRIDGE_ID in bundle and "BLOCK_READY" in bundle
    # The two real calls every scaffold makes survive the build.
    assert "GET_VIEWER" in bundle and "/api/v1/blocks/models" in bundle


def _browser_ready() -> bool:
    try:
        from blockkit.dev.browser import require_browser  # noqa: F401
    except ImportError:
        return False
    return shutil.which("chromium") is not None


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(not _browser_ready(), reason="needs blockkit dev and Debian's chromium")
@pytest.mark.parametrize(
    "template, surface",
    [("static", "page"), ("static", "model.actions_extra"), ("vite", "page"), ("react", "model.below_images")],
)
def test_scaffold_completes_the_host_handshake(tmp_path: Path, template: str, surface: str) -> None:
    block = _scaffold(tmp_path, "--template", template, "--surface", surface)
    if template != "static":
        _install_and_build(block, "npm")
    result = subprocess.run(
        [*BLOCKKIT, "dev", str(block), "--check"],
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "handshake completed" in result.stdout

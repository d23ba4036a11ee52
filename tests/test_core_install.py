"""The core install is lean: a wheel of blockkit in a fresh venv brings none of the local platform's
packages, still validates, and a local-platform command says in one line which install brings it."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# Distributions that belong to the server extra (or are pulled in only by it) and must not come
# with `pip install blockkit`.
SERVER_ONLY = {"starlette", "uvicorn", "websockets", "pillow", "oauthlib", "joserfc", "jsonpatch", "jsonpointer",
               "anyio", "h11", "av", "playwright"}


@pytest.fixture(scope="module")
def core_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("core")
    wheels = root / "wheels"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(wheels), str(REPO)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    wheel = next(wheels.glob("blockkit-*.whl"))
    env_dir = root / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                              str(wheel)], capture_output=True, text=True, timeout=600)
    if install.returncode != 0 and "No matching distribution" in install.stderr:
        pytest.skip(f"the package index is not reachable: {install.stderr.strip().splitlines()[-1]}")
    assert install.returncode == 0, install.stderr
    return env_dir


def installed(env_dir: Path) -> set[str]:
    out = subprocess.run([str(env_dir / "bin" / "python"), "-m", "pip", "list", "--format", "freeze",
                          "--disable-pip-version-check"], capture_output=True, text=True, check=True).stdout
    return {line.split("==")[0].lower().replace("_", "-") for line in out.splitlines() if "==" in line}


def test_core_install_brings_none_of_the_local_platform(core_venv: Path) -> None:
    present = installed(core_venv)
    assert "blockkit" in present
    assert not (present & SERVER_ONLY), sorted(present & SERVER_ONLY)


def test_core_install_validates_and_lints(core_venv: Path) -> None:
    blockkit = core_venv / "bin" / "blockkit"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    for command in ("validate", "lint"):
        result = subprocess.run([str(blockkit), command, str(REPO / "examples" / "hello-block")],
                                capture_output=True, text=True, env=env, timeout=120)
        assert result.returncode == 0, (command, result.stdout, result.stderr)


@pytest.mark.parametrize("command", [["emulator", "start"], ["emulator", "users"], ["dev", "."]])
def test_a_local_platform_command_names_the_extra(core_venv: Path, command: list[str], tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run([str(core_venv / "bin" / "blockkit"), *command], capture_output=True, text=True,
                            env=env, timeout=120, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "pip install 'blockkit[server]'" in lines[0]
    assert "Traceback" not in result.stderr


def test_lsp_names_its_extra_and_the_core_install_brings_no_lsp_packages(core_venv: Path, tmp_path: Path) -> None:
    assert not (installed(core_venv) & {"pygls", "lsprotocol", "cattrs"})
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run([str(core_venv / "bin" / "blockkit"), "lsp"], capture_output=True, text=True,
                            env=env, timeout=120, cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        "blockkit: error: blockkit lsp needs pygls and lsprotocol: pip install 'blockkit[lsp]'"]

"""The VS Code extension in editors/vscode builds into a .vsix that holds it and its client library."""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from lsp_helpers import REPO  # type: ignore[import-not-found]

EXTENSION = REPO / "editors" / "vscode"


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_vsce_packages_the_extension(tmp_path: Path) -> None:
    npm, npx, node = shutil.which("npm"), shutil.which("npx"), shutil.which("node")
    if npm is None or npx is None or node is None:
        pytest.skip("npm is not installed")
    work = tmp_path / "vscode"
    shutil.copytree(EXTENSION, work, ignore=shutil.ignore_patterns("node_modules", "*.vsix"))
    subprocess.run([node, "--check", "extension.js"], cwd=work, check=True, timeout=60)
    subprocess.run([npm, "install", "--no-audit", "--no-fund"], cwd=work, check=True, timeout=600,
                   capture_output=True)
    subprocess.run([npx, "vsce", "package", "--allow-missing-repository", "-o", "blockkit.vsix"], cwd=work,
                   check=True, timeout=300, capture_output=True)
    vsix = work / "blockkit.vsix"
    assert vsix.is_file()
    with zipfile.ZipFile(vsix) as archive:
        names = set(archive.namelist())
        manifest = json.loads(archive.read("extension/package.json"))
        script = archive.read("extension/extension.js").decode("utf-8")
    assert manifest["main"] == "./extension.js" and manifest["name"] == "blockkit"
    assert "'lsp'" in script and "vscode-languageclient/node" in script
    assert "extension/node_modules/vscode-languageclient/node.js" in names
    assert not any(name.startswith("extension/node_modules/@vscode/vsce/") for name in names)  # a dev tool

"""Every template x surface x package manager x goods/oauth combination writes a
block whose manifest the platform accepts, with the files that make it run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from new_helpers import combinations, invoke, new_args

import blockkit
from blockkit.platform import (
    GOODS_PURCHASE_SCOPE,
    GOODS_READ_SCOPE,
    LOCKFILES,
    OAUTH_USER_SCOPE,
    SCHEMA_ID,
)
from blockkit.scaffold.render import LOCKFILE_NAME_PLACEHOLDER

LOCKFILE_NAMES = set(LOCKFILES.values())


@pytest.mark.parametrize("template, surface, manager, extra", combinations())
def test_combination_validates_and_is_complete(
    tmp_path: Path, template: str, surface: str, manager: str | None, extra: str
) -> None:
    block = tmp_path / "combo-block"
    result = invoke([str(block), *new_args(template, surface, manager, extra)])
    assert result.exit_code == 0, result.output

    report = blockkit.validate_file(block / "block.manifest.json")
    assert report.files[0].findings == []

    manifest = json.loads((block / "block.manifest.json").read_text())
    assert manifest["$schema"] == SCHEMA_ID
    assert manifest["iframe"] == {
        "minHeight": manifest["iframe"]["minHeight"],
        "maxHeight": manifest["iframe"]["maxHeight"],
        "resizable": manifest["iframe"]["resizable"],
        "sandbox": "allow-scripts allow-forms",
    }
    if surface == "page":
        assert "page" in manifest and "targets" not in manifest
    else:
        assert manifest["targets"] == [{"slotId": surface}] and "page" not in manifest
        assert manifest["iframe"]["resizable"] is True
    if "goods" in extra:
        assert {GOODS_PURCHASE_SCOPE, GOODS_READ_SCOPE} <= set(manifest["scopes"])
        assert manifest["scopeJustifications"][GOODS_PURCHASE_SCOPE].strip()
        assert manifest["goods"]
    if "oauth" in extra:
        assert manifest["auth"] == "oauth"
    # Every template's code asks for the viewer (GET_VIEWER), which needs user:read:self.
    code = block / {"static": "app.js", "vite": "src/main.ts", "react": "src/App.tsx"}[template]
    assert "getViewer()" in code.read_text() and OAUTH_USER_SCOPE in manifest["scopes"]

    html = (block / "index.html").read_text()
    assert re.search(r'<div id="root">\s*<div class="boot-skeleton"', html)
    code_dir = block if template == "static" else block / "src"
    bridge = (code_dir / "bridge.js").read_text()
    for message in ("BLOCK_INIT", "BLOCK_READY", "TOKEN_REFRESH", "THEME_CHANGE", "REQUEST_TOKEN", "RESIZE_IFRAME"):
        assert message in bridge
    for name in (".gitignore", ".pre-commit-config.yaml", "README.md", "blockkit.toml"):
        assert (block / name).is_file(), name

    lockfiles = {p.name for p in block.iterdir()} & LOCKFILE_NAMES
    if template == "static":
        assert "buildCommand" not in manifest and not lockfiles
        assert not (block / "package.json").exists()
        return
    assert manifest["buildCommand"] == f"{manager} run build" and manifest["outputDir"] == "dist"
    assert lockfiles == {LOCKFILES[manager]}
    lockfile = (block / LOCKFILES[manager]).read_text()
    assert LOCKFILE_NAME_PLACEHOLDER not in lockfile
    package = json.loads((block / "package.json").read_text())
    assert package["name"] == manifest["blockId"]
    assert all(re.fullmatch(r"\d+\.\d+\.\d+", v) for v in package["devDependencies"].values()), "pin versions"
    assert ("packageManager" in package) == (manager != "npm")
    assert "base: '/'" in (block / "vite.config.ts").read_text()


def _lint(block: Path) -> list[dict[str, str]]:
    """Every finding of every layer, lint included, from the real `blockkit lint --format json`."""
    from click.testing import CliRunner

    from blockkit.commands.lint import command as lint

    result = CliRunner().invoke(lint, ["--format", "json", str(block)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return [
        {"severity": d["severity"], "pointer": d["pointer"], "code": d["code"], "message": d["message"]}
        for d in json.loads(result.output)["files"][0]["diagnostics"]
    ]


@pytest.mark.parametrize("template, surface, manager, extra", combinations())
def test_combination_lints_clean(tmp_path: Path, template: str, surface: str, manager: str | None, extra: str) -> None:
    block = tmp_path / "combo-block"
    assert invoke([str(block), *new_args(template, surface, manager, extra)]).exit_code == 0
    # No findings at all, of any severity. On a model slot the moderator-only advice
    # (BK310) is recorded once as an exception, with its reason, in blockkit.toml.
    assert _lint(block) == []


def test_model_slot_advice_is_an_explicit_exception(tmp_path: Path) -> None:
    import tomllib

    block = tmp_path / "slot-block"
    assert invoke([str(block), *new_args("static", "model.sidebar_top", None, "plain")]).exit_code == 0
    table = tomllib.loads((block / "blockkit.toml").read_text())
    (entry,) = table["exceptions"]
    assert entry["pointer"] == "/targets/0/slotId" and entry["codes"] == ["BK310"] and "moderators" in entry["reason"]
    # Without the exception, lint gives exactly that advice and nothing else.
    del table["exceptions"]
    import tomli_w

    (block / "blockkit.toml").write_text(tomli_w.dumps(table))
    from click.testing import CliRunner

    from blockkit.commands.lint import command as lint

    result = CliRunner().invoke(lint, ["--format", "json", str(block)], catch_exceptions=False)
    codes = [d["code"] for d in json.loads(result.output)["files"][0]["diagnostics"]]
    assert codes == ["BK310"]

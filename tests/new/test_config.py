"""blockkit.toml as `blockkit new` writes and rewrites it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

from click.testing import Result

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

RunNew = Callable[..., Result]


def test_rerun_keeps_the_developers_comments_and_settings(tmp_path: Path, run_new: RunNew) -> None:
    block = tmp_path / "commented"
    assert run_new(block, "--defaults").exit_code == 0
    config = block / "blockkit.toml"
    mine = '# Our lint policy, agreed in review.\nignore = ["BK312"]  # see ADR-7\n\n'
    config.write_text(mine + config.read_text())
    assert run_new(block, "--force", "--tagline", "A tagline now").exit_code == 0
    text = config.read_text()
    assert text.startswith(mine)
    table = tomllib.loads(text)
    assert table["ignore"] == ["BK312"]
    assert table["scaffold"]["answers"]["tagline"] == "A tagline now"


def test_blockkit_toml_says_where_settings_go(tmp_path: Path, run_new: RunNew) -> None:
    block = tmp_path / "guided"
    assert run_new(block, "--defaults").exit_code == 0
    text = (block / "blockkit.toml").read_text()
    # A key written below a [table] header belongs to that table; the file says so before the first one.
    header = text[: text.index("[context]")]
    assert "above" in header and "ignore" in header
    assert "rewritten by `blockkit new" in text[: text.index("\n[scaffold]\n")]

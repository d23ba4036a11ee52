"""Every scaffold carries an AGENTS.md that tells a coding agent how to check its work (issue 34, item 6)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from blockkit.cli import COMMANDS

TEMPLATE_NAMES = ("static", "vite", "react", "generation")


def _commands_of(agents: str) -> list[str]:
    block = re.search(r"```sh\n(.*?)```", agents, re.S)
    assert block, agents
    return [line.strip() for line in block.group(1).splitlines() if line.strip()]


@pytest.mark.parametrize("template", TEMPLATE_NAMES)
def test_each_template_writes_agents_md_naming_the_checks(tmp_path: Path, run_new: Any, template: str) -> None:
    block = tmp_path / template
    assert run_new(block, "--defaults", "--name", "Agent Demo", "--template", template,
                   "--content-rating", "g").exit_code == 0
    agents = (block / "AGENTS.md").read_text()
    commands = _commands_of(agents)
    assert commands[-3:] == ["blockkit lint", "blockkit dev --check", "blockkit package"]
    # Each blockkit command it names is one the CLI has.
    for line in commands:
        words = line.split()
        if words[0] == "blockkit":
            assert words[1] in COMMANDS, line
    manifest = (block / "block.manifest.json").read_text()
    assert '"blockId": "agent-demo"' in manifest
    bridge = re.search(r"only through `([^`]+)`", agents)
    assert bridge and (block / bridge.group(1)).is_file(), agents
    if template != "static" and template != "generation":
        lockfile = re.search(r"commit `([^`]+)`", agents)
        assert lockfile and (block / lockfile.group(1)).is_file(), agents


def test_the_static_scaffold_passes_the_checks_it_names(tmp_path: Path, run_new: Any) -> None:
    block = tmp_path / "static"
    assert run_new(block, "--defaults", "--name", "Agent Demo", "--template", "static",
                   "--content-rating", "g").exit_code == 0
    for line in _commands_of((block / "AGENTS.md").read_text()):
        if line == "blockkit dev --check":
            continue  # a browser run: the template tests run --check on every scaffold
        done = subprocess.run([sys.executable, "-m", "blockkit", *line.split()[1:]], cwd=block,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (line, done.stdout, done.stderr)
    # `blockkit package` without --out writes no file.
    assert not list(block.glob("*.zip"))

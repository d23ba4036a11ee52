"""The command line's own promises: a bug of ours never shows a traceback, and config errors exit 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from blockkit.cli import _Group

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "hello-block" / "block.manifest.json"


class _LocalGroup(_Group):
    """blockkit's group behaviour, with commands registered here instead of the lazy table."""

    get_command = click.Group.get_command
    list_commands = click.Group.list_commands


def _group_with_a_failing_command() -> click.Group:
    @click.group(cls=_LocalGroup)
    def group() -> None:
        pass

    @group.command("boom")
    def boom() -> None:
        raise RuntimeError("rule table is empty")

    @group.command("usage")
    @click.argument("count", type=int)
    def usage(count: int) -> None:
        pass

    return group


def test_an_unexpected_exception_is_one_line_and_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BLOCKKIT_DEBUG", raising=False)
    result = CliRunner().invoke(_group_with_a_failing_command(), ["boom"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "blockkit: internal error: RuntimeError: rule table is empty (a bug in blockkit; please report it,"
        " with the traceback that BLOCKKIT_DEBUG=1 shows)"
    ]


def test_blockkit_debug_shows_the_exception(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BLOCKKIT_DEBUG", "1")
    result = CliRunner().invoke(_group_with_a_failing_command(), ["boom"])
    assert isinstance(result.exception, RuntimeError)


def test_usage_errors_still_come_from_click(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BLOCKKIT_DEBUG", raising=False)
    result = CliRunner().invoke(_group_with_a_failing_command(), ["usage", "many"])
    assert result.exit_code == 2
    assert "internal error" not in result.output and "'many' is not a valid integer" in result.output


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("blockkit.toml", b'tier = "caf\xe9"\n', "blockkit.toml: invalid TOML: not UTF-8 (byte 11)"),
        ("pyproject.toml", b'tool = "x"\n', None),
        ("pyproject.toml", b"[tool]\nblockkit = 3\n", "pyproject.toml: [tool.blockkit] must be a table"),
    ],
    ids=["not-utf8", "tool-not-a-table", "tool-blockkit-not-a-table"],
)
def test_a_bad_config_file_is_one_line_and_exit_2(tmp_path: Path, name: str, content: bytes,
                                                   message: str | None) -> None:
    (tmp_path / "block.manifest.json").write_bytes(EXAMPLE.read_bytes())
    (tmp_path / name).write_bytes(content)
    result = subprocess.run([sys.executable, "-m", "blockkit.cli", "validate"], cwd=tmp_path,
                            capture_output=True, text=True)
    assert "Traceback" not in result.stderr
    if message is None:  # no [tool.blockkit] at all: the defaults apply
        assert result.returncode == 0, result.stderr
    else:
        assert result.returncode == 2
        assert result.stderr.strip().splitlines() == [f"blockkit: error: {message}"]

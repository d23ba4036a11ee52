"""A mistyped command gets a suggestion (issue 21: `blockkit valdiate` said only "No such command")."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from blockkit.cli import main


@pytest.mark.parametrize("typed, meant", [("valdiate", "validate"), ("lnit", "lint"), ("emulatr", "emulator"),
                                          ("rule", "rules")])
def test_a_mistyped_command_gets_a_suggestion(typed: str, meant: str) -> None:
    result = CliRunner().invoke(main, [typed, "x"])
    assert result.exit_code == 2
    assert f"No such command {typed!r}. Did you mean {meant!r}?" in result.output


def test_a_command_like_nothing_gets_none() -> None:
    result = CliRunner().invoke(main, ["frobnicate"])
    assert result.exit_code == 2
    assert "No such command 'frobnicate'." in result.output and "Did you mean" not in result.output

"""The rough edges a new user hit in `blockkit new` (issue 21)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from new_helpers import invoke

from blockkit.scaffold import options as o


@pytest.mark.parametrize("template", ["vite", "react"])
@pytest.mark.parametrize("manager", ["npm", "pnpm", "yarn"])
def test_the_scaffolded_package_json_is_formatted_as_json_dumps_would(tmp_path: Path, template: str,
                                                                        manager: str) -> None:
    # It had `"type": "module",  "scripts": {` on one line.
    result = invoke([str(tmp_path / "b"), "--defaults", "--name", "Tidy Block", "--template", template,
                     "--package-manager", manager])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "b" / "package.json").read_text()
    assert text == json.dumps(json.loads(text), indent=2) + "\n"


@pytest.mark.parametrize("option, wrong, meant", [
    ("--content-rating", "PG-13", "pg13"),
    ("--content-rating", "pg-13", "pg13"),
    ("--category", "game", "games"),
    ("--category", "utilty", "utility"),
    ("--template", "Reactt", "react"),
])
def test_a_near_miss_choice_flag_says_what_it_probably_meant(tmp_path: Path, option: str, wrong: str,
                                                             meant: str) -> None:
    from blockkit.commands.new import command

    result = CliRunner().invoke(command, [str(tmp_path / "b"), "--defaults", "--name", "Near Miss", option, wrong])
    assert result.exit_code == 2
    assert f"Did you mean {meant!r}?" in result.output


def test_choice_flags_take_any_case(tmp_path: Path) -> None:
    result = invoke([str(tmp_path / "b"), "--defaults", "--name", "Any Case", "--template", "static",
                     "--content-rating", "PG13", "--category", "Games"])
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "b" / "block.manifest.json").read_text())
    assert manifest["contentRating"] == "pg13" and manifest["category"] == "games"


@pytest.mark.parametrize("parse, wrong, meant", [
    (o.parse_content_rating, "PG-13", "pg13"),
    (o.parse_category, "game", "games"),
    (o.parse_template, "vte", "vite"),
])
def test_a_near_miss_at_the_prompt_says_what_it_probably_meant(parse: object, wrong: str, meant: str) -> None:
    with pytest.raises(o.AnswerError, match=f"did you mean {meant!r}"):
        parse(wrong)  # type: ignore[operator]


def test_nothing_close_gets_no_guess() -> None:
    assert o.did_you_mean("zzzz", ("g", "pg", "pg13", "r", "x")) is None


def test_no_input_without_a_name_names_the_missing_name(tmp_path: Path) -> None:
    # `new x1 --no-input` complained that 'x1' makes no blockId, a name the user never gave.
    result = invoke([str(tmp_path / "x1"), "--no-input"])
    assert result.exit_code == 2
    assert "missing answers (with --no-input)" in result.output
    assert "--name NAME" in result.output
    assert "blockId" not in result.output
    assert not (tmp_path / "x1").exists()


def test_a_name_that_makes_no_block_id_still_says_so(tmp_path: Path) -> None:
    result = invoke([str(tmp_path / "x1"), "--no-input", "--name", "X1", "--template", "static",
                     "--content-rating", "g"])
    assert result.exit_code == 2
    assert "cannot derive a blockId from the name 'X1'" in result.output

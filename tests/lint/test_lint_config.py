"""Lint settings in blockkit.toml / [tool.blockkit]: what they change, and what they may not touch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lint_helpers import clean, invoke, write_project

# Two lint findings (a stale appId, a model-slot target) and nothing else.
LEGACY = clean(appId="123", page=..., targets=[{"slotId": "model.sidebar_top"}])


def project(tmp_path: Path, config: str, manifest=LEGACY, name: str = "blockkit.toml") -> Path:
    write_project(tmp_path, manifest)
    (tmp_path / name).write_text(config, encoding="utf-8")
    return tmp_path


def lint_json(folder: Path, *args: str):
    result = invoke("lint", str(folder), "--format", "json", *args)
    document = json.loads(result.stdout) if result.stdout.strip() else None
    return result, document


def diagnostics(document) -> list[tuple[str, str]]:
    return [(d["code"], d["pointer"]) for file in document["files"] for d in file["diagnostics"]]


def test_without_settings_every_lint_finding_shows(tmp_path: Path) -> None:
    result, document = lint_json(project(tmp_path, ""))
    assert result.exit_code == 0
    assert diagnostics(document) == [("BK301", "/appId"), ("BK310", "/targets/0/slotId")]


@pytest.mark.parametrize("config, expected", [
    ('ignore = ["BK310"]', [("BK301", "/appId")]),
    ('ignore = ["BK3"]', []),
    ('select = ["BK31"]', [("BK310", "/targets/0/slotId")]),
    ('select = ["bk301"]', [("BK301", "/appId")]),  # codes are read case-insensitively
    ('[per-file-ignores]\n"block.manifest.json" = ["BK301"]', [("BK310", "/targets/0/slotId")]),
    ('[per-file-ignores]\n"legacy/**" = ["BK301"]', [("BK301", "/appId"), ("BK310", "/targets/0/slotId")]),
])
def test_select_ignore_and_per_file_ignores(tmp_path: Path, config: str, expected) -> None:
    result, document = lint_json(project(tmp_path, config))
    assert result.exit_code == 0, result.stderr
    assert diagnostics(document) == expected


def test_per_file_ignores_match_paths_relative_to_the_config(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.blockkit.per-file-ignores]\n"apps/old/*" = ["BK301"]\n')
    write_project(tmp_path / "apps" / "old", LEGACY)
    write_project(tmp_path / "apps" / "new", LEGACY)
    result, document = lint_json(tmp_path / "apps")
    by_file = {Path(f["path"]).parent.name: [d["code"] for d in f["diagnostics"]] for f in document["files"]}
    assert by_file == {"new": ["BK301", "BK310"], "old": ["BK310"]}


def test_severity_override_can_make_lint_fail(tmp_path: Path) -> None:
    result, document = lint_json(project(tmp_path, '[severity]\nBK301 = "error"\nBK310 = "warning"'))
    assert result.exit_code == 1
    severities = {d["code"]: d["severity"] for d in document["files"][0]["diagnostics"]}
    assert severities == {"BK301": "error", "BK310": "warning"}


def test_settings_never_touch_platform_findings(tmp_path: Path) -> None:
    # select lists one lint rule: the platform's errors are reported all the same.
    manifest = dict(LEGACY, scopes=["ai:write:budgeted"])
    result, document = lint_json(project(tmp_path, 'select = ["BK301"]\nignore = ["BK310"]', manifest))
    assert result.exit_code == 1
    assert ("BK203", "/scopes/0") in diagnostics(document)


@pytest.mark.parametrize("config, says", [
    ('ignore = ["BK203"]', "selects no lint rule"),
    ('select = ["BK1"]', "cannot be ignored"),
    ('[per-file-ignores]\n"*" = ["BK0"]', "selects no lint rule"),
    ('[severity]\nBK101 = "warning"', "keep the platform's severity"),
    ('[severity]\nBK301 = "fatal"', "must be one of error, warning, info"),
    ('[severity]\nBK399 = "info"', "is not a lint rule"),
    ('ignore = ["E501"]', "is not a rule code or prefix"),
    ('ignore = "BK3"\nselct = ["BK3"]', "unknown key 'selct' in blockkit.toml; did you mean 'select'?"),
    ('[context]\ntier = "verified"\ntiers = "x"', "unknown key 'tiers' in [context]"),
    ('[[exceptions]]\npointer = "/appId"\ncodes = ["BK301"]', "'reason' is required"),
    ('[[exceptions]]\npointer = "appId"\ncodes = ["BK301"]\nreason = "x"', "must be a JSON Pointer"),
    ('[[exceptions]]\npointer = "/appId"\nreason = "x"', "'codes' is required"),
    ('[[exceptions]]\npointer = "/scopes/0"\ncodes = ["BK203"]\nreason = "x"', "selects no lint rule"),
    ('[[exceptions]]\npointer = "/appId"\ncodes = ["BK301"]\nreason = "x"\nnote = "y"',
     "unknown key 'note' in exceptions[0]"),
    ("exceptions = 3", "must be an array of tables"),
    ("select = [", "invalid TOML"),
])
def test_bad_settings_are_exit_2_with_one_clear_line(tmp_path: Path, config: str, says: str) -> None:
    result = invoke("lint", str(project(tmp_path, config)))
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("blockkit: error: ") and str(tmp_path / "blockkit.toml") in line
    assert says in line, line


def test_the_blockkit_toml_that_new_writes_is_accepted(tmp_path: Path) -> None:
    config = ('[context]\ntier = "unverified"\nallowed-origins = ["https://demo-block.civit.ai"]\n\n'
              '[dev]\nport = 5173\n\n[scaffold]\ntemplate = "static"\n\n[scaffold.answers]\nname = "Demo"\n')
    result, _ = lint_json(project(tmp_path, config))
    assert result.exit_code == 0, result.stderr


# --- exceptions -----------------------------------------------------------------------

EXCEPTION = '[[exceptions]]\npointer = "{pointer}"\ncodes = ["{code}"]\nreason = "kept on purpose"\n'


def test_an_exception_excuses_its_pointer_and_below(tmp_path: Path) -> None:
    config = EXCEPTION.format(pointer="/appId", code="BK301") + EXCEPTION.format(pointer="/targets", code="BK31")
    result, document = lint_json(project(tmp_path, config))
    assert result.exit_code == 0 and diagnostics(document) == []


def test_an_exception_for_another_code_or_pointer_excuses_nothing(tmp_path: Path) -> None:
    config = EXCEPTION.format(pointer="/appId", code="BK310")
    result, document = lint_json(project(tmp_path, config))
    assert ("BK301", "/appId") in diagnostics(document)


def test_an_unused_exception_is_reported_at_its_entry(tmp_path: Path) -> None:
    config = ('ignore = ["BK310"]\n\n' + EXCEPTION.format(pointer="/appId", code="BK301") + "\n"
              + EXCEPTION.format(pointer="/settings", code="BK301"))
    result, document = lint_json(project(tmp_path, config), "--strict")
    assert result.exit_code == 1  # a warning, so --strict fails
    (config_file,) = [f for f in document["files"] if f["path"].endswith("blockkit.toml")]
    (finding,) = config_file["diagnostics"]
    assert finding["code"] == "BK390" and finding["pointer"] == "/exceptions/1"
    assert finding["line"] == 8 and finding["column"] == 1  # the second [[exceptions]] header
    assert "/settings" in finding["message"]


def test_unused_exception_in_pyproject_points_into_tool_blockkit(tmp_path: Path) -> None:
    config = ('[project]\nname = "x"\n\n[tool.blockkit]\nignore = ["BK310"]\n\n'
              '[[tool.blockkit.exceptions]]\npointer = "/gone"\ncodes = ["BK301"]\nreason = "old"\n')
    result = invoke("lint", str(project(tmp_path, config, name="pyproject.toml")))
    assert result.exit_code == 0
    assert "pyproject.toml:7:1: BK390 [warning] exception for /gone (BK301) matches no finding" in result.stdout


def test_an_exception_with_a_path_is_judged_only_where_it_applies(tmp_path: Path) -> None:
    config = ('ignore = ["BK310"]\n' + EXCEPTION.format(pointer="/appId", code="BK301")
              + 'path = "old/block.manifest.json"\n')
    (tmp_path / "blockkit.toml").write_text(config)
    write_project(tmp_path / "old", LEGACY)
    write_project(tmp_path / "new", clean())
    result, document = lint_json(tmp_path / "new")  # only the manifest it does not apply to
    assert result.exit_code == 0 and diagnostics(document) == []
    result, document = lint_json(tmp_path)  # both: it is used in old/
    assert diagnostics(document) == []
    write_project(tmp_path / "old", clean())  # the appId is gone: now it is stale
    result, document = lint_json(tmp_path)
    assert diagnostics(document) == [("BK390", "/exceptions/0")]


def test_bk390_can_itself_be_ignored(tmp_path: Path) -> None:
    config = 'ignore = ["BK310", "BK390"]\n' + EXCEPTION.format(pointer="/gone", code="BK301")
    result, document = lint_json(project(tmp_path, config))
    assert diagnostics(document) == [("BK301", "/appId")]
    assert [f["path"] for f in document["files"]] == [str(tmp_path / "block.manifest.json")]

"""Which Chromium ``--check`` drives, and what it says when there is none (issue 13 item 3)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from blockkit.cli import main
from blockkit.dev import browser
from blockkit.dev.browser import (
    FROM_ENV,
    FROM_OPTION,
    FROM_PATH,
    FROM_PLAYWRIGHT,
    NO_BROWSER,
    NO_PLAYWRIGHT,
    find_browser,
    require_browser,
)
from blockkit.dev.errors import DevError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dev"
WAYS = ("python -m playwright install chromium", "apt-get install chromium", "--browser PATH", "$BLOCKKIT_BROWSER")


def executable(folder: Path, name: str = "chromium") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


def nothing_downloaded() -> Path | None:
    return None


@pytest.fixture
def system_dir(tmp_path: Path) -> Path:
    """A PATH folder holding a system Chromium."""
    folder = tmp_path / "usr-bin"
    executable(folder)
    return folder


@pytest.fixture
def empty_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "empty"
    folder.mkdir()
    return folder


def test_the_option_comes_first(tmp_path: Path, system_dir: Path) -> None:
    chosen = executable(tmp_path / "mine", "my-chrome")
    env = {"BLOCKKIT_BROWSER": str(executable(tmp_path / "env"))}
    found = find_browser(str(chosen), env=env, search_path=str(system_dir), downloaded=nothing_downloaded)
    assert found.path == chosen and found.found_by == FROM_OPTION


def test_the_option_may_be_a_name_on_path(system_dir: Path) -> None:
    found = find_browser("chromium", env={}, search_path=str(system_dir), downloaded=nothing_downloaded)
    assert found.path == system_dir / "chromium" and found.found_by == FROM_OPTION


@pytest.mark.parametrize("problem", ["missing", "not-executable"])
def test_an_option_naming_no_browser_is_an_error_not_a_fallback(tmp_path: Path, system_dir: Path, problem: str) -> None:
    named = tmp_path / "chrome"
    if problem == "not-executable":
        named.write_text("")
    expected = "no such file" if problem == "missing" else "not executable"
    with pytest.raises(DevError, match=f"--browser {named}: {expected}"):
        find_browser(str(named), env={}, search_path=str(system_dir), downloaded=nothing_downloaded)


def test_the_variable_comes_before_path(tmp_path: Path, system_dir: Path) -> None:
    named = executable(tmp_path / "env")
    found = find_browser(env={"BLOCKKIT_BROWSER": str(named)}, search_path=str(system_dir), downloaded=nothing_downloaded)
    assert found.path == named and found.found_by == FROM_ENV


def test_the_older_variable_is_still_read(tmp_path: Path, empty_dir: Path) -> None:
    named = executable(tmp_path / "env")
    found = find_browser(env={"BLOCKKIT_CHROMIUM": str(named)}, search_path=str(empty_dir), downloaded=nothing_downloaded)
    assert found.path == named and found.found_by == "$BLOCKKIT_CHROMIUM"


@pytest.mark.parametrize("name", ["chromium", "chromium-browser", "google-chrome"])
def test_a_system_chromium_on_path(tmp_path: Path, name: str) -> None:
    folder = tmp_path / "bin"
    path = executable(folder, name)
    calls: list[str] = []
    found = find_browser(env={}, search_path=str(folder), downloaded=lambda: calls.append("asked") or None)
    assert found.path == path and found.found_by == FROM_PATH
    assert calls == []  # Playwright's driver is not started when the system has a browser


def test_playwrights_download_when_nothing_else_is_there(tmp_path: Path, empty_dir: Path) -> None:
    downloaded = executable(tmp_path / "ms-playwright" / "chromium-1" / "chrome-linux", "chrome")
    found = find_browser(env={}, search_path=str(empty_dir), downloaded=lambda: downloaded)
    assert found.path == downloaded and found.found_by == FROM_PLAYWRIGHT


def test_none_found_gives_both_ways_to_get_one(empty_dir: Path) -> None:
    with pytest.raises(DevError) as error:
        find_browser(env={}, search_path=str(empty_dir), downloaded=nothing_downloaded)
    assert str(error.value) == NO_BROWSER
    for way in WAYS:
        assert way in NO_BROWSER


def test_without_playwright_the_message_names_the_extra(monkeypatch: Any) -> None:
    monkeypatch.setattr(browser, "playwright_available", lambda: False)
    with pytest.raises(DevError) as error:
        require_browser()
    message = str(error.value)
    assert message == NO_PLAYWRIGHT and "pip install 'blockkit[browser]'" in message
    for way in WAYS:
        assert way in message
    result = CliRunner().invoke(main, ["dev", str(FIXTURES / "handshake"), "--check"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [f"blockkit dev: {NO_PLAYWRIGHT}"]


def _lookup_in_a_fresh_process(env: dict[str, str]) -> dict[str, Any]:
    # A fresh process: Playwright's sync driver runs one at a time, and the browser tests keep one open.
    code = (
        "import json\n"
        "from blockkit.dev.browser import find_browser, DevError\n"
        "from playwright.sync_api import sync_playwright\n"
        "with sync_playwright() as p: where = p.chromium.executable_path\n"
        "try:\n"
        "    found = find_browser(); print(json.dumps({'path': str(found.path), 'by': found.found_by, 'where': where}))\n"
        "except DevError as e: print(json.dumps({'error': str(e), 'where': where}))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    answer: dict[str, Any] = json.loads(result.stdout)
    return answer


def test_playwrights_own_download_folder_is_asked_for_real(tmp_path: Path, empty_dir: Path) -> None:
    pytest.importorskip("playwright", reason="the lookup asks Playwright's driver")
    downloads = tmp_path / "ms-playwright"
    env = {k: v for k, v in os.environ.items() if k not in ("BLOCKKIT_BROWSER", "BLOCKKIT_CHROMIUM")}
    env.update(PATH=str(empty_dir), PLAYWRIGHT_BROWSERS_PATH=str(downloads))
    before = _lookup_in_a_fresh_process(env)
    assert before["error"] == NO_BROWSER
    where = Path(before["where"])
    assert downloads in where.parents
    # What `python -m playwright install chromium` would leave there (a stand-in: nothing is downloaded).
    executable(where.parent, where.name)
    after = _lookup_in_a_fresh_process(env)
    assert after == {"path": str(where), "by": FROM_PLAYWRIGHT, "where": str(where)}

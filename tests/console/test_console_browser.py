"""The web console driven in headless Chromium (the project's session ``browser``): each page and
each action, checked in the store or the APIs' answers and on the page that follows."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from blockkit.emulator.store import buzz as buzz_store
from blockkit.emulator.store import tokens as tokens_store
from blockkit.emulator.store.clock import format_timestamp, parse_timestamp

pytestmark = pytest.mark.browser
SHOTS = Path(__file__).resolve().parents[2] / "docs" / "images"


def _status(page: Any) -> str:
    # The page's CSP has no 'unsafe-eval', so no wait_for_function: the status line's class tells.
    page.wait_for_selector("#status.ok, #status.error")
    return str(page.inner_text("#status"))


def _first_user(console: Any) -> tuple[int, str]:
    with console.store.read() as db:
        row = db.execute("SELECT id, username FROM users WHERE id > 0 AND deleted_at IS NULL AND status = 'active'"
                         " ORDER BY id LIMIT 1").fetchone()
    return int(row[0]), str(row[1])


# --- overview -------------------------------------------------------------------------------

def test_the_sign_in_link_opens_the_overview_with_the_origins_seed_and_data(console: Any, console_page: Any) -> None:
    page = console_page
    urls = console.emu.urls
    assert page.inner_text("#base-url") == urls.base_url
    assert page.inner_text("#auth-url") == urls.auth_url
    assert page.inner_text("#orchestration-url") == urls.orchestration_url
    assert page.inner_text("#seed") == "1" and page.inner_text("#scale") == "small"
    assert page.inner_text("#data-dir") == str(console.emu.data_dir)
    assert page.get_attribute("#clock", "datetime")[:16] == console.clock.iso()[:16]
    cookies = {c["name"]: c for c in page.context.cookies()}
    port = httpx.URL(urls.base_url).port
    assert cookies[f"bk_access_{port}"]["httpOnly"] is True  # held by the browser; no script reads it
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "console-overview.png"), full_page=True)


def test_advance_by_shows_what_it_crosses_then_moves_the_clock(console: Any, console_page: Any) -> None:
    page = console_page
    user_id, username = _first_user(console)
    now = console.clock.now()
    with console.store.write() as db:
        tokens_store.issue_access_token(db, user_id=user_id, scope=1, now=now, ttl_seconds=3600)
        version = db.execute("SELECT v.id, v.name FROM model_versions v ORDER BY v.id LIMIT 1").fetchone()
        db.execute("UPDATE model_versions SET early_access_ends_at = ? WHERE id = ?",
                   (format_timestamp(now + timedelta(hours=30)), version[0]))
    page.fill("#amount", "2")
    page.select_option("#unit", "days")
    page.click("#by-h ~ button")
    page.wait_for_selector("#preview")
    crossed_versions = page.inner_text("#crossed-early-access")
    assert f"version {version[0]}" in crossed_versions and "leaves early access" in crossed_versions
    assert f"of {username}" in page.inner_text("#crossed-tokens")
    before = console.clock.now()
    page.click("#advance")
    assert _status(page).startswith("the clock now reads ")
    answered = parse_timestamp(httpx.get(console.base + "/__emulator/clock").json()["now"])
    assert timedelta(days=2) <= answered - before < timedelta(days=2, minutes=5)
    assert parse_timestamp(page.get_attribute("#clock", "datetime")) >= before + timedelta(days=2)
    # The token is now expired: the catalogue's own answer says so.
    with console.store.read() as db:
        live = db.execute("SELECT count(*) FROM oauth_access_tokens WHERE expires_at > ?", (console.clock.iso(),))
        assert live.fetchone()[0] == 0


def test_advance_to_a_date_by_keyboard_and_a_past_date_is_refused(console: Any, console_page: Any) -> None:
    page = console_page
    target = (console.clock.now() + timedelta(days=10)).replace(microsecond=0)
    page.focus("#to")
    page.fill("#to", target.strftime("%Y-%m-%dT%H:%M:%S"))
    page.keyboard.press("Enter")
    page.wait_for_selector("#preview-end")
    assert page.inner_text("#preview-end") == target.strftime("%Y-%m-%d %H:%M:%S")
    page.focus("#advance")
    page.keyboard.press("Enter")
    assert _status(page).startswith("the clock now reads ")
    assert abs((console.clock.now() - target).total_seconds()) < 5
    page.fill("#to", "2001-01-01T00:00:00")
    page.keyboard.press("Enter")
    page.wait_for_selector("#preview-error")
    assert "the clock never goes back" in page.inner_text("#preview-error")


def test_reset_throws_the_changes_away(console: Any, console_page: Any) -> None:
    from blockkit.emulator.services import console as service

    user_id, _name = _first_user(console)
    service.set_balance(console.store, console.clock, user_id, "blue", 7)
    page = console_page
    page.reload()
    page.click("#reset")
    assert _status(page) == "reset: seeded with --seed 1 --scale small"
    with console.store.read() as db:
        assert db.execute("SELECT count(*) FROM buzz_transactions WHERE kind = 'adjustment'").fetchone()[0] == 0


def test_export_downloads_a_zip_that_import_brings_back(console: Any, console_page: Any, tmp_path: Path) -> None:
    from blockkit.emulator.services import console as service

    user_id, _name = _first_user(console)
    service.set_balance(console.store, console.clock, user_id, "green", 321)
    page = console_page
    with page.expect_download() as download_info:
        page.click("#export")
    saved = tmp_path / "export.zip"
    download_info.value.save_as(saved)
    assert saved.stat().st_size > 1000
    service.set_balance(console.store, console.clock, user_id, "green", 5)
    page.set_input_files("#import-file", str(saved))
    page.click("#import")
    assert _status(page).startswith("imported ")
    with console.store.read() as db:
        assert buzz_store.balances(db, user_id)["green"] == 321
    # A file that is not an export: the page says so, in one line, and nothing changes.
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"not a zip")
    page.set_input_files("#import-file", str(junk))
    page.click("#import")
    assert "not a zip of an export" in _status(page)
    with console.store.read() as db:
        assert buzz_store.balances(db, user_id)["green"] == 321


# --- people and money -----------------------------------------------------------------------

def test_people_list_and_set_a_balance_by_keyboard(console: Any, console_page: Any) -> None:
    page = console_page
    user_id, username = _first_user(console)
    page.click("nav >> text=People and money")
    page.wait_for_selector("#users")
    row = page.locator(f"#user-{user_id}")
    assert username in row.inner_text()
    row.locator("a").click()
    page.wait_for_selector("#ledger, #ledger-empty")
    assert page.inner_text("#username").startswith(username)
    page.focus("#set-blue")
    page.fill("#set-blue", "1234")
    page.keyboard.press("Enter")
    assert _status(page) == f"user {user_id}: blue now holds 1234 Buzz"
    assert page.inner_text("#balance-blue") == "1234"
    with console.store.read() as db:
        assert buzz_store.balances(db, user_id)["blue"] == 1234
        assert buzz_store.first_unbalanced(db) is None  # the books still add up
    ledger = page.inner_text("#ledger")
    assert "adjustment" in ledger and "blue set to 1234 in the console" in ledger
    page.fill("#set-green", "-3")
    page.keyboard.press("Enter")
    assert "a balance is a whole number of Buzz" in _status(page)
    page.screenshot(path=str(SHOTS / "console-person.png"), full_page=True)


def test_a_ledger_reference_to_nothing_is_shown_not_linked(console: Any, console_page: Any) -> None:
    user_id, _name = _first_user(console)
    with console.store.write() as db:
        db.execute("INSERT INTO buzz_transactions (user_id, pool, amount, kind, reference, description, created_at)"
                   " VALUES (?, 'blue', -5, 'workflow', 'wf-none', 'a charge', ?)", (user_id, console.clock.iso()))
    page = console_page
    page.goto(console.url + f"people/{user_id}")
    assert "wf-none" in page.inner_text("#ledger")  # a reference to nothing shown as it is, not as a link
    assert page.locator("#ledger a[href*='wf-none']").count() == 0


def test_sign_in_as_a_user_in_this_browser(console: Any, console_page: Any) -> None:
    page = console_page
    user_id, username = _first_user(console)
    page.goto(console.url + f"people/{user_id}")
    page.click("#sign-in")
    assert _status(page).startswith(f"this browser is now signed in as user {user_id}")
    page.wait_for_selector("#signed-in-here")
    page.goto(console.emu.urls.auth_url + "/")
    assert f"Signed in as {username}" in page.inner_text("body")


def test_readable_at_400px_in_dark_mode(console: Any, browser: Any) -> None:
    context = browser.new_context(viewport={"width": 400, "height": 800}, color_scheme="dark")
    try:
        page = context.new_page()
        user_id, _name = _first_user(console)
        for path in ("", "people", f"people/{user_id}"):
            page.goto(console.url + path + "?key=" + console.key)
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= 400, f"/{path}: the page is {width} px wide at 400"
            background = page.evaluate("getComputedStyle(document.documentElement).backgroundColor")
            assert background == "rgb(13, 17, 23)", background
        page.screenshot(path=str(SHOTS / "console-dark-400.png"), full_page=False)
    finally:
        context.close()

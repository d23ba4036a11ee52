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
# The guide's screenshots (docs/console.md) are these tests' own: with BLOCKKIT_CONSOLE_SHOTS=docs/images
# they are written there; otherwise to a temporary folder, so a test run leaves the tree as it was.
SHOTS_VARIABLE = "BLOCKKIT_CONSOLE_SHOTS"


def _shot(page: Any, name: str, *, full_page: bool = True) -> None:
    import os
    import tempfile

    folder = Path(os.environ.get(SHOTS_VARIABLE) or Path(tempfile.gettempdir()) / "blockkit-console-shots")
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / name), full_page=full_page)


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
    _shot(page, "console-overview.png")


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
    _shot(page, "console-person.png")


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
        for path in ("", "people", f"people/{user_id}", "apps", "work", "storage", "requests"):
            page.goto(console.url + path + "?key=" + console.key)
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= 400, f"/{path}: the page is {width} px wide at 400"
            background = page.evaluate("getComputedStyle(document.documentElement).backgroundColor")
            assert background == "rgb(13, 17, 23)", background
        _shot(page, "console-dark-400.png", full_page=False)
    finally:
        context.close()


# --- apps and access ------------------------------------------------------------------------

def _client(console: Any, *, confidential: bool = False, uris: tuple[str, ...] = ("http://127.0.0.1:9/cb",)) -> str:
    from blockkit.emulator.services.oauth.clients import register_client

    return register_client(console.store, console.clock, name="Console Test App", redirect_uris=list(uris),
                           confidential=confidential).client_id


def _me(console: Any, token: str) -> int:
    return httpx.get(console.base + "/api/v1/me", headers={"Authorization": f"Bearer {token}"}).status_code


def test_add_a_client_and_its_secret_is_shown_once(console: Any, console_page: Any) -> None:
    from blockkit.emulator.store import oauth as oauth_store

    page = console_page
    page.goto(console.url + "apps")
    page.click("#add-client summary")
    page.fill("#new-name", "Made In The Console")
    page.fill("#new-uris", "http://127.0.0.1:8123/callback\nhttp://localhost:8123/other")
    page.check("#new-confidential")
    page.click("#add-client-submit")
    assert "its client_secret is shown once" in _status(page)
    secret = page.inner_text("#secret")
    with console.store.read() as db:
        row = db.execute("SELECT id FROM oauth_clients WHERE name = 'Made In The Console'").fetchone()
        client = oauth_store.get_client(db, row[0])
    assert client is not None and client.confidential
    assert client.redirect_uris == ("http://127.0.0.1:8123/callback", "http://localhost:8123/other")
    assert client.secret_hash == tokens_store.hash_token(secret)
    # The secret works at the token endpoint (client_credentials), and the page does not show it again.
    answer = httpx.post(console.emu.urls.auth_url + "/api/auth/oauth/token",
                        data={"grant_type": "client_credentials", "client_id": client.id, "client_secret": secret})
    assert answer.status_code == 200, answer.text
    page.reload()
    assert secret not in page.content() and client.id in page.inner_text(f"#client-{client.id}")
    # A bad redirect URI is refused in one line.
    page.click("#add-client summary")
    page.fill("#new-name", "Bad")
    page.fill("#new-uris", "not-a-uri")
    page.click("#add-client-submit")
    assert "must be an absolute http:// or https:// URI" in _status(page)


def test_edit_a_clients_redirect_uris_and_scopes_then_remove_it(console: Any, console_page: Any) -> None:
    from blockkit.emulator.services.oauth import scopes
    from blockkit.emulator.store import oauth as oauth_store

    client_id = _client(console)
    page = console_page
    page.goto(console.url + "apps")
    card = page.locator(f"#client-{client_id}")
    card.locator("summary").click()
    card.locator("textarea").fill("http://127.0.0.1:7777/new")
    for box in card.locator("input[name=scope]").all():
        box.uncheck()
    card.locator(f"input[name=scope][value='{scopes.BY_NAME['UserRead']}']").check()
    card.locator(f"input[name=scope][value='{scopes.BY_NAME['ModelsRead']}']").check()
    card.locator("button.primary").click()
    assert _status(page) == f"{client_id}: saved"
    with console.store.read() as db:
        client = oauth_store.get_client(db, client_id)
    assert client is not None and client.redirect_uris == ("http://127.0.0.1:7777/new",)
    assert client.allowed_scopes == scopes.BY_NAME["UserRead"] | scopes.BY_NAME["ModelsRead"]
    assert "UserRead, ModelsRead" in page.inner_text(f"#client-{client_id} .allowed")
    # The provider now refuses the old redirect URI (asked by a signed-in browser).
    from blockkit.emulator.services import console as service

    session = service.sign_in(console.store, console.clock, _first_user(console)[0])

    def authorize(redirect_uri: str) -> httpx.Response:
        return httpx.get(console.emu.urls.auth_url + "/api/auth/oauth/authorize", params={
            "client_id": client_id, "redirect_uri": redirect_uri, "response_type": "code", "scope": "1",
            "state": "s", "code_challenge": "x" * 43, "code_challenge_method": "S256"}, follow_redirects=False,
            cookies={"bk_session": session}, headers={"X-Blockkit-Access-Key": console.key})

    assert authorize("http://127.0.0.1:9/cb").status_code == 400
    assert authorize("http://127.0.0.1:7777/new").status_code in (200, 303)  # on to consent, for the new one
    page.locator(f"#client-{client_id} button.danger").click()
    assert _status(page).startswith(f"{client_id}: removed")
    with console.store.read() as db:
        assert oauth_store.get_client(db, client_id) is None
    assert page.locator(f"#client-{client_id}").count() == 0


def test_revoke_a_live_token_and_a_grant(console: Any, console_page: Any) -> None:
    from blockkit.emulator.store import oauth as oauth_store

    user_id, username = _first_user(console)
    client_id = _client(console)
    with console.store.write() as db:
        cli_token = tokens_store.issue_access_token(db, user_id=user_id, scope=1, now=console.clock.now())
        app_token = tokens_store.issue_access_token(db, user_id=user_id, scope=1, now=console.clock.now(),
                                                    client_id=client_id)
        oauth_store.save_consent(db, user_id=user_id, client_id=client_id, scope=1, buzz_limit=None,
                                 now=console.clock.now())
        token_id = db.execute("SELECT id FROM oauth_access_tokens WHERE client_id IS NULL ORDER BY id DESC"
                              " LIMIT 1").fetchone()[0]
    assert _me(console, cli_token) == 200 and _me(console, app_token) == 200
    page = console_page
    page.goto(console.url + "apps")
    page.locator(f"#token-{token_id} button").click()
    assert _status(page) == f"token {token_id}: revoked"
    assert _me(console, cli_token) == 401
    assert page.locator(f"#token-{token_id}").count() == 0
    page.locator("#consents button").first.click()
    assert _status(page) == f"user {user_id} and {client_id}: consent forgotten, tokens revoked"
    assert _me(console, app_token) == 401
    with console.store.read() as db:
        assert oauth_store.get_consent(db, user_id, client_id) is None


def test_approve_and_deny_pending_device_codes(console: Any, console_page: Any) -> None:
    client_id = _client(console)
    auth = console.emu.urls.auth_url
    started = [httpx.post(auth + "/api/auth/oauth/device", data={"client_id": client_id, "scope": "1"}).json()
               for _ in range(2)]
    user_id, _name = _first_user(console)
    page = console_page
    page.goto(console.url + "apps")
    first, second = (s["user_code"] for s in started)
    card = page.locator(f"#device-{first}")
    card.locator("select").select_option(str(user_id))
    card.locator("button.primary").click()
    assert _status(page).startswith(f"{first}: approved as user {user_id}")
    page.locator(f"#device-{second} button.danger").click()
    assert _status(page) == f"{second}: denied"
    assert page.locator("#no-devices").count() == 1

    def poll(entry: dict[str, Any]) -> httpx.Response:
        return httpx.post(auth + "/api/auth/oauth/device-token", data={
            "grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": entry["device_code"],
            "client_id": client_id})

    approved = poll(started[0])
    assert approved.status_code == 200, approved.text
    assert _me(console, approved.json()["access_token"]) == 200
    denied = poll(started[1])
    assert denied.status_code == 400 and denied.json()["error"] == "access_denied"


def test_reset_a_block_consent_grant(console: Any, console_page: Any) -> None:
    from blockkit.emulator.services import consent

    user_id, _name = _first_user(console)
    consent.grant(console.store, console.clock, user_id, "app-block-1", ["buzz:read"], ceiling=["buzz:read"])
    assert consent.granted(console.store, user_id, "app-block-1") == {"buzz:read"}
    page = console_page
    page.goto(console.url + "apps")
    assert "app-block-1" in page.inner_text("#block-grants")
    page.locator("#block-grants button").click()
    assert _status(page) == f"user {user_id} and app-block-1: the block asks for consent again"
    assert consent.granted(console.store, user_id, "app-block-1") == set()
    assert page.locator("#no-block-grants").count() == 1


def test_make_and_revoke_an_api_key(console: Any, console_page: Any) -> None:
    from blockkit.emulator.services.orchestration.funds import api_key_user

    user_id, username = _first_user(console)
    page = console_page
    page.goto(console.url + "apps")
    page.select_option("#key-user", username)
    page.click("#add-key")
    assert "shown once" in _status(page)
    raw = page.inner_text("#secret")
    assert api_key_user(console.store, raw) == user_id
    page.reload()
    assert raw not in page.content()
    page.locator("#api-keys button").first.click()
    assert _status(page).endswith(": revoked")
    assert api_key_user(console.store, raw) is None
    _shot(page, "console-apps.png")


# --- orchestration and goods ----------------------------------------------------------------

def _receiver(failures: int = 0) -> Any:
    """A loopback callback receiver that answers 503 to its first ``failures`` POSTs, then 200, and
    keeps the bodies it got (every one, failed or not)."""
    import http.server
    import threading

    got: list[bytes] = []

    class Receiver(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            got.append(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            self.send_response(503 if len(got) <= failures else 200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    server.got = got  # type: ignore[attr-defined]
    return server


def _wait_for(check: Any, what: str) -> None:
    import time

    deadline = time.monotonic() + 20
    while not check():
        assert time.monotonic() < deadline, f"not seen within 20 s: {what}"
        time.sleep(0.05)


def _submit_with_callback(console: Any, key: str, hook: str) -> httpx.Response:
    """One text-to-image workflow whose success is called back to ``hook``, submitted with ``key``."""
    submitted = httpx.post(console.emu.urls.orchestration_url + "/v2/consumer/workflows",
                           headers={"Authorization": f"Bearer {key}"},
                           json={"steps": [{"$type": "textToImage", "name": "gen",
                                            "input": {"prompt": "a red fox", "seed": 7}}],
                                 "callbacks": [{"url": hook, "type": ["workflow:succeeded"]}]})
    assert submitted.status_code == 200, submitted.text
    return submitted


def test_workflows_with_steps_cost_thumbnails_and_callbacks_delivered_again(console: Any, console_page: Any) -> None:
    from blockkit.emulator.services.orchestration.funds import create_api_key

    user_id, username = _first_user(console)
    key = create_api_key(console.store, console.clock, username)["api_key"]
    receiver = _receiver()
    try:
        hook = f"http://127.0.0.1:{receiver.server_address[1]}/hook"
        submitted = _submit_with_callback(console, key, hook)
        workflow = submitted.json()
        console.clock.advance(10)
        _wait_for(lambda: len(receiver.got) == 1, "the workflow:succeeded callback")
        page = console_page
        page.goto(console.url + "work")
        card = page.locator(f"#workflow-{workflow['id']}")
        assert card.locator(".status").inner_text() == "succeeded"
        assert card.locator(".cost").inner_text() == str(workflow["cost"]["total"])
        assert "gen" in card.locator("table.steps").inner_text() and "textToImage" in card.inner_text()
        thumb = card.locator("img.thumb").first
        thumb.scroll_into_view_if_needed()
        _wait_for(lambda: thumb.evaluate("img => img.complete && img.naturalWidth > 0"), "the thumbnail to load")
        with console.store.read() as db:
            event_id = db.execute("SELECT id FROM workflow_events WHERE workflow_id = ?",
                                  (workflow["id"],)).fetchone()[0]
        _wait_for(lambda: (page.reload() or True) and page.inner_text(f"#event-{event_id} .state") == "delivered",
                  "the event shown delivered")
        page.locator(f"#event-{event_id} button").click()
        assert _status(page) == f"callback event {event_id}: queued to be delivered again"
        _wait_for(lambda: len(receiver.got) == 2, "the second delivery")
        assert receiver.got[0] == receiver.got[1]  # the same event, sent again
        with console.store.read() as db:
            state, attempts = db.execute("SELECT state, attempts FROM workflow_events WHERE id = ?",
                                         (event_id,)).fetchone()
        assert (state, attempts) == ("delivered", 2)
        # The ledger's charge links to the workflow on this page.
        page.goto(console.url + f"people/{user_id}")
        page.click(f"#ledger a[href='/__emulator/work#workflow-{workflow['id']}']")
        page.wait_for_selector(f"#workflow-{workflow['id']}")
        _shot(page, "console-work.png")
    finally:
        receiver.shutdown()
        receiver.server_close()


def test_each_delivery_attempt_is_listed_and_deliver_again_adds_one(console: Any, console_page: Any) -> None:
    """A receiver that fails once then succeeds: the page lists both attempts in order (status,
    duration, error); "deliver again" makes a third that appears on the page that follows."""
    from blockkit.emulator.services.orchestration.funds import create_api_key

    _user_id, username = _first_user(console)
    key = create_api_key(console.store, console.clock, username)["api_key"]
    receiver = _receiver(failures=1)
    try:
        hook = f"http://127.0.0.1:{receiver.server_address[1]}/hook"
        submitted = _submit_with_callback(console, key, hook)
        workflow_id = submitted.json()["id"]
        console.clock.advance(10)
        _wait_for(lambda: len(receiver.got) == 2, "the failed delivery and its retry")
        with console.store.read() as db:
            event_id = db.execute("SELECT id FROM workflow_events WHERE workflow_id = ?", (workflow_id,)).fetchone()[0]
        page = console_page
        page.goto(console.url + "work")
        _wait_for(lambda: (page.reload() or True) and page.inner_text(f"#event-{event_id} .state") == "delivered",
                  "the event shown delivered")
        rows = page.locator(f"#attempts-{event_id} tr.attempt")

        def shown() -> list[tuple[str, str, str]]:
            return [(rows.nth(i).locator("td").first.inner_text(), rows.nth(i).locator(".http-status").inner_text(),
                     rows.nth(i).locator(".error").inner_text()) for i in range(rows.count())]

        assert shown() == [("1", "503", "HTTP 503"), ("2", "200", "")]
        assert all(rows.nth(i).locator(".duration").inner_text().endswith(" ms") for i in range(2))
        first, second = (rows.nth(i).locator("time").get_attribute("datetime") for i in range(2))
        assert first is not None and second is not None and first <= second
        page.locator(f"#event-{event_id} button").click()
        assert _status(page) == f"callback event {event_id}: queued to be delivered again"
        _wait_for(lambda: len(receiver.got) == 3, "the delivery made again")
        _wait_for(lambda: (page.reload() or True) and rows.count() == 3, "the third attempt on the page")
        assert shown() == [("1", "503", "HTTP 503"), ("2", "200", ""), ("3", "200", "")]
        with console.store.read() as db:
            assert db.execute("SELECT state, attempts FROM workflow_events WHERE id = ?",
                              (event_id,)).fetchone()[:] == ("delivered", 3)
        assert page.locator(f"#attempts-{event_id} details").get_attribute("open") is not None  # retried: shown open
        _shot(page, "console-callback-attempts.png")
    finally:
        receiver.shutdown()
        receiver.server_close()


def test_goods_catalogue_purchase_and_refund(console: Any, console_page: Any) -> None:
    from blockkit.emulator.services import goods

    user_id, username = _first_user(console)
    catalogue = [{"id": "gem-pack", "title": "Gem pack", "priceBuzz": 100, "payload": {"gems": 50}}]
    goods.register_catalogue(console.store, console.clock, "app-7", "block-7", catalogue)
    from blockkit.emulator.services import buzz

    before = sum(buzz.balance(console.store, console.clock, user_id).values())
    goods.purchase_good(console.store, console.clock, goods.GoodsCaller(user_id, "app-7", "block-7"), catalogue,
                        "gem-pack")
    with console.store.read() as db:
        purchase_id = db.execute("SELECT id FROM goods_purchases WHERE user_id = ?", (user_id,)).fetchone()[0]
    assert [e["goodId"] for e in goods.entitlements(console.store, console.clock, user_id)["entitlements"]] == \
        ["gem-pack"]
    page = console_page
    page.goto(console.url + "work")
    assert "Gem pack" in page.inner_text("#catalogue-app-7") and "100 Buzz" in page.inner_text("#catalogue-app-7")
    row = page.locator(f"#purchase-{purchase_id}")
    assert row.locator(".entitlement").inner_text() == "held"
    row.locator("button").click()
    assert _status(page) == f"purchase {purchase_id}: refunded; the entitlement is gone"
    assert page.locator(f"#purchase-{purchase_id} .entitlement").inner_text().startswith("refunded")
    assert goods.entitlements(console.store, console.clock, user_id)["entitlements"] == []
    with console.store.read() as db:
        assert sum(buzz_store.balances(db, user_id).values()) == before
    # Both ledger entries link to the purchase.
    page.goto(console.url + f"people/{user_id}")
    links = page.locator(f"#ledger a[href='/__emulator/work#purchase-{purchase_id}']")
    assert links.count() >= 2 and "refund of purchase" in page.inner_text("#ledger")


# --- storage --------------------------------------------------------------------------------

def test_app_storage_shown_filtered_edited_added_and_deleted(console: Any, console_page: Any) -> None:
    from blockkit.emulator.services import appstorage

    user_id, username = _first_user(console)
    appstorage.storage_set(console.store, console.clock, "block-a", user_id, "settings", {"theme": "dark"})
    appstorage.storage_set(console.store, console.clock, "block-b", user_id, "other", [1, 2])
    page = console_page
    page.goto(console.url + "storage")
    page.select_option("#filter-block", "block-a")
    page.click("form.filter button")
    page.wait_for_url("**/storage?block=block-a*")
    cards = page.locator("form.entry[data-action='storage-set']")
    assert cards.count() == 1 and '"theme": "dark"' in cards.first.locator("textarea").input_value()
    cards.first.locator("textarea").fill('{"theme": "light", "size": 3}')
    cards.first.locator("button.primary").click()
    assert _status(page).startswith(f"block-a / user {user_id} / settings: saved")
    # What the block reads through the bridge's own service is the new value.
    assert appstorage.storage_get(console.store, console.clock, "block-a", user_id, "settings") == {
        "value": {"theme": "light", "size": 3}}
    # Bad JSON: one line, nothing written.
    page.locator("form.entry textarea").first.fill("{not json")
    page.locator("form.entry button.primary").first.click()
    assert "the value is not JSON" in _status(page)
    # Add a key, by keyboard.
    page.click("#add-storage summary")
    page.fill("#new-user", str(user_id))
    page.fill("#new-key", "added")
    page.fill("#new-value", '"hello"')
    page.focus("#add-storage-submit")
    page.keyboard.press("Enter")
    assert _status(page).startswith(f"block-a / user {user_id} / added: saved")
    assert appstorage.storage_get(console.store, console.clock, "block-a", user_id, "added") == {"value": "hello"}
    page.locator(f"[id='app-block-a-{user_id}-added'] button.danger").click()
    assert _status(page) == f"block-a / user {user_id} / added: deleted"
    assert appstorage.storage_get(console.store, console.clock, "block-a", user_id, "added") == {"value": None}
    _shot(page, "console-storage.png")


def test_shared_storage_edited_and_withdrawn_as_its_author(console: Any, console_page: Any) -> None:
    from blockkit.emulator.services import appstorage

    user_id, _name = _first_user(console)
    key = appstorage.shared_append(console.store, console.clock, "block-s", user_id, {"title": "first post"})["key"]
    page = console_page
    page.goto(console.url + "storage?block=block-s")
    card = page.locator(f"#shared-{key}")
    assert "first post" in card.locator("textarea").input_value()
    card.locator("textarea").fill('{"title": "edited in the console", "body": "b"}')
    card.locator("button.primary").click()
    assert _status(page) == f"shared entry {key}: saved"
    got = appstorage.shared_get(console.store, console.clock, "block-s", None, key)["item"]
    assert got["value"] == {"title": "edited in the console", "body": "b"}
    # The service's own rules hold: a title is required.
    page.locator(f"#shared-{key} textarea").fill('{"body": "no title"}')
    page.locator(f"#shared-{key} button.primary").click()
    assert "title" in _status(page)
    page.reload()
    page.locator(f"#shared-{key} button.danger").click()
    assert _status(page) == f"shared entry {key}: withdrawn"
    assert page.locator(f"#shared-{key} .status").inner_text() == "withdrawn"
    assert appstorage.shared_get(console.store, console.clock, "block-s", None, key)["item"] is None


# --- requests (the journal) -----------------------------------------------------------------

def test_requests_show_each_refusal_with_its_reason_filtered_and_redacted(console: Any, console_page: Any) -> None:
    from blockkit.emulator.services.oauth.clients import register_client

    client = register_client(console.store, console.clock, name="Journal App",
                             redirect_uris=["http://127.0.0.1:9/registered"]).client_id
    from blockkit.emulator.services import console as service

    session = service.sign_in(console.store, console.clock, _first_user(console)[0])
    refused = httpx.get(console.emu.urls.auth_url + "/api/auth/oauth/authorize", params={
        "client_id": client, "redirect_uri": "http://127.0.0.1:9/other", "response_type": "code", "scope": "1",
        "state": "s", "code_challenge": "x" * 43, "code_challenge_method": "S256"},
        cookies={"bk_session": session}, headers={"X-Blockkit-Access-Key": console.key})
    assert refused.status_code == 400
    secret_token = "not-a-real-token-" + "z" * 30
    assert httpx.get(console.base + "/api/v1/me", headers={"Authorization": f"Bearer {secret_token}"}).status_code == 401
    assert httpx.get(console.base + "/api/v1/enums").status_code == 200
    page = console_page
    page.click("nav >> text=Requests")
    page.wait_for_selector("#journal")
    assert page.locator("li.request").count() >= 3
    assert "/__emulator/" not in " ".join(page.locator("li.request code.path").all_inner_texts())  # its own left out
    page.select_option("#f-origin", "auth")
    page.fill("#f-status", "4xx")
    page.click("#filter")
    page.wait_for_url("**/requests?*")
    rows = page.locator("li.request")
    assert rows.count() >= 1
    texts = rows.all_inner_texts()
    assert all(" 4" in t or "\n4" in t for t in texts)
    authorize = next(t for t in texts if "/api/auth/oauth/authorize" in t)
    assert "http://127.0.0.1:9/registered" in authorize and "http://127.0.0.1:9/other" in authorize
    _shot(page, "console-requests.png")
    page.fill("#f-status", "401")
    page.select_option("#f-origin", "catalogue")
    page.click("#filter")
    page.wait_for_url("**status=401*")
    me = page.locator("li.request").first
    assert "/api/v1/me" in me.inner_text()
    me.locator("summary").click()
    shown = me.inner_text()
    assert "authorization" in shown.lower() and secret_token not in page.content()
    page.fill("#f-status", "banana")
    page.click("#filter")
    assert "status is a code or a class" in page.inner_text("main")


def test_pause_and_resume_the_journal_from_the_requests_page(console: Any, console_page: Any) -> None:
    page = console_page
    page.click("nav >> text=Requests")
    assert page.inner_text("#recording-state") == "recording"
    page.focus("#recording-toggle")
    page.keyboard.press("Enter")
    page.wait_for_selector("#recording-state:text('paused')")
    assert console.emu.journal.recording is False
    before = console.emu.journal.last_id
    assert httpx.get(console.base + "/api/v1/models/987650001").status_code == 404  # answered, not recorded
    assert console.emu.journal.last_id == before
    page.click("#recording-toggle")
    page.wait_for_selector("#recording-state:text('recording')")
    assert httpx.get(console.base + "/api/v1/models/987650002").status_code == 404
    page.reload()
    paths = page.locator("li.request code.path").all_inner_texts()
    assert "/api/v1/models/987650002" in paths and "/api/v1/models/987650001" not in paths

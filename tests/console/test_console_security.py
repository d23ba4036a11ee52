"""The web console's guard: the run's key, the emulator's own origin only, no CORS, no framing.

Over HTTP (httpx, as a program or another local user would ask) and from a real cross-origin page
in Chromium (another port of 127.0.0.1: the same site, so the SameSite=Lax access cookie travels
with its requests and only the Origin checks stop them).
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from blockkit.emulator.http import access
from blockkit.emulator.http.console import ACTIONS
from blockkit.emulator.store import buzz as buzz_store

PAGES = ("/__emulator/", "/__emulator/people", "/__emulator/people/1", "/__emulator/console/export.zip",
         "/__emulator/console/static/console.js", "/__emulator/apps", "/__emulator/work", "/__emulator/storage",
         "/__emulator/requests")
ACTION_PATHS = tuple(f"/__emulator/console/{name}" for name in sorted(ACTIONS)) + ("/__emulator/console/import",)
EVIL = "http://evil.example"


def _cookie(console: Any) -> dict[str, str]:
    name, value = access.access_cookie(console.key, httpx.URL(console.base).port)
    return {"Cookie": f"{name}={value}"}


def test_every_console_action_is_listed_here() -> None:
    assert {"clock-advance", "reset", "set-balance", "sign-in"} <= set(ACTIONS)


@pytest.mark.parametrize("path", PAGES)
def test_no_key_no_page(console: Any, path: str) -> None:
    bare = httpx.get(console.base + path)
    assert bare.status_code == 401 and "access key" in bare.text
    assert "bk-console-token" not in bare.text
    wrong = httpx.get(console.base + path, headers={"X-Blockkit-Access-Key": "another-runs-key-" + "x" * 20})
    assert wrong.status_code == 401
    # Another run's cookie (an HMAC of another key) is worth nothing here.
    name, value = access.access_cookie("another-runs-key-" + "x" * 20, httpx.URL(console.base).port)
    assert httpx.get(console.base + path, headers={"Cookie": f"{name}={value}"}).status_code == 401


def test_a_browser_without_the_key_gets_a_page_saying_what_to_open(console: Any) -> None:
    answer = httpx.get(console.url, headers={"Accept": "text/html"})
    assert answer.status_code == 401 and "access key" in answer.text
    assert f'action="/__emulator/"' in answer.text and answer.headers["x-frame-options"] == "DENY"


@pytest.mark.parametrize("path", ACTION_PATHS)
def test_no_key_no_action(console: Any, path: str) -> None:
    answer = httpx.post(console.base + path, json={"user_id": 1, "pool": "blue", "balance": 1})
    assert answer.status_code == 401


@pytest.mark.parametrize("path", ACTION_PATHS)
def test_a_cross_origin_post_is_refused_even_with_the_cookie(console: Any, path: str) -> None:
    token = console.token()
    headers = {**_cookie(console), "Origin": EVIL, "X-Blockkit-Console-Token": token}
    answer = httpx.post(console.base + path, json={"user_id": 1, "pool": "blue", "balance": 1}, headers=headers)
    assert answer.status_code == 403 and "own origins only" in answer.json()["error"]
    # The cookie without any Origin and with a cross-site fetch: refused (a program sends the key).
    headers = {**_cookie(console), "Sec-Fetch-Site": "cross-site", "X-Blockkit-Console-Token": token}
    answer = httpx.post(console.base + path, json={}, headers=headers)
    assert answer.status_code == 403


def test_a_form_post_is_no_console_action(console: Any) -> None:
    """A cross-site form (a CORS simple request) cannot send JSON; the console takes nothing else."""
    headers = {**_cookie(console), "Origin": console.base, "X-Blockkit-Console-Token": console.token()}
    answer = httpx.post(console.base + "/__emulator/console/set-balance",
                        content=b"user_id=1&pool=blue&balance=1", headers={
                            **headers, "Content-Type": "application/x-www-form-urlencoded"})
    assert answer.status_code == 415
    answer = httpx.post(console.base + "/__emulator/console/set-balance", content=b"{}",
                        headers={**headers, "Content-Type": "text/plain"})
    assert answer.status_code == 415


def test_the_console_token_is_required_from_its_own_page_too(console: Any) -> None:
    user = 1
    with console.store.read() as db:
        before = buzz_store.balances(db, user)
    headers = {**_cookie(console), "Origin": console.base}
    for token in (None, "0" * 64):
        sent = headers if token is None else {**headers, "X-Blockkit-Console-Token": token}
        answer = httpx.post(console.base + "/__emulator/console/set-balance",
                            json={"user_id": user, "pool": "blue", "balance": 3}, headers=sent)
        assert answer.status_code == 403 and "token" in answer.json()["error"]
    with console.store.read() as db:
        assert buzz_store.balances(db, user) == before
    # With it, from the console's own origin, the same action goes through.
    answer = httpx.post(console.base + "/__emulator/console/set-balance",
                        json={"user_id": user, "pool": "blue", "balance": 3},
                        headers={**headers, "X-Blockkit-Console-Token": console.token()})
    assert answer.status_code == 200
    with console.store.read() as db:
        assert buzz_store.balances(db, user)["blue"] == 3


@pytest.mark.parametrize("path", PAGES[:4])
def test_no_cors_and_no_framing(console: Any, path: str) -> None:
    answer = console.get(path, headers={"Origin": EVIL})
    assert answer.status_code == 200
    assert not any(name.lower().startswith("access-control-") for name in answer.headers)
    assert answer.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
    preflight = httpx.options(console.base + path, headers={"Origin": EVIL, "Access-Control-Request-Method": "POST",
                                                            "Access-Control-Request-Headers": "content-type"})
    assert "access-control-allow-origin" not in preflight.headers


def test_the_export_does_not_start_from_another_site(console: Any) -> None:
    answer = httpx.get(console.base + "/__emulator/console/export.zip",
                       headers={**_cookie(console), "Sec-Fetch-Site": "same-site"})
    assert answer.status_code == 403


# --- from a real cross-origin page in Chromium ---------------------------------------------

@pytest.mark.browser
def test_a_cross_origin_page_can_neither_read_nor_drive_nor_frame_the_console(
        console: Any, console_page: Any, other_page: str) -> None:
    """The browser holds the access cookie (console_page signed it in); a page of another origin on
    the same host tries to read the console, post an action, submit a form and frame it."""
    page = console_page.context.new_page()
    page.goto(other_page + "/")
    user = 1
    with console.store.read() as db:
        before = buzz_store.balances(db, user)
    read = page.evaluate("""async (url) => {
        try { const r = await fetch(url, {credentials: 'include'}); return 'read:' + (await r.text()).length; }
        catch (e) { return 'refused:' + e.name; } }""", console.url)
    assert read == "refused:TypeError"  # no CORS: the answer is not the page's to read
    posted = page.evaluate("""async (url) => {
        try { const r = await fetch(url, {method: 'POST', credentials: 'include', mode: 'no-cors',
                  headers: {'Content-Type': 'text/plain'}, body: JSON.stringify({user_id: 1, pool: 'blue', balance: 9})});
              return 'sent:' + r.type; }
        catch (e) { return 'refused:' + e.name; } }""", console.base + "/__emulator/console/set-balance")
    assert posted in ("sent:opaque", "refused:TypeError")
    cors_json = page.evaluate("""async (url) => {
        try { const r = await fetch(url, {method: 'POST', credentials: 'include',
                  headers: {'Content-Type': 'application/json'}, body: JSON.stringify({user_id: 1, pool: 'blue', balance: 9})});
              return 'read:' + r.status; }
        catch (e) { return 'refused:' + e.name; } }""", console.base + "/__emulator/console/set-balance")
    assert cors_json == "refused:TypeError"  # its preflight gets no CORS answer
    page.set_content(f"""<form id=f method=post action="{console.base}/__emulator/console/set-balance"
        enctype="text/plain"><input name='{{"user_id":1,"pool":"blue","balance":9,"x":"' value='"}}'></form>""")
    with page.expect_navigation():
        page.evaluate("document.getElementById('f').submit()")
    assert "own origins only" in page.content()  # the guard refused it before any route
    with console.store.read() as db:
        assert buzz_store.balances(db, user) == before
    page.goto(other_page + "/")
    page.set_content(f'<iframe id=frame src="{console.url}" width=600 height=400></iframe>')
    page.wait_for_timeout(500)
    frame = page.frames[1] if len(page.frames) > 1 else None
    shown = frame.evaluate("document.body ? document.body.innerText : ''") if frame is not None else ""
    assert "Overview" not in shown  # the console refused to be framed
    page.close()

"""Headless Chromium against the OAuth provider: sign in, read the consent page, approve by
clicking (and by keyboard), and CORS checked from a real cross-origin page.

Uses the project's session-wide ``browser`` fixture (Debian's chromium via Playwright).
The consent page is saved to ``consent.png`` at the checkout root for a person to look at.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from static_page import serve_page
from oauth_env import AUTHORIZE, OAuthEnv, pkce

pytestmark = pytest.mark.browser
SCREENSHOT = Path(__file__).resolve().parents[2] / "consent.png"


@pytest.fixture
def callback_server() -> Iterator[str]:
    """A loopback page the provider redirects to (and the cross-origin page for the CORS check)."""
    with serve_page(b"<!doctype html><title>callback</title><p id=done>back at the app</p>") as port:
        yield f"http://127.0.0.1:{port}"


def test_sign_in_consent_click_and_code(oauth: OAuthEnv, browser: Any, callback_server: str) -> None:
    redirect = callback_server + "/callback"
    client = oauth.client(name="Browser Test App", redirect_uris=[redirect])
    verifier, challenge = pkce()
    params = oauth.authorize_params(client, scope=str(1 | 32768 | 65536), state="browser-state", challenge=challenge)
    member = oauth.user("member")["username"]
    context = browser.new_context(viewport={"width": 800, "height": 1000})
    try:
        page = context.new_page()
        page.goto(oauth.auth_url + AUTHORIZE + "?" + str(httpx.QueryParams(params)))
        assert page.url.startswith(oauth.auth_url + "/login")
        page.click(f"button[name=username][value='{member}']")
        page.wait_for_selector("#approve")
        assert page.inner_text("#client-name") == "Browser Test App"
        bits = page.locator("ul.scopes li").all_inner_texts()
        assert len(bits) == 3 and any("Buzz balance" in b for b in bits)
        assert page.locator("select#buzz_limit option").count() >= 2
        page.select_option("select#buzz_limit", label="500 Buzz a day")
        page.screenshot(path=str(SCREENSHOT), full_page=True)
        page.click("#approve")
        page.wait_for_url(redirect + "?*")
        url = httpx.URL(page.url)
        assert url.params["state"] == "browser-state"
        answer = oauth.exchange(client, url.params["code"], verifier)
        assert answer.status_code == 200 and answer.json()["scope"] == str(1 | 32768 | 65536)
        cookies = {c["name"]: c for c in context.cookies()}
        assert cookies["bk_session"]["httpOnly"] is True and cookies["bk_session"]["sameSite"] == "Lax"
    finally:
        context.close()


def test_consent_by_keyboard(oauth: OAuthEnv, browser: Any, callback_server: str) -> None:
    redirect = callback_server + "/kb"
    client = oauth.client(name="Keyboard App", redirect_uris=[redirect])
    params = oauth.authorize_params(client, scope="1", state="kb")
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(oauth.auth_url + "/login?returnUrl=" + httpx.QueryParams({"x": AUTHORIZE + "?" + str(
            httpx.QueryParams(params))})["x"].replace("&", "%26").replace("?", "%3F").replace("=", "%3D"))
        page.focus("ul.users button:not([disabled])")
        page.keyboard.press("Enter")
        page.wait_for_selector("#approve")
        page.focus("#approve")
        page.keyboard.press("Enter")
        page.wait_for_url(redirect + "?*")
        assert "code=" in page.url and "state=kb" in page.url
    finally:
        context.close()


def test_cors_from_a_real_cross_origin_page(oauth: OAuthEnv, browser: Any, callback_server: str) -> None:
    """A page on another origin calls token (public client, its allowed origin) and userinfo with fetch.

    As on the platform: no credentials (the answers carry no Allow-Credentials), so a call with
    ``credentials: 'include'`` fails here as it does in production.
    """
    public = oauth.client(confidential=False, origins=[callback_server], redirect_uris=[callback_server + "/cb"])
    code, verifier = oauth.code_for(public, oauth.user()["username"])
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(callback_server + "/app")
        result = page.evaluate("""async ([auth, form]) => {
            const token = await fetch(auth + '/api/auth/oauth/token', {method: 'POST',
                headers: {'Content-Type': 'application/x-www-form-urlencoded'}, body: new URLSearchParams(form)});
            const body = await token.json();
            const info = await fetch(auth + '/api/auth/oauth/userinfo', {
                headers: {'Authorization': 'Bearer ' + body.access_token}});
            let withCookies = 'read';
            try {
                await fetch(auth + '/api/auth/oauth/userinfo', {credentials: 'include',
                    headers: {'Authorization': 'Bearer ' + body.access_token}});
            } catch (e) { withCookies = 'blocked'; }
            return {tokenStatus: token.status, scope: body.scope, infoStatus: info.status, info: await info.json(),
                    withCookies};
        }""", [oauth.auth_url, {"grant_type": "authorization_code", "code": code, "code_verifier": verifier,
                                "redirect_uri": public.redirect_uri, "client_id": public.client_id}])
        assert result["tokenStatus"] == 200 and result["scope"] == "1"
        assert result["infoStatus"] == 200 and result["info"]["id"] == oauth.user()["id"]
        assert result["withCookies"] == "blocked"  # "*" without Allow-Credentials, as the platform answers
        blocked = page.evaluate("""async (auth) => {
            try { await fetch(auth + '/api/v1/enums'); return 'read'; } catch (e) { return 'blocked'; }
        }""", oauth.base_url)
        assert blocked == "blocked"  # a route without CORS stays unreadable from this page: the check is real
    finally:
        context.close()


def test_device_page_in_a_browser(oauth: OAuthEnv, browser: Any) -> None:
    """A CLI starts the device grant; a person opens verification_uri, signs in, types the code
    loosely, reviews and approves; the CLI's next poll gets the tokens."""
    client = oauth.client(confidential=False, name="Terminal Tool")
    start = oauth.http.post(oauth.auth_url + "/api/auth/oauth/device",
                            data={"client_id": client.client_id, "scope": str(1 | 65536)}).json()
    poll = {"grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": start["device_code"],
            "client_id": client.client_id}
    member = oauth.user("member")
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(start["verification_uri"])
        page.click(f"button[name=username][value='{member['username']}']")
        page.wait_for_selector("#code")
        page.fill("#code", start["user_code"].replace("-", " ").lower())
        page.click("#lookup")
        page.wait_for_selector("#approve")
        assert page.inner_text("#client-name") == "Terminal Tool"
        assert page.inner_text("#user-code") == start["user_code"]
        assert any("Buzz balance" in b for b in page.locator("ul.scopes li").all_inner_texts())
        page.click("#approve")
        page.wait_for_selector("#device-done")
        assert page.inner_text("#device-done") == "Device approved"
    finally:
        context.close()
    oauth.advance(5)
    tokens = oauth.http.post(oauth.auth_url + "/api/auth/oauth/device-token", data=poll)
    assert tokens.status_code == 200, tokens.text
    assert oauth.userinfo(tokens.json()["access_token"]).json()["id"] == member["id"]

"""E01 in a real Chromium: a page on another port of 127.0.0.1 (same site), and one on
``localhost`` (another site), try to read the consent form and approve a Full grant.

Before the fix the same-site page read the form and its CSRF token (the authorization
endpoint echoed any Origin with credentials) and approved a remembered Full grant with no
click. Now: the read fails (no CORS), and a consent POST from that page is refused even
with a leaked CSRF token (``Sec-Fetch-Site``/``Origin``), so no consent is stored.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from static_page import serve_page
from oauth_env import AUTHORIZE, OAuthEnv

pytestmark = pytest.mark.browser
FULL = "33554431"


@pytest.fixture
def attacker_port() -> Iterator[int]:
    """A local server on another port, standing for any other local dev server or page."""

    with serve_page(b"<!doctype html><title>another local page</title><p>hello</p>") as port:
        yield port


READ_CONSENT = """async (url) => {
    try {
        const answer = await fetch(url, {credentials: 'include', headers: {'Accept': 'text/html'}});
        const text = await answer.text();
        const token = (text.match(/name="csrf_token" value="([^"]+)"/) || [])[1] || null;
        return {read: true, token};
    } catch (e) { return {read: false, token: null}; }
}"""

POST_CONSENT = """([action, fields]) => {
    const form = document.createElement('form');
    form.method = 'POST';
    form.action = action;
    for (const [name, value] of Object.entries(fields)) {
        const input = document.createElement('input');
        input.type = 'hidden'; input.name = name; input.value = value;
        form.appendChild(input);
    }
    document.body.appendChild(form);
    form.submit();
}"""


def _sign_in(page: Any, oauth: OAuthEnv, username: str) -> None:
    page.goto(oauth.auth_url + "/login?returnUrl=%2F")
    page.click(f"button[name=username][value='{username}']")
    page.wait_for_url(oauth.auth_url + "/")


def _consents(oauth: OAuthEnv, client_id: str) -> int:
    with oauth.emu.store.read() as db:
        return int(db.execute("SELECT count(*) FROM oauth_consents WHERE client_id = ?", (client_id,)).fetchone()[0])


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"], ids=["same-site-other-port", "cross-site"])
def test_another_local_page_cannot_read_or_approve_consent(oauth: OAuthEnv, browser: Any, attacker_port: int,
                                                           host: str) -> None:
    victim = oauth.user("member")["username"]
    client = oauth.client(name="Victim's App")
    params = oauth.authorize_params(client, scope=FULL, state="attack")
    authorize_url = oauth.auth_url + AUTHORIZE + "?" + str(httpx.QueryParams(params))
    context = browser.new_context()
    try:
        page = context.new_page()
        _sign_in(page, oauth, victim)
        page.goto(f"http://{host}:{attacker_port}/")
        stolen = page.evaluate(READ_CONSENT, authorize_url)
        assert stolen == {"read": False, "token": None}  # no CORS on authorize: the page reads nothing

        # Even a leaked CSRF token (taken here out of band from the victim's own consent page)
        # does not let the page approve: the browser marks the POST as coming from elsewhere.
        own = context.new_page()
        own.goto(authorize_url)
        own.wait_for_selector("#approve")
        leaked = own.get_attribute("input[name=csrf_token]", "value")
        own.close()
        fields = {**params, "approved": "true", "remember": "true", "csrf_token": leaked or ""}
        with page.expect_navigation():
            page.evaluate(POST_CONSENT, [oauth.auth_url + AUTHORIZE, fields])
        assert "code=" not in page.url and not page.url.startswith(client.redirect_uri)
        if host == "127.0.0.1":  # same site: the cookie went along, and the origin check refused it
            assert page.url.startswith(oauth.auth_url + AUTHORIZE) and "another" in page.content()
        else:  # another site: the SameSite=Lax cookie stays home, so the POST is signed out
            assert page.url.startswith(oauth.auth_url + "/login")
        assert _consents(oauth, client.client_id) == 0

        # The victim's next authorize still asks (nothing was remembered behind their back).
        check = context.new_page()
        check.goto(authorize_url)
        check.wait_for_selector("#approve")
        assert check.url.startswith(oauth.auth_url + "/login/oauth/authorize")
    finally:
        context.close()

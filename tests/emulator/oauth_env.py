"""An emulator of the OAuth tests' own (in-process, real sockets), and the steps of a grant over HTTP.

``oauth_emulator`` (session) serves a fresh small seed; the OAuth tests move its clock
(code and token expiry, rate-limit windows) without touching the shared ``emulator``.
``oauth`` (function) first moves that clock past the current rate-limit minute, so every
test starts with fresh windows, and returns :class:`OAuthEnv`, whose methods do the steps
a person and an app do: sign in, authorize (the consent form posted as a browser would),
exchange, refresh. PKCE values come from authlib (never computed by hand here).
"""

from __future__ import annotations

import re
import secrets
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from authlib.oauth2.rfc7636 import create_s256_code_challenge

REDIRECT = "http://127.0.0.1:9/callback"
AUTHORIZE = "/api/auth/oauth/authorize"
CONSENT_PAGE = "/login/oauth/authorize"
TOKEN = "/api/auth/oauth/token"
REVOKE = "/api/auth/oauth/revoke"
USERINFO = "/api/auth/oauth/userinfo"
HTML = {"Accept": "text/html"}


@pytest.fixture(scope="session")
def oauth_emulator() -> Iterator[Any]:
    from blockkit.emulator.options import EmulatorOptions
    from blockkit.emulator.runtime import Emulator

    with tempfile.TemporaryDirectory(prefix="bk-oauth-") as tmp, \
            Emulator(EmulatorOptions(data=Path(tmp) / "data")) as emu:
        yield emu


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    return verifier, create_s256_code_challenge(verifier)


@dataclass
class Client:
    client_id: str
    client_secret: str | None
    redirect_uri: str = REDIRECT

    def creds(self) -> dict[str, str]:
        out = {"client_id": self.client_id}
        if self.client_secret is not None:
            out["client_secret"] = self.client_secret
        return out


class OAuthEnv:
    def __init__(self, emu: Any) -> None:
        self.emu = emu
        self.auth_url = emu.urls.auth_url
        self.base_url = emu.urls.base_url
        self.http = httpx.Client(timeout=30)
        self.opened: list[httpx.Client] = [self.http]  # closed at teardown: no descriptors leak across tests

    # --- setup ----------------------------------------------------------------------------
    def client(self, *, confidential: bool = True, allowed_scopes: int | None = None,
               redirect_uris: list[str] | None = None, origins: list[str] | None = None,
               owner: str | None = None, name: str = "Test App") -> Client:
        from blockkit.emulator.services.oauth import scopes
        from blockkit.emulator.services.oauth.clients import register_client

        uris = redirect_uris or [REDIRECT]
        reg = register_client(self.emu.store, self.emu.clock, name=name, redirect_uris=uris,
                              confidential=confidential,
                              allowed_scopes=scopes.FULL if allowed_scopes is None else allowed_scopes,
                              allowed_origins=origins or [], owner=owner)
        return Client(reg.client_id, reg.client_secret, uris[0])

    def user(self, role: str = "member") -> dict[str, Any]:
        from blockkit.emulator.seed import landmarks

        return dict(landmarks(self.emu.store)[role])

    def advance(self, seconds: float) -> None:
        self.emu.clock.advance(seconds)

    # --- a person in a browser ----------------------------------------------------------------
    def signed_in(self, username: str) -> httpx.Client:
        browser = httpx.Client(timeout=30, follow_redirects=False)
        self.opened.append(browser)
        answer = browser.post(self.auth_url + "/login", data={"username": username, "returnUrl": "/"})
        assert answer.status_code == 302, answer.text
        return browser

    def authorize_params(self, client: Client, *, scope: str = "1", state: str = "st-1",
                         challenge: str | None = None, **extra: str) -> dict[str, str]:
        params = {"response_type": "code", "client_id": client.client_id, "redirect_uri": client.redirect_uri,
                  "scope": scope, "state": state, "code_challenge": challenge or pkce()[1],
                  "code_challenge_method": "S256"}
        params.update(extra)
        return {k: v for k, v in params.items() if v is not None}

    def consent_page(self, browser: httpx.Client, params: dict[str, str]) -> httpx.Response:
        """GET authorize as a browser does: a 303 to the consent page is followed (once)."""
        answer = browser.get(self.auth_url + AUTHORIZE, params=params, headers=HTML)
        return self.follow_consent(browser, answer)

    def follow_consent(self, browser: httpx.Client, answer: httpx.Response) -> httpx.Response:
        if answer.status_code == 303 and answer.headers["location"].startswith(CONSENT_PAGE + "?"):
            return browser.get(self.auth_url + answer.headers["location"], headers=HTML)
        return answer

    def approve(self, browser: httpx.Client, page: httpx.Response, *, remember: bool = True,
                buzz_limit: str | None = None, approved: str = "true") -> httpx.Response:
        assert page.status_code == 200, page.text
        form = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', page.text))
        form = {k: _unescape(v) for k, v in form.items()}
        form["approved"] = approved
        if remember:
            form["remember"] = "true"
        if buzz_limit is not None:
            form["buzz_limit"] = buzz_limit
        return browser.post(self.auth_url + AUTHORIZE, data=form)

    def code_for(self, client: Client, username: str, *, scope: str = "1", state: str = "st-1",
                 remember: bool = True, buzz_limit: str | None = None) -> tuple[str, str]:
        """(code, verifier): sign in, authorize, approve on the consent page (or skip it when remembered)."""
        verifier, challenge = pkce()
        browser = self.signed_in(username)
        params = self.authorize_params(client, scope=scope, state=state, challenge=challenge)
        first = self.consent_page(browser, params)
        answer = first if first.status_code == 302 else self.approve(browser, first, remember=remember,
                                                                       buzz_limit=buzz_limit)
        assert answer.status_code == 302, answer.text
        location = httpx.URL(answer.headers["location"])
        assert str(location).startswith(client.redirect_uri + "?")
        assert location.params["state"] == state
        return location.params["code"], verifier

    # --- an app --------------------------------------------------------------------------------
    def token(self, data: dict[str, str], **kwargs: Any) -> httpx.Response:
        return self.http.post(self.auth_url + TOKEN, data=data, **kwargs)

    def exchange(self, client: Client, code: str, verifier: str, /, **overrides: str | None) -> httpx.Response:
        data = {"grant_type": "authorization_code", "code": code, "code_verifier": verifier,
                "redirect_uri": client.redirect_uri, **client.creds(), **overrides}
        return self.token({k: v for k, v in data.items() if v is not None})

    def grant(self, client: Client, username: str, *, scope: str = "1") -> dict[str, Any]:
        code, verifier = self.code_for(client, username, scope=scope)
        answer = self.exchange(client, code, verifier)
        assert answer.status_code == 200, answer.text
        return answer.json()

    def refresh(self, client: Client, refresh_token: str, **extra: str) -> httpx.Response:
        return self.token({"grant_type": "refresh_token", "refresh_token": refresh_token, **client.creds(), **extra})

    def userinfo(self, token: str) -> httpx.Response:
        return self.http.get(self.auth_url + USERINFO, headers={"Authorization": f"Bearer {token}"})


def _unescape(value: str) -> str:
    import html

    return html.unescape(value)


@pytest.fixture
def oauth(oauth_emulator: Any) -> Iterator[OAuthEnv]:
    oauth_emulator.clock.advance(61)  # a new rate-limit minute for every test
    env = OAuthEnv(oauth_emulator)
    try:
        yield env
    finally:
        for client in env.opened:
            client.close()

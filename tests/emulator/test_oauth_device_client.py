"""A second real client library, requests-oauth2client, against the provider: it reads the
OIDC discovery document, runs the device authorization grant as a CLI does (polling with
``authorization_pending`` and ``slow_down``), and runs a code flow with a ``nonce`` whose
``id_token`` it validates against the JWKS (signature, iss, aud, nonce, exp).

The CLI's polling job sleeps through its library's documented hook (``sleep``); here that
hook moves the emulator's clock by the interval instead of waiting, so the test is quick and
the server still sees the client's real polling rhythm.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import requests
from oauth_env import HTML, REDIRECT, OAuthEnv
from requests_oauth2client import (
    AccessDenied,
    DeviceAuthorizationPollingJob,
    OAuth2Client,
)

DISCOVERY = "/.well-known/openid-configuration"
# The platform polls the device grant on its own route (device-token/+server.ts), not on the
# advertised token_endpoint, so a CLI is configured with it.
DEVICE_TOKEN = "/api/auth/oauth/device-token"


class EmulatorClockPolling(DeviceAuthorizationPollingJob):
    """The library's polling job, waiting on the emulator's clock instead of time.sleep."""

    emu: Any = None

    def sleep(self) -> None:
        self.emu.clock.advance(self.interval)


def _discovered(auth_url: str, client_id: str, **kwargs: Any) -> OAuth2Client:
    """The library's client from the discovery document. It does not map
    ``device_authorization_endpoint`` itself (1.8.0), so that one is passed from the same document."""
    document = requests.get(auth_url + DISCOVERY, timeout=30).json()
    return OAuth2Client.from_discovery_document(document, issuer=auth_url, client_id=client_id, testing=True,
                                                device_authorization_endpoint=document[
                                                    "device_authorization_endpoint"], **kwargs)


def _userinfo(client: OAuth2Client, access_token: str) -> dict[str, Any]:
    """userinfo by GET: the platform's userinfo answers GET only (405 to the POST the library sends)."""
    answer = requests.get(client.userinfo_endpoint or "", headers={"Authorization": f"Bearer {access_token}"},
                          timeout=30)
    answer.raise_for_status()
    return dict(answer.json())


def _approve_on_the_page(oauth: OAuthEnv, username: str, verification_uri_complete: str) -> None:
    browser = oauth.signed_in(username)
    page = browser.get(verification_uri_complete, headers=HTML)
    assert page.status_code == 200, page.text
    csrf = page.text.split('name="csrf_token" value="')[1].split('"')[0]
    user_code = page.text.split('name="user_code" value="')[1].split('"')[0]
    done = browser.post(oauth.auth_url + "/login/oauth/device",
                        data={"user_code": user_code, "csrf_token": csrf, "decision": "approve"})
    assert done.status_code == 200 and "approved" in done.text


def test_cli_device_grant_through_discovery(oauth: OAuthEnv) -> None:
    registered = oauth.client(confidential=False, name="Local CLI")
    member = oauth.user("member")
    client = _discovered(oauth.auth_url, registered.client_id)
    assert client.device_authorization_endpoint == oauth.auth_url + "/api/auth/oauth/device"
    assert client.revocation_endpoint == oauth.auth_url + "/api/auth/oauth/revoke"

    device = client.authorize_device(scope="65536")
    assert device.user_code and device.verification_uri_complete and device.interval == 5

    cli = OAuth2Client(oauth.auth_url + DEVICE_TOKEN, client_id=registered.client_id, testing=True)
    # A CLI that polls too eagerly (every second): the server answers slow_down, and the library
    # widens its interval by 5 seconds, as RFC 8628 3.5 asks.
    job = EmulatorClockPolling(cli, device, interval=1)
    job.emu = oauth.emu
    assert job() is None  # authorization_pending
    assert job() is None  # polled 1 s later: slow_down
    assert job.interval == 6
    assert job() is None  # pending again at the wider interval

    _approve_on_the_page(oauth, member["username"], device.verification_uri_complete)
    token = job()
    assert token is not None and token.scope == str(65536 | 1) and token.refresh_token
    info = _userinfo(client, token.access_token)
    assert info["id"] == member["id"] and info["sub"] == str(member["id"])


def test_cli_device_grant_denied(oauth: OAuthEnv) -> None:
    registered = oauth.client(confidential=False)
    client = _discovered(oauth.auth_url, registered.client_id)
    device = client.authorize_device(scope="1")
    browser = oauth.signed_in(oauth.user()["username"])
    page = browser.get(device.verification_uri_complete, headers=HTML)
    csrf = page.text.split('name="csrf_token" value="')[1].split('"')[0]
    browser.post(oauth.auth_url + "/login/oauth/device",
                 data={"user_code": device.user_code, "csrf_token": csrf, "decision": "deny"})
    cli = OAuth2Client(oauth.auth_url + DEVICE_TOKEN, client_id=registered.client_id, testing=True)
    job = EmulatorClockPolling(cli, device)
    job.emu = oauth.emu
    with pytest.raises(AccessDenied):
        job()


@pytest.fixture(scope="module")
def real_time_emulator() -> Iterator[Any]:
    """An emulator whose clock has not been moved: the library checks id_token times on the wall clock."""
    from blockkit.emulator.options import EmulatorOptions
    from blockkit.emulator.runtime import Emulator

    with tempfile.TemporaryDirectory(prefix="bk-oidc-") as tmp, \
            Emulator(EmulatorOptions(data=Path(tmp) / "data")) as emu:
        yield emu


def test_oidc_code_flow_with_a_validated_id_token(real_time_emulator: Any) -> None:
    env = OAuthEnv(real_time_emulator)
    try:
        registered = env.client(name="OIDC app")
        member = env.user("member")
        client = _discovered(env.auth_url, registered.client_id, client_secret=registered.client_secret,
                             redirect_uri=REDIRECT, id_token_signed_response_alg="ES256")
        client.update_authorization_server_public_keys()
        request = client.authorization_request(scope="1", nonce="n-" + "x" * 20)
        assert request.nonce and request.code_challenge_method == "S256"

        browser = env.signed_in(member["username"])
        consent = env.follow_consent(browser, browser.get(str(request.uri), headers=HTML))
        callback = env.approve(browser, consent).headers["location"]
        response = request.validate_callback(callback)  # checks state
        token = client.authorization_code(response)  # checks the id_token: signature, iss, aud, nonce, exp
        assert token.id_token is not None
        assert token.id_token.subject == str(member["id"]) and token.id_token.get_claim("nonce") == request.nonce
        assert token.id_token.alg == "ES256"
        assert _userinfo(client, token.access_token)["id"] == member["id"]
    finally:
        for opened in env.opened:
            opened.close()


def test_discovery_document_is_what_the_library_reads(oauth: OAuthEnv) -> None:
    document = httpx.get(oauth.auth_url + DISCOVERY).json()
    client = OAuth2Client.from_discovery_document(document, issuer=oauth.auth_url, client_id="x", testing=True)
    assert client.token_endpoint == document["token_endpoint"]
    assert client.userinfo_endpoint == document["userinfo_endpoint"]
    assert client.authorization_endpoint == document["authorization_endpoint"]

"""A real OAuth client library (authlib's httpx client) against the emulator's provider.

authlib builds the authorization URL with PKCE S256 and checks ``state`` on the callback;
the sign-in and consent in between are done with plain HTTP, as a browser would. Then
refresh (rotation), client credentials, revocation and userinfo, all through authlib.
"""

from __future__ import annotations

import secrets

import httpx
import pytest
from authlib.integrations.httpx_client import OAuth2Client
from authlib.integrations.base_client.errors import OAuthError
from oauth_env import AUTHORIZE, HTML, REDIRECT, REVOKE, TOKEN, USERINFO, OAuthEnv


@pytest.mark.parametrize("auth_method", ["client_secret_post", "client_secret_basic"])
def test_authlib_code_flow_refresh_revoke_userinfo(oauth: OAuthEnv, auth_method: str) -> None:
    member = oauth.user("member")
    registered = oauth.client(name="authlib app", owner=member["username"])
    app = OAuth2Client(registered.client_id, registered.client_secret, redirect_uri=REDIRECT, scope="65536",
                       code_challenge_method="S256", token_endpoint_auth_method=auth_method)
    oauth.opened.append(app)
    verifier = secrets.token_urlsafe(64)
    url, state = app.create_authorization_url(oauth.auth_url + AUTHORIZE, code_verifier=verifier)
    assert "code_challenge=" in url and "code_challenge_method=S256" in url

    browser = oauth.signed_in(member["username"])
    consent = oauth.follow_consent(browser, browser.get(url, headers=HTML))
    callback = oauth.approve(browser, consent).headers["location"]
    token = app.fetch_token(oauth.auth_url + TOKEN, authorization_response=callback, code_verifier=verifier)
    assert token["token_type"] == "Bearer" and token["expires_in"] == 3600 and token["scope"] == "65537"

    info = app.get(oauth.auth_url + USERINFO).json()
    assert info["id"] == member["id"] and info["sub"] == str(member["id"])

    old_refresh = token["refresh_token"]
    refreshed = app.refresh_token(oauth.auth_url + TOKEN, refresh_token=old_refresh)
    assert refreshed["refresh_token"] != old_refresh
    with pytest.raises(OAuthError) as reused:
        app.refresh_token(oauth.auth_url + TOKEN, refresh_token=old_refresh)
    assert reused.value.error == "invalid_grant"

    fresh = app.fetch_token(oauth.auth_url + TOKEN, authorization_response=_new_callback(oauth, app, browser),
                            code_verifier=app._verifier)  # type: ignore[attr-defined]
    revoked = app.revoke_token(oauth.auth_url + REVOKE, token=fresh["refresh_token"], token_type_hint="refresh_token")
    assert revoked.status_code == 200 and revoked.json() == {}
    assert httpx.get(oauth.auth_url + USERINFO, headers={"Authorization": f"Bearer {fresh['access_token']}"}
                     ).status_code == 401


def _new_callback(oauth: OAuthEnv, app: OAuth2Client, browser: httpx.Client) -> str:
    verifier = secrets.token_urlsafe(64)
    app._verifier = verifier  # type: ignore[attr-defined]
    url, _state = app.create_authorization_url(oauth.auth_url + AUTHORIZE, code_verifier=verifier)
    answer = browser.get(url, headers=HTML)  # consent remembered: the code comes at once
    assert answer.status_code == 302
    return answer.headers["location"]


def test_authlib_client_credentials(oauth: OAuthEnv) -> None:
    owner = oauth.user("creator")
    registered = oauth.client(owner=owner["username"], allowed_scopes=1 | 16384)
    app = OAuth2Client(registered.client_id, registered.client_secret, token_endpoint_auth_method="client_secret_post")
    oauth.opened.append(app)
    token = app.fetch_token(oauth.auth_url + TOKEN, grant_type="client_credentials")
    assert "refresh_token" not in token and token["scope"] == str(1 | 16384)
    assert app.get(oauth.auth_url + USERINFO).json()["id"] == owner["id"]
    assert app.get(oauth.base_url + "/api/v1/me").json()["id"] == owner["id"]


def test_authlib_refuses_a_mismatched_state(oauth: OAuthEnv) -> None:
    registered = oauth.client()
    app = OAuth2Client(registered.client_id, registered.client_secret, redirect_uri=REDIRECT, scope="1",
                       code_challenge_method="S256")
    oauth.opened.append(app)
    verifier = secrets.token_urlsafe(64)
    url, state = app.create_authorization_url(oauth.auth_url + AUTHORIZE, code_verifier=verifier)
    browser = oauth.signed_in(oauth.user()["username"])
    callback = oauth.approve(browser, oauth.follow_consent(browser, browser.get(url, headers=HTML))).headers["location"]
    assert f"state={state}" in callback
    with pytest.raises(Exception, match="state"):
        app.fetch_token(oauth.auth_url + TOKEN, authorization_response=callback.replace(state, "forged"),
                        code_verifier=verifier, state=state)

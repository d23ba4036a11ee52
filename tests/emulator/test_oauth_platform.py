"""The OAuth provider against the platform's behaviour and the security review's rows.

Each test names the review row it answers (``platform-fidelity-2`` section 1, and
``security-emulator`` E-rows); the map is ``oauth_coverage.REVIEW_ROWS``. Every one fails on
the code before this change (checked against ``0f86161``).
"""

from __future__ import annotations

import re

import httpx
import pytest
from oauth_env import AUTHORIZE, CONSENT_PAGE, HTML, REDIRECT, REVOKE, TOKEN, USERINFO, OAuthEnv, pkce

DEVICE = "/api/auth/oauth/device"
DEVICE_TOKEN = "/api/auth/oauth/device-token"
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


# --- consent: redirect, skipping, CSRF bound to one request, origin checks -----------------------

def test_consent_is_a_separate_page_reached_by_303(oauth: OAuthEnv) -> None:
    client = oauth.client()
    browser = oauth.signed_in(oauth.user()["username"])
    params = oauth.authorize_params(client)
    answer = browser.get(oauth.auth_url + AUTHORIZE, params=params, headers=HTML)
    assert answer.status_code == 303 and answer.headers["location"].startswith(CONSENT_PAGE + "?")
    page = browser.get(oauth.auth_url + answer.headers["location"], headers=HTML)
    assert page.status_code == 200 and 'name="csrf_token"' in page.text
    assert 'action="/api/auth/oauth/authorize"' in page.text


def test_remembered_consent_that_covers_the_request_skips_the_page(oauth: OAuthEnv) -> None:
    client = oauth.client()
    username = oauth.user()["username"]
    oauth.code_for(client, username, scope=str(1 | 65536), remember=True)
    browser = oauth.signed_in(username)
    narrower = browser.get(oauth.auth_url + AUTHORIZE, params=oauth.authorize_params(client, scope="1"))
    assert narrower.status_code == 302 and "code=" in narrower.headers["location"]
    wider = browser.get(oauth.auth_url + AUTHORIZE, params=oauth.authorize_params(client, scope=str(1 | 2)))
    assert wider.status_code == 303


def _csrf(page: httpx.Response) -> str:
    return page.text.split('name="csrf_token" value="')[1].split('"')[0]


def test_consent_csrf_token_is_bound_to_one_authorization_request(oauth: OAuthEnv) -> None:
    """E01: a token read for one request (scope 1) cannot approve another (Full, another state)."""
    client = oauth.client()
    browser = oauth.signed_in(oauth.user()["username"])
    small = oauth.authorize_params(client, scope="1", state="small")
    token = _csrf(oauth.consent_page(browser, small))
    big = {**oauth.authorize_params(client, scope="33554431", state="big"), "approved": "true", "remember": "true",
           "csrf_token": token}
    refused = browser.post(oauth.auth_url + AUTHORIZE, data=big)
    assert refused.status_code == 403 and refused.json()["error"] == "invalid_request"
    with oauth.emu.store.read() as db:
        assert db.execute("SELECT count(*) FROM oauth_consents WHERE client_id = ?",
                          (client.client_id,)).fetchone()[0] == 0
    own = browser.post(oauth.auth_url + AUTHORIZE, data={**small, "approved": "true", "csrf_token": token})
    assert own.status_code == 302 and "code=" in own.headers["location"]


@pytest.mark.parametrize("headers", [{"Origin": "http://127.0.0.1:16666"}, {"Sec-Fetch-Site": "same-site"},
                                     {"Sec-Fetch-Site": "cross-site"}, {"Origin": "null"}])
def test_consent_post_from_another_origin_is_refused(oauth: OAuthEnv, headers: dict[str, str]) -> None:
    client = oauth.client()
    browser = oauth.signed_in(oauth.user()["username"])
    params = oauth.authorize_params(client)
    page = oauth.consent_page(browser, params)
    form = {**params, "approved": "true", "csrf_token": _csrf(page)}
    refused = browser.post(oauth.auth_url + AUTHORIZE, data=form, headers=headers)
    assert refused.status_code == 403 and "another" in refused.json()["error_description"]
    same = browser.post(oauth.auth_url + AUTHORIZE, data=form,
                        headers={"Origin": oauth.auth_url, "Sec-Fetch-Site": "same-origin"})
    assert same.status_code == 302 and "code=" in same.headers["location"]


def test_signed_out_consent_post_returns_to_the_request_from_its_body(oauth: OAuthEnv) -> None:
    client = oauth.client()
    params = oauth.authorize_params(client, state="from-body")
    answer = httpx.post(oauth.auth_url + AUTHORIZE, data={**params, "approved": "true"})
    assert answer.status_code == 303
    back = httpx.URL(oauth.auth_url + answer.headers["location"]).params["returnUrl"]
    assert back.startswith(AUTHORIZE + "?") and "state=from-body" in back


# --- redirect_uri: RFC 8252 loopback (E15) ------------------------------------------------------

@pytest.mark.parametrize("registered, used, ok", [
    ("http://127.0.0.1:9000/cb", "http://127.0.0.1:51234/cb", True),
    ("http://127.0.0.1:9000/cb", "http://localhost:9000/cb", True),
    ("http://127.0.0.1:9000/cb", "http://[::1]:4000/cb", True),
    ("http://127.0.0.1/cb", "http://127.0.0.1:8123/cb", True),
    ("http://127.0.0.1:9000/cb", "http://127.0.0.1:9000/cb/extra", False),
    ("http://127.0.0.1:9000/cb", "http://127.0.0.1:9000/cb?x=1", False),
    ("http://127.0.0.1:9000/cb", "https://127.0.0.1:9000/cb", False),
    ("http://127.0.0.1:9000/cb", "http://127.0.0.1:9000/Cb", False),
    ("http://127.0.0.1:9000/cb", "http://127.0.0.1:9000/%63b", False),
    ("http://127.0.0.1:9000/cb", "http://u@127.0.0.1:9000/cb", False),
    ("http://127.0.0.1:9000/cb", "http://127.0.0.1:9000@evil.example/cb", False),
    ("http://127.0.0.1:9000/cb", "http://127.0.0.2:9000/cb", False),
    ("http://127.0.0.1:9000/cb", "HTTP://127.0.0.1:9000/cb", False),
    ("http://127.0.0.1:9000/cb", "http://127.0.0.1:9000/cb#f", False),
    ("https://app.example/cb", "https://app.example:8443/cb", False),
])
def test_loopback_redirect_uri_any_port(oauth: OAuthEnv, registered: str, used: str, ok: bool) -> None:
    client = oauth.client(redirect_uris=[registered])
    browser = oauth.signed_in(oauth.user()["username"])
    verifier, challenge = pkce()
    params = oauth.authorize_params(client, redirect_uri=used, challenge=challenge)
    page = oauth.consent_page(browser, params)
    if not ok:
        assert page.status_code == 400 and "location" not in page.headers
        return
    answer = oauth.approve(browser, page)
    assert answer.status_code == 302 and answer.headers["location"].startswith(used + "?")
    code = httpx.URL(answer.headers["location"]).params["code"]
    assert oauth.exchange(client, code, verifier, redirect_uri=used).status_code == 200


# --- code exchange ---------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [{"code_verifier": "y" * 43}, {"redirect_uri": REDIRECT + "/2"}],
                         ids=["wrong-verifier", "wrong-redirect-uri"])
def test_failed_exchange_uses_the_code_up(oauth: OAuthEnv, bad: dict[str, str]) -> None:
    client = oauth.client()
    code, verifier = oauth.code_for(client, oauth.user()["username"])
    first = oauth.exchange(client, code, verifier, **bad)
    assert first.status_code == 400 and "used up" in first.json()["error_description"]
    retry = oauth.exchange(client, code, verifier)
    assert retry.status_code == 400 and retry.json() == {
        "error": "invalid_grant", "error_description": "Invalid grant: authorization code is invalid"}


def test_code_replay_is_refused_and_the_first_tokens_stay(oauth: OAuthEnv) -> None:
    """E11 as the platform does it: the replay is refused; the first exchange's tokens are not revoked."""
    client = oauth.client()
    code, verifier = oauth.code_for(client, oauth.user()["username"])
    first = oauth.exchange(client, code, verifier).json()
    assert oauth.exchange(client, code, verifier).json()["error"] == "invalid_grant"
    assert oauth.userinfo(first["access_token"]).status_code == 200


def test_token_format_and_json_body(oauth: OAuthEnv) -> None:
    client = oauth.client()
    code, verifier = oauth.code_for(client, oauth.user()["username"])
    answer = oauth.http.post(oauth.auth_url + TOKEN, json={
        "grant_type": "authorization_code", "code": code, "code_verifier": verifier, "redirect_uri": REDIRECT,
        **client.creds()})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    for name in ("access_token", "refresh_token"):
        assert re.fullmatch(r"civitai_[0-9a-f]{36}", body[name]), body[name]
    assert isinstance(body["scope"], str)  # the spec's string
    revoked = oauth.http.post(oauth.auth_url + REVOKE, json={"token": body["access_token"], **client.creds()})
    assert revoked.status_code == 200


@pytest.mark.parametrize("case", ["unknown-client", "wrong-secret", "public-with-secret"])
def test_client_authentication_failures(oauth: OAuthEnv, case: str) -> None:
    """Body credentials: 400 invalid_client, no WWW-Authenticate; Basic: 401 and ``Basic realm`` (E17)."""
    confidential, public = oauth.client(), oauth.client(confidential=False)
    client_id, secret = {"unknown-client": ("no-such", "x"), "wrong-secret": (confidential.client_id, "wrong"),
                         "public-with-secret": (public.client_id, "x")}[case]
    body = oauth.token({"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret})
    assert body.status_code == 400 and body.json()["error"] == "invalid_client"
    assert "www-authenticate" not in body.headers
    assert body.json()["error_description"] != "invalid_client"
    basic = oauth.token({"grant_type": "client_credentials"}, auth=(client_id, secret))
    assert basic.status_code == 401 and basic.json()["error"] == "invalid_client"
    assert basic.headers["www-authenticate"].startswith('Basic realm="blockkit"')


def test_failed_client_authentication_cannot_lock_the_client_out(oauth: OAuthEnv) -> None:
    """E12: 21 wrong secrets for a client_id, then the real client with its secret still gets a token."""
    victim = oauth.client()
    for _ in range(21):
        oauth.token({"grant_type": "client_credentials", "client_id": victim.client_id, "client_secret": "nope"})
    answer = oauth.token({"grant_type": "client_credentials", **victim.creds()})
    assert answer.status_code == 200, answer.text
    for _ in range(5):  # the guesser itself is slowed down (per source address)
        guessed = oauth.token({"grant_type": "client_credentials", "client_id": victim.client_id,
                               "client_secret": "nope"})
    assert guessed.status_code == 429 and guessed.json()["error"] == "rate_limited"
    assert int(guessed.headers["retry-after"]) >= 1


def test_bogus_codes_for_a_public_client_do_not_lock_it_out(oauth: OAuthEnv) -> None:
    public = oauth.client(confidential=False)
    code, verifier = oauth.code_for(public, oauth.user()["username"])
    for _ in range(21):
        oauth.exchange(public, "bogus-code", verifier)
    assert oauth.exchange(public, code, verifier).status_code == 200


def test_token_cors_echoes_a_public_clients_allowed_origin_without_credentials(oauth: OAuthEnv) -> None:
    public = oauth.client(confidential=False, origins=["http://app.example:8080"])
    code, verifier = oauth.code_for(public, oauth.user()["username"])
    allowed = oauth.exchange(public, code, verifier, client_secret=None)
    assert allowed.headers["access-control-allow-origin"] == "*"  # no Origin: the wildcard
    code, verifier = oauth.code_for(public, oauth.user()["username"])
    answer = oauth.token({"grant_type": "authorization_code", "code": code, "code_verifier": verifier,
                          "redirect_uri": REDIRECT, "client_id": public.client_id},
                         headers={"Origin": "http://app.example:8080"})
    assert answer.headers["access-control-allow-origin"] == "http://app.example:8080"
    assert "access-control-allow-credentials" not in answer.headers


# --- revoke (E14) and userinfo ---------------------------------------------------------------------

def test_revoke_refuses_a_public_clients_foreign_origin(oauth: OAuthEnv) -> None:
    public = oauth.client(confidential=False, origins=["http://app.example:8080"])
    body = oauth.grant(public, oauth.user()["username"])
    refused = oauth.http.post(oauth.auth_url + REVOKE, data={"token": body["access_token"],
                                                             "client_id": public.client_id},
                              headers={"Origin": "https://evil.example"})
    assert refused.status_code == 403 and refused.json()["error"] == "origin_not_allowed"
    assert "access-control-allow-origin" not in refused.headers


def test_confidential_client_revokes_only_its_owners_tokens(oauth: OAuthEnv, capfd: pytest.CaptureFixture[str]
                                                            ) -> None:
    owner, other = oauth.user("creator"), oauth.user("member")
    client = oauth.client(owner=owner["username"])
    others = oauth.grant(client, other["username"])
    answer = oauth.http.post(oauth.auth_url + REVOKE, data={"token": others["access_token"], **client.creds()})
    assert answer.status_code == 200 and answer.json() == {}
    assert oauth.userinfo(others["access_token"]).status_code == 200  # another user's token: left alone
    assert "nothing revoked" in capfd.readouterr().err  # and the emulator says so
    own = oauth.grant(client, owner["username"])
    oauth.http.post(oauth.auth_url + REVOKE, data={"token": own["access_token"], **client.creds()})
    assert oauth.userinfo(own["access_token"]).status_code == 401


def test_userinfo_other_methods_are_405(oauth: OAuthEnv) -> None:
    answer = oauth.http.post(oauth.auth_url + USERINFO)
    assert answer.status_code == 405 and "GET" in answer.headers["allow"]


# --- device authorization grant (RFC 8628) ----------------------------------------------------------

def _start_device(oauth: OAuthEnv, client_id: str, scope: str = "1") -> dict[str, str]:
    answer = oauth.http.post(oauth.auth_url + DEVICE, data={"client_id": client_id, "scope": scope})
    assert answer.status_code == 200, answer.text
    return answer.json()


def _poll(oauth: OAuthEnv, client_id: str, device_code: str) -> httpx.Response:
    return oauth.http.post(oauth.auth_url + DEVICE_TOKEN, data={"grant_type": DEVICE_GRANT,
                                                                "device_code": device_code, "client_id": client_id})


def test_device_grant_over_http(oauth: OAuthEnv) -> None:
    client = oauth.client(confidential=False)
    start = _start_device(oauth, client.client_id, scope="65536")
    assert re.fullmatch(r"[0-9a-f]{64}", start["device_code"])
    assert re.fullmatch(r"[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}", start["user_code"])
    assert start["verification_uri"] == oauth.auth_url + "/login/oauth/device"
    assert start["verification_uri_complete"] == start["verification_uri"] + "?code=" + start["user_code"]
    assert start["expires_in"] == 900 and start["interval"] == 5
    assert _poll(oauth, client.client_id, start["device_code"]).json()["error"] == "authorization_pending"
    slow = _poll(oauth, client.client_id, start["device_code"])
    assert slow.json()["error"] == "slow_down" and "10 seconds" in slow.json()["error_description"]
    oauth.advance(11)
    assert _poll(oauth, client.client_id, start["device_code"]).json()["error"] == "authorization_pending"
    other = oauth.client()
    assert _poll(oauth, other.client_id, start["device_code"]).json()["error"] == "invalid_grant"

    member = oauth.user("member")
    browser = oauth.signed_in(member["username"])
    info = browser.post(oauth.auth_url + "/api/auth/oauth/device-info", json={"user_code": start["user_code"]})
    assert info.status_code == 200 and info.json()["client"]["name"] == "Test App"
    assert any("Buzz balance" in label for label in info.json()["scopes"])
    lowercase = start["user_code"].replace("-", "").lower()  # typed loosely: the platform normalises it
    approved = browser.post(oauth.auth_url + "/api/auth/oauth/device-approve", json={"user_code": lowercase})
    assert approved.status_code == 200 and approved.json() == {"success": True}
    oauth.advance(16)
    tokens = _poll(oauth, client.client_id, start["device_code"])
    assert tokens.status_code == 200, tokens.text
    body = tokens.json()
    assert set(body) == {"access_token", "token_type", "expires_in", "refresh_token", "scope"}
    assert body["scope"] == str(65536 | 1) and body["expires_in"] == 3600
    assert oauth.userinfo(body["access_token"]).json()["id"] == member["id"]
    assert oauth.refresh(client, body["refresh_token"]).status_code == 200
    assert _poll(oauth, client.client_id, start["device_code"]).json()["error"] == "expired_token"  # used once


def test_device_code_expires_on_the_emulator_clock(oauth: OAuthEnv) -> None:
    client = oauth.client(confidential=False)
    start = _start_device(oauth, client.client_id)
    oauth.advance(901)
    expired = _poll(oauth, client.client_id, start["device_code"])
    assert expired.status_code == 400 and expired.json()["error"] == "expired_token"
    browser = oauth.signed_in(oauth.user()["username"])
    late = browser.post(oauth.auth_url + "/api/auth/oauth/device-approve", json={"user_code": start["user_code"]})
    assert late.status_code == 400 and late.json()["error"] == "invalid_code"


def test_device_errors(oauth: OAuthEnv) -> None:
    narrow = oauth.client(allowed_scopes=1)
    post = oauth.http.post
    assert post(oauth.auth_url + DEVICE, data={}).json()["error"] == "invalid_request"
    assert post(oauth.auth_url + DEVICE, data={"client_id": "nope"}).json()["error"] == "invalid_client"
    assert post(oauth.auth_url + DEVICE, data={"client_id": narrow.client_id, "scope": "65536"}
                ).json()["error"] == "invalid_scope"
    assert post(oauth.auth_url + DEVICE_TOKEN, data={"grant_type": "x"}).json()["error"] == "unsupported_grant_type"
    assert post(oauth.auth_url + DEVICE_TOKEN, data={"grant_type": DEVICE_GRANT}).json()["error"] == "invalid_request"
    assert _poll(oauth, narrow.client_id, "0" * 64).json()["error"] == "expired_token"
    signed_out = post(oauth.auth_url + "/api/auth/oauth/device-approve", json={"user_code": "ABCD-EFGH"})
    assert signed_out.status_code == 401


def test_device_deny_on_the_page(oauth: OAuthEnv) -> None:
    client = oauth.client(confidential=False)
    start = _start_device(oauth, client.client_id)
    browser = oauth.signed_in(oauth.user()["username"])
    page = browser.get(start["verification_uri_complete"], headers=HTML)
    assert page.status_code == 200 and start["user_code"] in page.text
    form = {"user_code": start["user_code"], "csrf_token": _csrf(page), "decision": "deny"}
    done = browser.post(oauth.auth_url + "/login/oauth/device", data=form)
    assert done.status_code == 200 and "denied" in done.text
    assert _poll(oauth, client.client_id, start["device_code"]).json()["error"] == "access_denied"


def test_device_form_token_is_bound_to_one_user_code(oauth: OAuthEnv) -> None:
    # Security review 2, S16: the device page's token was the session's own secret, so a token
    # read for code 1 approved code 2.
    client = oauth.client(confidential=False)
    first, second = _start_device(oauth, client.client_id), _start_device(oauth, client.client_id)
    browser = oauth.signed_in(oauth.user()["username"])
    token = _csrf(browser.get(first["verification_uri_complete"], headers=HTML))
    other = browser.post(oauth.auth_url + "/login/oauth/device",
                         data={"user_code": second["user_code"], "csrf_token": token, "decision": "approve"})
    assert other.status_code == 403
    assert _poll(oauth, client.client_id, second["device_code"]).json()["error"] == "authorization_pending"
    own = browser.post(oauth.auth_url + "/login/oauth/device",
                       data={"user_code": first["user_code"], "csrf_token": token, "decision": "approve"})
    assert own.status_code == 200 and "approved" in own.text


def test_device_approval_from_another_origin_is_refused(oauth: OAuthEnv) -> None:
    """A page on another port that started a device code cannot approve it with the victim's cookie."""
    client = oauth.client(confidential=False)
    start = _start_device(oauth, client.client_id)
    browser = oauth.signed_in(oauth.user()["username"])
    for headers in ({"Origin": "http://127.0.0.1:16666"}, {"Sec-Fetch-Site": "same-site"}):
        refused = browser.post(oauth.auth_url + "/api/auth/oauth/device-approve",
                               data={"user_code": start["user_code"]}, headers=headers)
        assert refused.status_code == 403
    assert _poll(oauth, client.client_id, start["device_code"]).json()["error"] == "authorization_pending"


def test_device_page_needs_a_session(oauth: OAuthEnv) -> None:
    answer = httpx.get(oauth.auth_url + "/login/oauth/device?code=ABCD-EFGH")
    assert answer.status_code == 303 and answer.headers["location"].startswith("/login?returnUrl=")


# --- OpenID Connect --------------------------------------------------------------------------------

def test_discovery_and_jwks(oauth: OAuthEnv) -> None:
    doc = httpx.get(oauth.auth_url + "/.well-known/openid-configuration").json()
    assert doc["issuer"] == oauth.auth_url
    assert doc["token_endpoint"] == oauth.auth_url + TOKEN
    assert doc["device_authorization_endpoint"] == oauth.auth_url + DEVICE
    assert doc["id_token_signing_alg_values_supported"] == ["ES256"]
    assert doc["code_challenge_methods_supported"] == ["S256"]
    assert DEVICE_GRANT in doc["grant_types_supported"]
    jwks = httpx.get(doc["jwks_uri"]).json()
    (key,) = jwks["keys"]
    assert key["kty"] == "EC" and key["crv"] == "P-256" and key["alg"] == "ES256" and "d" not in key


def test_id_token_carries_the_nonce(oauth: OAuthEnv) -> None:
    from joserfc import jwt
    from joserfc.jwk import KeySet

    client = oauth.client()
    member = oauth.user()
    browser = oauth.signed_in(member["username"])
    verifier, challenge = pkce()
    page = oauth.consent_page(browser, oauth.authorize_params(client, challenge=challenge, nonce="n-123"))
    code = httpx.URL(oauth.approve(browser, page).headers["location"]).params["code"]
    body = oauth.exchange(client, code, verifier).json()
    keys = KeySet.import_key_set(httpx.get(oauth.auth_url + "/.well-known/jwks.json").json())
    token = jwt.decode(body["id_token"], keys, algorithms=["ES256"])
    assert token.header["alg"] == "ES256"
    claims = token.claims
    assert claims["nonce"] == "n-123" and claims["aud"] == client.client_id and claims["iss"] == oauth.auth_url
    assert claims["sub"] == str(member["id"]) and claims["exp"] - claims["iat"] == 3600
    without = oauth.grant(client, member["username"])  # no nonce: no id_token, as on the platform
    assert "id_token" not in without
    assert "id_token" not in oauth.refresh(client, body["refresh_token"]).json()


# --- E06: OAuth scopes on the catalogue's private routes --------------------------------------------

def test_catalogue_private_routes_do_not_check_oauth_scopes_as_on_the_platform(oauth: OAuthEnv) -> None:
    """E06 recorded: the platform's REST routes (AuthedEndpoint) ignore a token's scope bits."""
    from blockkit.emulator.store import tokens

    member = oauth.user("member")
    with oauth.emu.store.write() as db:
        raw = tokens.issue_access_token(db, user_id=member["id"], scope=0, now=oauth.emu.clock.now())
    headers = {"Authorization": f"Bearer {raw}"}
    assert oauth.userinfo(raw).status_code == 403  # userinfo checks UserRead, as the platform's does
    me = httpx.get(oauth.base_url + "/api/v1/me", headers=headers)
    assert me.status_code == 200 and me.json()["id"] == member["id"]


# --- held rows of the security review (H01-H11): they stay held ------------------------------------

def test_concurrent_exchanges_of_one_code_give_one_token(oauth: OAuthEnv) -> None:
    """H03: ten exchanges of one code at once; exactly one gets tokens."""
    from concurrent.futures import ThreadPoolExecutor

    client = oauth.client()
    code, verifier = oauth.code_for(client, oauth.user()["username"])
    data = {"grant_type": "authorization_code", "code": code, "code_verifier": verifier, "redirect_uri": REDIRECT,
            **client.creds()}

    def exchange(_: int) -> int:
        with httpx.Client(timeout=30) as http:
            return http.post(oauth.auth_url + TOKEN, data=data).status_code

    with ThreadPoolExecutor(max_workers=10) as pool:
        statuses = list(pool.map(exchange, range(10)))
    assert sorted(statuses) == [200] + [400] * 9


def test_state_comes_back_byte_for_byte(oauth: OAuthEnv) -> None:
    """H05: an odd state on success and on Deny."""
    client = oauth.client()
    odd = "a b&c=d%26/?#é"
    code, _verifier = oauth.code_for(client, oauth.user()["username"], state=odd)
    assert code
    browser = oauth.signed_in(oauth.user("free_user")["username"])
    page = oauth.consent_page(browser, oauth.authorize_params(client, state=odd))
    denied = oauth.approve(browser, page, approved="false")
    assert httpx.URL(denied.headers["location"]).params["state"] == odd


def test_tokens_never_travel_in_urls_and_answers_are_not_stored(oauth: OAuthEnv) -> None:
    """H07: no-store on token answers; a token in the query of userinfo is not accepted."""
    client = oauth.client()
    body = oauth.grant(client, oauth.user()["username"])
    assert oauth.http.get(oauth.auth_url + USERINFO, params={"access_token": body["access_token"]}
                          ).status_code == 401
    answer = oauth.refresh(client, body["refresh_token"])
    assert answer.headers["cache-control"] == "no-store" and answer.headers["pragma"] == "no-cache"


def test_pages_cannot_be_framed(oauth: OAuthEnv) -> None:
    """H11: the login, consent and device pages refuse framing."""
    client = oauth.client()
    browser = oauth.signed_in(oauth.user()["username"])
    pages = [httpx.get(oauth.auth_url + "/login"), oauth.consent_page(browser, oauth.authorize_params(client)),
             browser.get(oauth.auth_url + "/login/oauth/device")]
    for page in pages:
        assert page.status_code == 200
        assert page.headers["x-frame-options"] == "DENY"
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]


def test_revoke_without_a_token_and_its_rate_limit_name(oauth: OAuthEnv) -> None:
    missing = oauth.http.post(oauth.auth_url + REVOKE, data={"token_type_hint": "access_token"})
    assert missing.status_code == 400 and "Missing token" in missing.json()["error_description"]
    for _ in range(21):
        last = oauth.http.post(oauth.auth_url + REVOKE, data={"token": "t"})
    assert last.status_code == 429 and last.json()["error"] == "rate_limited"

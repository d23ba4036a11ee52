"""The OAuth provider over HTTP: authorize, token, revoke, userinfo, sign-in, legacy paths, CORS.

Every row of the spec's OAuth error and states tables has a test here (the map is
``oauth_coverage.py``). The emulator is the OAuth tests' own (``oauth_env``); its clock
moves code and token expiry.
"""

from __future__ import annotations

import json

import httpx
import pytest
from oauth_env import AUTHORIZE, HTML, REDIRECT, REVOKE, TOKEN, USERINFO, OAuthEnv, pkce

FULL = 33554431


# --- authorize: success, consent, remember ------------------------------------------------------

def test_no_session_redirects_to_login_and_back(oauth: OAuthEnv) -> None:
    client = oauth.client()
    params = oauth.authorize_params(client)
    answer = httpx.get(oauth.auth_url + AUTHORIZE, params=params)
    assert answer.status_code == 303
    login = httpx.URL(oauth.auth_url + answer.headers["location"])
    assert login.path == "/login"
    back = login.params["returnUrl"]
    assert back.startswith(AUTHORIZE + "?") and f"client_id={client.client_id}" in back
    page = httpx.get(str(login))
    assert page.status_code == 200
    member = oauth.user("member")["username"]
    assert f'value="{member}"' in page.text  # the sign-in page lists the seeded users


def test_code_flow_issues_single_use_code_and_exact_body(oauth: OAuthEnv) -> None:
    client = oauth.client()
    code, verifier = oauth.code_for(client, oauth.user()["username"], scope="32768")
    answer = oauth.exchange(client, code, verifier)
    assert answer.status_code == 200
    body = answer.json()
    assert set(body) == {"access_token", "token_type", "expires_in", "refresh_token", "scope"}
    assert body["token_type"] == "Bearer" and body["expires_in"] == 3600
    assert body["scope"] == str(32768 | 1)  # UserRead is granted to every token
    assert answer.headers["cache-control"] == "no-store"
    again = oauth.exchange(client, code, verifier)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"


def test_consent_page_shows_client_scopes_and_buzz_limit(oauth: OAuthEnv) -> None:
    client = oauth.client(name="Consent Check App")
    browser = oauth.signed_in(oauth.user()["username"])
    page = oauth.consent_page(browser, oauth.authorize_params(client, scope=str(32768 | 65536)))
    assert page.status_code == 200
    assert "Consent Check App" in page.text
    for words in ("Generate, train and scan on your behalf", "See your Buzz balance",
                  "See your username, profile picture"):
        assert words in page.text
    assert 'name="buzz_limit"' in page.text and "100 Buzz a day" in page.text
    assert 'name="csrf_token"' in page.text
    cookie = browser.cookies.jar
    assert any(c.name == "bk_session" and c.has_nonstandard_attr("HttpOnly") for c in cookie)


def test_consent_page_says_only_what_the_request_can_do(oauth: OAuthEnv) -> None:
    # Issue 37: a warning box on the basic read scope (UserRead, in every grant) and a Buzz-limit
    # box on a request that cannot spend Buzz.
    client = oauth.client(name="Reader App")
    browser = oauth.signed_in(oauth.user()["username"])
    basic = oauth.consent_page(browser, oauth.authorize_params(client, scope="1"))
    assert basic.status_code == 200 and "See your username, profile picture" in basic.text
    assert 'class="sensitive"' not in basic.text
    assert 'name="buzz_limit"' not in basic.text and "Buzz limit" not in basic.text
    reads = oauth.consent_page(browser, oauth.authorize_params(client, scope=str(1 | 65536)))  # + BuzzRead
    assert reads.text.count('class="sensitive"') == 1 and 'name="buzz_limit"' not in reads.text
    for spending in (1 << 12, 1 << 15, 1 << 20):  # BountiesWrite, AIServicesWrite, SocialTip
        page = oauth.consent_page(browser, oauth.authorize_params(client, scope=str(spending)))
        assert 'name="buzz_limit"' in page.text and "100 Buzz a day" in page.text, spending
    # Allowed without a limit field, the grant stands and stores no limit.
    code, _verifier = oauth.code_for(client, oauth.user()["username"], scope="1")
    assert code


def test_session_cookie_attributes(oauth: OAuthEnv) -> None:
    answer = httpx.post(oauth.auth_url + "/login", data={"username": oauth.user()["username"], "returnUrl": "/"})
    header = answer.headers["set-cookie"].lower()
    assert "httponly" in header and "samesite=lax" in header and "path=/" in header


def test_remembered_consent_skips_screen_wider_scope_shows_it(oauth: OAuthEnv) -> None:
    client = oauth.client()
    username = oauth.user()["username"]
    oauth.code_for(client, username, scope="1", remember=True)
    browser = oauth.signed_in(username)
    same = oauth.consent_page(browser, oauth.authorize_params(client, scope="1"))
    assert same.status_code == 302 and "code=" in same.headers["location"]
    wider = oauth.consent_page(browser, oauth.authorize_params(client, scope=str(1 | 65536)))
    assert wider.status_code == 200 and 'name="approved"' in wider.text


def test_without_remember_consent_is_asked_again(oauth: OAuthEnv) -> None:
    client = oauth.client()
    username = oauth.user()["username"]
    oauth.code_for(client, username, scope="1", remember=False)
    again = oauth.consent_page(oauth.signed_in(username), oauth.authorize_params(client, scope="1"))
    assert again.status_code == 200


def test_remember_stores_consent_and_buzz_limit(oauth: OAuthEnv) -> None:
    client = oauth.client()
    member = oauth.user()
    limit = [{"type": "sliding", "limit": 500, "window": "day", "unit": 1}]
    oauth.code_for(client, member["username"], scope=str(32768), buzz_limit=json.dumps(limit))
    with oauth.emu.store.read() as db:
        row = db.execute("SELECT scope, buzz_limit FROM oauth_consents WHERE user_id = ? AND client_id = ?",
                         (member["id"], client.client_id)).fetchone()
    assert row[0] == 32769 and json.loads(row[1]) == limit


def test_bad_buzz_limit_is_invalid_request(oauth: OAuthEnv) -> None:
    client = oauth.client()
    browser = oauth.signed_in(oauth.user()["username"])
    page = oauth.consent_page(browser, oauth.authorize_params(client, scope="32768"))
    for bad in ("{not json", json.dumps([{"type": "sliding", "limit": -5, "window": "day", "unit": 1}]),
                json.dumps({"limit": 5})):
        answer = oauth.approve(browser, page, buzz_limit=bad)
        assert answer.status_code == 400 and answer.json()["error"] == "invalid_request", bad


def test_deny_redirects_access_denied(oauth: OAuthEnv) -> None:
    client = oauth.client()
    browser = oauth.signed_in(oauth.user()["username"])
    page = oauth.consent_page(browser, oauth.authorize_params(client, state="deny-me"))
    answer = oauth.approve(browser, page, approved="false")
    location = httpx.URL(answer.headers["location"])
    assert answer.status_code == 303 and location.params["error"] == "access_denied"  # the platform's 303
    assert location.params["error_description"] == "The user denied the authorization request"
    assert location.params["state"] == "deny-me" and "code" not in location.params


def test_consent_post_needs_the_sessions_csrf_token(oauth: OAuthEnv) -> None:
    client = oauth.client()
    browser = oauth.signed_in(oauth.user()["username"])
    params = oauth.authorize_params(client)
    forged = browser.post(oauth.auth_url + AUTHORIZE, data={**params, "approved": "true", "csrf_token": "guess"})
    assert forged.status_code == 403
    other = oauth.signed_in(oauth.user("free_user")["username"])
    page = oauth.consent_page(other, params)  # a real token, but of another session
    token = page.text.split('name="csrf_token" value="')[1].split('"')[0]
    crossed = browser.post(oauth.auth_url + AUTHORIZE, data={**params, "approved": "true", "csrf_token": token})
    assert crossed.status_code == 403


# --- authorize: the spec's error rows ------------------------------------------------------------

@pytest.mark.parametrize("change, error", [
    ({"client_id": None}, "invalid_request"),
    ({"redirect_uri": None}, "invalid_request"),
    ({"redirect_uri": REDIRECT + "/other"}, "invalid_request"),
    ({"redirect_uri": REDIRECT + "?x=1"}, "invalid_request"),
    ({"client_id": "no-such-client"}, "invalid_client"),
], ids=lambda v: json.dumps(v) if isinstance(v, dict) else v)
def test_authorize_error_rows_before_the_redirect_uri_is_known(oauth: OAuthEnv, change: dict[str, str | None],
                                                               error: str) -> None:
    client = oauth.client()
    browser = oauth.signed_in(oauth.user()["username"])
    params = {**oauth.authorize_params(client), **change}
    params = {k: v for k, v in params.items() if v is not None}
    answer = browser.get(oauth.auth_url + AUTHORIZE, params=params)
    assert answer.status_code == 400
    assert answer.json()["error"] == error and answer.json()["error_description"]
    assert "location" not in answer.headers  # never sent to a redirect_uri
    page = browser.get(oauth.auth_url + AUTHORIZE, params=params, headers=HTML)
    assert page.status_code == 400 and "text/html" in page.headers["content-type"] and error in page.text
    assert "location" not in page.headers


@pytest.mark.parametrize("change, error", [
    ({"code_challenge": None}, "invalid_request"),
    ({"code_challenge_method": None}, "invalid_request"),
    ({"code_challenge_method": "plain"}, "invalid_request"),
    ({"code_challenge": "short"}, "invalid_request"),
    ({"state": None}, "invalid_request"),
    ({"scope": None}, "invalid_request"),
    ({"response_type": "token"}, "unsupported_response_type"),
    ({"scope": "-1"}, "invalid_scope"),
    ({"scope": "1.5"}, "invalid_scope"),
    ({"scope": "UserRead"}, "invalid_scope"),
    ({"scope": "openid"}, "invalid_scope"),  # an OIDC relying party's default: refused, as on the platform
    ({"scope": "openid profile"}, "invalid_scope"),
    ({"scope": str(FULL + 1)}, "invalid_scope"),
], ids=lambda v: json.dumps(v) if isinstance(v, dict) else v)
def test_authorize_error_rows(oauth: OAuthEnv, change: dict[str, str | None], error: str) -> None:
    """The spec's 400 for a program; a browser goes back to the validated redirect_uri (E16)."""
    client = oauth.client()
    browser = oauth.signed_in(oauth.user()["username"])
    params = {**oauth.authorize_params(client, state="err-state"), **change}
    params = {k: v for k, v in params.items() if v is not None}
    answer = browser.get(oauth.auth_url + AUTHORIZE, params=params)
    assert answer.status_code == 400
    body = answer.json()
    assert body["error"] == error and body["error_description"]
    assert body["error_description"] != error  # says something real, not the code again
    assert "location" not in answer.headers
    navigated = browser.get(oauth.auth_url + AUTHORIZE, params=params, headers=HTML)
    assert navigated.status_code == 302
    location = httpx.URL(navigated.headers["location"])
    assert str(location).startswith(REDIRECT + "?") and location.params["error"] == error
    assert location.params["error_description"] and "code" not in location.params
    if "state" in params:
        assert location.params["state"] == "err-state"
    else:
        assert "state" not in location.params


@pytest.mark.parametrize("change, description", [
    ({"code_challenge": None, "code_challenge_method": None, "state": None}, "PKCE required"),
    ({"code_challenge_method": "plain", "state": None}, "Only S256"),
    ({"state": None, "scope": "abc"}, "state parameter is required"),
], ids=["pkce-before-state", "s256-before-state", "state-before-scope"])
def test_authorize_checks_in_the_platforms_order(oauth: OAuthEnv, change: dict[str, str | None],
                                                 description: str) -> None:
    client = oauth.client()
    browser = oauth.signed_in(oauth.user()["username"])
    params = {k: v for k, v in {**oauth.authorize_params(client), **change}.items() if v is not None}
    answer = browser.get(oauth.auth_url + AUTHORIZE, params=params)
    assert answer.status_code == 400 and description in answer.json()["error_description"]


def test_scope_above_client_allowed_scopes_is_invalid_scope(oauth: OAuthEnv) -> None:
    client = oauth.client(allowed_scopes=1)
    browser = oauth.signed_in(oauth.user()["username"])
    answer = browser.get(oauth.auth_url + AUTHORIZE, params=oauth.authorize_params(client, scope="65536"))
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_scope"


def test_unregistered_redirect_uri_is_a_page_never_a_redirect(oauth: OAuthEnv) -> None:
    client = oauth.client()
    browser = oauth.signed_in(oauth.user()["username"])
    evil = "http://evil.example/steal"
    page = browser.get(oauth.auth_url + AUTHORIZE, params=oauth.authorize_params(client, redirect_uri=evil),
                       headers=HTML)
    assert page.status_code == 400 and "location" not in page.headers and "evil.example" not in page.text


def test_authorize_rate_limit_is_10_a_minute_per_user(oauth: OAuthEnv) -> None:
    client = oauth.client()
    username = oauth.user("creator")["username"]
    browser = oauth.signed_in(username)
    params = oauth.authorize_params(client)
    statuses = [browser.get(oauth.auth_url + AUTHORIZE, params=params).status_code for _ in range(11)]
    assert statuses[:10] == [303] * 10 and statuses[10] == 429  # 303: to the consent page
    limited = browser.get(oauth.auth_url + AUTHORIZE, params=params)
    assert limited.json()["error"] == "rate_limit" and int(limited.headers["retry-after"]) >= 1  # the spec's name
    other = oauth.signed_in(oauth.user("free_user")["username"])  # per user: another user is not limited
    assert other.get(oauth.auth_url + AUTHORIZE, params=params).status_code == 303
    oauth.advance(61)
    assert browser.get(oauth.auth_url + AUTHORIZE, params=params).status_code == 303


# --- token --------------------------------------------------------------------------------------

def test_code_expires_after_10_minutes(oauth: OAuthEnv) -> None:
    client = oauth.client()
    code, verifier = oauth.code_for(client, oauth.user()["username"])
    oauth.advance(601)
    answer = oauth.exchange(client, code, verifier)
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_grant"


def test_code_within_10_minutes_works(oauth: OAuthEnv) -> None:
    client = oauth.client()
    code, verifier = oauth.code_for(client, oauth.user()["username"])
    oauth.advance(590)
    assert oauth.exchange(client, code, verifier).status_code == 200


@pytest.mark.parametrize("override, error", [
    ({"code_verifier": "x" * 43}, "invalid_grant"),          # verifier mismatch
    ({"code_verifier": "short"}, "invalid_request"),       # malformed: the platform's invalid_request
    ({"code": "unknown-code-value"}, "invalid_grant"),
    ({"redirect_uri": REDIRECT + "/2"}, "invalid_request"),  # not the authorize redirect_uri
    ({"code_verifier": None}, "invalid_request"),
    ({"code": None}, "invalid_request"),
    ({"redirect_uri": None}, "invalid_request"),
    ({"client_secret": "wrong"}, "invalid_client"),
    ({"client_secret": None}, "invalid_request"),
], ids=lambda v: json.dumps(v) if isinstance(v, dict) else v)
def test_code_exchange_error_rows(oauth: OAuthEnv, override: dict[str, str | None], error: str) -> None:
    client = oauth.client()
    code, verifier = oauth.code_for(client, oauth.user()["username"])
    answer = oauth.exchange(client, code, verifier, **override)
    assert answer.json()["error"] == error, answer.text
    assert answer.status_code in (400, 401)


def test_code_is_bound_to_its_client(oauth: OAuthEnv) -> None:
    client, other = oauth.client(), oauth.client()
    code, verifier = oauth.code_for(client, oauth.user()["username"])
    answer = oauth.exchange(other, code, verifier)
    assert answer.json()["error"] == "invalid_grant"


def test_public_client_secret_refused_and_pkce_alone_works(oauth: OAuthEnv) -> None:
    public = oauth.client(confidential=False)
    code, verifier = oauth.code_for(public, oauth.user()["username"])
    refused = oauth.exchange(public, code, verifier, client_secret="anything")
    assert refused.json()["error"] == "invalid_client"
    assert oauth.exchange(public, code, verifier).status_code == 200


def test_client_secret_by_http_basic(oauth: OAuthEnv) -> None:
    client = oauth.client()
    code, verifier = oauth.code_for(client, oauth.user()["username"])
    answer = oauth.token({"grant_type": "authorization_code", "code": code, "code_verifier": verifier,
                          "redirect_uri": REDIRECT}, auth=(client.client_id, client.client_secret or ""))
    assert answer.status_code == 200, answer.text


def test_unknown_client_is_invalid_client(oauth: OAuthEnv) -> None:
    answer = oauth.token({"grant_type": "client_credentials", "client_id": "nope", "client_secret": "x"})
    assert answer.json()["error"] == "invalid_client"


@pytest.mark.parametrize("grant", ["password", "implicit", "urn:ietf:params:oauth:grant-type:device_code"])
def test_unsupported_grant_type(oauth: OAuthEnv, grant: str) -> None:
    answer = oauth.token({"grant_type": grant, "client_id": "x"})
    assert answer.status_code == 400 and answer.json()["error"] == "unsupported_grant_type"


def test_missing_grant_type_and_non_form_body(oauth: OAuthEnv) -> None:
    assert oauth.token({"client_id": "x"}).json()["error"] == "invalid_request"
    answer = oauth.http.post(oauth.auth_url + TOKEN, json={"grant_type": "client_credentials"})
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_request"


def test_refresh_rotates_and_old_token_stops_working(oauth: OAuthEnv) -> None:
    client = oauth.client()
    first = oauth.grant(client, oauth.user()["username"], scope=str(1 | 65536))
    second = oauth.refresh(client, first["refresh_token"])
    assert second.status_code == 200
    body = second.json()
    assert body["refresh_token"] != first["refresh_token"] and body["access_token"] != first["access_token"]
    assert body["scope"] == first["scope"]
    assert oauth.userinfo(body["access_token"]).status_code == 200
    assert oauth.refresh(client, body["refresh_token"]).status_code == 200


def test_reused_refresh_token_is_refused_and_the_new_pair_keeps_working(oauth: OAuthEnv) -> None:
    """The platform's reuse rule: the rotated token is simply gone; a double refresh logs nobody out."""
    client = oauth.client()
    first = oauth.grant(client, oauth.user()["username"])
    second = oauth.refresh(client, first["refresh_token"]).json()
    reuse = oauth.refresh(client, first["refresh_token"])
    assert reuse.status_code == 400 and reuse.json() == {"error": "invalid_grant",
                                                         "error_description": "Invalid grant: refresh token is invalid"}
    assert oauth.userinfo(second["access_token"]).status_code == 200
    assert oauth.userinfo(first["access_token"]).status_code == 200  # rotation leaves access tokens alone
    assert oauth.refresh(client, second["refresh_token"]).status_code == 200


def test_refresh_scope_narrows_never_widens(oauth: OAuthEnv) -> None:
    client = oauth.client()
    first = oauth.grant(client, oauth.user()["username"], scope=str(1 | 65536 | 32768))
    narrowed = oauth.refresh(client, first["refresh_token"], scope="65536")
    assert narrowed.status_code == 200 and narrowed.json()["scope"] == str(65536 | 1)
    assert oauth.refresh(client, narrowed.json()["refresh_token"], scope="x").json()["error"] == "invalid_scope"
    wider = oauth.refresh(client, narrowed.json()["refresh_token"], scope=str(1 | 65536 | 32768 | 2))
    assert wider.status_code == 400 and wider.json()["error"] == "invalid_scope"
    assert wider.json()["error_description"] != "invalid_scope"


def test_narrowed_refresh_keeps_the_grants_scope(oauth: OAuthEnv) -> None:
    """E22: narrowing applies to the new access token; the grant (RFC 6749 6) stays whole."""
    client = oauth.client()
    first = oauth.grant(client, oauth.user()["username"], scope="5")
    narrowed = oauth.refresh(client, first["refresh_token"], scope="1")
    assert narrowed.status_code == 200 and narrowed.json()["scope"] == "1"
    back = oauth.refresh(client, narrowed.json()["refresh_token"], scope="5")
    assert back.status_code == 200 and back.json()["scope"] == "5"
    plain = oauth.refresh(client, back.json()["refresh_token"])
    assert plain.status_code == 200 and plain.json()["scope"] == "5"


def test_refresh_token_of_another_client_or_unknown_is_invalid_grant(oauth: OAuthEnv) -> None:
    client, other = oauth.client(), oauth.client()
    first = oauth.grant(client, oauth.user()["username"])
    assert oauth.refresh(other, first["refresh_token"]).json()["error"] == "invalid_grant"
    assert oauth.refresh(client, "not-a-refresh-token").json()["error"] == "invalid_grant"
    answer = oauth.token({"grant_type": "refresh_token", **client.creds()})
    assert answer.json()["error"] == "invalid_request"


def test_refresh_token_expires(oauth: OAuthEnv) -> None:
    client = oauth.client()
    first = oauth.grant(client, oauth.user()["username"])
    oauth.advance(30 * 86400 + 1)
    assert oauth.refresh(client, first["refresh_token"]).json()["error"] == "invalid_grant"


def test_client_credentials_bound_to_owner_without_refresh(oauth: OAuthEnv) -> None:
    owner = oauth.user("creator")
    client = oauth.client(owner=owner["username"], allowed_scopes=1 | 65536)
    answer = oauth.token({"grant_type": "client_credentials", **client.creds()})
    body = answer.json()
    assert answer.status_code == 200 and "refresh_token" not in body
    assert set(body) == {"access_token", "token_type", "expires_in", "scope"}
    assert body["scope"] == str(1 | 65536)  # defaults to the client's allowedScopes
    assert oauth.userinfo(body["access_token"]).json()["id"] == owner["id"]
    over = oauth.token({"grant_type": "client_credentials", "scope": "32768", **client.creds()})
    assert over.json()["error"] == "invalid_scope"


def test_client_credentials_needs_a_confidential_client(oauth: OAuthEnv) -> None:
    public = oauth.client(confidential=False)
    missing = oauth.token({"grant_type": "client_credentials", "client_id": public.client_id})
    assert missing.json()["error"] == "invalid_request"
    refused = oauth.token({"grant_type": "client_credentials", "client_id": public.client_id,
                           "client_secret": "x"})
    assert refused.json()["error"] == "invalid_client"


def test_token_rate_limit_is_20_a_minute_per_client(oauth: OAuthEnv) -> None:
    client, other = oauth.client(), oauth.client()
    data = {"grant_type": "client_credentials", **client.creds()}
    statuses = [oauth.token(data).status_code for _ in range(21)]
    assert statuses[:20] == [200] * 20 and statuses[20] == 429
    assert oauth.token({"grant_type": "client_credentials", **other.creds()}).status_code == 200
    oauth.advance(61)
    assert oauth.token(data).status_code == 200


def test_public_client_from_unlisted_origin_is_refused(oauth: OAuthEnv) -> None:
    public = oauth.client(confidential=False, origins=["http://app.example:8080"])
    code, verifier = oauth.code_for(public, oauth.user()["username"])
    data = {"grant_type": "authorization_code", "code": code, "code_verifier": verifier,
            "redirect_uri": REDIRECT, "client_id": public.client_id}
    refused = oauth.token(data, headers={"Origin": "http://other.example"})
    assert refused.status_code == 403 and refused.json()["error"] == "origin_not_allowed"
    assert "access-control-allow-origin" not in refused.headers
    allowed = oauth.token(data, headers={"Origin": "http://app.example:8080"})
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "http://app.example:8080"


# --- access token lifetime ---------------------------------------------------------------------

def test_access_token_expires_after_3600_seconds(oauth: OAuthEnv) -> None:
    client = oauth.client()
    body = oauth.grant(client, oauth.user()["username"])
    oauth.advance(3590)
    assert oauth.userinfo(body["access_token"]).status_code == 200
    oauth.advance(11)
    expired = oauth.userinfo(body["access_token"])
    assert expired.status_code == 401 and expired.json()["error"] == "invalid_token"
    assert expired.headers["www-authenticate"].startswith('Bearer error="invalid_token"')


# --- revoke -------------------------------------------------------------------------------------

def test_revoke_refresh_token_by_confidential_client_kills_its_access_tokens(oauth: OAuthEnv) -> None:
    owner = oauth.user()  # a confidential client revokes as its owner's account (the platform's rule)
    client = oauth.client(owner=owner["username"])
    first = oauth.grant(client, owner["username"])
    second = oauth.refresh(client, first["refresh_token"]).json()
    answer = oauth.http.post(oauth.auth_url + REVOKE, data={"token": second["refresh_token"],
                                                            "token_type_hint": "refresh_token", **client.creds()})
    assert answer.status_code == 200 and answer.json() == {}
    assert oauth.userinfo(first["access_token"]).status_code == 401  # the family's access tokens go
    assert oauth.userinfo(second["access_token"]).status_code == 401
    assert oauth.refresh(client, second["refresh_token"]).json()["error"] == "invalid_grant"


def test_revoke_access_token_by_session(oauth: OAuthEnv) -> None:
    client = oauth.client(confidential=False)
    username = oauth.user()["username"]
    body = oauth.grant(client, username)
    browser = oauth.signed_in(username)
    answer = browser.post(oauth.auth_url + REVOKE, data={"token": body["access_token"]})
    assert answer.status_code == 200 and answer.json() == {}
    assert oauth.userinfo(body["access_token"]).status_code == 401
    assert oauth.refresh(client, body["refresh_token"]).status_code == 200  # only the access token went


def test_public_client_without_session_cannot_revoke(oauth: OAuthEnv) -> None:
    public = oauth.client(confidential=False)
    body = oauth.grant(public, oauth.user()["username"])
    answer = oauth.http.post(oauth.auth_url + REVOKE, data={"token": body["access_token"],
                                                            "client_id": public.client_id})
    assert answer.status_code == 200 and answer.json() == {}
    assert oauth.userinfo(body["access_token"]).status_code == 200  # still valid


def test_revoke_ignores_other_owners_and_unknown_tokens(oauth: OAuthEnv) -> None:
    client = oauth.client()
    body = oauth.grant(client, oauth.user()["username"])
    stranger = oauth.signed_in(oauth.user("free_user")["username"])
    assert stranger.post(oauth.auth_url + REVOKE, data={"token": body["access_token"]}).json() == {}
    other_client = oauth.client()
    assert oauth.http.post(oauth.auth_url + REVOKE, data={"token": body["access_token"],
                                                          **other_client.creds()}).json() == {}
    wrong_secret = oauth.http.post(oauth.auth_url + REVOKE, data={"token": body["access_token"],
                                                                  "client_id": client.client_id,
                                                                  "client_secret": "wrong"})
    assert wrong_secret.status_code == 200 and wrong_secret.json() == {}
    assert oauth.userinfo(body["access_token"]).status_code == 200
    unknown = oauth.http.post(oauth.auth_url + REVOKE, data={"token": "nothing", **client.creds()})
    assert unknown.status_code == 200 and unknown.json() == {}


def test_revoke_rate_limit_is_20_a_minute_per_ip(oauth: OAuthEnv) -> None:
    statuses = [oauth.http.post(oauth.auth_url + REVOKE, data={"token": "t"}).status_code for _ in range(21)]
    assert statuses[:20] == [200] * 20 and statuses[20] == 429


# --- userinfo -----------------------------------------------------------------------------------

def test_userinfo_claims_exactly(oauth: OAuthEnv) -> None:
    client = oauth.client()
    member = oauth.user("member")
    info = oauth.userinfo(oauth.grant(client, member["username"])["access_token"]).json()
    with oauth.emu.store.read() as db:
        email, verified, image = db.execute("SELECT email, email_verified, image FROM users WHERE id = ?",
                                            (member["id"],)).fetchone()
    expected = {"sub": str(member["id"]), "id": member["id"], "username": member["username"],
                "preferred_username": member["username"], "name": member["username"],
                "roles": []}
    with oauth.emu.store.read() as db:
        tier, moderator = db.execute("SELECT tier, is_moderator FROM users WHERE id = ?", (member["id"],)).fetchone()
    expected.update(tier=tier, isModerator=bool(moderator))
    if image:
        url = oauth.base_url + image if image.startswith("/") else image
        expected.update(picture=url, image=url)
    if email:
        expected.update(email=email, email_verified=bool(verified))
    assert info == expected


@pytest.mark.parametrize("role, present", [("no_email_user", False), ("unverified_email_user", True),
                                           ("no_avatar_user", None)])
def test_userinfo_omits_absent_claims(oauth: OAuthEnv, role: str, present: bool | None) -> None:
    client = oauth.client()
    user = oauth.user(role)
    info = oauth.userinfo(oauth.grant(client, user["username"])["access_token"]).json()
    if present is None:
        assert "picture" not in info and "image" not in info
    elif present:
        assert info["email"] and info["email_verified"] is False  # present even unverified
    else:
        assert "email" not in info and "email_verified" not in info
    assert None not in info.values()


def test_userinfo_401_rows(oauth: OAuthEnv) -> None:
    for headers in ({}, {"Authorization": "Bearer unknown-token"}, {"Authorization": "Basic abc"}):
        answer = oauth.http.get(oauth.auth_url + USERINFO, headers=headers)
        assert answer.status_code == 401 and answer.json()["error"] == "invalid_token"
        assert "invalid_token" in answer.headers["www-authenticate"]


def test_userinfo_403_without_user_read(oauth: OAuthEnv) -> None:
    from blockkit.emulator.store import tokens

    with oauth.emu.store.write() as db:  # a legacy token without UserRead (OAuth grants always add it)
        raw = tokens.issue_access_token(db, user_id=oauth.user()["id"], scope=65536, now=oauth.emu.clock.now())
    answer = oauth.userinfo(raw)
    assert answer.status_code == 403 and answer.json()["error"] == "insufficient_scope"
    assert "insufficient_scope" in answer.headers["www-authenticate"]


# --- legacy paths and their hazard --------------------------------------------------------------

def test_legacy_paths_answer_308_keeping_method_query_and_body(oauth: OAuthEnv) -> None:
    client = oauth.client()
    answer = httpx.post(oauth.base_url + TOKEN + "?a=1&b=%20",
                        data={"grant_type": "client_credentials", **client.creds()})
    assert answer.status_code == 308
    assert answer.headers["location"] == oauth.auth_url + TOKEN + "?a=1&b=%20"
    followed = httpx.post(oauth.base_url + TOKEN, data={"grant_type": "client_credentials", **client.creds()},
                          follow_redirects=True)
    assert followed.status_code == 200 and followed.json()["token_type"] == "Bearer"  # POST and body kept
    get = httpx.get(oauth.base_url + AUTHORIZE + "?client_id=x")
    assert get.status_code == 308 and get.headers["location"].endswith(AUTHORIZE + "?client_id=x")


def test_legacy_redirect_drops_authorization_and_userinfo_401s(oauth: OAuthEnv) -> None:
    client = oauth.client()
    token = oauth.grant(client, oauth.user()["username"])["access_token"]
    direct = httpx.get(oauth.auth_url + USERINFO, headers={"Authorization": f"Bearer {token}"})
    assert direct.status_code == 200
    followed = httpx.get(oauth.base_url + USERINFO, headers={"Authorization": f"Bearer {token}"},
                         follow_redirects=True)
    # The client followed a 308 to another origin and left the Authorization header behind.
    assert followed.history and followed.history[0].status_code == 308
    assert "authorization" not in followed.request.headers
    assert followed.status_code == 401 and followed.json()["error"] == "invalid_token"


# --- CORS headers -------------------------------------------------------------------------------

@pytest.mark.parametrize("path, method", [(TOKEN, "POST"), (USERINFO, "GET"), (REVOKE, "POST"),
                                          ("/api/auth/oauth/device", "POST"),
                                          ("/api/auth/oauth/device-token", "POST")])
def test_cors_is_a_wildcard_without_credentials(oauth: OAuthEnv, path: str, method: str) -> None:
    """The platform's setWildcardCors: ``*``, no credentials (the spec's "permissive")."""
    origin = "http://somewhere.example:3000"
    pre = httpx.options(oauth.auth_url + path, headers={"Origin": origin, "Access-Control-Request-Method": method,
                                                        "Access-Control-Request-Headers": "authorization"})
    assert pre.status_code == 204
    assert pre.headers["access-control-allow-origin"] == "*"
    assert "access-control-allow-credentials" not in pre.headers
    assert method in pre.headers["access-control-allow-methods"]


@pytest.mark.parametrize("method", ["GET", "POST", "OPTIONS"])
def test_authorize_sends_no_cors(oauth: OAuthEnv, method: str) -> None:
    """E01: no origin may read the authorization endpoint's answers (consent form, CSRF token)."""
    client = oauth.client()
    browser = oauth.signed_in(oauth.user()["username"])
    origin = "http://127.0.0.1:16666"
    headers = {"Origin": origin, "Access-Control-Request-Method": "GET", "Accept": "text/html"}
    if method == "POST":
        answer = browser.post(oauth.auth_url + AUTHORIZE, data=oauth.authorize_params(client), headers=headers)
    else:
        answer = browser.request(method, oauth.auth_url + AUTHORIZE, params=oauth.authorize_params(client),
                                 headers=headers)
        page = oauth.follow_consent(browser, answer)
        assert not any(k.lower().startswith("access-control-") for k in page.headers)
    assert not any(k.lower().startswith("access-control-") for k in answer.headers)


# --- sign-in ------------------------------------------------------------------------------------

@pytest.mark.parametrize("target", ["http://evil.example/", "//evil.example/x", "javascript:alert(1)",
                                    "http://127.0.0.1:1/elsewhere"])
def test_login_refuses_open_redirects(oauth: OAuthEnv, target: str) -> None:
    answer = httpx.post(oauth.auth_url + "/login", data={"username": oauth.user()["username"], "returnUrl": target})
    assert answer.status_code == 400 and "location" not in answer.headers
    assert httpx.get(oauth.auth_url + "/login", params={"returnUrl": target}).status_code == 400


def test_login_returns_to_own_and_registered_origins(oauth: OAuthEnv) -> None:
    username = oauth.user()["username"]
    for target in (oauth.base_url + "/api/v1/enums", AUTHORIZE + "?x=1"):
        answer = httpx.post(oauth.auth_url + "/login", data={"username": username, "returnUrl": target})
        assert answer.status_code == 302
    oauth.client(redirect_uris=["http://app.registered.example:7000/cb"])
    answer = httpx.post(oauth.auth_url + "/login", data={"username": username,
                                                         "returnUrl": "http://app.registered.example:7000/after"})
    assert answer.status_code == 302 and answer.headers["location"] == "http://app.registered.example:7000/after"


def test_banned_and_unknown_users_cannot_sign_in(oauth: OAuthEnv) -> None:
    for username in (oauth.user("banned_user")["username"], "nobody-here"):
        answer = httpx.post(oauth.auth_url + "/login", data={"username": username, "returnUrl": "/"})
        assert answer.status_code == 400


def test_logout_ends_the_session(oauth: OAuthEnv) -> None:
    browser = oauth.signed_in(oauth.user()["username"])
    client = oauth.client()
    assert browser.get(oauth.auth_url + AUTHORIZE, params=oauth.authorize_params(client)).status_code == 303
    cookie = browser.cookies.get("bk_session")
    browser.post(oauth.auth_url + "/logout")
    again = httpx.get(oauth.auth_url + AUTHORIZE, params=oauth.authorize_params(client),
                      cookies={"bk_session": cookie or ""})
    assert again.status_code == 303  # the old cookie no longer signs in


# --- storage ------------------------------------------------------------------------------------

def test_secrets_are_stored_hashed(oauth: OAuthEnv) -> None:
    client = oauth.client()
    code, verifier = oauth.code_for(client, oauth.user()["username"])
    body = oauth.exchange(client, code, verifier).json()
    dump = "\n".join(oauth.emu.store.connection().iterdump())
    for raw in (code, body["access_token"], body["refresh_token"], client.client_secret or ""):
        assert raw and raw not in dump

"""Catalogue routes with tokens from the real grant flow (sign-in, consent, code, exchange).

Each Mixed or Authenticated route answers a granted token with what that user unlocks,
exactly as for a token minted straight into the store; revoked and expired tokens get the
spec's 401 ``{"error": "Unauthorized"}``.
"""

from __future__ import annotations

from typing import Any

import httpx
from oauth_env import REVOKE, OAuthEnv


def _landmarks(oauth: OAuthEnv) -> dict[str, Any]:
    from blockkit.emulator.seed import landmarks

    return landmarks(oauth.emu.store)


def _username(oauth: OAuthEnv, user_id: int) -> str:
    with oauth.emu.store.read() as db:
        return str(db.execute("SELECT username FROM users WHERE id = ?", (user_id,)).fetchone()[0])


def _granted(oauth: OAuthEnv, user_id: int) -> str:
    return str(oauth.grant(oauth.client(), _username(oauth, user_id), scope="1")["access_token"])


def _get(oauth: OAuthEnv, path: str, token: str | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.get(oauth.base_url + path, headers=headers, timeout=30)


def test_me_with_a_granted_token(oauth: OAuthEnv) -> None:
    member = oauth.user("member")
    me = _get(oauth, "/api/v1/me", _granted(oauth, member["id"]))
    assert me.status_code == 200 and me.json()["id"] == member["id"] and me.json()["isMember"] is True


def test_vault_with_a_granted_token(oauth: OAuthEnv) -> None:
    member, free = oauth.user("member"), oauth.user("free_user")
    vault = _get(oauth, "/api/v1/vault/get", _granted(oauth, member["id"]))
    assert vault.status_code == 200 and vault.json()["vault"] is not None
    assert _get(oauth, "/api/v1/vault/get", _granted(oauth, free["id"])).json() == {"vault": None}
    assert _get(oauth, "/api/v1/vault/get").status_code == 401


def test_favorites_and_hidden_with_a_granted_token(oauth: OAuthEnv) -> None:
    from blockkit.emulator.store import tokens

    marks = _landmarks(oauth)
    hidden = marks["hidden_model"]
    granted = _granted(oauth, hidden["user_id"])
    with oauth.emu.store.write() as db:
        minted = tokens.issue_access_token(db, user_id=hidden["user_id"], scope=1, now=oauth.emu.clock.now())
    for query in ("hidden=true&nsfw=true", "favorites=true&nsfw=true", f"nsfw=true&ids={hidden['model_id']}"):
        by_grant = _get(oauth, f"/api/v1/models?{query}", granted)
        assert by_grant.status_code == 200
        assert by_grant.json() == _get(oauth, f"/api/v1/models?{query}", minted).json()
    listed = [m["id"] for m in _get(oauth, "/api/v1/models?hidden=true&nsfw=true", granted).json()["items"]]
    assert hidden["model_id"] in listed
    assert _get(oauth, "/api/v1/models?hidden=true").status_code == 401


def test_model_version_extras_with_a_granted_token(oauth: OAuthEnv) -> None:
    purchase = _landmarks(oauth)["early_access_purchase"]
    url = f"/api/v1/model-versions/{purchase['version_id']}"
    buyer = _get(oauth, url, _granted(oauth, purchase["user_id"])).json()["earlyAccessConfig"]
    assert buyer["unlocked"] is True
    assert "unlocked" not in _get(oauth, url).json()["earlyAccessConfig"]


def test_browsing_level_with_a_granted_token(oauth: OAuthEnv) -> None:
    marks = _landmarks(oauth)
    url = f"/api/v1/model-versions/{marks['big_post']['model_version_id']}"
    token = _granted(oauth, marks["member"]["id"])
    levels = {i["nsfwLevel"] for i in _get(oauth, url, token).json()["images"]}
    assert {1, 2, 4, 8, 16} <= levels
    images = _get(oauth, "/api/v1/images?limit=200&browsingLevel=31", token).json()["items"]
    anonymous = _get(oauth, "/api/v1/images?limit=200&browsingLevel=31").json()["items"]
    assert {i["browsingLevel"] for i in anonymous} == {1}  # anonymous: the public level only
    assert {i["browsingLevel"] for i in images} > {1}


def test_revoked_and_expired_tokens_get_the_spec_401(oauth: OAuthEnv) -> None:
    member = oauth.user("member")
    client = oauth.client(owner=member["username"])  # a confidential client revokes as its owner
    body = oauth.grant(client, member["username"])
    assert _get(oauth, "/api/v1/me", body["access_token"]).status_code == 200
    oauth.http.post(oauth.auth_url + REVOKE, data={"token": body["access_token"], **client.creds()})
    for path in ("/api/v1/me", "/api/v1/vault/get"):
        revoked = _get(oauth, path, body["access_token"])
        assert revoked.status_code == 401 and revoked.json() == {"error": "Unauthorized"}
    other = oauth.grant(client, member["username"])["access_token"]
    oauth.advance(3601)
    for path in ("/api/v1/me", "/api/v1/vault/get", "/api/v1/models?favorites=true"):
        expired = _get(oauth, path, other)
        assert expired.status_code == 401 and expired.json() == {"error": "Unauthorized"}

"""Block tokens (PLATFORM.md section 8): minting, the JWT's claims and lifetimes, JWKS,
revocation, and the routes that take them with their scope bindings and maturity clamp.
A token is checked with joserfc against the published JWKS, as a block's backend would.
"""

from __future__ import annotations

import os
import stat
from typing import Any

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import KeySet
from oauth_env import OAuthEnv

from blockkit.emulator.services import blocktokens, consent
from blockkit.emulator import facts


def _model_id(oauth: OAuthEnv, offset: int = 0) -> int:
    with oauth.emu.store.read() as db:
        return int(db.execute("SELECT id FROM models ORDER BY id LIMIT 1 OFFSET ?", (offset,)).fetchone()[0])


def _install(oauth: OAuthEnv, instance: str, scopes: list[str], *, model: bool = True,
             granted_to: tuple[str, ...] = ("member",), **kwargs: Any) -> int | None:
    """Install ``instance``; the users of ``granted_to`` (roles) consented to its scopes, as an install records."""
    model_id = _model_id(oauth) if model else None
    blocktokens.register_block_instance(oauth.emu.store, oauth.emu.clock.iso(), instance_id=instance,
                                        block_id="demo-block", app_id="app_demo", scopes=scopes,
                                        slot_id="model.sidebar_top" if model else "app.page", model_id=model_id,
                                        **kwargs)
    for role in granted_to:
        consent.grant_declared(oauth.emu.store, oauth.emu.clock, oauth.user(role)["id"], instance)
    return model_id


def _mint_http(oauth: OAuthEnv, instance: str, model_id: int | None, *, browser: httpx.Client | None = None,
               origin: str | None = "base") -> httpx.Response:
    slot = {"modelId": model_id, "slotId": "model.sidebar_top"} if model_id else {"entityType": "none",
                                                                                 "slotId": "app.page"}
    headers = {"Origin": oauth.base_url if origin == "base" else origin} if origin else {}
    if browser is None:
        with httpx.Client() as http:
            return http.post(oauth.base_url + "/api/v1/block-tokens",
                             json={"blockInstanceId": instance, "slotContext": slot}, headers=headers)
    return browser.post(oauth.base_url + "/api/v1/block-tokens", json={"blockInstanceId": instance, "slotContext": slot},
                     headers=headers)


def _claims(oauth: OAuthEnv, token: str) -> dict[str, Any]:
    keys = KeySet.import_key_set(httpx.get(oauth.base_url + "/api/v1/block-tokens/jwks").json())
    decoded = jwt.decode(token, keys, algorithms=["RS256"])
    assert decoded.header["alg"] == "RS256" and decoded.header["typ"] == "JWT"
    return dict(decoded.claims)


def _signed_in(oauth: OAuthEnv, role: str = "member") -> httpx.Client:
    browser = oauth.signed_in(oauth.user(role)["username"])
    return browser  # the session cookie (host-wide on 127.0.0.1) rides to base_url too


def test_signed_in_token_claims_and_lifetime(oauth: OAuthEnv) -> None:
    model_id = _install(oauth, "bki_claims", ["models:read:self", "user:read:self", "ai:write:budgeted"],
                        buzz_budget_per_gen=5000)
    member = oauth.user("member")
    answer = _mint_http(oauth, "bki_claims", model_id, browser=_signed_in(oauth))
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert set(body) == {"token", "expiresAt", "needsConsent", "missingScopes"}
    claims = _claims(oauth, body["token"])
    assert claims["iss"] == "civitai" and claims["aud"] == "civitai-app-block"
    assert claims["exp"] - claims["iat"] == 900 and claims["nbf"] == claims["iat"]
    assert claims["sub"] == f"user:{member['id']}" and len(claims["jti"]) == 32
    assert claims["blockId"] == "demo-block" and claims["appId"] == "app_demo"
    assert claims["blockInstanceId"] == "bki_claims"
    assert claims["ctx"] == {"modelId": model_id, "slotId": "model.sidebar_top"}
    assert sorted(claims["scopes"]) == ["ai:write:budgeted", "models:read:self", "user:read:self"]
    assert claims["buzzBudget"] == 1000  # clamped to the platform cap
    assert claims["maxBrowsingLevel"] == member_level(oauth, member["id"])


def member_level(oauth: OAuthEnv, user_id: int) -> int:
    with oauth.emu.store.read() as db:
        return int(db.execute("SELECT browsing_level FROM users WHERE id = ?", (user_id,)).fetchone()[0])


def test_settings_scope_lifetime_is_5_minutes_and_installer_only(oauth: OAuthEnv) -> None:
    member = oauth.user("member")
    _install(oauth, "bki_settings", ["block:settings:read"], model=False, installed_by=member["id"],
             granted_to=("member", "free_user"))
    minted = blocktokens.mint_block_token(oauth.emu, instance_id="bki_settings", user_id=member["id"])  # type: ignore[arg-type]
    assert minted.claims["exp"] - minted.claims["iat"] == 300
    with pytest.raises(blocktokens.MintRefused):
        blocktokens.mint_block_token(oauth.emu, instance_id="bki_settings",  # type: ignore[arg-type]
                                     user_id=oauth.user("free_user")["id"])


def test_anonymous_viewer_gets_anon_sub_and_no_self_scopes(oauth: OAuthEnv) -> None:
    _install(oauth, "page_demo", ["user:read:self", "apps:storage:shared:read"], model=False)
    answer = _mint_http(oauth, "page_demo", None)
    claims = _claims(oauth, answer.json()["token"])
    assert claims["sub"] == "anon" and claims["scopes"] == ["apps:storage:shared:read"]
    assert claims["ctx"] == {"slotId": "app.page", "entityType": "none"}
    assert "buzzBudget" not in claims
    assert claims["maxBrowsingLevel"] == facts.NSFW_LEVELS["PG"]


def test_buzz_budget_only_with_the_budget_scope_and_default_10(oauth: OAuthEnv) -> None:
    _install(oauth, "bki_budget", ["ai:write:budgeted"])
    member = oauth.user("member")["id"]
    assert blocktokens.mint_block_token(oauth.emu, instance_id="bki_budget",  # type: ignore[arg-type]
                                        user_id=member).claims["buzzBudget"] == 10
    _install(oauth, "bki_nobudget", ["user:read:self"])
    assert "buzzBudget" not in blocktokens.mint_block_token(oauth.emu, instance_id="bki_nobudget",  # type: ignore[arg-type]
                                                            user_id=member).claims


def test_issuance_route_rules(oauth: OAuthEnv) -> None:
    model_id = _install(oauth, "bki_rules", ["models:read:self"])
    assert _mint_http(oauth, "bki_rules", model_id, origin="http://evil.example").status_code == 403
    assert _mint_http(oauth, "bki_rules", model_id, origin=None).status_code == 403
    too_big = httpx.post(oauth.base_url + "/api/v1/block-tokens", content=b'{"x":"' + b"a" * 9000 + b'"}',
                         headers={"Origin": oauth.base_url, "Content-Type": "application/json"})
    assert too_big.status_code == 413
    for body in ({"blockInstanceId": "", "slotContext": {"entityType": "none", "slotId": "app.page"}},
                 {"blockInstanceId": "x" * 65, "slotContext": {"entityType": "none", "slotId": "app.page"}},
                 {"blockInstanceId": "bki_rules", "slotContext": {"modelId": -1, "slotId": "s"}},
                 {"blockInstanceId": "bki_rules"}, [1]):
        answer = httpx.post(oauth.base_url + "/api/v1/block-tokens", json=body, headers={"Origin": oauth.base_url})
        assert answer.status_code == 400, body
    assert _mint_http(oauth, "bki_rules", (model_id or 0) + 1).status_code == 404  # not installed on that model
    assert _mint_http(oauth, "no_such_instance", model_id).status_code == 404


def test_issuance_rate_limit_per_ip(oauth: OAuthEnv) -> None:
    model_id = _install(oauth, "bki_rate", ["models:read:self"])
    with httpx.Client() as http:
        statuses = [_mint_http(oauth, "bki_rate", model_id, browser=http).status_code for _ in range(121)]
    assert statuses[:120] == [200] * 120 and statuses[120] == 429


def test_jwks_and_key_file(oauth: OAuthEnv) -> None:
    keys = httpx.get(oauth.base_url + "/api/v1/block-tokens/jwks").json()["keys"]
    assert len(keys) == 1 and keys[0]["kty"] == "RSA" and keys[0]["alg"] == "RS256" and keys[0]["use"] == "sig"
    assert "d" not in keys[0]  # public only
    path = oauth.emu.data_dir / blocktokens.KEY_FILENAME
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    with oauth.emu.store.read() as db:
        assert db.execute("SELECT kid FROM block_signing_keys").fetchone()[0] == keys[0]["kid"]


def test_models_read_self_binds_the_model_id(oauth: OAuthEnv) -> None:
    model_id = _install(oauth, "bki_bind", ["models:read:self"])
    token = _mint_http(oauth, "bki_bind", model_id, browser=_signed_in(oauth)).json()["token"]
    headers = {"Authorization": f"Bearer {token}"}
    own = httpx.get(f"{oauth.base_url}/api/v1/models/{model_id}", headers=headers)
    assert own.status_code == 200 and own.json()["id"] == model_id
    assert own.headers["cache-control"].startswith("private, no-store")
    other = httpx.get(f"{oauth.base_url}/api/v1/models/{_model_id(oauth, 1)}", headers=headers)
    assert other.status_code == 403 and "modelId" in other.json()["error"]
    assert httpx.get(f"{oauth.base_url}/api/v1/models/{model_id}").status_code == 200  # still public without one


def test_a_token_without_the_scope_or_a_bad_token_is_refused(oauth: OAuthEnv) -> None:
    model_id = _install(oauth, "bki_noscope", ["apps:storage:shared:read"])
    token = _mint_http(oauth, "bki_noscope", model_id).json()["token"]
    answer = httpx.get(f"{oauth.base_url}/api/v1/models/{model_id}", headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 403 and answer.json()["error"] == "missing required scope: models:read:self"
    tampered = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    bad = httpx.get(f"{oauth.base_url}/api/v1/blocks/models", headers={"Authorization": f"Bearer {tampered}"})
    assert bad.status_code == 401 and bad.json() == {"error": "invalid block token"}


def test_block_tokens_are_not_accepted_on_other_routes(oauth: OAuthEnv) -> None:
    _install(oauth, "bki_me", ["user:read:self"], model=False)
    token = _mint_http(oauth, "bki_me", None, browser=_signed_in(oauth)).json()["token"]
    me = httpx.get(oauth.base_url + "/api/v1/me", headers={"Authorization": f"Bearer {token}"})
    assert me.status_code == 401 and me.json() == {"error": "Unauthorized"}


def test_blocks_me_needs_user_read_self_and_a_signed_in_subject(oauth: OAuthEnv) -> None:
    member = oauth.user("member")
    _install(oauth, "bki_bme", ["user:read:self", "ai:write:budgeted"], model=False, buzz_budget_per_gen=25)
    token = _mint_http(oauth, "bki_bme", None, browser=_signed_in(oauth)).json()["token"]
    me = httpx.get(oauth.base_url + "/api/v1/blocks/me", headers={"Authorization": f"Bearer {token}"})
    assert me.status_code == 200
    assert me.json() == {"id": member["id"], "username": member["username"], "status": "active", "buzzBudget": 25}
    anon = _mint_http(oauth, "bki_bme", None).json()["token"]  # anonymous: the scope is not in the token
    refused = httpx.get(oauth.base_url + "/api/v1/blocks/me", headers={"Authorization": f"Bearer {anon}"})
    assert refused.status_code == 403


def test_revoking_an_instance_refuses_its_tokens(oauth: OAuthEnv) -> None:
    _install(oauth, "bki_revoke", ["user:read:self"], model=False)
    token = _mint_http(oauth, "bki_revoke", None, browser=_signed_in(oauth)).json()["token"]
    headers = {"Authorization": f"Bearer {token}"}
    assert httpx.get(oauth.base_url + "/api/v1/blocks/me", headers=headers).status_code == 200
    blocktokens.revoke_block_instance(oauth.emu.store, oauth.emu.clock.iso(), "bki_revoke")
    revoked = httpx.get(oauth.base_url + "/api/v1/blocks/me", headers=headers)
    assert revoked.status_code == 403 and revoked.json() == {"error": "block instance revoked"}
    assert _mint_http(oauth, "bki_revoke", None).status_code == 404  # uninstalled: no new tokens


def test_expired_block_token_is_refused(oauth: OAuthEnv) -> None:
    _install(oauth, "bki_expire", ["user:read:self"], model=False)
    token = _mint_http(oauth, "bki_expire", None, browser=_signed_in(oauth)).json()["token"]
    oauth.advance(900 + 31)  # lifetime plus the 30 s leeway
    answer = httpx.get(oauth.base_url + "/api/v1/blocks/me", headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 401


@pytest.mark.parametrize("route", ["models", "images"])
def test_block_catalogue_is_clamped_by_max_browsing_level(oauth: OAuthEnv, route: str) -> None:
    _install(oauth, f"bki_{route}", ["apps:storage:shared:read"], model=False)
    member = oauth.user("member")["id"]

    def levels(ceiling: int) -> set[int]:
        token = blocktokens.mint_block_token(oauth.emu, instance_id=f"bki_{route}", user_id=member,  # type: ignore[arg-type]
                                             max_browsing_level=ceiling).token
        answer = httpx.get(f"{oauth.base_url}/api/v1/blocks/{route}?limit=100&nsfw=true&browsingLevel=31",
                           headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code == 200, answer.text
        assert answer.headers["cache-control"].startswith("private, no-store")
        key = "nsfwLevel" if route == "models" else "browsingLevel"
        return {item[key] for item in answer.json()["items"]}

    wide = levels(facts.ALL_BROWSING_LEVELS)
    safe = levels(facts.SFW_BROWSING_LEVEL)
    assert safe and all(level & ~facts.SFW_BROWSING_LEVEL == 0 for level in safe)  # the client cannot widen it
    assert any(level & ~facts.SFW_BROWSING_LEVEL for level in wide)
    assert httpx.get(f"{oauth.base_url}/api/v1/blocks/{route}").json() == {"error": "Block token required"}


def test_a_registered_host_origin_may_mint(oauth: OAuthEnv) -> None:
    from blockkit.emulator.http.blocks.blockroutes import add_host_origin

    model_id = _install(oauth, "bki_host", ["models:read:self"])
    host = "http://127.0.0.1:4999"
    assert _mint_http(oauth, "bki_host", model_id, origin=host).status_code == 403
    add_host_origin(oauth.emu.store, host)
    assert _mint_http(oauth, "bki_host", model_id, origin=host).status_code == 200

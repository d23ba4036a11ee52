"""``POST /api/v1/blocks/dev-token`` against a running local platform: who may mint, for which block,
what the token holds (clamped scopes, the Buzz cap, the SFW ceiling, 4 hours), that it works on a block
route, and that it is refused past those limits."""

from __future__ import annotations

import base64
import json
import secrets
from typing import Any

import pytest
from submit_env import APPS_SUBMIT, SubmitPlatform, bundle, encoded, platform_fixture
from submit_env import author, key  # noqa: F401 - fixtures: a moderator author and a fresh key of theirs

DEV_TOKEN = "/api/v1/blocks/dev-token"
SUBMIT = "/api/v1/blocks/submit-version"
SFW = 1 | 2  # PG | PG13
AI_SERVICES_WRITE = 1 << 15


platform = platform_fixture("dev-token")


def page_bundle(block_id: str, version: str = "1.0.0", *, scopes: list[str], page: Any = None) -> bytes:
    manifest = {"blockId": block_id, "version": version, "name": f"Block {block_id}", "scopes": scopes,
                "page": page if page is not None else {"path": "/", "title": "T", "buzzBudgetPerGen": 80}}
    return bundle({"block.manifest.json": json.dumps(manifest), "index.html": "<p>hi</p>"})


def slug() -> str:
    return "dev-" + secrets.token_hex(4)


def submit(platform: SubmitPlatform, key: str, data: bytes) -> str:
    status, body, _ = platform.call("POST", SUBMIT, encoded(data), key=key)
    assert status == 200, body
    return str(body["publishRequestId"])


def approved(platform: SubmitPlatform, key: str, data: bytes) -> str:
    request_id = submit(platform, key, data)
    status, body, _ = platform.control(f"/submissions/{request_id}/approve", {})
    assert status == 200, body
    return request_id


def claims_of(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def mint(platform: SubmitPlatform, key: str, body: Any) -> tuple[int, Any, dict[str, str]]:
    return platform.call("POST", DEV_TOKEN, body, key=key)


# --- who may mint ------------------------------------------------------------------------------------

def test_no_bearer_and_a_bad_key_are_401(platform: SubmitPlatform) -> None:
    assert platform.call("POST", DEV_TOKEN, {"slug": "abc"})[:2] == (
        401, {"message": "Missing or malformed Bearer token"})
    assert mint(platform, "not-a-key", {"slug": "abc"})[:2] == (401, {"message": "Invalid API key"})


def test_an_oauth_token_without_the_submit_bit_is_403(platform: SubmitPlatform, author: str) -> None:
    status, body, _ = mint(platform, platform.oauth_token(author, AI_SERVICES_WRITE), {"slug": "abc"})
    assert status == 403 and body["message"].startswith("dev-token needs a personal API key")


def test_a_non_author_is_403(platform: SubmitPlatform) -> None:
    plain = platform.api_key(platform.user(moderator=False))
    assert mint(platform, plain, {"slug": "abc"})[:2] == (403, {"message": "Apps are restricted to the Civitai team"})


def test_a_banned_moderator_is_403(platform: SubmitPlatform) -> None:
    from blockkit.emulator.store import Store

    banned = platform.user(moderator=False)
    key = platform.api_key(banned)
    with Store.open(platform.data, check=False) as store, store.write() as db:
        db.execute("UPDATE users SET is_moderator = 1, status = 'banned' WHERE username = ?", (banned,))
    try:
        assert mint(platform, key, {"slug": "abc"})[:2] == (403, {"message": "Apps are restricted to the Civitai team"})
    finally:
        with Store.open(platform.data, check=False) as store, store.write() as db:
            db.execute("UPDATE users SET is_moderator = 0, status = 'active' WHERE username = ?", (banned,))


def test_a_block_token_is_no_credential_for_minting(platform: SubmitPlatform, key: str) -> None:
    token = mint(platform, key, {"slug": slug()})[1]["token"]
    assert mint(platform, token, {"slug": "abc"})[:2] == (401, {"message": "Invalid API key"})


def test_a_body_over_8kb_is_413(platform: SubmitPlatform, key: str) -> None:
    status, body, _ = mint(platform, key, {"slug": "abc", "pad": "x" * 9000})
    assert (status, body) == (413, {"message": "Body exceeded 8kb limit"})


def test_the_body_is_checked(platform: SubmitPlatform, key: str) -> None:
    for body in ({}, {"slug": "AB"}, {"slug": "ok-slug", "buzzBudget": 0}, {"slug": "ok-slug", "scopes": "x"},
                 {"slug": "ok-slug", "requestBudgetedSpend": "yes"}, [1]):
        status, answer, _ = mint(platform, key, body)
        assert status == 400 and answer["message"] == "Invalid request body", (body, answer)
    assert mint(platform, key, {})[1]["details"]["formErrors"] == ["one of appBlockId or slug is required"]


# --- for which block ---------------------------------------------------------------------------------

def test_another_authors_approved_app_is_a_bare_404(platform: SubmitPlatform, author: str) -> None:
    name = slug()
    approved(platform, platform.api_key(author), page_bundle(name, scopes=["user:read:self"]))
    from blockkit.emulator.store import Store

    other = platform.user(moderator=False)
    with Store.open(platform.data, check=False) as store, store.write() as db:  # a second author
        db.execute("UPDATE users SET is_moderator = 1 WHERE username = ?", (other,))
    assert mint(platform, platform.api_key(other), {"slug": name})[:2] == (404, {"message": "App not found"})
    assert mint(platform, platform.api_key(other), {"appBlockId": f"appblk-{name}/{name}"})[:2] == (
        404, {"message": "App not found"})
    with Store.open(platform.data, check=False) as store, store.write() as db:
        db.execute("UPDATE users SET is_moderator = 0 WHERE username = ?", (other,))


def test_an_app_without_a_page_block_is_422(platform: SubmitPlatform, key: str) -> None:
    name = slug()
    submit(platform, key, bundle({"block.manifest.json": json.dumps(
        {"blockId": name, "version": "1.0.0", "name": "N", "scopes": []}), "index.html": "x"}))
    assert mint(platform, key, {"slug": name})[:2] == (
        422, {"message": "dev-token mints page tokens; this app declares no page block"})


def test_the_approved_version_pins_the_scopes_and_the_token_works(platform: SubmitPlatform, key: str) -> None:
    name = slug()
    approved(platform, key, page_bundle(name, scopes=["user:read:self", "apps:storage:read", "social:tip:self",
                                                      "block:settings:read", "ai:write:budgeted"]))
    status, body, headers = mint(platform, key, {"appBlockId": f"appblk-{name}/{name}",
                                                 "scopes": ["apps:storage:read", "ai:write:budgeted", "made:up"]})
    assert status == 200, body
    assert headers.get("cache-control") == "no-store"
    # Out of the allowlist (tip, settings) and outside the narrowing are stripped; user:read:self is forced.
    assert body["scopes"] == ["ai:write:budgeted", "apps:storage:read", "user:read:self"]
    assert body["buzzBudget"] == 80           # the manifest's buzzBudgetPerGen is the default
    assert body["maxBrowsingLevel"] == SFW
    assert body["blockInstanceId"] == f"page_appblk-{name}"
    claims = claims_of(body["token"])
    assert claims["dev"] is True and claims["exp"] - claims["iat"] == 4 * 60 * 60
    assert claims["blockId"] == name and claims["scopes"] == body["scopes"]
    assert claims["maxBrowsingLevel"] == SFW and claims["buzzBudget"] == 80
    status, me, _ = platform.call("GET", "/api/v1/blocks/me", key=body["token"])
    assert status == 200, me
    # A scope the token does not hold is refused on its route.
    status, refused, _ = platform.call("POST", "/api/v1/blocks/app-storage/set",
                                       {"key": "k", "value": 1}, key=body["token"])
    assert status == 403 and "apps:storage:write" in json.dumps(refused)


def test_the_buzz_budget_is_capped_and_spend_needs_the_credentials_bit(platform: SubmitPlatform, author: str,
                                                                       key: str) -> None:
    name = slug()
    approved(platform, key, page_bundle(name, scopes=["ai:write:budgeted"]))
    body = mint(platform, key, {"slug": name, "buzzBudget": 100_000})[1]
    assert body["buzzBudget"] == 250 and claims_of(body["token"])["buzzBudget"] == 250
    # Not asked for: no spend scope, no budget.
    body = mint(platform, key, {"slug": name, "requestBudgetedSpend": False})[1]
    assert body["scopes"] == ["user:read:self"] and "buzzBudget" not in body
    # An OAuth login with the submit bit but without AI Services write may mint, never spend.
    oauth = platform.oauth_token(author, APPS_SUBMIT)
    status, body, _ = mint(platform, oauth, {"slug": name})
    assert status == 200 and body["scopes"] == ["user:read:self"]
    body = mint(platform, platform.oauth_token(author, APPS_SUBMIT | AI_SERVICES_WRITE), {"slug": name})[1]
    assert body["scopes"] == ["ai:write:budgeted", "user:read:self"] and body["buzzBudget"] == 80


def test_a_pending_and_an_unsubmitted_app(platform: SubmitPlatform, key: str) -> None:
    name = slug()
    request_id = submit(platform, key, page_bundle(name, scopes=["apps:storage:write", "social:tip:self"]))
    body = mint(platform, key, {"slug": name})[1]
    assert body["scopes"] == ["apps:storage:write", "user:read:self"]
    assert body["blockInstanceId"] == f"page_{request_id}"
    assert claims_of(body["token"])["appId"] == f"pending-{request_id}"
    fresh = slug()
    body = mint(platform, key, {"slug": fresh, "scopes": ["apps:storage:read", "goods:purchase:self"]})[1]
    assert body["scopes"] == ["apps:storage:read", "user:read:self"]
    assert body["blockInstanceId"] == f"page_local_{fresh}"
    assert claims_of(body["token"])["appId"] == f"local-{fresh}"
    # appBlockId alone never reaches the pending or local paths.
    assert mint(platform, key, {"appBlockId": f"appblk-{fresh}/{fresh}"})[:2] == (404, {"message": "App not found"})


def test_the_token_is_refused_after_four_hours(platform: SubmitPlatform, key: str) -> None:
    name = slug()
    body = mint(platform, key, {"slug": name})[1]
    assert platform.call("GET", "/api/v1/blocks/me", key=body["token"])[0] == 200
    platform.advance(4 * 60 * 60 - 60)
    assert platform.call("GET", "/api/v1/blocks/me", key=body["token"])[0] == 200
    platform.advance(120)
    assert platform.call("GET", "/api/v1/blocks/me", key=body["token"])[0] == 401


def test_the_rate_limit_is_30_a_minute_per_user(platform: SubmitPlatform, author: str) -> None:
    platform.advance(61)  # a fresh window
    first, second = platform.api_key(author), platform.api_key(author)
    for n in range(30):
        status, body, _ = mint(platform, first if n % 2 else second, {"slug": "rate-limited"})
        assert status == 200, (n, body)
    status, body, headers = mint(platform, first, {"slug": "rate-limited"})
    assert status == 429 and body["message"] == "Rate limit exceeded" and body["limit"] == 30
    assert int(headers["retry-after"]) >= 1
    platform.advance(61)
    assert mint(platform, first, {"slug": "rate-limited"})[0] == 200


T2I = {"kind": "textToImage", "modelId": 1, "modelVersionId": 1,
       "params": {"prompt": "a lighthouse at dusk", "width": 512, "height": 512, "seed": 7}}


def test_a_workflow_over_the_tokens_budget_is_refused(platform: SubmitPlatform, key: str) -> None:
    name = slug()
    approved(platform, key, page_bundle(name, scopes=["ai:write:budgeted"]))
    roomy = mint(platform, key, {"slug": name})[1]["token"]                     # 80 Buzz a generation
    tight = mint(platform, key, {"slug": name, "buzzBudget": 1})[1]["token"]    # 1 Buzz
    status, fits, _ = platform.call("POST", "/api/v1/blocks/workflows/estimate", {"body": T2I}, key=roomy)
    assert status == 200, fits
    cost = fits["snapshot"]["cost"]["total"]
    assert 1 < cost <= 80 and fits["snapshot"]["status"] != "failed", fits
    status, refused, _ = platform.call("POST", "/api/v1/blocks/workflows/estimate", {"body": T2I}, key=tight)
    assert status == 200 and refused["snapshot"]["status"] == "failed", refused
    assert refused["snapshot"]["error"].startswith("insufficient buzz budget")

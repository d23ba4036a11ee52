"""GET /api/v1/me against the running emulator (token edge cases in-process: test_auth.py)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from inproc import bearer

from blockkit.emulator.store.clock import Clock
from blockkit.emulator.store import tokens


@pytest.mark.parametrize("role", ["member", "free_user", "founder_user", "bronze_user", "muted_user", "banned_user",
                                  "moderator"])
def test_me_describes_the_tokens_user(api: httpx.Client, landmarks: dict[str, Any], mint: Any, store_of: Any,
                                      role: str) -> None:
    user = landmarks[role]
    body = api.get("/api/v1/me", headers=bearer(mint(user["id"]))).json()
    with store_of.read() as db:
        products = [r[0] for r in db.execute("SELECT product FROM subscriptions WHERE user_id = ? AND status ="
                                             " 'active' ORDER BY id", (user["id"],))]
        email, verified = db.execute("SELECT email, email_verified FROM users WHERE id = ?", (user["id"],)).fetchone()
    expected: dict[str, Any] = {"id": user["id"], "username": user["username"], "tier": user["tier"],
                                "status": user["status"], "isMember": user["tier"] != "free", "subscriptions": products}
    if email:  # me.ts:33-35: the email when the token may read the profile (UserRead, scope 1 here)
        expected |= {"email": email, "emailVerified": bool(verified)}
    # me.ts:40: every bearer token's scope, Buzz limit and subject; a client-less (CLI) token is the
    # emulator's API key: bearer-token.ts's {type: "apiKey", id: <the key's row id>}, no limit.
    token_fields = {k: body.pop(k) for k in ("tokenScope", "buzzLimit", "subject")}
    assert token_fields["tokenScope"] == 1 and token_fields["buzzLimit"] is None
    assert token_fields["subject"]["type"] == "apiKey" and isinstance(token_fields["subject"]["id"], int)
    assert body == expected


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer"}, {"Authorization": "Bearer a.b.c"},
                                     {"Authorization": "Bearer " + "x" * 43}, {"Authorization": "Basic x"}])
def test_me_401_for_missing_malformed_or_unknown(api: httpx.Client, headers: dict[str, str]) -> None:
    response = api.get("/api/v1/me", headers=headers)
    assert response.status_code == 401 and response.json() == {"error": "Unauthorized"}


def test_me_401_for_a_revoked_token(api: httpx.Client, landmarks: dict[str, Any], mint: Any, store_of: Any) -> None:
    token = mint(landmarks["member"]["id"])
    assert api.get("/api/v1/me", headers=bearer(token)).status_code == 200
    with store_of.write() as db:
        tokens.revoke_access_token(db, token, now=Clock(store_of).now())
    response = api.get("/api/v1/me", headers=bearer(token))
    assert response.status_code == 401 and response.json() == {"error": "Unauthorized"}


def test_me_401_for_a_deleted_users_token(api: httpx.Client, landmarks: dict[str, Any], mint: Any) -> None:
    assert api.get("/api/v1/me", headers=bearer(mint(landmarks["deleted_user"]["id"]))).status_code == 401


def test_me_is_private(api: httpx.Client, landmarks: dict[str, Any], mint: Any) -> None:
    response = api.get("/api/v1/me", headers=bearer(mint(landmarks["member"]["id"])))
    assert response.headers["cache-control"] == "private, no-store"


def test_cli_token_works_against_the_running_emulator(api: httpx.Client, emulator: dict[str, Any],
                                                      landmarks: dict[str, Any]) -> None:
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "blockkit", "emulator", "token", "--user",
                           landmarks["member"]["username"], "--data", str(emulator["data"])],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    token = json.loads(done.stdout)["access_token"]
    assert api.get("/api/v1/me", headers=bearer(token)).json()["id"] == landmarks["member"]["id"]


def test_me_names_a_cli_tokens_subject_by_its_row_id(api: httpx.Client, landmarks: dict[str, Any], mint: Any,
                                                    store_of: Any) -> None:
    # bearer-token.ts: a token without an OAuth client is a user's API key, its subject the key's own id.
    raw = mint(landmarks["member"]["id"], scope=3)
    with store_of.read() as db:
        token_id = db.execute("SELECT id FROM oauth_access_tokens WHERE token_hash = ?",
                              (tokens.hash_token(raw),)).fetchone()[0]
    body = api.get("/api/v1/me", headers=bearer(raw)).json()
    assert (body["tokenScope"], body["buzzLimit"], body["subject"]) == (3, None, {"type": "apiKey", "id": token_id})
    other = api.get("/api/v1/me", headers=bearer(mint(landmarks["member"]["id"]))).json()["subject"]
    assert other["type"] == "apiKey" and other["id"] != token_id


def test_me_bodies_validate_against_the_document(api: httpx.Client, landmarks: dict[str, Any], mint: Any) -> None:
    # CurrentUser in openapi.json names the token fields (tokenScope, buzzLimit, subject) and email.
    from test_recorded_responses import validator_for

    validator = validator_for("CurrentUser")
    for role in ("member", "free_user", "muted_user"):
        body = api.get("/api/v1/me", headers=bearer(mint(landmarks[role]["id"]))).json()
        assert "subject" in body
        assert not list(validator.iter_errors(body)), body
    broken = {**api.get("/api/v1/me", headers=bearer(mint(landmarks["member"]["id"]))).json(),
              "subject": {"type": "apiKey", "id": "not-an-id"}}
    assert list(validator.iter_errors(broken))

"""The spec's error table (catalogue rows), one behaviour test per row the emulator can be
made to produce. Rows it cannot produce on demand (rate limits whose numbers the spec
does not show, overload, internal failures) are held to their documented shape in
``test_openapi.py::test_error_row_documented``.

Every answer here also goes through the conformance hook of ``api``.
"""

from __future__ import annotations

import json

from typing import Any

import httpx
import pytest


MISSING_ID = 2147483647  # in range, never seeded


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def first(api: httpx.Client, path: str, **params: Any) -> dict[str, Any]:
    body = api.get(path, params={"limit": 1, **params}).json()
    assert body["items"], f"{path} lists nothing"
    return body


# --- models, images | 429 | page * limit above 1000 ------------------------------------------


@pytest.mark.parametrize("path", ["/api/v1/models", "/api/v1/images"])
def test_page_times_limit_over_1000_is_429(path: str, api: httpx.Client) -> None:
    extra: dict[str, Any] = {}
    if path.endswith("images"):  # page is honoured for lookups by modelId
        extra["modelId"] = first(api, "/api/v1/models")["items"][0]["id"]
    response = api.get(path, params={"page": 11, "limit": 100, **extra})
    assert response.status_code == 429
    message = response.json()["error"].lower()
    assert "page" in message and "cursor" in message
    assert api.get(path, params={"page": 10, "limit": 100, **extra}).status_code == 200


# --- models | 400 | query combined with page -----------------------------------------------------


def test_models_query_with_page_is_400(api: httpx.Client) -> None:
    response = api.get("/api/v1/models", params={"query": "a", "page": 1})
    assert response.status_code == 400
    assert isinstance(response.json()["error"], str)
    assert api.get("/api/v1/models", params={"query": "a"}).status_code == 200


# --- 404 rows --------------------------------------------------------------------------------------


def existing(path: str, api: httpx.Client, landmarks: dict[str, Any]) -> str:
    """The same route with an id or hash that exists (so a 404 is the route's own answer)."""
    known = landmarks["known_hashes"]
    if "/by-hash/" in path:
        return path.replace("0" * 64, known["SHA256"])
    if path.startswith("/api/v1/models/"):
        value = known["model_id"]
    elif path.startswith("/api/v1/model-versions/"):
        value = known["version_id"]
    elif path.startswith("/api/v1/posts/"):
        value = first(api, "/api/v1/images")["items"][0]["postId"]
    else:
        value = first(api, path.rsplit("/", 1)[0])["items"][0]["id"]
    return path.replace(str(MISSING_ID), str(value))


@pytest.mark.parametrize(
    "path",
    [
        f"/api/v1/models/{MISSING_ID}",
        f"/api/v1/articles/{MISSING_ID}",
        f"/api/v1/collections/{MISSING_ID}",
        f"/api/v1/model-versions/{MISSING_ID}",
        f"/api/v1/model-versions/by-hash/{'0' * 64}",
        f"/api/v1/model-versions/mini/{MISSING_ID}",
        f"/api/v1/posts/{MISSING_ID}",
    ],
)
def test_missing_is_404_with_error(path: str, api: httpx.Client, landmarks: dict[str, Any]) -> None:
    assert api.get(existing(path, api, landmarks)).status_code == 200
    response = api.get(path)
    assert response.status_code == 404
    # articles/{id} answers the platform's {message} (TRPC NOT_FOUND via handleEndpointError); the rest {error}.
    key = "message" if path.startswith("/api/v1/articles/") else "error"
    assert isinstance(response.json()[key], str)


def test_mini_epoch_not_found_is_404(api: httpx.Client, landmarks: dict[str, Any]) -> None:
    # A Private training-result version: its last epoch answers, an epoch it lacks is a 404.
    version = landmarks["private_epoch_version"]
    path = f"/api/v1/model-versions/mini/{version['id']}"
    assert api.get(path, params={"epoch": version["last_epoch"]}).status_code == 200
    assert api.get(path, params={"epoch": 999_999}).status_code == 404


# --- posts/{id} | 400 | id not a positive integer ----------------------------------------------------


@pytest.mark.parametrize("raw", ["0", "-5", "abc", "1.5", "2147483648"])
def test_post_id_not_positive_integer_is_400(raw: str, api: httpx.Client) -> None:
    response = api.get(f"/api/v1/posts/{raw}")
    assert response.status_code == 400
    assert isinstance(response.json()["error"], str)


# --- collections | 400 | cursor with sort=Most Followers ----------------------------------------------


def test_collections_cursor_with_most_followers_is_400(api: httpx.Client) -> None:
    collection = first(api, "/api/v1/collections")["items"][0]["id"]
    assert api.get("/api/v1/collections", params={"cursor": collection}).status_code == 200
    response = api.get("/api/v1/collections", params={"cursor": collection, "sort": "Most Followers"})
    assert response.status_code == 400


# --- any list endpoint | 400 | malformed cursor ------------------------------------------------------------


@pytest.mark.parametrize("path", ["/api/v1/models", "/api/v1/images", "/api/v1/articles", "/api/v1/collections"])
def test_malformed_cursor_is_400(path: str, api: httpx.Client) -> None:
    response = api.get(path, params={"cursor": "feed:not-a-cursor" if path.endswith("images") else "not|a|cursor"})
    assert response.status_code == 400


# --- images (feed: cursor) | 400 | cannot be continued with these filters --------------------------------


def test_feed_cursor_with_changed_filters_is_400(api: httpx.Client) -> None:
    page = api.get("/api/v1/images", params={"limit": 2, "type": "image"}).json()
    cursor = page["metadata"]["nextCursor"]
    assert cursor.startswith("feed:")
    assert api.get("/api/v1/images", params={"limit": 2, "type": "image", "cursor": cursor}).status_code == 200
    response = api.get("/api/v1/images", params={"limit": 2, "type": "video", "cursor": cursor})
    assert response.status_code == 400
    assert isinstance(response.json()["error"], str)


# --- images (feed: cursor) | 400 | can no longer be continued ------------------------------------------------


def test_feed_cursor_too_old_is_400(start_emulator: Any) -> None:
    from contract import conformance_hook

    # Its own emulator: this test moves the clock a day, which would expire the session's tokens.
    private = start_emulator().info
    with httpx.Client(base_url=private["base_url"], event_hooks={"response": [conformance_hook]}) as api:
        cursor = api.get("/api/v1/images", params={"limit": 2}).json()["metadata"]["nextCursor"]
        assert api.get("/api/v1/images", params={"limit": 2, "cursor": cursor}).status_code == 200
        api.post("/__emulator/clock", json={"advance": 24 * 3600 + 1})
        response = api.get("/api/v1/images", params={"limit": 2, "cursor": cursor})
        assert response.status_code == 400
        assert "start again" in response.json()["error"].lower() or "no longer" in response.json()["error"].lower()


# --- me | 401 -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer nope"}, {"Authorization": "Bearer a.b.c"},
                                     {"Authorization": "Basic dXNlcjpwYXNz"}, {"Authorization": "bearer"}],
                         ids=["missing", "unknown", "malformed", "basic", "no token"])
def test_me_without_a_valid_token_is_401(headers: dict[str, str], api: httpx.Client) -> None:
    response = api.get("/api/v1/me", headers=headers)
    assert response.status_code == 401
    assert response.json() == {"error": "Unauthorized"}


def test_me_with_a_revoked_token_is_401(emulator: dict[str, Any], member: dict[str, Any], api: httpx.Client) -> None:
    import json
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "blockkit", "emulator", "client", "add", "--name", "revoke-test", "--redirect-uri",
         "http://127.0.0.1/cb", "--confidential", "--owner", member["username"], "--data", str(emulator["data"])],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    client = json.loads(done.stdout)
    auth = str(emulator["auth_url"]).rstrip("/")
    creds = {"client_id": client["client_id"], "client_secret": client["client_secret"]}
    token = httpx.post(f"{auth}/api/auth/oauth/token", data={"grant_type": "client_credentials", **creds}).json()["access_token"]
    assert api.get("/api/v1/me", headers=bearer(token)).status_code == 200
    assert httpx.post(f"{auth}/api/auth/oauth/revoke", data={"token": token, **creds}).status_code == 200
    response = api.get("/api/v1/me", headers=bearer(token))
    assert response.status_code == 401 and response.json() == {"error": "Unauthorized"}


# --- users | 400 -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ids", ["abc", "1,x", "-1", "1.5"])
def test_users_malformed_ids_is_400_validation_json(ids: str, api: httpx.Client) -> None:
    response = api.get("/api/v1/users", params={"ids": ids})
    assert response.status_code == 400
    # A bare ZodError as zod 4 serialises it: {name, message} with the issues as JSON text.
    assert response.json()["name"] == "ZodError" and json.loads(response.json()["message"])


# --- permissions | 400 -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [{}, {"entityIds": "abc"}, {"entityIds": "1,x"}, {"entityIds": "1", "permission": "Download"},
     {"entityIds": "1", "entityType": "Model"}],
    ids=["missing", "word", "one bad", "invalid permission", "invalid entity type"],
)
def test_permissions_bad_request_is_400_error(params: dict[str, str], api: httpx.Client) -> None:
    response = api.get("/api/v1/permissions/check", params=params)
    assert response.status_code == 400
    assert isinstance(response.json()["error"], str)


def test_permissions_empty_entity_ids_is_an_empty_array(api: httpx.Client) -> None:
    response = api.get("/api/v1/permissions/check", params={"entityIds": ""})
    assert response.status_code == 200 and response.json() == []


# --- vault/toggle-version | 401, 400, 500 ---------------------------------------------------------------------------


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer nope"}], ids=["missing", "invalid"])
def test_toggle_without_valid_token_is_401(headers: dict[str, str], api: httpx.Client) -> None:
    response = api.post("/api/v1/vault/toggle-version", params={"modelVersionId": 1}, headers=headers)
    assert response.status_code == 401


@pytest.mark.parametrize("params", [{}, {"modelVersionId": "x"}, {"modelVersionId": ""}], ids=["missing", "word", "empty"])
def test_toggle_bad_model_version_id_is_400(params: dict[str, str], api: httpx.Client, member_token: str) -> None:
    response = api.post("/api/v1/vault/toggle-version", params=params, headers=bearer(member_token))
    assert response.status_code == 400
    assert isinstance(response.json()["error"], str)


def test_toggle_unknown_version_is_500_with_error_message(api: httpx.Client, member_token: str) -> None:
    response = api.post("/api/v1/vault/toggle-version", params={"modelVersionId": MISSING_ID},
                        headers=bearer(member_token))
    assert response.status_code == 500
    assert response.json()["error"]["message"]


def test_toggle_without_membership_is_500_with_error_message(api: httpx.Client, free_token: str) -> None:
    version = first(api, "/api/v1/models")["items"][0]["modelVersions"][0]["id"]
    response = api.post("/api/v1/vault/toggle-version", params={"modelVersionId": version}, headers=bearer(free_token))
    assert response.status_code == 500
    assert "member" in response.json()["error"]["message"].lower()


def test_vault_get_without_membership_is_null(api: httpx.Client, free_token: str) -> None:
    assert api.get("/api/v1/vault/get", headers=bearer(free_token)).json() == {"vault": None}


# --- unknown paths and methods (the emulator's own rows) ---------------------------------------------------------------


def test_unknown_path_under_api_is_json_404(api: httpx.Client) -> None:
    assert api.get("/api/v1/models/1/nothing").status_code == 404


def test_wrong_method_is_json_405(api: httpx.Client) -> None:
    assert api.delete("/api/v1/models").status_code == 405
    assert api.get("/api/v1/vault/toggle-version").status_code == 405


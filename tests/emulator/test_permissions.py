"""GET /api/v1/permissions/check: generation permission of model versions, for a user or anonymously."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from inproc import bearer, client, seed_into

from blockkit.emulator.store.clock import Clock


def check(api: httpx.Client, ids: list[int], user: int | None = None, **kwargs: Any) -> Any:
    query = "entityIds=" + ",".join(map(str, ids)) + (f"&userId={user}" if user is not None else "")
    response = api.get(f"/api/v1/permissions/check?{query}", **kwargs)
    assert response.status_code == 200, response.text
    return response.json()


def test_empty_entity_ids_answer_an_empty_array(api: httpx.Client) -> None:
    assert api.get("/api/v1/permissions/check?entityIds=").json() == []


def test_anonymous(api: httpx.Client, landmarks: dict[str, Any]) -> None:
    public, early = landmarks["public_version"]["id"], landmarks["early_access_version"]["id"]
    epoch, ended = landmarks["private_epoch_version"]["id"], landmarks["ended_early_access_version"]["id"]
    assert check(api, [public, early, epoch, ended, 999_999]) == {
        str(public): True, str(early): False, str(epoch): False, str(ended): True, "999999": False}


def test_on_behalf_of_users(api: httpx.Client, landmarks: dict[str, Any]) -> None:
    early = landmarks["early_access_purchase"]
    epoch = landmarks["private_epoch_version"]
    assert check(api, [early["version_id"]], early["user_id"]) == {str(early["version_id"]): True}  # bought it
    owner = api.get(f"/api/v1/models/{landmarks['early_access_model']['id']}").json()["creator"]["username"]
    assert owner == landmarks["creator"]["username"]
    assert check(api, [early["version_id"], epoch["id"]], landmarks["creator"]["id"]) == {
        str(early["version_id"]): True, str(epoch["id"]): epoch["owner_id"] == landmarks["creator"]["id"]}
    assert check(api, [epoch["id"]], epoch["owner_id"]) == {str(epoch["id"]): True}
    assert check(api, [epoch["id"], early["version_id"]], landmarks["moderator"]["id"]) == {
        str(epoch["id"]): True, str(early["version_id"]): True}
    assert check(api, [early["version_id"]], 2_000_000) == {str(early["version_id"]): False}  # no such user


def test_the_bearer_token_does_not_scope_the_check(api: httpx.Client, landmarks: dict[str, Any], mint: Any) -> None:
    early = landmarks["early_access_purchase"]
    token = bearer(mint(early["user_id"]))
    assert check(api, [early["version_id"]], headers=token) == {str(early["version_id"]): False}
    assert check(api, [early["version_id"]], headers={"Authorization": "Bearer junk"}) == {
        str(early["version_id"]): False}


def test_duplicate_ids_answer_once(api: httpx.Client, landmarks: dict[str, Any]) -> None:
    public = landmarks["public_version"]["id"]
    assert check(api, [public, public]) == {str(public): True}


@pytest.mark.parametrize("query,needle", [
    ("", "entityIds"),
    ("entityIds=abc", "entityIds"),
    ("entityIds=1,,2", "entityIds"),
    ("entityIds=0", "entityIds"),
    ("entityIds=1&permission=Download", "permission"),
    ("entityIds=1&entityType=Model", "entityType"),
    ("entityIds=1&userId=abc", "userId"),
    ("entityIds=1&userId=0", "userId"),
])
def test_bad_parameters_are_400_error(api: httpx.Client, query: str, needle: str) -> None:
    response = api.get(f"/api/v1/permissions/check?{query}")
    assert response.status_code == 400
    if needle == "entityIds" and query:  # the platform's message for a malformed list (permissions/check.ts)
        assert response.json() == {"error": "Could not parse provided model versions array."}
    else:
        assert needle in response.json()["error"]


def test_the_only_values_are_accepted(api: httpx.Client, landmarks: dict[str, Any]) -> None:
    public = landmarks["public_version"]["id"]
    response = api.get(f"/api/v1/permissions/check?entityIds={public}&entityType=ModelVersion&permission=Generate")
    assert response.json() == {str(public): True}


@pytest.fixture(scope="module")
def own_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    store = seed_into(Path(tmp_path_factory.mktemp("permissions")))
    yield store
    store.close()


def test_early_access_ends_with_the_clock(own_store: Any) -> None:
    from blockkit.emulator.seed import landmarks

    early = landmarks(own_store)["early_access_version"]["id"]
    clock = Clock(own_store)
    api = client(own_store, clock=clock)
    assert check(api, [early]) == {str(early): False}
    clock.advance(6 * 365 * 86_400)  # past the seed's 2031-01-01
    assert check(api, [early]) == {str(early): True}

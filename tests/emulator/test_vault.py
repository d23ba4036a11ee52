"""/api/v1/vault: get (creates), all (filters, sorts, pages), check-vault, toggle-version."""

from __future__ import annotations

import json

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from inproc import bearer, client, seed_into
from inproc import mint as mint_in

from blockkit.emulator import facts

ROUTES = [("get", "/api/v1/vault/get"), ("get", "/api/v1/vault/all"),
          ("get", "/api/v1/vault/check-vault?modelVersionIds=1"), ("post", "/api/v1/vault/toggle-version?modelVersionId=1")]


def sql(store: Any, query: str, *args: Any) -> list[tuple[Any, ...]]:
    with store.read() as db:
        return [tuple(r) for r in db.execute(query, args)]


@pytest.fixture(scope="module")
def member(landmarks: dict[str, Any], mint: Any) -> dict[str, str]:
    return bearer(mint(landmarks["member"]["id"]))


@pytest.mark.parametrize("method,url", ROUTES)
@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer unknown"}, {"Authorization": "Token x"}])
def test_every_vault_route_needs_a_valid_token(api: httpx.Client, method: str, url: str,
                                                headers: dict[str, str]) -> None:
    response = api.request(method, url, headers=headers)
    assert response.status_code == 401 and response.json() == {"error": "Unauthorized"}


def test_non_members_have_no_vault(api: httpx.Client, landmarks: dict[str, Any], mint: Any) -> None:
    free = bearer(mint(landmarks["free_user"]["id"]))
    assert api.get("/api/v1/vault/get", headers=free).json() == {"vault": None}
    assert api.get("/api/v1/vault/all", headers=free).json() == {"vault": None}
    assert api.get("/api/v1/vault/check-vault?modelVersionIds=1,2", headers=free).json() == [
        {"modelVersionId": 1, "vaultItem": None}, {"modelVersionId": 2, "vaultItem": None}]
    response = api.post(f"/api/v1/vault/toggle-version?modelVersionId={landmarks['public_version']['id']}",
                        headers=free)
    assert response.status_code == 500 and "membership" in response.json()["error"]["message"]


def test_get_sums_the_items_and_gives_the_tier_allowance(api: httpx.Client, landmarks: dict[str, Any],
                                                         member: dict[str, str], store_of: Any) -> None:
    vault = api.get("/api/v1/vault/get", headers=member).json()["vault"]
    user = landmarks["member"]["id"]
    used = sql(store_of, "SELECT sum(model_size_kb + details_size_kb + images_size_kb) FROM vault_items"
               " WHERE vault_id = ?", user)[0][0]
    assert vault["userId"] == user and vault["usedStorageKb"] == used
    assert vault["storageKb"] == facts.VAULT_STORAGE_KB[landmarks["member"]["tier"]]


def test_get_creates_the_vault_on_the_first_call(api: httpx.Client, store_of: Any, mint: Any) -> None:
    rows = sql(store_of, "SELECT u.id FROM users u JOIN subscriptions s ON s.user_id = u.id AND s.status = 'active'"
               " WHERE u.tier <> 'free' AND u.deleted_at IS NULL AND u.id NOT IN (SELECT user_id FROM vaults)"
               " ORDER BY u.id LIMIT 1")
    assert rows, "the seed has no member without a vault"
    user = rows[0][0]
    body = api.get("/api/v1/vault/get", headers=bearer(mint(user))).json()["vault"]
    assert body["userId"] == user and body["usedStorageKb"] == 0 and body["meta"] == {}
    assert sql(store_of, "SELECT count(*) FROM vaults WHERE user_id = ?", user)[0][0] == 1


def every_item(api: httpx.Client, headers: dict[str, str], query: str = "") -> list[dict[str, Any]]:
    body = api.get(f"/api/v1/vault/all?limit=200&{query}", headers=headers).json()
    assert body["totalItems"] == len(body["items"])
    return list(body["items"])


def test_all_pages(api: httpx.Client, member: dict[str, str]) -> None:
    everything = every_item(api, member)
    assert len(everything) >= 4
    first = api.get("/api/v1/vault/all?limit=2&page=1", headers=member).json()
    second = api.get("/api/v1/vault/all?limit=2&page=2", headers=member).json()
    assert [i["id"] for i in first["items"] + second["items"]] == [i["id"] for i in everything[:4]]
    assert first["totalItems"] == len(everything) and first["totalPages"] == math.ceil(len(everything) / 2)
    assert (first["currentPage"], first["pageSize"]) == (1, 2)
    beyond = api.get("/api/v1/vault/all?limit=2&page=999", headers=member).json()
    assert beyond["items"] == [] and beyond["totalItems"] == len(everything)
    assert api.get("/api/v1/vault/all", headers=member).json()["pageSize"] == 60  # the default
    # getPagingData: with nothing to count, totalPages is 1 (issue 33; it was 0).
    none = api.get("/api/v1/vault/all?query=zz-no-such-item-zz", headers=member).json()
    assert (none["items"], none["totalItems"], none["totalPages"]) == ([], 0, 1)


@pytest.mark.parametrize("sort,key,reverse", [
    ("Recently Added", lambda i: i["addedAt"], True),
    ("Recently Created", lambda i: i["createdAt"], True),
    ("Model Name", lambda i: i["modelName"].casefold(), False),
    ("Model Size", lambda i: i["modelSizeKb"] + i["detailsSizeKb"] + i["imagesSizeKb"], True),
])
def test_all_sorts(api: httpx.Client, member: dict[str, str], sort: str, key: Any, reverse: bool) -> None:
    got = every_item(api, member, f"sort={sort}")
    assert [key(i) for i in got] == sorted((key(i) for i in got), reverse=reverse)


def test_all_filters(api: httpx.Client, member: dict[str, str]) -> None:
    everything = every_item(api, member)
    sample = everything[0]
    needle = sample["creatorName"][1:4].upper()
    assert {i["id"] for i in every_item(api, member, f"query={needle}")} == {
        i["id"] for i in everything if any(needle.casefold() in i[k].casefold()
                                           for k in ("modelName", "versionName", "creatorName"))}
    assert {i["id"] for i in every_item(api, member, f"types={sample['type']},VAE")} == {
        i["id"] for i in everything if i["type"] in (sample["type"], "VAE")}
    assert {i["id"] for i in every_item(api, member, f"baseModels={sample['baseModel']}")} == {
        i["id"] for i in everything if i["baseModel"] == sample["baseModel"]}
    categorized = next(i for i in everything if i["category"])
    assert {i["id"] for i in every_item(api, member, f"categories={categorized['category']}")} == {
        i["id"] for i in everything if i["category"] == categorized["category"]}


def test_all_date_filters(api: httpx.Client, member: dict[str, str]) -> None:
    everything = every_item(api, member)
    day = sorted(i["addedAt"] for i in everything)[len(everything) // 2][:10]
    assert {i["id"] for i in every_item(api, member, f"dateAddedFrom={day}")} == {
        i["id"] for i in everything if i["addedAt"][:10] >= day}
    assert {i["id"] for i in every_item(api, member, f"dateAddedTo={day}")} == {  # the whole day counts
        i["id"] for i in everything if i["addedAt"][:10] <= day}
    created = sorted(i["createdAt"] for i in everything)[1]
    stamp = created.replace(".000Z", "Z")
    assert {i["id"] for i in every_item(api, member, f"dateCreatedTo={stamp}")} == {
        i["id"] for i in everything if i["createdAt"] <= created}
    assert {i["id"] for i in every_item(api, member, f"dateCreatedFrom={stamp}")} == {
        i["id"] for i in everything if i["createdAt"] >= created}


@pytest.mark.parametrize("query", ["limit=0", "limit=201", "page=0", "sort=Newest", "types=lora",
                                   "dateAddedFrom=2024-02-30", "dateCreatedTo=yesterday", "categories=a,,b"])
def test_all_bad_parameters_are_400_validation(api: httpx.Client, member: dict[str, str], query: str) -> None:
    response = api.get(f"/api/v1/vault/all?{query}", headers=member)
    assert response.status_code == 400 and json.loads(response.json()["error"]["message"])


def test_check_vault(api: httpx.Client, landmarks: dict[str, Any], member: dict[str, str]) -> None:
    stored = landmarks["vault_items"]["Stored"]
    body = api.get(f"/api/v1/vault/check-vault?modelVersionIds={stored['model_version_id']},999999,"
                   f"{stored['model_version_id']}", headers=member).json()
    assert [e["modelVersionId"] for e in body] == [stored["model_version_id"], 999999, stored["model_version_id"]]
    assert body[0]["vaultItem"]["id"] == stored["id"] and body[0]["vaultItem"]["status"] == "Stored"
    assert body[0]["vaultItem"]["files"]  # a Stored item lists its files
    assert body[1]["vaultItem"] is None
    assert api.get("/api/v1/vault/check-vault?modelVersionIds=", headers=member).json() == []


@pytest.mark.parametrize("query", ["", "modelVersionIds=abc", "modelVersionIds=1,,2", "modelVersionIds=0"])
def test_check_vault_bad_ids(api: httpx.Client, member: dict[str, str], query: str) -> None:
    response = api.get(f"/api/v1/vault/check-vault?{query}", headers=member)
    assert response.status_code == 400 and "modelVersionIds" in response.json()["error"]


def test_deleted_original_survives_in_the_vault(api: httpx.Client, landmarks: dict[str, Any],
                                                member: dict[str, str]) -> None:
    item = landmarks["vault_items"]["deleted_original"]
    assert api.get(f"/api/v1/model-versions/{item['model_version_id']}").status_code == 404
    entry = api.get(f"/api/v1/vault/check-vault?modelVersionIds={item['model_version_id']}",
                    headers=member).json()[0]["vaultItem"]
    assert entry["id"] == item["id"] and entry["modelName"]


def test_toggle_adds_then_removes(api: httpx.Client, landmarks: dict[str, Any], member: dict[str, str],
                                  store_of: Any) -> None:
    user = landmarks["member"]["id"]
    in_vault = {r[0] for r in sql(store_of, "SELECT model_version_id FROM vault_items WHERE vault_id = ?", user)}
    version = next(v for v in (landmarks["public_version"]["id"], *range(1, 200)) if v not in in_vault
                   and api.get(f"/api/v1/model-versions/{v}").status_code == 200)
    before = api.get("/api/v1/vault/get", headers=member).json()["vault"]["usedStorageKb"]
    added = api.post(f"/api/v1/vault/toggle-version?modelVersionId={version}", headers=member)
    assert added.json() == {"success": True, "vaultId": user}
    item = api.get(f"/api/v1/vault/check-vault?modelVersionIds={version}", headers=member).json()[0]["vaultItem"]
    assert item["status"] == "Pending" and item["coverImageUrl"] is None and item["files"] == []
    files_kb = sql(store_of, "SELECT sum(size_kb) FROM model_files WHERE version_id = ? AND visibility = 'Public'",
                   version)[0][0]
    assert item["modelSizeKb"] == math.ceil(files_kb)
    after = api.get("/api/v1/vault/get", headers=member).json()["vault"]["usedStorageKb"]
    assert after == before + item["modelSizeKb"] + item["detailsSizeKb"] + item["imagesSizeKb"]
    removed = api.post(f"/api/v1/vault/toggle-version?modelVersionId={version}", headers=member)
    assert removed.json() == {"success": True}
    assert api.get(f"/api/v1/vault/check-vault?modelVersionIds={version}", headers=member).json()[0][
        "vaultItem"] is None
    assert api.get("/api/v1/vault/get", headers=member).json()["vault"]["usedStorageKb"] == before


@pytest.mark.parametrize("version_key", ["unpublished_version", "missing"])
def test_toggle_of_a_missing_version_is_a_500(api: httpx.Client, landmarks: dict[str, Any], member: dict[str, str],
                                              version_key: str) -> None:
    version = landmarks[version_key]["id"] if version_key in landmarks else 999_999
    response = api.post(f"/api/v1/vault/toggle-version?modelVersionId={version}", headers=member)
    assert response.status_code == 500 and "not found" in response.json()["error"]["message"]


@pytest.mark.parametrize("query", ["", "modelVersionId=", "modelVersionId=abc", "modelVersionId=1.5",
                                   "modelVersionId=1&modelVersionId=2"])
def test_toggle_bad_id_is_a_400(api: httpx.Client, member: dict[str, str], query: str) -> None:
    response = api.post(f"/api/v1/vault/toggle-version?{query}", headers=member)
    assert response.status_code == 400 and "modelVersionId" in response.json()["error"]


def test_vault_answers_are_private(api: httpx.Client, member: dict[str, str]) -> None:
    assert api.get("/api/v1/vault/get", headers=member).headers["cache-control"] == "private, no-store"


# --- in-process: the quota --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def own_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    store = seed_into(Path(tmp_path_factory.mktemp("vault")))
    yield store
    store.close()


def test_toggle_past_the_storage_quota_is_a_500(own_store: Any) -> None:
    from blockkit.emulator.seed import landmarks

    marks = landmarks(own_store)
    user = marks["member"]["id"]
    version = marks["public_version"]["id"]
    api = client(own_store)
    token = bearer(mint_in(own_store, user))
    vault = api.get("/api/v1/vault/get", headers=token).json()["vault"]
    with own_store.write() as db:  # fill the vault to its last KB
        db.execute("UPDATE vault_items SET images_size_kb = images_size_kb + ? WHERE id = ?",
                   (vault["storageKb"] - vault["usedStorageKb"] - 1, marks["vault_items"]["Stored"]["id"]))
    response = api.post(f"/api/v1/vault/toggle-version?modelVersionId={version}", headers=token)
    assert response.status_code == 500
    assert "quota" in response.json()["error"]["message"]
    assert api.get(f"/api/v1/vault/check-vault?modelVersionIds={version}", headers=token).json()[0][
        "vaultItem"] is None


def test_lapsed_membership_has_no_vault(own_store: Any) -> None:
    from blockkit.emulator.seed import landmarks

    user = landmarks(own_store)["member"]["id"]
    api = client(own_store)
    token = bearer(mint_in(own_store, user))
    assert api.get("/api/v1/vault/get", headers=token).json()["vault"] is not None
    with own_store.write() as db:
        db.execute("UPDATE subscriptions SET status = 'canceled' WHERE user_id = ?", (user,))
    token = bearer(mint_in(own_store, user))
    assert api.get("/api/v1/vault/get", headers=token).json() == {"vault": None}

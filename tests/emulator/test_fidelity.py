"""Review emulator-fidelity-2026-11-27: the rows fixed in the catalogue, one test each.

Each test is built from the review row's reproduction and failed on 0f86161 (the commit
the review measured). The map from every row of the review to its test, or to the
reason it stays as it is, is ``fidelity_rows.py``.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from blockkit.emulator import facts

ZOD_CODES = {"invalid_type", "too_big", "too_small", "invalid_format", "not_multiple_of", "unrecognized_keys",
             "invalid_union", "invalid_key", "invalid_element", "invalid_value", "custom"}


def rows(store_of: Any, query: str, *args: Any) -> list[tuple[Any, ...]]:
    with store_of.read() as db:
        return [tuple(r) for r in db.execute(query, args)]


# --- GET /models -----------------------------------------------------------------------------------

def test_models_types_take_the_platforms_model_types(api: httpx.Client, landmarks: dict[str, Any]) -> None:
    # Row "ModelType values": types=UNet was a 400; the seed now has a UNet model with a Diffusion Model file.
    body = api.get("/api/v1/models?types=UNet&nsfw=true")
    assert body.status_code == 200
    found = body.json()["items"]
    assert [m["id"] for m in found] == [landmarks["models_by_type"]["UNet"]]
    assert {f["type"] for v in found[0]["modelVersions"] for f in v["files"]} >= {"Diffusion Model"}


@pytest.mark.parametrize("query", ["favorites=false", "hidden=0", "favorites=true", "hidden=whatever"])
def test_favorites_or_hidden_present_without_a_token_is_a_401(api: httpx.Client, query: str) -> None:
    # Row "favorites / hidden without a token": 401 when the key is present at all (models/index.ts:54-59).
    response = api.get(f"/api/v1/models?{query}")
    assert response.status_code == 401 and response.json() == {"error": "Unauthorized"}


def test_nsfw_takes_the_boolean_strings(api: httpx.Client) -> None:
    # Row "nsfw, primaryFileOnly, favorites, hidden": booleanString() takes yes/no, on/off, ...
    yes = api.get("/api/v1/models?nsfw=yes&limit=5")
    assert yes.status_code == 200
    assert yes.json()["items"] == api.get("/api/v1/models?nsfw=true&limit=5").json()["items"]
    assert api.get("/api/v1/models?nsfw=OFF&limit=5").json()["items"] == api.get(
        "/api/v1/models?limit=5").json()["items"]


def test_page_with_a_cursor_reads_the_cursor(api: httpx.Client) -> None:
    # Row "page + cursor": usingPaging = page && !cursor (models/index.ts:72): the cursor wins, 200.
    first = api.get("/api/v1/models?nsfw=true&limit=3").json()
    response = api.get(f"/api/v1/models?nsfw=true&limit=3&page=7&cursor={first['metadata']['nextCursor']}")
    assert response.status_code == 200
    following = api.get(first["metadata"]["nextPage"]).json()
    assert response.json()["items"] == following["items"]
    assert "currentPage" not in response.json()["metadata"]


def test_query_with_page_is_the_platforms_400_after_the_page_window(api: httpx.Client) -> None:
    # Row "query + page": the 429 check first (page mode), then the platform's message.
    assert api.get("/api/v1/models?query=a&page=11&limit=100").status_code == 429
    response = api.get("/api/v1/models?query=a&page=2")
    assert response.status_code == 400
    assert response.json() == {"error": "Cannot use page param with query search. Use cursor-based pagination."}


def test_model_and_version_fields(api: httpx.Client, store_of: Any, landmarks: dict[str, Any]) -> None:
    # Rows "model fields", "version fields in the list", "preview images in the list".
    model = api.get(f"/api/v1/models?nsfw=true&ids={landmarks['early_access_model']['id']}").json()["items"][0]
    owner = rows(store_of, "SELECT user_id FROM models WHERE id = ?", model["id"])[0][0]
    assert model["userId"] == owner and model["cosmetic"] is None
    assert set(model["baseModels"]) == {v["baseModel"] for v in model["modelVersions"]}
    version = model["modelVersions"][0]
    stored = rows(store_of, "SELECT position, availability, nsfw_level, description, trained_words,"
                  " early_access_ends_at FROM model_versions WHERE id = ?", version["id"])[0]
    assert (version["index"], version["availability"], version["nsfwLevel"], version["description"],
            version["trainedWords"]) == (stored[0], stored[1], stored[2], stored[3], json.loads(stored[4]))
    assert version["flags"] == 0 and version["vaeId"] is None
    assert version["paidAccess"] == {"permanent": False, "endsAt": stored[5]}
    assert version["earlyAccessDeadline"] == stored[5]
    assert "modelId" not in version  # the platform's cache strips it (caches.ts)
    for image in (i for v in model["modelVersions"] for i in v["images"]):
        assert {"id", "minor", "poi", "hasMeta", "hasPositivePrompt", "onSite", "remixOfId"} <= set(image)


def test_list_files_carry_primary_only_on_the_primary_file(api: httpx.Client, landmarks: dict[str, Any]) -> None:
    # Row "files in the list": non-primary files have no primary key (model-search.service.ts:273).
    model = api.get(f"/api/v1/models?nsfw=true&ids={landmarks['every_file_type_model']['id']}").json()["items"][0]
    files = [f for v in model["modelVersions"] for f in v["files"]]
    assert [f.get("primary") for f in files].count(True) == len(model["modelVersions"])
    assert any("primary" not in f for f in files)
    assert not any(f.get("primary") is False for f in files)


# --- /model-versions ----------------------------------------------------------------------------------

def test_version_carries_paid_access_licensing_fee_and_scan_fields(api: httpx.Client,
                                                                   landmarks: dict[str, Any]) -> None:
    # Rows "top-level fields" and "files" of GET /model-versions/{id}.
    body = api.get(f"/api/v1/model-versions/{landmarks['early_access_version']['id']}").json()
    assert body["licensingFee"] is None
    assert body["paidAccess"] == {"permanent": False, "endsAt": landmarks["early_access_version"]["ends_at"]}
    for file in body["files"]:
        assert {"pickleScanMessage", "virusScanMessage", "scannedAt"} <= set(file)
        assert isinstance(file["primary"], bool)
    plain = api.get(f"/api/v1/model-versions/{landmarks['public_version']['id']}").json()
    assert plain["paidAccess"] is None


def test_by_hash_is_edge_cached_for_an_hour(api: httpx.Client, landmarks: dict[str, Any]) -> None:
    # Row "by-hash Cache-Control": s-maxage=3600, stale-while-revalidate=1800 ([hash].ts:52).
    response = api.get(f"/api/v1/model-versions/by-hash/{landmarks['known_hashes']['SHA256']}")
    assert response.headers["cache-control"] == "public, s-maxage=3600, stale-while-revalidate=1800"
    version = api.get(f"/api/v1/model-versions/{landmarks['public_version']['id']}")
    assert version.headers["cache-control"] == "public, s-maxage=300, stale-while-revalidate=150"


def test_post_by_hash_answers_one_entry_per_matching_file(api: httpx.Client, store_of: Any,
                                                          landmarks: dict[str, Any]) -> None:
    # Row "by-hash entries": files.map(...) (by-hash/index.ts:50): a version appears once per file matched.
    version = landmarks["every_file_type_model"]["version_ids"][0]
    shas = [r[0] for r in rows(store_of, "SELECT h.hash FROM file_hashes h JOIN model_files f ON f.id = h.file_id"
                                         " WHERE f.version_id = ? AND h.kind = 'SHA256' AND f.visibility = 'Public'"
                                         " ORDER BY f.id", version)]
    assert len(shas) >= 2
    found = api.post("/api/v1/model-versions/by-hash", json=shas[:2]).json()
    assert [v["id"] for v in found] == [version, version]


def test_post_by_hash_400_carries_the_platforms_sentence(api: httpx.Client) -> None:
    # Row "POST by-hash 400 body": "Request must include an array of SHA256 Hashes. <detail>".
    response = api.post("/api/v1/model-versions/by-hash", json=["abc"])
    assert response.status_code == 400
    assert response.json()["error"].startswith("Request must include an array of SHA256 Hashes. ")


def test_mini_fields_and_model_file_id(api: httpx.Client, store_of: Any, landmarks: dict[str, Any]) -> None:
    # Rows "mini modelFileId", "mini fields", "mini 404 bodies" (mini/[id].ts:44,196,399-420).
    version = landmarks["every_file_type_model"]["version_ids"][0]
    files = rows(store_of, "SELECT id, name, is_primary FROM model_files WHERE version_id = ? ORDER BY id", version)
    other = next(f for f in files if not f[2])
    mini = api.get(f"/api/v1/model-versions/mini/{version}").json()
    assert mini["fees"] == [] and mini["payoutEnabled"] is True
    assert mini["userId"] == rows(store_of, "SELECT m.user_id FROM models m JOIN model_versions v ON v.model_id = m.id"
                                            " WHERE v.id = ?", version)[0][0]
    assert api.get(f"/api/v1/model-versions/mini/{version}?modelFileId={other[0]}").json()["fileName"] == other[1]
    missing = api.get(f"/api/v1/model-versions/mini/{version}?modelFileId=2147483647")
    assert missing.status_code == 404
    assert missing.json() == {"error": f"Model file 2147483647 not found in version {version}"}
    assert api.get("/api/v1/model-versions/mini/2147483647").json() == {"error": "Model not found"}
    early = api.get(f"/api/v1/model-versions/mini/{landmarks['early_access_version']['id']}").json()
    assert early["checkPermission"] is True and "freeTrialLimit" in early


# --- users, creators, tags, enums ----------------------------------------------------------------------

def test_users_items_and_limit(api: httpx.Client) -> None:
    # Rows "users item" and "users limit": avatarUrl and meta (null) added; limit 1-200 checked, unused.
    item = api.get("/api/v1/users").json()["items"][0]
    assert {"avatarUrl", "meta"} <= set(item) and item["meta"] is None
    assert api.get("/api/v1/users?limit=0").status_code == 400
    assert api.get("/api/v1/users?limit=1").json() == api.get("/api/v1/users").json()


def test_page_two_has_a_prev_page(api: httpx.Client) -> None:
    # Row "metadata prevPage from page 2" (getPaginationLinks, creators.ts:44). Tags have none: getTags
    # counts nothing, so totalPages is 1 and getPaginationLinks makes no link (issue 33).
    assert "prevPage" not in api.get("/api/v1/creators?limit=2").json()["metadata"]
    second = api.get("/api/v1/creators?limit=2&page=2").json()["metadata"]
    assert second["prevPage"].endswith("/api/v1/creators?limit=2&page=1")
    tags = api.get("/api/v1/tags?limit=2&page=2").json()["metadata"]
    assert tags == {"totalItems": 0, "currentPage": 2, "pageSize": 2, "totalPages": 1}


@pytest.mark.parametrize("path", ["/api/v1/creators?limit=0", "/api/v1/tags?page=x"])
def test_creators_and_tags_issue_codes_are_zods(api: httpx.Client, path: str) -> None:
    # Row "creators/tags 400 body": issue codes from zod 4's set, not pydantic's.
    body = api.get(path).json()
    assert isinstance(body, list) and body and all(i["code"] in ZOD_CODES for i in body)


def test_enums_are_the_platforms(api: httpx.Client) -> None:
    # Rows "/enums ModelType", "ModelFileType", "BaseModel / ActiveBaseModel".
    body = api.get("/api/v1/enums").json()
    assert len(body["ModelType"]) == 23 and {"UNet", "TextEncoder", "LLM"} <= set(body["ModelType"])
    assert len(body["ModelFileType"]) == 17 and "Diffusion Model" in body["ModelFileType"]
    assert len(body["BaseModel"]) == len(facts.BASE_MODELS) == 99
    assert {"Anima", "Krea 2", "Wan Video 2.7", "ACE Audio"} <= set(body["BaseModel"])
    assert "Imagen4" in body["BaseModel"] and "Imagen4" not in body["ActiveBaseModel"]  # hidden


def test_every_model_and_file_type_is_seeded(store_of: Any) -> None:
    # The seed holds rows of every kind the enums name.
    assert {r[0] for r in rows(store_of, "SELECT DISTINCT type FROM models")} >= set(facts.MODEL_TYPES)
    assert {r[0] for r in rows(store_of, "SELECT DISTINCT type FROM model_files")} >= set(facts.MODEL_FILE_TYPES)

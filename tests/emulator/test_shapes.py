"""Each catalogue route sends the key paths and types of its table, no more and no fewer (issue 33).

The tables are docs/platform-shapes.md "Route shapes, key by key" (read by ``shapes.tables``):
for every route, each key path the platform sends, with every type it takes there (null
included, and timestamps with or without a zone). The answers are sampled over the seed's
conditions (archived, taken-down and early-access models, pending and scanned files, videos
and stills, page and cursor modes), merged by path, and must match the table exactly: a
dropped key, a new key or a changed type fails here until the table (and its source) says so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from shapes import normalised, render, shape_of, tables

Sample = Callable[[httpx.Client, dict[str, Any], Any], Iterator[Any]]
MODEL_LANDMARKS = ("archived_model", "taken_down_model", "early_access_model", "ended_early_access_model",
                   "epoch_model", "unpublished_version_model", "every_file_type_model", "poi_model", "minor_model",
                   "sfw_only_model", "require_auth_model", "generation_only_model")


def ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, (response.request.url, response.status_code, response.text[:300])
    return response.json()


def list_pages(api: httpx.Client) -> Iterator[Any]:
    url: str | None = "/api/v1/models?nsfw=true&limit=100"
    for _ in range(3):
        if url is None:
            break
        page = ok(api.get(url))
        yield page
        url = page["metadata"].get("nextPage")


def model_ids(api: httpx.Client, landmarks: dict[str, Any]) -> list[int]:
    ids = [m["id"] for page in list_pages(api) for m in page["items"]][:40]
    ids += [landmarks[k]["id"] for k in MODEL_LANDMARKS if k in landmarks]
    ids += list(landmarks["models_by_type"].values())
    return sorted(set(ids))


def video_versions(store_of: Any) -> list[int]:
    """Versions whose previews hold a video (the previews' rules: the owner's published, scanned posts)."""
    with store_of.read() as db:
        return [r[0] for r in db.execute(
            "SELECT DISTINCT p.model_version_id FROM images i JOIN posts p ON p.id = i.post_id"
            " JOIN model_versions v ON v.id = p.model_version_id JOIN models m ON m.id = v.model_id"
            " WHERE i.type = 'video' AND i.scanned_at IS NOT NULL AND i.nsfw_level <> 0 AND p.user_id = m.user_id"
            " AND p.published_at IS NOT NULL AND p.blocked = 0 AND p.scanned = 1 AND p.availability <> 'Private'"
            " AND v.status = 'Published' AND m.status = 'Published' AND m.mode IS NULL LIMIT 5")]


def version_ids(api: httpx.Client, landmarks: dict[str, Any], store_of: Any) -> list[int]:
    ids: set[int] = set(video_versions(store_of))
    for model_id in model_ids(api, landmarks):
        response = api.get(f"/api/v1/models/{model_id}")
        if response.status_code == 200:
            ids.update(v["id"] for v in response.json()["modelVersions"][:2])
    ids.update(landmarks[k]["id"] for k in ("early_access_version", "ended_early_access_version", "public_version"))
    return sorted(ids)


def sample_models(api: httpx.Client, landmarks: dict[str, Any], store_of: Any) -> Iterator[Any]:
    yield from list_pages(api)
    special = ",".join(str(landmarks[k]["id"]) for k in MODEL_LANDMARKS if k in landmarks)
    yield ok(api.get(f"/api/v1/models?nsfw=true&ids={special}"))
    yield ok(api.get("/api/v1/models?limit=3&page=2"))


def sample_model(api: httpx.Client, landmarks: dict[str, Any], store_of: Any) -> Iterator[Any]:
    for model_id in model_ids(api, landmarks):
        response = api.get(f"/api/v1/models/{model_id}")
        if response.status_code == 200:
            yield response.json()


def moderator_token(landmarks: dict[str, Any], store_of: Any) -> str:
    from blockkit.emulator.store import tokens
    from blockkit.emulator.store.clock import Clock

    with store_of.write() as db:
        return tokens.issue_access_token(db, user_id=landmarks["moderator"]["id"], scope=1, now=Clock(store_of).now())


def versions_of_every_status(store_of: Any) -> list[int]:
    """A version of each status but Published (model-versions/[id].ts: a moderator reads any status)."""
    with store_of.read() as db:
        return [r[0] for r in db.execute("SELECT min(id) FROM model_versions WHERE status <> 'Published'"
                                         " GROUP BY status")]


def sample_version(api: httpx.Client, landmarks: dict[str, Any], store_of: Any) -> Iterator[Any]:
    for version_id in version_ids(api, landmarks, store_of):
        response = api.get(f"/api/v1/model-versions/{version_id}")
        if response.status_code == 200:
            yield response.json()
    unpublished = versions_of_every_status(store_of)
    assert unpublished, "the seed holds versions that are not Published"
    headers = {"Authorization": f"Bearer {moderator_token(landmarks, store_of)}"}
    for version_id in unpublished:
        yield ok(api.get(f"/api/v1/model-versions/{version_id}", headers=headers))


def sha256s(api: httpx.Client, landmarks: dict[str, Any], store_of: Any) -> list[str]:
    with store_of.read() as db:
        return [r[0] for r in db.execute(
            "SELECT h.hash FROM file_hashes h JOIN model_files f ON f.id = h.file_id"
            " WHERE h.kind = 'SHA256' AND f.version_id IN (SELECT value FROM json_each(?))"
            " ORDER BY f.scanned_at IS NULL DESC, f.id",  # files still pending first
            (str(version_ids(api, landmarks, store_of)),))][:100]


def sample_by_hash(api: httpx.Client, landmarks: dict[str, Any], store_of: Any) -> Iterator[Any]:
    hashes = sha256s(api, landmarks, store_of)
    for value in hashes[:5] + hashes[5::4]:
        response = api.get(f"/api/v1/model-versions/by-hash/{value}")
        if response.status_code == 200:
            yield response.json()


def sample_by_hashes(api: httpx.Client, landmarks: dict[str, Any], store_of: Any) -> Iterator[Any]:
    yield ok(api.post("/api/v1/model-versions/by-hash", json=sha256s(api, landmarks, store_of)))


def sample_by_hash_ids(api: httpx.Client, landmarks: dict[str, Any], store_of: Any) -> Iterator[Any]:
    yield ok(api.post("/api/v1/model-versions/by-hash/ids", json=sha256s(api, landmarks, store_of)))


def sample_mini(api: httpx.Client, landmarks: dict[str, Any], store_of: Any) -> Iterator[Any]:
    for version_id in version_ids(api, landmarks, store_of):
        response = api.get(f"/api/v1/model-versions/mini/{version_id}")
        if response.status_code == 200:
            yield response.json()
    with store_of.read() as db:  # Private (training) versions, read by a moderator as their owner could
        private = [r[0] for r in db.execute("SELECT id FROM model_versions WHERE availability = 'Private'"
                                            " ORDER BY id LIMIT 5")]
    headers = {"Authorization": f"Bearer {moderator_token(landmarks, store_of)}"}
    for version_id in versions_of_every_status(store_of) + private:
        response = api.get(f"/api/v1/model-versions/mini/{version_id}", headers=headers)
        if response.status_code == 200:
            yield response.json()


def sample_images(api: httpx.Client, landmarks: dict[str, Any], store_of: Any) -> Iterator[Any]:
    yield ok(api.get("/api/v1/images?nsfw=X&limit=200&withMeta=true"))
    yield ok(api.get("/api/v1/images?nsfw=X&limit=200&type=video&withTags=true"))
    yield ok(api.get("/api/v1/images?limit=3&page=2"))


def sample_posts(api: httpx.Client, landmarks: dict[str, Any], store_of: Any) -> Iterator[Any]:
    with store_of.read() as db:
        ids = [r[0] for r in db.execute("SELECT id FROM posts WHERE published_at IS NOT NULL AND blocked = 0"
                                        " AND scanned = 1 AND availability = 'Public' ORDER BY id LIMIT 40")]
    for post_id in ids + [landmarks["big_post"]["id"]]:
        response = api.get(f"/api/v1/posts/{post_id}")
        if response.status_code == 200:
            yield response.json()


def sample_articles(api: httpx.Client, landmarks: dict[str, Any], store_of: Any) -> Iterator[Any]:
    yield ok(api.get("/api/v1/articles?limit=100&nsfw=true"))
    yield ok(api.get("/api/v1/articles?limit=100"))
    yield ok(api.get("/api/v1/articles?limit=1"))  # a next page: nextCursor, nextPage


def sample_article(api: httpx.Client, landmarks: dict[str, Any], store_of: Any) -> Iterator[Any]:
    for item in ok(api.get("/api/v1/articles?limit=100&nsfw=true"))["items"]:
        yield ok(api.get(f"/api/v1/articles/{item['id']}"))


def sample_collections(api: httpx.Client, landmarks: dict[str, Any], store_of: Any) -> Iterator[Any]:
    yield ok(api.get("/api/v1/collections?limit=100"))
    yield ok(api.get("/api/v1/collections?limit=100&nsfw=true"))
    yield ok(api.get("/api/v1/collections?limit=1"))  # a next page: nextCursor, nextPage


def sample_collection(api: httpx.Client, landmarks: dict[str, Any], store_of: Any) -> Iterator[Any]:
    for item in ok(api.get("/api/v1/collections?limit=100"))["items"]:
        yield ok(api.get(f"/api/v1/collections/{item['id']}"))


def sample_users(api: httpx.Client, landmarks: dict[str, Any], store_of: Any) -> Iterator[Any]:
    yield ok(api.get("/api/v1/users?limit=100"))
    with store_of.read() as db:  # users with and without an avatar, a mature one among them
        ids = [r[0] for r in db.execute(
            "SELECT id FROM (SELECT id, image IS NULL AS bare, avatar_nsfw FROM users WHERE id > 0"
            " AND deleted_at IS NULL ORDER BY id) GROUP BY bare, avatar_nsfw")]
    yield ok(api.get(f"/api/v1/users?ids={','.join(map(str, ids))}"))
    yield ok(api.get("/api/v1/users?query=a"))


def sample_creators(api: httpx.Client, landmarks: dict[str, Any], store_of: Any) -> Iterator[Any]:
    yield ok(api.get("/api/v1/creators?limit=100"))
    yield ok(api.get("/api/v1/creators?limit=5&page=2"))
    yield ok(api.get("/api/v1/creators?limit=2&query=e"))  # the search path: hasMore, bounds
    yield ok(api.get("/api/v1/creators?limit=2&page=2&query=e"))


def sample_tags(api: httpx.Client, landmarks: dict[str, Any], store_of: Any) -> Iterator[Any]:
    yield ok(api.get("/api/v1/tags?limit=100"))
    yield ok(api.get("/api/v1/tags?limit=5&page=2"))


def sample_permissions(api: httpx.Client, landmarks: dict[str, Any], store_of: Any) -> Iterator[Any]:
    ids = ",".join(str(landmarks[k]["id"]) for k in ("early_access_version", "public_version"))
    yield ok(api.get(f"/api/v1/permissions/check?entityIds={ids}"))


def sample_me(api: httpx.Client, landmarks: dict[str, Any], store_of: Any) -> Iterator[Any]:
    """Client-less (CLI) tokens with and without UserRead, and OAuth tokens with and without a Buzz limit."""
    from blockkit.emulator.store import oauth, tokens
    from blockkit.emulator.store.clock import Clock

    now = Clock(store_of).now()
    raws: list[str] = []
    with store_of.write() as db:
        for role, scope in (("member", 1), ("member", 2), ("muted_user", 1), ("free_user", 3)):
            raws.append(tokens.issue_access_token(db, user_id=landmarks[role]["id"], scope=scope, now=now))
        owner = landmarks["member"]["id"]
        for n, limit in enumerate((None, [{"type": "sliding", "limit": 500, "window": "day", "unit": 1}])):
            client_id, _ = oauth.add_client(db, name=f"shapes-me-{n}", owner_user_id=owner, redirect_uris=[],
                                            allowed_scopes=3, confidential=False, allowed_origins=[], now=now)
            oauth.save_consent(db, user_id=owner, client_id=client_id, scope=3, buzz_limit=limit, now=now)
            raws.append(tokens.issue_access_token(db, user_id=owner, scope=3, now=now, client_id=client_id))
    for raw in raws:
        yield ok(api.get("/api/v1/me", headers={"Authorization": f"Bearer {raw}"}))


def sample_enums(api: httpx.Client, landmarks: dict[str, Any], store_of: Any) -> Iterator[Any]:
    yield ok(api.get("/api/v1/enums"))


def member_headers(landmarks: dict[str, Any], store_of: Any) -> dict[str, str]:
    from blockkit.emulator.store import tokens
    from blockkit.emulator.store.clock import Clock

    with store_of.write() as db:
        raw = tokens.issue_access_token(db, user_id=landmarks["member"]["id"], scope=1, now=Clock(store_of).now())
    return {"Authorization": f"Bearer {raw}"}


def sample_vault_get(api: httpx.Client, landmarks: dict[str, Any], store_of: Any) -> Iterator[Any]:
    yield ok(api.get("/api/v1/vault/get", headers=member_headers(landmarks, store_of)))


def sample_vault_all(api: httpx.Client, landmarks: dict[str, Any], store_of: Any) -> Iterator[Any]:
    headers = member_headers(landmarks, store_of)
    yield ok(api.get("/api/v1/vault/all?limit=60", headers=headers))
    yield ok(api.get("/api/v1/vault/all?query=zz-no-such-item-zz", headers=headers))


def sample_vault_check(api: httpx.Client, landmarks: dict[str, Any], store_of: Any) -> Iterator[Any]:
    headers = member_headers(landmarks, store_of)
    items = ok(api.get("/api/v1/vault/all?limit=60", headers=headers))["items"]
    # Every stored item (the seed's in each condition: with notes and without, with a cover and
    # without), whatever other tests of the session added to the vault before this one.
    stored = [i["modelVersionId"] for i in items]
    ids = ",".join(map(str, stored + [landmarks["public_version"]["id"]]))
    yield ok(api.get(f"/api/v1/vault/check-vault?modelVersionIds={ids}", headers=headers))


ROUTES: dict[str, Callable[..., Iterator[Any]]] = {
    "GET /api/v1/models": sample_models,
    "GET /api/v1/models/{id}": sample_model,
    "GET /api/v1/model-versions/{id}": sample_version,
    "GET /api/v1/model-versions/by-hash/{hash}": sample_by_hash,
    "POST /api/v1/model-versions/by-hash": sample_by_hashes,
    "POST /api/v1/model-versions/by-hash/ids": sample_by_hash_ids,
    "GET /api/v1/model-versions/mini/{id}": sample_mini,
    "GET /api/v1/images": sample_images,
    "GET /api/v1/posts/{id}": sample_posts,
    "GET /api/v1/articles": sample_articles,
    "GET /api/v1/articles/{id}": sample_article,
    "GET /api/v1/collections": sample_collections,
    "GET /api/v1/collections/{id}": sample_collection,
    "GET /api/v1/users": sample_users,
    "GET /api/v1/creators": sample_creators,
    "GET /api/v1/tags": sample_tags,
    "GET /api/v1/permissions/check": sample_permissions,
    "GET /api/v1/me": sample_me,
    "GET /api/v1/enums": sample_enums,
    "GET /api/v1/vault/get": sample_vault_get,
    "GET /api/v1/vault/all": sample_vault_all,
    "GET /api/v1/vault/check-vault": sample_vault_check,
}


def sent(route: str, api: httpx.Client, landmarks: dict[str, Any], store_of: Any) -> dict[str, frozenset[str]]:
    shape: dict[str, set[str]] = {}
    for body in ROUTES[route](api, landmarks, store_of):
        shape_of(body, shape)
    return normalised(shape)


def test_every_sampled_route_has_a_table() -> None:
    assert set(ROUTES) <= set(tables())


@pytest.mark.parametrize("route", list(ROUTES))
def test_route_sends_its_tables_keys_and_types(route: str, api: httpx.Client, landmarks: dict[str, Any],
                                               store_of: Any) -> None:
    table = tables()[route]
    shape = sent(route, api, landmarks, store_of)
    missing = sorted(set(table) - set(shape))
    extra = sorted(set(shape) - set(table))
    differ = sorted(p for p in set(table) & set(shape) if table[p] != shape[p])
    report = "\n".join(
        [f"missing (in the table, never sent): {missing}", f"not in the table: {extra}"]
        + [f"{p}: table {sorted(table[p])}, sent {sorted(shape[p])}" for p in differ]
        + ["sent, as a table:", render({p: shape[p] for p in extra + differ})])
    assert not missing and not extra and not differ, report


def test_shape_of_merges_array_elements_and_names_timestamps() -> None:
    body = {"items": [{"a": 1, "t": "2024-01-02T03:04:05.678Z"}, {"a": None, "t": "2024-01-02T03:04:05.6",
                                                                  "meta": {"x": 1}}]}
    assert normalised(shape_of(body)) == {
        "items": {"array"}, "items[]": {"object"}, "items[].a": {"integer", "null"},
        "items[].t": {"timestamp", "timestamp-nz"}, "items[].meta": {"object"},
    }


def test_the_tables_parse() -> None:
    text = ("## Route shapes, key by key\n\n### `GET /x`\n\n| key path | types | source |\n|---|---|---|\n"
            "| `items[].id` | integer | a |\n| `items[].at` | timestamp, null | b |\n\n## Next\n| `no` | string | |\n")
    assert tables(text) == {"GET /x": {"items[].id": {"integer"}, "items[].at": {"timestamp", "null"}}}

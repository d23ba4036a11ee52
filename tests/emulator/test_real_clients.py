"""Published third-party clients of the catalogue API, run against the emulator.

- ``civitapy`` (PyPI): takes ``base_url``; covers nearly every endpoint, follows
  ``metadata.nextCursor`` in its paginator, parses answers with its own pydantic models.
- ``civitai-hub`` (PyPI): builds ``https://{host}/api/v1`` itself, so the one change we
  make is its ``base_url`` attribute; it pages models by cursor and resolves versions
  by id and by hash into its pydantic models.

Nothing else of either client is changed. Their HTTP traffic is observed (httpx's
``send`` is wrapped to record each request and check each answer against the OpenAPI
document), so a call a client makes that the emulator cannot answer fails here.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest

from contract import contract
from emulator_helpers import outside_loop


class Traffic:
    """Every request a client made, and every way an answer departed from the document."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, tuple[str, ...]]] = []
        self.problems: list[str] = []

    def record(self, response: httpx.Response) -> None:
        url = urlsplit(str(response.request.url))
        names = tuple(sorted({k for k, _ in parse_qsl(url.query, keep_blank_values=True)}))
        op, _ = contract().find(response.request.method, url.path)
        self.calls.append((response.request.method, op.path if op else url.path, names))
        self.problems.extend(
            contract().problems(response.request.method, url.path, response.status_code, response.headers, response.content)
        )

    def used(self) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for method, path, names in self.calls:
            out.setdefault(f"{method} {path}", set()).update(names)
        return out

    def assert_clean(self) -> None:
        assert not self.problems, "answers departing from the document:\n" + "\n".join(self.problems[:30])


@pytest.fixture
def traffic(monkeypatch: pytest.MonkeyPatch) -> Traffic:
    seen = Traffic()
    sync_send = httpx.Client.send
    async_send = httpx.AsyncClient.send

    def send(self: httpx.Client, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        response = sync_send(self, request, **kwargs)
        response.read()
        seen.record(response)
        return response

    async def asend(self: httpx.AsyncClient, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        response = await async_send(self, request, **kwargs)
        await response.aread()
        seen.record(response)
        return response

    monkeypatch.setattr(httpx.Client, "send", send)
    monkeypatch.setattr(httpx.AsyncClient, "send", asend)
    return seen


def walk_models(api: httpx.Client, **params: Any) -> list[dict[str, Any]]:
    """Every model for ``params``, following nextCursor to the end (our own walk, to compare with)."""
    items: list[dict[str, Any]] = []
    query = {"limit": 100, **params}
    for _ in range(1000):
        body = api.get("/api/v1/models", params=query).json()
        items.extend(body["items"])
        cursor = body["metadata"].get("nextCursor")
        if cursor is None:
            return items
        query["cursor"] = cursor
    raise AssertionError("the models cursor never ended")


# --- civitapy -----------------------------------------------------------------------------


@outside_loop  # civitapy runs asyncio itself
def test_civitapy_session(base_url: str, api: httpx.Client, landmarks: dict[str, Any], traffic: Traffic) -> None:
    from civitapy import CivitAIClient

    client = CivitAIClient(base_url=f"{base_url}/api/v1", retry_count=1, token="")

    enums = client.enums()
    assert "LORA" in enums["ModelType"]

    # The seed's landmark creator owns a handful of models: a cursor walk several pages long.
    creators = client.creators_list(limit=200, query=landmarks["creator"]["username"])["items"]
    creator = next(c for c in creators if c["username"] == landmarks["creator"]["username"])
    expected = walk_models(api, username=creator["username"])
    assert len(expected) >= 3, creator

    async def paginate() -> list[Any]:
        return [m async for m in client.models_list_paginated_async(limit=2, username=creator["username"])]

    walked = asyncio.run(paginate())
    assert [m.id for m in walked] == [m["id"] for m in expected]
    assert len({m.id for m in walked}) == len(walked)
    models_calls = [c for c in traffic.calls if c[1] == "/api/v1/models" and "cursor" in c[2]]
    assert models_calls, "civitapy never followed a cursor"

    known = landmarks["known_hashes"]
    model = {"id": known["model_id"]}
    version = {"id": known["version_id"], "name": client.model_versions_get(known["version_id"])["name"]}
    sha = known["SHA256"]
    assert client.models_get(model["id"])["id"] == model["id"]
    detail = client.model_versions_get(version["id"])
    assert detail["id"] == version["id"] and detail["modelId"] == model["id"]
    for kind in ("AutoV1", "AutoV2", "AutoV3", "SHA256", "CRC32", "BLAKE3"):
        assert client.model_versions_by_hash(known[kind])["id"] == version["id"], kind
    assert client.model_versions_by_hash(sha.lower())["id"] == version["id"]  # case-insensitive
    assert client.model_versions_by_hash("0" * 64) is None  # 404 -> None
    bulk = client.model_versions_by_hash_bulk([sha, "F" * 64])
    assert [v["id"] for v in bulk] == [version["id"]]
    ids = client.model_versions_by_hash_ids([sha, "F" * 64])
    assert [(r.model_version_id, r.hash.upper()) for r in ids] == [(version["id"], sha.upper())]
    mini = client.model_versions_mini(version["id"])
    assert mini["versionName"] == version["name"]

    # The images feed: several pages, following the cursor verbatim, no image twice.
    seen: list[int] = []
    cursor = None
    for _ in range(4):
        page = client.images_list(limit=5, cursor=cursor)
        seen.extend(i["id"] for i in page["items"])
        cursor = page["metadata"].get("nextCursor")
        if cursor is None:
            break
    assert len(seen) >= 10, seen
    assert len(set(seen)) == len(seen)
    by_model = client.images_list(limit=10, model_id=model["id"], with_meta=True)
    assert isinstance(by_model["items"], list)

    assert isinstance(client.articles_list(limit=5)["items"], list)
    assert isinstance(client.collections_list(limit=5)["items"], list)
    assert isinstance(client.tags_list(limit=5)["items"], list)
    users = client.users_lookup(query=creator["username"][:3])["items"]
    assert any(u["username"] == creator["username"] for u in users) or users
    permissions = client.permissions_check([version["id"]])
    assert set(permissions) == {str(version["id"])}

    traffic.assert_clean()


@outside_loop
def test_civitapy_member_session(base_url: str, member: dict[str, Any], member_token: str, traffic: Traffic) -> None:
    from civitapy import CivitAIClient

    client = CivitAIClient(base_url=f"{base_url}/api/v1", retry_count=1, token=member_token)
    me = client.users_me()
    assert me["username"] == member["username"] and me["isMember"] is True
    vault = client.vault_get()["vault"]
    assert vault is not None and vault["userId"] == me["id"]
    version_id = client.models_list(limit=1)["items"][0]["modelVersions"][0]["id"]
    before = client.vault_check([version_id])[0]["vaultItem"]
    toggled = client.vault_toggle(version_id)
    assert toggled["success"] is True and (("vaultId" in toggled) == (before is None))
    after = client.vault_check([version_id])[0]["vaultItem"]
    assert (after is None) == (before is not None)
    client.vault_toggle(version_id)  # back as it was
    listing = client.vault_all(limit=10)
    assert {"items", "totalItems", "currentPage", "pageSize", "totalPages"} <= set(listing)
    assert client.models_list(limit=5, favorites=True)["items"] is not None
    traffic.assert_clean()


# --- civitai-hub -----------------------------------------------------------------------------


def test_civitai_hub_session(base_url: str, api: httpx.Client, landmarks: dict[str, Any], traffic: Traffic) -> None:
    from civitai_hub.client import CivitaiClient

    everything = walk_models(api)
    pairs = Counter(
        (m["type"], v["baseModel"]) for m in everything for v in m["modelVersions"][:1]
    )
    # The smallest (type, base model) filter with several models: a short walk to its end.
    (kind, base), count = min(((p, n) for p, n in pairs.items() if n >= 2), key=lambda x: x[1])
    expected = [m["id"] for m in walk_models(api, types=kind, baseModels=base)]

    with CivitaiClient(max_retries=0) as client:
        client.base_url = f"{base_url}/api/v1"  # its only base-URL setting
        found = client.search_models(types=kind, base_models=base, sort="Highest Rated", limit=10_000)
        assert [m.id for m in found] == expected

        known = landmarks["known_hashes"]
        # By id: the model may be flagged NSFW, and the default list (nsfw=false) leaves those out.
        model = api.get(f"/api/v1/models/{known['model_id']}").json()
        version, sha = {"id": known["version_id"]}, known["SHA256"]
        got = client.get_model(model["id"])
        assert got.id == model["id"] and got.model_versions[0].id == model["modelVersions"][0]["id"]
        detail = client.get_version(version["id"])
        assert detail.model_id == model["id"] and detail.files
        by_hash = client.get_version_by_hash(sha)
        assert by_hash.id == version["id"]
        assert any(f.sha256 == sha.upper() for f in by_hash.files)

        # Wider than one page: every model, in pages of 100 by cursor.
        all_found = client.search_models(sort="Highest Rated", limit=10_000)
        assert [m.id for m in all_found] == [m["id"] for m in everything]
        if len(everything) > 100:
            pages = [c for c in traffic.calls if c[1] == "/api/v1/models" and "cursor" in c[2]]
            assert pages, "civitai-hub never followed a cursor"

    traffic.assert_clean()

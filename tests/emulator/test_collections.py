"""GET /api/v1/collections and /collections/{id}: public only, the id cursor, sorts, covers, counts, caching."""

from __future__ import annotations

import json

from typing import Any

import pytest

from blockkit.emulator.http.catalogue.collections import CACHE_CONTROL, CURSOR_NEEDS_NEWEST
from media_env import MediaEnv

RESTRICTED = {"X-Emulator-Region": "restricted"}


def items_of(pages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [item for page in pages for item in page["items"]]


def oracle(media: MediaEnv, level: int) -> list[int]:
    return [r[0] for r in media.sql("SELECT id FROM collections WHERE read = 'Public' AND (nsfw_level & ~?) = 0"
                                    " ORDER BY id DESC", level)]


def test_newest_walks_public_collections_by_id_cursor(media: MediaEnv) -> None:
    pages = media.walk("/collections", limit=5)
    ids = [c["id"] for c in items_of(pages)]
    assert ids == oracle(media, 3)
    for page, following in zip(pages, pages[1:]):
        cursor = page["metadata"]["nextCursor"]
        assert isinstance(cursor, int) and following["items"][0]["id"] == cursor
        assert page["metadata"]["nextPage"] == f"{media.base_url}/api/v1/collections?limit=5&cursor={cursor}"
    assert pages[-1]["metadata"] == {}
    assert all(c["isPublic"] and c["read"] == "Public" for c in items_of(pages))
    for key in ("private", "unlisted", "mature_only", "x_cover"):
        assert media.data.collections[key] not in ids, key
    for key, collection_id in media.landmarks["collections"].items():
        assert (collection_id in ids) <= key.endswith("/Public"), key


def test_cursor_only_with_newest(media: MediaEnv) -> None:
    first = media.json("/collections", limit=2)
    response = media.get("/collections", sort="Most Followers", cursor=first["metadata"]["nextCursor"])
    assert response.status_code == 400 and response.json() == {"error": CURSOR_NEEDS_NEWEST}


def test_most_followers_is_ordered_and_one_page(media: MediaEnv) -> None:
    page = media.json("/collections", sort="Most Followers", limit=100, nsfw="true")
    ids = [c["id"] for c in page["items"]]
    followers = dict(media.sql("SELECT id, follower_count FROM collections"))
    keys = [(followers[i], i) for i in ids]
    assert keys == sorted(keys, reverse=True)
    assert ids[0] == media.data.collections["no_cover"], "a million followers"
    assert page["metadata"] == {}
    short = media.json("/collections", sort="Most Followers", limit=2)
    assert len(short["items"]) == 2 and short["metadata"] == {}


def test_query_searches_names_and_is_at_most_100_characters(media: MediaEnv) -> None:
    names = {c["name"] for c in media.json("/collections", query="MEDIA ZEBRA")["items"]}
    assert names == {"Media zebra favourites", "Media zebra unscanned"}
    assert media.get("/collections", query="z" * 100).status_code == 200
    too_long = media.get("/collections", query="z" * 101)
    assert too_long.status_code == 400 and json.loads(too_long.json()["error"]["message"])[0]["path"] == ["query"]


def test_item_count_and_cover(media: MediaEnv) -> None:
    d = media.data
    found = {c["id"]: c for c in media.json("/collections", query="media", nsfw="true")["items"]}
    public = found[d.collections["public"]]
    assert public["itemCount"] == d.extra["accepted_in_public"], "accepted items only"
    assert public["coverImageUrl"] == f"{media.base_url}/__emulator/media/media-{d.images['pg']}.jpeg"
    assert public["user"] == {"id": d.users["owner"], "username": "Media_Owner"}
    assert found[d.collections["no_cover"]]["coverImageUrl"] is None
    assert found[d.collections["unscanned_cover"]]["coverImageUrl"] is None
    assert found[d.collections["x_cover"]]["coverImageUrl"].endswith(f"media-{d.images['x']}.jpeg")
    assert "tags" not in public


def test_nsfw_and_the_restricted_clamp(media: MediaEnv) -> None:
    d = media.data
    mature = d.collections["mature_only"]
    assert mature not in [c["id"] for c in items_of(media.walk("/collections"))]
    assert mature in [c["id"] for c in items_of(media.walk("/collections", nsfw="true"))]
    clamped = items_of(media.walk("/collections", headers=RESTRICTED, nsfw="true"))
    assert [c["id"] for c in clamped] == oracle(media, 3)


def test_single_collection(media: MediaEnv) -> None:
    d = media.data
    response = media.client.get(f"/api/v1/collections/{d.collections['public']}")
    assert response.status_code == 200 and response.headers["cache-control"] == CACHE_CONTROL
    body = response.json()
    assert body["tags"] == [{"id": d.tags["collection"], "name": "media-collection-tag"}]
    assert "itemCount" not in body
    unlisted = media.client.get(f"/api/v1/collections/{d.collections['unlisted']}").json()
    assert unlisted["isPublic"] is False and unlisted["read"] == "Unlisted"
    dark = f"/api/v1/collections/{d.collections['x_cover']}"
    assert media.client.get(dark).json()["coverImageUrl"] is not None
    assert media.client.get(dark, headers=RESTRICTED).json()["coverImageUrl"] is None


def test_private_and_missing_collections_are_404s(media: MediaEnv) -> None:
    missing = media.client.get("/api/v1/collections/2147483647")
    assert missing.status_code == 404
    for collection_id in (media.data.collections["private"], media.landmarks["collections"]["Model/Private"],
                          media.landmarks["favorites_collection"]["id"]):
        hidden = media.client.get(f"/api/v1/collections/{collection_id}")
        # collections/[id].ts:81 names the id asked for.
        assert hidden.status_code == 404 and hidden.json() == {"error": f"No collection with id {collection_id}"}
    assert missing.json() == {"error": "No collection with id 2147483647"}


def test_a_token_never_changes_the_data(media: MediaEnv) -> None:
    d = media.data
    token = media.bearer(d.users["owner"])
    for path in ("/api/v1/collections", f"/api/v1/collections/{d.collections['public']}"):
        anonymous = media.client.get(path)
        signed = media.client.get(path, headers=token)
        assert signed.json() == anonymous.json() and signed.headers["cache-control"] == CACHE_CONTROL
    assert media.client.get(f"/api/v1/collections/{d.collections['private']}", headers=token).status_code == 404


@pytest.mark.parametrize("params", [{"limit": "0"}, {"limit": "101"}, {"cursor": "0"}, {"cursor": "abc"},
                                    {"sort": "Oldest"}, {"nsfw": "2"}])
def test_invalid_parameters_are_400s(media: MediaEnv, params: dict[str, str]) -> None:
    body = media.get("/collections", **params).json()
    assert json.loads(body["error"]["message"])[0]["path"] == [next(iter(params))]


@pytest.mark.parametrize("value", ["0", "-1", "1.0", "x"])
def test_bad_collection_id_is_a_400(media: MediaEnv, value: str) -> None:
    response = media.client.get(f"/api/v1/collections/{value}")
    assert response.status_code == 400 and isinstance(response.json()["error"], str)

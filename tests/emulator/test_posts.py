"""GET /api/v1/posts/{id}: every 404 cause, the first 100 images, the anonymous evaluation and caching."""

from __future__ import annotations

from typing import Any

import pytest

from blockkit.emulator.http.catalogue.posts import CACHE_ANONYMOUS
from media_env import MediaEnv

RESTRICTED = {"X-Emulator-Region": "restricted"}


def post(media: MediaEnv, post_id: int, headers: dict[str, str] | None = None) -> Any:
    return media.client.get(f"/api/v1/posts/{post_id}", headers=headers)


def served_positions(media: MediaEnv, post_id: int, level: int) -> list[int]:
    rows = media.sql("SELECT id FROM images WHERE post_id = ? AND scanned_at IS NOT NULL AND (nsfw_level & ?) != 0"
                     " ORDER BY post_position, id", post_id, level)
    return [r[0] for r in rows]


def test_a_public_post(media: MediaEnv) -> None:
    d = media.data
    response = post(media, d.posts["public"])
    assert response.status_code == 200
    assert response.headers["cache-control"] == CACHE_ANONYMOUS
    body = response.json()
    assert body["id"] == d.posts["public"] and body["title"] == "Post public" and body["detail"] == "<p>detail</p>"
    assert body["user"] == {"id": d.users["owner"], "username": "Media_Owner"}
    assert body["tags"] == [{"id": d.tags["post"], "name": "media-post-tag"}]
    assert body["modelVersionId"] == d.versions["v1"]
    assert body["nsfwLevel"] == 1 | 2 | 4 | 8 | 16 | 32, "the stored bitmask of the images' levels"
    ids = [i["id"] for i in body["images"]]
    assert ids == served_positions(media, d.posts["public"], 31)
    assert d.images["blocked_image"] not in ids and d.images["unscanned"] not in ids
    assert d.images["x"] in ids, "outside a restricted region every rating but Blocked is served"
    assert all(i["meta"] is None for i in body["images"]), "meta is always null in a post"
    assert all(i["postId"] == d.posts["public"] for i in body["images"])


def test_unlisted_post_is_served_and_unpublished_version_is_null(media: MediaEnv) -> None:
    d = media.data
    assert post(media, d.posts["unlisted"]).status_code == 200
    assert post(media, d.posts["unpublished_version"]).json()["modelVersionId"] is None
    assert post(media, media.landmarks["unlisted_post"]["id"]).status_code == 200


@pytest.mark.parametrize("key", ["private", "early", "unpublished", "future", "blocked", "unscanned_post"])
def test_hidden_posts_are_404s(media: MediaEnv, key: str) -> None:
    response = post(media, media.data.posts[key])
    assert response.status_code == 404
    assert response.json() == {"error": "Post not found"}, "one message whatever the cause"


@pytest.mark.parametrize("key", ["private_post", "unpublished_post", "blocked_post", "unscanned_post",
                                 "early_access_post"])
def test_seed_landmark_hidden_posts_are_404s(media: MediaEnv, key: str) -> None:
    assert post(media, media.landmarks[key]["id"]).json() == {"error": "Post not found"}


def test_missing_post_is_a_404(media: MediaEnv) -> None:
    assert post(media, 2_147_483_647).json() == {"error": "Post not found"}


@pytest.mark.parametrize("value", ["0", "-1", "abc", "1.5", "2147483648", "99999999999999999999", "%2B1", "1e3",
                                   "%EF%BC%91", "%00"])
def test_id_not_a_positive_integer_is_a_400(media: MediaEnv, value: str) -> None:
    response = media.client.get(f"/api/v1/posts/{value}")
    assert response.status_code == 400, value
    assert isinstance(response.json()["error"], str)


def test_restricted_region_hides_mature_posts_and_images(media: MediaEnv) -> None:
    d = media.data
    assert post(media, d.posts["mature"], RESTRICTED).json() == {"error": "Post not found"}
    assert post(media, d.posts["public"], RESTRICTED).status_code == 404, "the public post holds R and X images"
    assert post(media, media.landmarks["mature_post"]["id"], RESTRICTED).status_code == 404
    assert post(media, d.posts["mature"]).status_code == 200
    assert post(media, d.posts["big"], RESTRICTED).status_code == 404, "the big post holds one X image"
    served = post(media, d.posts["unlisted"], RESTRICTED).json()
    assert all(i["browsingLevel"] in (1, 2) for i in served["images"])


def test_first_100_images_in_post_order(media: MediaEnv) -> None:
    d = media.data
    body = post(media, d.posts["big"]).json()
    ids = [i["id"] for i in body["images"]]
    assert len(ids) == 100
    expected = served_positions(media, d.posts["big"], 31)[:100]
    assert ids == expected
    assert d.post_images["big"][1] not in ids, "the unscanned image is left out"
    assert d.post_images["big"][3] in ids
    assert ids[-1] == d.post_images["big"][100], "100 served images: positions 0 and 2-100"
    big = media.landmarks["big_post"]
    seeded = post(media, big["id"]).json()
    assert len(seeded["images"]) <= 100 < big["image_count"]


def test_a_token_never_changes_the_data_but_is_not_cached(media: MediaEnv) -> None:
    d = media.data
    anonymous = post(media, d.posts["public"])
    for headers in (media.bearer(d.users["owner"]), {"Authorization": "Bearer not-a-token"}):
        response = post(media, d.posts["public"], headers)
        assert response.status_code == 200
        assert response.json() == anonymous.json()
        assert response.headers["cache-control"] == "no-store"
    assert post(media, d.posts["private"], media.bearer(d.users["owner"])).status_code == 404, "not even the owner"

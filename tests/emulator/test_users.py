"""GET /api/v1/users: lookups by ids and by username prefix; deleted and system users never listed."""

from __future__ import annotations

import json

import pytest

from media_env import MediaEnv


def listed(media: MediaEnv) -> list[tuple[int, str]]:
    return media.sql("SELECT id, username FROM users WHERE deleted_at IS NULL AND id > 0 ORDER BY id")


def test_without_parameters_the_first_five_users(media: MediaEnv) -> None:
    items = media.json("/users")["items"]
    assert [(u["id"], u["username"]) for u in items] == listed(media)[:5]
    assert all(u["id"] > 0 for u in items)


def test_ids_limit_the_answer_to_their_number_in_their_order(media: MediaEnv) -> None:
    d = media.data.users
    items = media.json("/users", ids=f"{d['other']},{d['gone']},{d['owner']}")["items"]
    assert [u["id"] for u in items] == [d["other"], d["owner"]], "the deleted user is filtered out"
    many = [row[0] for row in listed(media)[:12]]
    assert [u["id"] for u in media.json("/users", ids=",".join(map(str, many)))["items"]] == many
    assert [u["id"] for u in media.json("/users", ids=f"{d['owner']},{d['owner']}")["items"]] == [d["owner"]]
    deleted = media.landmarks["deleted_user"]["id"]
    assert media.json("/users", ids=str(deleted))["items"] == []
    assert media.json("/users", ids="2147483647")["items"] == []


def test_query_is_a_prefix_match_shortest_first(media: MediaEnv) -> None:
    names = [u["username"] for u in media.json("/users", query="ZZMQ")["items"]]
    assert names == ["Zzmq", "Zzmqa", "Zzmqab", "Zzmqabc", "Zzmqabcd"]
    assert "Zzmqz" not in [u["username"] for u in media.json("/users", query="zzmqz")["items"]], "deleted"
    assert media.json("/users", query="mqab")["items"] == [], "a prefix, not a substring"
    assert media.json("/users", query="Zzmq_")["items"] == [], "'_' is a character, not a wildcard"
    d = media.data.users
    both = media.json("/users", query="zzmqab", ids=f"{d['prefix_mqabcde']},{d['prefix_mq']}")["items"]
    assert [u["username"] for u in both] == ["Zzmqabcde"]


def test_avatar_nsfw(media: MediaEnv) -> None:
    d = media.data.users
    items = {u["id"]: u for u in media.json("/users", ids=f"{d['avatar']},{d['owner']}")["items"]}
    assert items[d["avatar"]]["avatarNsfw"] == "Mature" and items[d["owner"]]["avatarNsfw"] == "None"
    landmark = media.landmarks["mature_avatar_user"]
    assert media.json("/users", ids=str(landmark["id"]))["items"][0]["avatarNsfw"] == "Mature"


@pytest.mark.parametrize("ids", ["abc", "1,,2", "0", "-1", "", "1.5", "2147483648", ",".join(["1"] * 1001)])
def test_malformed_ids_are_400s_with_the_bare_validation_error(media: MediaEnv, ids: str) -> None:
    response = media.get("/users", ids=ids)
    assert response.status_code == 400, ids
    body = response.json()
    assert body["name"] == "ZodError" and json.loads(body["message"])[0]["path"][0] == "ids"


def test_repeated_query_is_a_400_and_unknown_parameters_are_ignored(media: MediaEnv) -> None:
    assert media.client.get("/api/v1/users?query=a&query=b").status_code == 400
    assert media.client.get("/api/v1/users?nope=%00").json() == media.json("/users")

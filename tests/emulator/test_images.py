"""GET /api/v1/images: rules 1-5 of the spec's images section, every parameter, the cursors.

Every response goes through the conformance hook (media_env), so each test also
checks the answer against openapi.json. States come from the media fixture rows
(``media.data``) and the seed's landmarks, never from literal ids.
"""

from __future__ import annotations

import json

import re
from datetime import datetime, timezone
from typing import Any

import pytest
from media_env import MediaEnv

from blockkit.emulator.http.catalogue import feed_cursor
from blockkit.emulator.http.catalogue import images as images_api
from blockkit.emulator.store import images as image_store

PG, PG13, R, X, XXX, BLOCKED = 1, 2, 4, 8, 16, 32
METRIC = {"Most Reactions": "reaction_count", "Most Comments": "comment_count", "Most Collected": "collected_count"}


def items_of(pages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [item for page in pages for item in page["items"]]


def ids_of(pages_or_items: list[dict[str, Any]]) -> list[int]:
    items = items_of(pages_or_items) if pages_or_items and "items" in pages_or_items[0] else pages_or_items
    return [item["id"] for item in items]


def feed_oracle(media: MediaEnv, level: int, availability: tuple[str, ...] = ("Public",)) -> set[int]:
    """The spec's rule 1, written plainly: scanned images within ``level`` of shown posts."""
    marks = ", ".join("?" * len(availability))
    rows = media.sql(
        "SELECT i.id FROM images i JOIN posts p ON p.id = i.post_id WHERE i.scanned_at IS NOT NULL"
        f" AND (i.nsfw_level & ?) != 0 AND p.availability IN ({marks}) AND p.published_at IS NOT NULL"
        " AND p.published_at <= ? AND p.scanned = 1 AND p.blocked = 0",
        level, *availability, media.clock.iso())
    return {r[0] for r in rows}


def metric(media: MediaEnv, column: str, ids: list[int], period: str = "AllTime") -> dict[int, int]:
    marks = ", ".join("?" * len(ids))
    return dict(media.sql(f"SELECT image_id, {column} FROM image_metrics WHERE period = ? AND image_id IN ({marks})",
                          period, *ids))


def bad(media: MediaEnv, **params: Any) -> dict[str, Any]:
    response = media.get("/images", **params)
    assert response.status_code == 400, (params, response.status_code, response.text[:300])
    return response.json()


# --- rule 1: what is listed --------------------------------------------------------------------

def test_anonymous_walk_lists_exactly_the_public_posts_images_at_the_public_level(media: MediaEnv) -> None:
    pages = media.walk("/images", limit=200)
    ids = ids_of(pages)
    assert len(ids) == len(set(ids)), "an image came twice"
    assert set(ids) == feed_oracle(media, PG)
    assert all(item["browsingLevel"] == PG and item["nsfwLevel"] == "None" for item in items_of(pages))
    d = media.data.images
    for hidden in ("in_unlisted", "in_early", "in_private", "in_unpublished", "in_future", "in_blocked",
                   "in_unscanned_post", "unscanned", "blocked_image", "pg13", "x"):
        assert d[hidden] not in ids, hidden


def test_every_sort_walks_the_whole_feed_in_its_order(media: MediaEnv) -> None:
    expected = feed_oracle(media, PG)
    for sort in ("Most Reactions", "Most Comments", "Most Collected", "Newest", "Oldest"):
        items = items_of(media.walk("/images", limit=150, sort=sort))
        ids = [i["id"] for i in items]
        assert set(ids) == expected and len(ids) == len(expected), sort
        if sort in METRIC:
            values = metric(media, METRIC[sort], ids)
            keys = [(values[i], i) for i in ids]
            assert keys == sorted(keys, reverse=True), sort
        else:
            keys = [(i["createdAt"], i["id"]) for i in items]
            assert keys == sorted(keys, reverse=sort == "Newest"), sort


def test_period_sorts_by_that_periods_metric(media: MediaEnv) -> None:
    ids = ids_of(media.walk("/images", limit=200, sort="Most Reactions", period="Week"))
    week = metric(media, "reaction_count", ids, "Week")
    keys = [(week[i], i) for i in ids]
    assert keys == sorted(keys, reverse=True)
    all_time = metric(media, "reaction_count", ids)
    assert keys != sorted(((all_time[i], i) for i in ids), reverse=True), "Week and AllTime orders coincide"


def test_random_is_deterministic_complete_and_not_id_order(media: MediaEnv) -> None:
    first = ids_of(media.walk("/images", limit=100, sort="Random"))
    again = ids_of(media.walk("/images", limit=100, sort="Random"))
    assert first == again
    assert len(first) == len(set(first))
    assert set(first) == feed_oracle(media, PG, ("Public", "Unlisted", "EarlyAccess"))  # Random is exempt
    assert first != sorted(first) and first != sorted(first, reverse=True)
    # The order is the shuffle rotated by the request's salt, across the wrap-around point.
    cursor = media.json("/images", limit=1, sort="Random")["metadata"]["nextCursor"]
    position = feed_cursor.decode(cursor)
    assert isinstance(position, feed_cursor.FeedPosition)
    salt = images_api._salt(position.filters, position.data)
    keys = [image_store.random_order_key(i, salt) for i in first]
    assert keys == sorted(keys)
    hashes = [image_store.shuffle_hash(i) for i in first]
    assert hashes != sorted(hashes), "the rotation moved the start of the shuffle"
    other = ids_of(media.walk("/images", limit=100, sort="Random", userId=media.data.users["owner"]))
    assert sorted(other) != other and set(other) <= set(first)


# --- rule 1: the exemptions -----------------------------------------------------------------------

def test_lookups_by_post_image_and_model_show_unlisted_and_early_access(media: MediaEnv) -> None:
    d = media.data
    owner = d.users["owner"]
    plain = ids_of(media.walk("/images", userId=owner))
    assert d.images["in_unlisted"] not in plain and d.images["in_early"] not in plain
    assert d.images["pg"] in plain
    for post in ("unlisted", "early"):
        assert ids_of(media.walk("/images", postId=d.posts[post])) == d.post_images[post]
        assert ids_of(media.walk("/images", imageId=d.images[f"in_{post}"])) == [d.images[f"in_{post}"]]
    for post in ("private", "unpublished", "future", "blocked", "unscanned_post"):
        page = media.json("/images", postId=d.posts[post])
        assert page == {"items": [], "metadata": {}}, post
        assert media.json("/images", imageId=d.images[f"in_{post}"])["items"] == [], post
    by_model = set(ids_of(media.walk("/images", modelId=d.models["m1"])))
    assert {d.images["in_unlisted"], d.images["in_early"], d.images["pg"]} <= by_model
    assert d.images["in_private"] not in by_model and d.images["in_blocked"] not in by_model
    by_version = set(ids_of(media.walk("/images", modelId=d.models["m1"], modelVersionId=d.versions["v1"])))
    assert d.images["pg"] in by_version and d.images["in_unlisted"] not in by_version
    shuffled = set(ids_of(media.walk("/images", userId=owner, sort="Random")))
    assert {d.images["in_unlisted"], d.images["in_early"]} <= shuffled
    assert d.images["in_private"] not in shuffled


def test_seed_landmark_posts_follow_the_same_rules(media: MediaEnv) -> None:
    lm = media.landmarks
    unlisted = lm["unlisted_post"]
    shown = ids_of(media.walk("/images", postId=unlisted["id"]))
    assert shown and set(shown) <= set(unlisted["image_ids"])
    for key in ("private_post", "unpublished_post", "blocked_post", "unscanned_post"):
        assert ids_of(media.walk("/images", postId=lm[key]["id"])) == [], key
    everything = set(ids_of(media.walk("/images", limit=200)))
    assert not everything & set(unlisted["image_ids"])
    assert lm["unscanned_image"]["id"] not in everything


def test_model_id_matches_any_version_of_the_model(media: MediaEnv) -> None:
    d = media.data
    owner_token = media.bearer(d.users["owner"])
    items = items_of(media.walk("/images", headers=owner_token, modelId=d.models["m1"]))
    versions = {d.versions["v1"], d.versions["v2"]}
    assert items and all(set(i["modelVersionIds"]) & versions for i in items)
    assert d.images["r"] in {i["id"] for i in items}  # made with v2 only


# --- rule 4: short and empty pages ----------------------------------------------------------------

def test_an_empty_page_is_not_the_end(media: MediaEnv) -> None:
    d = media.data
    first = media.json("/images", userId=d.users["other"], sort="Newest", limit=3)
    assert first["items"] == [] and "nextCursor" in first["metadata"], first
    following = media.walk("/images", userId=d.users["other"], sort="Newest", limit=3)
    ids = ids_of(following)
    assert ids[0] == d.images["gap_public"]
    assert not {d.images[f"gap_unlisted_{n}"] for n in range(3)} & set(ids)


def test_limit_zero_answers_no_items_and_a_cursor_that_is_not_the_end(media: MediaEnv) -> None:
    page = media.json("/images", limit=0)
    assert page["items"] == [] and page["metadata"]["nextCursor"].startswith("feed:")
    again = media.json("/images", limit=0, cursor=page["metadata"]["nextCursor"])
    assert again["items"] == []
    # The same position again; only the issue time may move on (a second boundary can fall between the calls).
    first_at, again_at = (feed_cursor.decode(p["metadata"]["nextCursor"]) for p in (page, again))
    assert (again_at.filters, again_at.data, again_at.after) == (first_at.filters, first_at.data, None)
    assert first_at.after is None and again_at.issued >= first_at.issued
    resumed = media.json("/images", limit=5, cursor=page["metadata"]["nextCursor"])
    assert resumed["items"], "a limit=0 cursor starts from the beginning"
    nobody = media.json("/images", limit=0, username="no-such-user-at-all")
    assert nobody == {"items": [], "metadata": {}}


# --- tags -----------------------------------------------------------------------------------------

def test_tags_match_all_by_default_and_any_for_exempt_requests(media: MediaEnv) -> None:
    d = media.data
    red, blue, green = d.tags["red"], d.tags["blue"], d.tags["green"]
    token = media.bearer(d.users["owner"])
    both = ids_of(media.walk("/images", headers=token, userId=d.users["owner"], tags=f"{red},{blue}"))
    assert both == [d.images["pg"]]
    either = set(ids_of(media.walk("/images", headers=token, postId=d.posts["public"], tags=f"{red},{green}")))
    assert either == {d.images[k] for k in ("pg", "pg13", "video_custom_r", "video_custom_pg", "video_plain")}
    none = ids_of(media.walk("/images", headers=token, userId=d.users["owner"], tags=f"{red},{green}"))
    assert none == []
    for item in items_of(media.walk("/images", limit=200, tags=str(media.landmarks["tags"]["image_tag"]["id"]))):
        tags = media.sql("SELECT tag_id FROM image_tags WHERE image_id = ?", item["id"])
        assert (media.landmarks["tags"]["image_tag"]["id"],) in tags


def test_legacy_cursor_follows_the_previous_rules(media: MediaEnv) -> None:
    d = media.data
    now_ms = int(datetime.now(timezone.utc).timestamp() * 1000) + 10 ** 9
    params = {"userId": d.users["owner"], "tags": f"{d.tags['red']},{d.tags['green']}", "limit": 2}
    pages = []
    cursor = f"0|{now_ms}"
    while cursor is not None:
        page = media.json("/images", cursor=cursor, **params)
        pages.append(page)
        cursor = page["metadata"].get("nextCursor")
        if cursor is not None:
            assert re.fullmatch(r"[0-9]+\|[0-9]+", cursor), cursor
    ids = set(ids_of(pages))
    assert {d.images["in_unlisted"], d.images["in_early"], d.images["video_plain"], d.images["pg"]} <= ids
    assert d.images["in_private"] not in ids and d.images["in_blocked"] not in ids
    assert all(len(p["items"]) == 2 for p in pages[:-1]), "legacy pages are full until the last"
    before = int(datetime(2025, 6, 2, 0, 0, 15, tzinfo=timezone.utc).timestamp() * 1000)
    early = set(ids_of([media.json("/images", cursor=f"0|{before}", userId=d.users["owner"], limit=200)]))
    assert early == {d.images["pg"]}, "only images created up to the cursor's instant"


# --- cursors ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("cursor", ["not-a-cursor", "feed:", "feed:abc", "feed:!!!.0000000000", "1|", "|1",
                                    "-1|5", "1|2|3", "feed:WzEsImEiLCJiIixudWxsXQ.0000000000", "\u200f1|2",
                                    "1|99999999999999"])
def test_malformed_cursor_is_a_400(media: MediaEnv, cursor: str) -> None:
    body = bad(media, cursor=cursor)
    assert body["error"].startswith("malformed cursor"), body


def test_tampered_cursor_is_malformed(media: MediaEnv) -> None:
    cursor = media.json("/images", limit=1)["metadata"]["nextCursor"]
    body, _, check = cursor.rpartition(".")
    flipped = body[:-2] + ("A" if body[-2] != "A" else "B") + body[-1]
    assert bad(media, cursor=f"{flipped}.{check}")["error"].startswith("malformed cursor")


def test_cursor_with_other_filters_cannot_be_continued(media: MediaEnv) -> None:
    d = media.data
    cursor = media.json("/images", limit=1, userId=d.users["owner"])["metadata"]["nextCursor"]
    assert media.json("/images", limit=3, userId=d.users["owner"], cursor=cursor)["items"] is not None
    assert media.json("/images", limit=3, userId=d.users["owner"], withMeta="true", cursor=cursor)
    for changed in ({"userId": d.users["other"]}, {"userId": d.users["owner"], "sort": "Newest"},
                    {"userId": d.users["owner"], "type": "video"}, {},
                    {"userId": d.users["owner"], "browsingLevel": 3}):
        body = bad(media, cursor=cursor, **changed)
        assert body == {"error": feed_cursor.OTHER_FILTERS}, changed


def test_cursor_made_on_other_data_can_no_longer_be_continued(media: MediaEnv) -> None:
    page = media.json("/images", limit=1)
    position = feed_cursor.decode(page["metadata"]["nextCursor"])
    assert isinstance(position, feed_cursor.FeedPosition)
    foreign = feed_cursor.encode(feed_cursor.FeedPosition(position.filters, "7/large", position.after,
                                                          position.issued))
    assert bad(media, limit=1, cursor=foreign) == {"error": feed_cursor.STALE}


def test_cursor_older_than_a_day_can_no_longer_be_continued(media: MediaEnv) -> None:
    old = media.json("/images", limit=1, sort="Oldest")["metadata"]["nextCursor"]
    media.clock.advance(23 * 3600)
    fresh = media.json("/images", limit=1, sort="Oldest", cursor=old)["metadata"]["nextCursor"]
    media.clock.advance(3600 + 1)
    assert bad(media, limit=1, sort="Oldest", cursor=old) == {"error": feed_cursor.STALE}
    assert media.json("/images", limit=1, sort="Oldest", cursor=fresh)["items"] is not None, "each page issues anew"


def test_next_page_is_the_same_request_with_the_next_cursor(media: MediaEnv) -> None:
    page = media.json("/images", limit=2, sort="Newest", unknownThing="kept")
    next_page = page["metadata"]["nextPage"]
    assert next_page.startswith(f"{media.base_url}/api/v1/images?")
    assert "unknownThing" not in next_page and "limit=2" in next_page and "sort=Newest" in next_page
    follow = media.client.get(next_page).json()
    direct = media.json("/images", limit=2, sort="Newest", cursor=page["metadata"]["nextCursor"])
    assert follow["items"] == direct["items"]
    assert follow["metadata"].get("nextCursor") == direct["metadata"].get("nextCursor")


# --- page ---------------------------------------------------------------------------------------------

def test_page_is_honoured_only_for_image_and_model_lookups(media: MediaEnv) -> None:
    d = media.data
    assert ids_of([media.json("/images", imageId=d.images["pg"], page=1)]) == [d.images["pg"]]
    assert media.json("/images", imageId=d.images["pg"], page=2)["items"] == []
    walked = ids_of(media.walk("/images", modelId=d.models["m1"], limit=1))
    paged = [ids_of([media.json("/images", modelId=d.models["m1"], limit=1, page=n)]) for n in (1, 2, 3)]
    assert walked[:1] == paged[0]
    assert len(walked) >= 2
    assert len({tuple(p) for p in paged}) > 1, "page changed nothing on a modelId lookup"
    first = media.json("/images", userId=d.users["owner"], limit=1)
    ignored = media.json("/images", userId=d.users["owner"], limit=1, page=3)
    assert ignored["items"] == first["items"]
    assert "page=4" in ignored["metadata"]["nextPage"] and "cursor=" not in ignored["metadata"]["nextPage"]


def test_page_times_limit_over_1000_is_a_429(media: MediaEnv) -> None:
    response = media.get("/images", page=6, limit=200)
    assert response.status_code == 429
    assert "cursor" in response.json()["error"]
    assert media.get("/images", page=5, limit=200).status_code == 200
    cursor = media.json("/images", limit=200)["metadata"]["nextCursor"]
    assert media.get("/images", page=99, limit=200, cursor=cursor).status_code == 200, "page is ignored with a cursor"


# --- browsing levels ---------------------------------------------------------------------------------

def levels_seen(media: MediaEnv, headers: dict[str, str] | None = None, **params: Any) -> set[int]:
    return {i["browsingLevel"] for i in items_of(media.walk("/images", headers=headers, limit=200, **params))}


def test_browsing_level_of_authenticated_anonymous_and_restricted_callers(media: MediaEnv) -> None:
    d = media.data
    owner = media.bearer(d.users["owner"])      # configured level 31
    limited = media.bearer(d.users["other"])    # configured level 3
    post = d.posts["public"]
    assert levels_seen(media, owner, postId=post) == {PG, PG13, R, X, XXX}
    assert levels_seen(media, postId=post) == {PG}
    assert levels_seen(media, postId=post, browsingLevel=31) == {PG}
    assert levels_seen(media, limited, postId=post, browsingLevel=31) == {PG, PG13}
    assert levels_seen(media, owner, postId=post, browsingLevel=R) == {R}
    assert levels_seen(media, owner, postId=post, nsfw="X", browsingLevel=PG13) == {PG13}, "browsingLevel wins"
    assert levels_seen(media, owner, postId=post, nsfw="Soft") == {PG, PG13}
    assert levels_seen(media, owner, postId=post, nsfw="Mature") == {PG, PG13, R}
    assert levels_seen(media, owner, postId=post, nsfw="true") == {PG, PG13, R, X, XXX}
    assert levels_seen(media, owner, postId=post, nsfw="None") == {PG}
    restricted = dict(owner, **{"X-Emulator-Region": "restricted"})
    assert levels_seen(media, restricted, postId=post, browsingLevel=31) == {PG, PG13}
    assert levels_seen(media, owner, postId=post, browsingLevel=BLOCKED) == set(), "Blocked is never served"
    assert levels_seen(media, {"Authorization": "Bearer not-a-real-token"}, postId=post) == {PG}


def test_video_thumbnails_follow_the_served_level(media: MediaEnv) -> None:
    d = media.data

    def by_id(headers: dict[str, str] | None = None) -> dict[int, dict[str, Any]]:
        return {i["id"]: i for i in items_of(media.walk("/images", headers=headers, postId=d.posts["public"]))}

    anonymous = by_id()
    custom_r = anonymous[d.images["video_custom_r"]]["thumbnail"]
    assert custom_r["url"].endswith(".jpeg") and (custom_r["width"], custom_r["height"]) == (640, 480)
    custom_pg = anonymous[d.images["video_custom_pg"]]["thumbnail"]
    assert custom_pg["url"].endswith(".webp") and (custom_pg["width"], custom_pg["height"]) == (320, 180)
    assert anonymous[d.images["video_plain"]]["thumbnail"]["url"].endswith(".jpeg")
    assert anonymous[d.images["pg"]]["thumbnail"] is None and anonymous[d.images["audio"]]["thumbnail"] is None
    assert by_id(media.bearer(d.users["owner"]))[d.images["video_custom_r"]]["thumbnail"]["url"].endswith(".webp")
    for url in (custom_r["url"], custom_pg["url"]):
        assert url.startswith(f"{media.base_url}/")
    landmark = media.landmarks["video_with_custom_thumbnail"]
    seen = media.json("/images", imageId=landmark["id"])["items"]
    if seen:  # the landmark video is PG; its custom thumbnail is rated above PG
        assert (landmark["thumbnail_nsfw_level"] & PG) or seen[0]["thumbnail"]["url"].endswith(".jpeg")


# --- fields ------------------------------------------------------------------------------------------

def test_meta_only_with_with_meta(media: MediaEnv) -> None:
    d = media.data
    # meta is always sent, null without withMeta (image-search.service.ts:245; review row "item fields").
    plain = {i["id"]: i for i in media.json("/images", postId=d.posts["public"], limit=50)["items"]}
    assert plain and all("meta" in i and i["meta"] is None for i in plain.values())
    off = media.json("/images", postId=d.posts["public"], limit=50, withMeta="false")["items"]
    assert off and all(i["meta"] is None for i in off)
    on = {i["id"]: i for i in media.json("/images", postId=d.posts["public"], limit=50, withMeta="TRUE")["items"]}
    meta = on[d.images["pg"]]["meta"]
    assert meta["prompt"] == "a red fox" and meta["unknownKey"] == {"kept": True}
    assert on[d.images["no_meta"]]["meta"] is None


def test_meta_is_wrapped_for_lookups_unless_flat_meta(media: MediaEnv) -> None:
    # Review row "meta on lookups by imageId, or by modelId without modelVersionId": {id, meta} unless
    # flatMeta=true (image-search.service.ts:248).
    d = media.data
    wrapped = media.json("/images", imageId=d.images["pg"], withMeta="true")["items"][0]
    assert wrapped["meta"]["id"] == d.images["pg"] and wrapped["meta"]["meta"]["prompt"] == "a red fox"
    flat = media.json("/images", imageId=d.images["pg"], withMeta="true", flatMeta="true")["items"][0]
    assert flat["meta"]["prompt"] == "a red fox"


def test_with_tags_adds_each_images_tags(media: MediaEnv) -> None:
    # Review row "withTags, flatMeta, requiringMeta": withTags adds tags [{id, name}].
    d = media.data
    plain = media.json("/images", postId=d.posts["public"], limit=50)["items"]
    assert plain and all("tags" not in i for i in plain)
    tagged = media.json("/images", postId=d.posts["public"], limit=50, withTags="true")["items"]
    assert all(isinstance(i["tags"], list) for i in tagged)
    assert any(i["tags"] for i in tagged)
    assert all(set(t) == {"id", "name"} for i in tagged for t in i["tags"])
    assert media.get("/images", requiringMeta="true").status_code == 200


def test_model_version_ids_are_deduplicated(media: MediaEnv) -> None:
    d = media.data
    item = media.json("/images", imageId=d.images["pg"])["items"][0]
    assert sorted(item["modelVersionIds"]) == sorted({d.versions["v1"], d.versions["v2"]})
    assert len(item["modelVersionIds"]) == 2


def test_image_fields(media: MediaEnv) -> None:
    d = media.data
    item = media.json("/images", imageId=d.images["pg"])["items"][0]
    assert item["url"] == f"{media.base_url}/__emulator/media/media-{d.images['pg']}.jpeg"
    assert item["postId"] == d.posts["public"] and item["username"] == "Media_Owner"
    assert item["stats"]["likeCount"] + item["stats"]["heartCount"] == 900
    assert item["stats"]["commentCount"] == 5 and item["baseModel"] == "SD 1.5" and item["nsfw"] is False
    audio = media.json("/images", imageId=d.images["audio"])["items"][0]
    assert audio["type"] == "audio" and audio["baseModel"] == "" and audio["hash"] == ""


def test_username_is_slugified(media: MediaEnv) -> None:
    d = media.data
    expected = ids_of(media.walk("/images", userId=d.users["owner"]))
    for spelling in ("Media_Owner", "media_owner", "  Media Owner  ", "media_owner!"):
        assert ids_of(media.walk("/images", username=spelling)) == expected, spelling
    assert ids_of(media.walk("/images", username="media.other")) == ids_of(
        media.walk("/images", userId=d.users["other"]))
    assert media.json("/images", username="nobody-by-this-name") == {"items": [], "metadata": {}}


def test_type_and_base_models_filters(media: MediaEnv) -> None:
    videos = items_of(media.walk("/images", limit=200, type="video"))
    assert videos and all(i["type"] == "video" for i in videos)
    assert all(i["thumbnail"] is not None for i in videos)
    sd = items_of(media.walk("/images", limit=200, baseModels="SD 1.5"))
    assert sd and all(i["baseModel"] == "SD 1.5" for i in sd)
    two = items_of(media.walk("/images", limit=200, baseModels="SD 1.5,SDXL 1.0"))
    assert {i["baseModel"] for i in two} <= {"SD 1.5", "SDXL 1.0"} and len(two) >= len(sd)


@pytest.mark.parametrize("value", ["NotAModel", "sd 1.5", "SD 1.5,NotAModel"])
def test_unknown_base_model_is_a_400(media: MediaEnv, value: str) -> None:
    # Review row "baseModels": commaDelimitedEnumArray([...baseModels]) (images/index.ts:80).
    body = bad(media, baseModels=value)
    assert json.loads(body["error"]["message"])[0]["path"] == ["baseModels"]


def test_negative_browsing_level_is_accepted(media: MediaEnv) -> None:
    # Review row "browsingLevel": z.coerce.number() (images/index.ts:69).
    assert media.get("/images", browsingLevel="-1").status_code == 200


def test_nsfw_takes_the_boolean_strings(media: MediaEnv) -> None:
    # Review row "nsfw": booleanString() takes yes/no, on/off, ...
    assert media.json("/images", nsfw="yes")["items"] == media.json("/images", nsfw="true")["items"]
    assert media.json("/images", nsfw="off")["items"] == media.json("/images", nsfw="false")["items"]


# --- invalid parameters --------------------------------------------------------------------------------

@pytest.mark.parametrize("params", [
    {"limit": "201"}, {"limit": "-1"}, {"limit": "abc"}, {"limit": "1.5"}, {"limit": "\uff11"},
    {"page": "0"}, {"nsfw": "none"}, {"nsfw": "XXX"}, {"browsingLevel": str(2 ** 63)}, {"baseModels": "NotAModel"},
    {"tags": "1,,2"}, {"tags": ""}, {"tags": "0"}, {"sort": "newest"}, {"period": "day"}, {"withMeta": "yes"},
    {"type": "Image"}, {"baseModels": "a" * 1025}, {"username": "u" * 1025}, {"cursor": "c" * 1025},
    {"postId": "0"}, {"imageId": str(2 ** 31)}, {"modelId": "x"},
])
def test_invalid_parameter_is_a_400_with_the_validation_envelope(media: MediaEnv, params: dict[str, str]) -> None:
    body = bad(media, **params)
    assert json.loads(body["error"]["message"])[0]["path"] == [next(iter(params))]


def test_repeated_and_undecodable_values_are_400s(media: MediaEnv) -> None:
    for target in ("/api/v1/images?limit=5&limit=5", "/api/v1/images?username=%ED%A0%80",
                   "/api/v1/images?username=a%00b", "/api/v1/images?sort=Newest&sort=Oldest"):
        response = media.client.get(target)
        assert response.status_code == 400, target
    repeated = media.client.get("/api/v1/images?tags=1&tags=2&limit=1")
    assert repeated.status_code == 400, "lists are comma-separated; only the models list may repeat (D-repeated)"
    assert media.client.get("/api/v1/images?tags=1,2&limit=1").status_code == 200


def test_unknown_parameters_are_ignored(media: MediaEnv) -> None:
    plain = media.json("/images", limit=3)
    assert media.client.get("/api/v1/images?limit=3&noSuch=%00&x=%ED%A0%80").json() == plain


@pytest.mark.parametrize("sort", ["Most Reactions", "Most Comments", "Newest", "Oldest", "Random"])
def test_both_query_plans_give_the_same_pages(media: MediaEnv, monkeypatch: pytest.MonkeyPatch, sort: str) -> None:
    """A filter is either read and sorted or checked along the sort's index (by its size): same answers."""
    d = media.data
    token = media.bearer(d.users["owner"])
    filters: list[dict[str, Any]] = [{"userId": d.users["owner"]}, {"tags": str(d.tags["red"])},
                                     {"modelId": d.models["m1"]}, {"type": "video"}, {"baseModels": "SD 1.5"},
                                     {"modelVersionId": d.versions["v1"], "tags": f"{d.tags['red']},{d.tags['blue']}"}]
    for params in filters:
        walked = {}
        for limit in (0, 10 ** 9):
            monkeypatch.setattr(image_store, "NARROW_LIMIT", limit)
            walked[limit] = ids_of(media.walk("/images", headers=token, limit=7, sort=sort, **params))
        assert walked[0] == walked[10 ** 9] and walked[0], (sort, params)


def test_urls_are_on_the_origin_the_client_used(media: MediaEnv) -> None:
    d = media.data
    response = media.client.get("/api/v1/images", params={"imageId": d.images["video_custom_pg"], "limit": 1},
                                headers={"Host": "localhost:4321"})
    item = response.json()["items"][0]
    assert item["url"].startswith("http://localhost:4321/__emulator/media/")
    assert item["thumbnail"]["url"].startswith("http://localhost:4321/__emulator/media/")
    page = media.client.get("/api/v1/images", params={"limit": 1}, headers={"Host": "localhost:4321"}).json()
    assert page["metadata"]["nextPage"].startswith("http://localhost:4321/api/v1/images?")


def test_the_rating_names_rendered_in_sql_follow_the_highest_bit() -> None:
    """The SQL that renders an image's nsfwLevel names a rating by its highest bit (facts' table;
    a bit above the table's is X, 0 is None), checked for every level up to 2**10."""
    import sqlite3

    from blockkit.emulator import facts
    from blockkit.emulator.http.catalogue.images import _nsfw_name_sql

    db = sqlite3.connect(":memory:")
    for level in range(0, 1025):
        expected = "None" if level == 0 else facts.NSFW_LEVEL_NAMES.get(1 << (level.bit_length() - 1), "X")
        got = db.execute(f"SELECT {_nsfw_name_sql('?1')}", (level,)).fetchone()[0]
        assert got == expected, level


def test_the_frame_of_a_video_is_its_url_without_the_extension() -> None:
    import sqlite3

    from blockkit.emulator.http.catalogue.images import _frame_url_sql

    db = sqlite3.connect(":memory:")
    cases = {
        "/media/v/clip.mp4": "/media/v/clip.frame.jpeg",
        "/media/v.d/clip": "/media/v.d/clip.frame.jpeg",          # a dot in a folder is not an extension
        "/media/clip.tar.webm": "/media/clip.tar.frame.jpeg",     # only the last extension goes
        "https://cdn.example/x/y.mov": "https://cdn.example/x/y.frame.jpeg",
        "clip.": "clip.frame.jpeg",
        "/media/.hidden": "/media/.frame.jpeg",
        "noslash": "noslash.frame.jpeg",
        "/": "/.frame.jpeg",
    }
    for url, frame in cases.items():
        assert db.execute(f"SELECT {_frame_url_sql('?1')}", (url,)).fetchone()[0] == frame, url


def test_candidates_read_at_once_keep_the_row_by_row_order(tmp_path) -> None:
    """A page's candidates come back as one JSON array; for every sort, period and a few filters
    they are exactly the rows, in the order, that the same query gives row by row."""
    from blockkit.emulator.seed import ensure_seeded
    from blockkit.emulator.store import Store
    from blockkit.emulator.store import images as feed

    store = Store.open(tmp_path / "data")
    for _line in ensure_seeded(store, 1, "small"):
        pass
    queries: list[str] = []
    at_once = feed._all_at_once

    def row_by_row(db, sql, params=()):
        prefix = "SELECT json_group_array(json_array(k, id, post_id)) FROM ("
        assert sql.startswith(prefix) and sql.endswith(")")
        queries.append(sql)
        return [list(row) for row in feed._tuples(db, sql[len(prefix):-1], params)]

    try:
        with store.read() as db:
            model_id = db.execute("SELECT id FROM models LIMIT 1").fetchone()[0]
            for sort in (*feed.METRIC_COLUMNS, *feed.DATE_SORTS, feed.RANDOM):
                for period in ("AllTime", "Week"):
                    for extra in ({}, {"media_type": "video"}, {"model_id": model_id}):
                        spec = feed.FeedSpec(sort=sort, period=period, level=31, salt=12345, **extra)
                        fast = feed.feed_candidates(db, spec, after=None, limit=101, offset=0)
                        feed._all_at_once = row_by_row
                        try:
                            slow = feed.feed_candidates(db, spec, after=None, limit=101, offset=0)
                        finally:
                            feed._all_at_once = at_once
                        assert [(c.key, c.id, c.post_id) for c in fast] == \
                               [(c.key, c.id, c.post_id) for c in slow], (sort, period, extra)
        assert len(queries) >= 36
    finally:
        store.close()

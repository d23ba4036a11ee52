"""GET /api/v1/models and /models/{id} against the running, seeded emulator.

Every response goes through the ``api`` client, whose hook checks it against the
OpenAPI document; the assertions here check behaviour (filters, sorts, pagination,
moderation drops, auth) against what the store holds.
"""

from __future__ import annotations

import json

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlencode, urlsplit

import httpx
import pytest
from inproc import bearer, client, seed_into

SFW = 3
RESTRICTED = {"X-Emulator-Region": "restricted"}


def items(api: httpx.Client, query: str = "", *, params: dict[str, str] | None = None,
          **kwargs: Any) -> list[dict[str, Any]]:
    if params:  # httpx's params= would replace the query written in the URL
        query = "&".join(filter(None, [query, urlencode(params, quote_via=quote)]))
    response = api.get(f"/api/v1/models?{query}", **kwargs)
    assert response.status_code == 200, response.text
    return list(response.json()["items"])


def ids(api: httpx.Client, query: str = "", **kwargs: Any) -> list[int]:
    return [m["id"] for m in items(api, query, **kwargs)]


def walk(api: httpx.Client, query: str, **kwargs: Any) -> list[dict[str, Any]]:
    """Every item, following metadata.nextPage to the end."""
    out: list[dict[str, Any]] = []
    url = f"/api/v1/models?{query}"
    for _ in range(200):
        body = api.get(url, **kwargs).json()
        out.extend(body["items"])
        if "nextPage" not in body["metadata"]:
            return out
        url = body["metadata"]["nextPage"]
    raise AssertionError("pagination did not end")


def sql(store_of: Any, query: str, *args: Any) -> list[tuple[Any, ...]]:
    with store_of.read() as db:
        return [tuple(r) for r in db.execute(query, args)]


# --- pagination -------------------------------------------------------------------------------------

def test_default_limit_is_100_with_cursor_metadata(api: httpx.Client) -> None:
    body = api.get("/api/v1/models?nsfw=true").json()
    assert len(body["items"]) == 100
    assert set(body["metadata"]) == {"nextCursor", "nextPage"}


def test_cursor_walk_visits_every_model_once_in_sort_order(api: httpx.Client, store_of: Any) -> None:
    walked = walk(api, "nsfw=true&limit=7")
    got = [m["id"] for m in walked]
    assert len(got) == len(set(got)) > 100
    expected = sql(store_of, "SELECT count(*) FROM models m WHERE m.status = 'Published' AND m.availability"
                   " = 'Public' AND (m.nsfw_level & 31) <> 0 AND EXISTS (SELECT 1 FROM model_versions v WHERE"
                   " v.model_id = m.id AND v.status = 'Published' AND v.availability <> 'Private')")[0][0]
    assert len(got) == expected
    ratings = [m["stats"]["thumbsUpCount"] - m["stats"]["thumbsDownCount"] for m in walked]
    assert ratings == sorted(ratings, reverse=True)  # Highest Rated: the net rating, all time


def test_last_page_has_no_next_keys(api: httpx.Client) -> None:
    body = api.get("/api/v1/models?ids=1,2,3").json()
    assert body["metadata"] == {}


def test_page_pagination_metadata_and_continuity(api: httpx.Client) -> None:
    first = api.get("/api/v1/models?nsfw=true&limit=5&page=1").json()
    second = api.get("/api/v1/models?nsfw=true&limit=5&page=2").json()
    both = ids(api, "nsfw=true&limit=10")
    assert [m["id"] for m in first["items"] + second["items"]] == both
    assert first["metadata"]["currentPage"] == 1 and first["metadata"]["pageSize"] == 5
    # Review row "metadata.nextPage in page mode": the platform keeps page and adds the cursor
    # (getNextPage without currentPage); the cursor wins over page, so following it reads page 2.
    query = parse_qs(urlsplit(first["metadata"]["nextPage"]).query)
    assert query["page"] == ["1"] and query["cursor"] == [first["metadata"]["nextCursor"]]
    followed = api.get(first["metadata"]["nextPage"])
    assert followed.status_code == 200
    assert [m["id"] for m in followed.json()["items"]] == [m["id"] for m in second["items"]]
    assert "currentPage" not in followed.json()["metadata"]  # cursor mode: usingPaging = page && !cursor


def test_next_page_is_absolute_and_keeps_the_filters(api: httpx.Client, base_url: str) -> None:
    meta = api.get("/api/v1/models?nsfw=true&limit=3&types=LORA&sort=Most%20Downloaded").json()["metadata"]
    assert meta["nextPage"].startswith(f"{base_url}/api/v1/models?")
    query = parse_qs(urlsplit(meta["nextPage"]).query)
    assert query["types"] == ["LORA"] and query["sort"] == ["Most Downloaded"] and query["cursor"] == [
        meta["nextCursor"]]
    assert "page" not in query


@pytest.mark.parametrize("page,limit,status", [(10, 100, 200), (11, 100, 429), (1000, 1, 200), (1001, 1, 429),
                                               (3, 500 // 1, 400)])
def test_page_times_limit_above_1000_is_a_429(api: httpx.Client, page: int, limit: int, status: int) -> None:
    response = api.get(f"/api/v1/models?page={page}&limit={limit}")
    assert response.status_code == status
    if status == 429:
        message = response.json()["error"]
        assert "Too many pages" in message and "cursor" in message


def test_query_with_page_is_a_400(api: httpx.Client) -> None:
    response = api.get("/api/v1/models?query=mix&page=1")
    assert response.status_code == 400 and "query" in response.json()["error"]


def test_query_searches_names_with_cursor_pagination(api: httpx.Client) -> None:
    found = walk(api, "query=MIX&nsfw=true&limit=2")
    assert found and all("mix" in m["name"].lower() for m in found)
    first = api.get("/api/v1/models?query=mix&nsfw=true&limit=2").json()
    assert "currentPage" not in first["metadata"]


@pytest.mark.parametrize("cursor", ["abc", "1|x", "x|1", "\u200f1|2", "|", "1|" + "9" * 12])
def test_malformed_cursor_is_a_400(api: httpx.Client, cursor: str) -> None:
    assert api.get("/api/v1/models", params={"cursor": cursor}).status_code == 400


@pytest.mark.parametrize("limit", ["0", "101", "-1", "abc", "1.5", "", "1e2"])
def test_limit_outside_1_100_is_a_400_in_the_validation_shape(api: httpx.Client, limit: str) -> None:
    response = api.get(f"/api/v1/models?limit={limit}")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["name"] == "ZodError" and set(error) == {"name", "message"}  # zod 4: issues not enumerable
    assert json.loads(error["message"])[0]["path"] == ["limit"]


def test_unknown_parameters_are_ignored(api: httpx.Client) -> None:
    assert ids(api, "ids=1,2&whatever=%00&x=1") == ids(api, "ids=1,2")


# --- filters ------------------------------------------------------------------------------------------

def test_ids_filter(api: httpx.Client, landmarks: dict[str, Any]) -> None:
    wanted = {landmarks["early_access_model"]["id"], landmarks["models_by_type"]["LORA"]}
    assert set(ids(api, "nsfw=true&ids=" + ",".join(map(str, wanted)))) == wanted


def test_tag_filter(api: httpx.Client, landmarks: dict[str, Any]) -> None:
    name = landmarks["tags"]["model_tag"]["name"]
    found = items(api, f"nsfw=true&tag={name.upper()}")
    assert found and all(name in m["tags"] for m in found)
    assert items(api, "tag=no-such-tag-anywhere") == []


def test_username_is_slugified(api: httpx.Client, landmarks: dict[str, Any], store_of: Any) -> None:
    creator = landmarks["creator"]
    expected = {r[0] for r in sql(store_of, "SELECT id FROM models WHERE user_id = ?", creator["id"])}
    exact = ids(api, f"nsfw=true&username={creator['username']}")
    assert exact and set(exact) <= expected
    slugged = creator["username"].upper().replace("_", "-").replace(".", " ")
    assert ids(api, "nsfw=true", params={"username": slugged}) == exact
    assert items(api, "username=nobody-at-all-here") == []


def test_types_repeat_or_comma(api: httpx.Client) -> None:
    comma = ids(api, "nsfw=true&types=LORA,Checkpoint")
    repeated = ids(api, "nsfw=true&types=LORA&types=Checkpoint")
    assert comma == repeated and comma
    assert {m["type"] for m in items(api, "nsfw=true&types=LORA,Checkpoint")} == {"LORA", "Checkpoint"}


def test_base_models_filter(api: httpx.Client) -> None:
    found = items(api, "nsfw=true&baseModels=Pony&baseModels=Illustrious")
    assert found
    for model in found:
        assert {v["baseModel"] for v in model["modelVersions"]} & {"Pony", "Illustrious"}
    assert items(api, "baseModels=No%20Such%20Base") == []


def test_checkpoint_type_filter(api: httpx.Client, store_of: Any) -> None:
    found = ids(api, "nsfw=true&checkpointType=Merge")
    rows = dict(sql(store_of, "SELECT id, checkpoint_type FROM models WHERE type = 'Checkpoint'"))
    assert found and all(rows.get(i) == "Merge" for i in found)


@pytest.mark.parametrize("name,column", [("supportsGeneration", "supports_generation"),
                                         ("fromPlatform", "from_platform")])
def test_boolean_model_filters(api: httpx.Client, store_of: Any, name: str, column: str) -> None:
    # z.coerce.boolean() on the platform (model.schema.ts:106,109): any non-empty value filters,
    # "false" too; an empty value sets no filter.
    values = dict(sql(store_of, f"SELECT id, {column} FROM models"))
    yes, no = ids(api, f"nsfw=true&{name}=true"), ids(api, f"nsfw=true&{name}=false")
    assert yes and yes == no
    assert all(values[i] == 1 for i in yes)
    assert ids(api, f"nsfw=true&{name}=") == ids(api, "nsfw=true")


def test_early_access_filter(api: httpx.Client, landmarks: dict[str, Any]) -> None:
    model = landmarks["early_access_model"]["id"]
    ended = landmarks["ended_early_access_model"]["id"]
    assert model in ids(api, "nsfw=true&earlyAccess=true")
    assert ended not in ids(api, "nsfw=true&earlyAccess=true")
    # earlyAccess=false filters as true on the platform (z.coerce.boolean, model.schema.ts:110).
    assert ids(api, "nsfw=true&earlyAccess=false") == ids(api, "nsfw=true&earlyAccess=true")


def test_primary_file_only(api: httpx.Client, landmarks: dict[str, Any]) -> None:
    model = landmarks["every_file_type_model"]["id"]
    every = items(api, f"nsfw=true&ids={model}")[0]
    # Non-primary files carry no primary key (model-search.service.ts:273).
    others = [f for v in every["modelVersions"] for f in v["files"] if "primary" not in f]
    assert others and all(f.get("primary", True) is True for v in every["modelVersions"] for f in v["files"])
    primary = items(api, f"nsfw=true&ids={model}&primaryFileOnly=yes")[0]
    files = [f for v in primary["modelVersions"] for f in v["files"]]
    assert files and all(f["primary"] is True for f in files)


# --- sorts and periods -------------------------------------------------------------------------------

@pytest.mark.parametrize("sort,column,period", [
    ("Most Downloaded", "download_count", "AllTime"),
    ("Most Downloaded", "download_count", "Week"),
    ("Most Liked", "thumbs_up_count", "Month"),
    ("Most Discussed", "comment_count", "Year"),
    ("Most Collected", "collected_count", "Day"),
])
def test_metric_sorts_read_their_period(api: httpx.Client, store_of: Any, sort: str, column: str,
                                        period: str) -> None:
    got = ids(api, "nsfw=true&limit=100", params={"sort": sort, "period": period})
    metric = dict(sql(store_of, f"SELECT model_id, {column} FROM model_metrics WHERE period = ?", period))
    values = [metric[i] for i in got]
    assert values == sorted(values, reverse=True)
    ties = [(metric[a], a) for a in got]
    assert ties == sorted(ties, key=lambda t: (-t[0], -t[1]))  # ties: newest id first


def test_period_changes_the_order(api: httpx.Client) -> None:
    all_time = [m["id"] for m in walk(api, "nsfw=true&sort=Most%20Downloaded")]
    week = [m["id"] for m in walk(api, "nsfw=true&sort=Most%20Downloaded&period=Week")]
    assert sorted(all_time) == sorted(week) and all_time != week  # the same models, another order


@pytest.mark.parametrize("sort,descending", [("Newest", True), ("Oldest", False)])
def test_date_sorts(api: httpx.Client, store_of: Any, sort: str, descending: bool) -> None:
    got = [m["id"] for m in walk(api, f"nsfw=true&limit=50&sort={sort}")]
    published = dict(sql(store_of, "SELECT id, published_at FROM models"))
    keys = [(published[i], i) for i in got]
    assert keys == sorted(keys, reverse=descending)


def test_most_images_sort(api: httpx.Client) -> None:
    found = items(api, "nsfw=true&sort=Most%20Images&limit=10")
    assert len(found) == 10
    # The model the seed's 120-image showcase post belongs to comes first.
    assert sum(len(v["images"]) for v in found[0]["modelVersions"]) >= 20


# --- maturity and region ------------------------------------------------------------------------------

def test_nsfw_false_is_the_default_and_hides_mature_models_and_images(api: httpx.Client) -> None:
    safe = walk(api, "limit=100")
    assert safe and all(not m["nsfw"] and m["nsfwLevel"] & SFW for m in safe)
    assert all(i["nsfwLevel"] & SFW for m in safe for v in m["modelVersions"] for i in v["images"])
    mature = walk(api, "nsfw=true&limit=100")
    assert any(m["nsfw"] for m in mature) and len(mature) > len(safe)
    assert any(not i["nsfwLevel"] & SFW for m in mature for v in m["modelVersions"] for i in v["images"])


def test_restricted_region_clamps_to_sfw_whatever_nsfw_says(api: httpx.Client, landmarks: dict[str, Any]) -> None:
    clamped = walk(api, "nsfw=true&limit=100", headers=RESTRICTED)
    assert [m["id"] for m in clamped] == [m["id"] for m in walk(api, "limit=100")]
    assert all(i["nsfwLevel"] & SFW for m in clamped for v in m["modelVersions"] for i in v["images"])
    archived = landmarks["archived_model"]["id"]  # flagged NSFW in the seed
    assert api.get(f"/api/v1/models/{archived}").json()["nsfw"] is True
    assert api.get(f"/api/v1/models/{archived}", headers=RESTRICTED).status_code == 404


# --- moderation and visibility --------------------------------------------------------------------------

def test_archived_drops_files_and_download_urls(api: httpx.Client, landmarks: dict[str, Any]) -> None:
    model = api.get(f"/api/v1/models/{landmarks['archived_model']['id']}").json()
    assert model["mode"] == "Archived" and model["modelVersions"]
    # GET /models/{id} passes each version through removeEmpty: the empty files array is left out.
    assert all("files" not in v and "downloadUrl" not in v for v in model["modelVersions"])
    listed = items(api, f"nsfw=true&ids={landmarks['archived_model']['id']}")[0]
    assert all(v["files"] == [] and "downloadUrl" not in v for v in listed["modelVersions"])


def test_taken_down_drops_images_too(api: httpx.Client, landmarks: dict[str, Any]) -> None:
    model = items(api, f"nsfw=true&ids={landmarks['taken_down_model']['id']}")[0]
    assert model["mode"] == "TakenDown"
    assert all(v["files"] == [] and v["images"] == [] and "downloadUrl" not in v for v in model["modelVersions"])


def test_healthy_model_has_no_mode_key_and_download_urls(api: httpx.Client, landmarks: dict[str, Any],
                                                         base_url: str) -> None:
    model = api.get(f"/api/v1/models/{landmarks['public_version']['model_id']}").json()
    assert "mode" not in model
    for version in model["modelVersions"]:
        assert version["downloadUrl"] == f"{base_url}/api/download/models/{version['id']}"
        # The platform's createModelFileDownloadUrl: the primary file's URL is the version's own.
        assert all(f["downloadUrl"] == version["downloadUrl"] if f["primary"]
                   else f["downloadUrl"].startswith(version["downloadUrl"] + "?type=") for f in version["files"])


def test_non_moderators_see_only_published_versions(api: httpx.Client, landmarks: dict[str, Any],
                                                    mint: Any) -> None:
    version = landmarks["unpublished_version"]
    anonymous = [v["id"] for v in api.get(f"/api/v1/models/{version['model_id']}").json()["modelVersions"]]
    assert anonymous and version["id"] not in anonymous
    member = items(api, f"nsfw=true&ids={version['model_id']}", headers=bearer(mint(landmarks["member"]["id"])))
    assert version["id"] not in [v["id"] for v in member[0]["modelVersions"]]
    moderator = items(api, f"nsfw=true&ids={version['model_id']}",
                      headers=bearer(mint(landmarks["moderator"]["id"])))
    shown = {v["id"]: v for v in moderator[0]["modelVersions"]}
    assert version["id"] in shown


def test_private_training_results_are_not_listed(api: httpx.Client, landmarks: dict[str, Any]) -> None:
    epoch = landmarks["private_epoch_version"]
    model = items(api, f"nsfw=true&ids={epoch['model_id']}")[0]
    assert epoch["id"] not in [v["id"] for v in model["modelVersions"]]


def test_non_public_files_are_hidden_except_from_moderators(api: httpx.Client, landmarks: dict[str, Any],
                                                           store_of: Any, mint: Any) -> None:
    model = landmarks["every_file_type_model"]["id"]
    private = {r[0] for r in sql(store_of, "SELECT f.id FROM model_files f JOIN model_versions v ON"
                                 " v.id = f.version_id WHERE v.model_id = ? AND f.visibility = 'Private'", model)}
    assert private
    shown = {f["id"] for v in items(api, f"nsfw=true&ids={model}")[0]["modelVersions"] for f in v["files"]}
    assert shown and not shown & private
    moderator = items(api, f"nsfw=true&ids={model}", headers=bearer(mint(landmarks["moderator"]["id"])))[0]
    assert private <= {f["id"] for v in moderator["modelVersions"] for f in v["files"]}


# --- auth: favorites and hidden ---------------------------------------------------------------------------

@pytest.mark.parametrize("flag", ["favorites", "hidden"])
@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer not-a-real-token"}, {"Authorization": "Basic x"}])
def test_favorites_and_hidden_need_a_token(api: httpx.Client, flag: str, headers: dict[str, str]) -> None:
    response = api.get(f"/api/v1/models?{flag}=true", headers=headers)
    assert response.status_code == 401 and response.json() == {"error": "Unauthorized"}


def test_favorites_are_the_callers_bookmarks(api: httpx.Client, landmarks: dict[str, Any], store_of: Any,
                                             mint: Any) -> None:
    member = landmarks["member"]["id"]
    bookmarked = {r[0] for r in sql(
        store_of, "SELECT ci.model_id FROM collections c JOIN collection_items ci ON ci.collection_id = c.id"
        " WHERE c.user_id = ? AND c.mode = 'Bookmark' AND ci.status = 'ACCEPTED'", member)}
    found = set(ids(api, "favorites=true&nsfw=true", headers=bearer(mint(member))))
    assert found and found <= bookmarked


def test_hidden_models_only_with_hidden_and_left_out_otherwise(api: httpx.Client, landmarks: dict[str, Any],
                                                               mint: Any) -> None:
    hidden = landmarks["hidden_model"]
    token = bearer(mint(hidden["user_id"]))
    assert hidden["model_id"] in ids(api, "hidden=true&nsfw=true", headers=token)
    assert hidden["model_id"] in ids(api, f"nsfw=true&ids={hidden['model_id']}")  # anonymous: listed
    assert ids(api, f"nsfw=true&ids={hidden['model_id']}", headers=token) == []  # its hider: not


def test_a_bad_token_on_a_plain_list_is_anonymous(api: httpx.Client) -> None:
    plain = api.get("/api/v1/models?ids=1,2,3")
    bad = api.get("/api/v1/models?ids=1,2,3", headers={"Authorization": "Bearer nope"})
    assert bad.status_code == 200 and bad.content == plain.content


def test_token_answers_are_private(api: httpx.Client, landmarks: dict[str, Any], mint: Any) -> None:
    assert api.get("/api/v1/models?ids=1").headers["cache-control"] == (
        "public, s-maxage=300, stale-while-revalidate=150")
    signed = api.get("/api/v1/models?ids=1", headers=bearer(mint(landmarks["member"]["id"])))
    assert signed.headers["cache-control"] == "private, no-store"


# --- GET /models/{id} ----------------------------------------------------------------------------------------

def _as_by_id(listed: dict[str, Any], single: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the list item as GET /models/{id} gives it, the by-id answer without its own version keys).

    GET /models/{id}: null and empty-array version keys dropped (removeEmpty), previews without id,
    and the cached version's createdAt, status and covered kept where the list sends supportsGeneration.
    """
    expected = dict(listed)
    expected["modelVersions"] = []
    for version in listed["modelVersions"]:
        shaped = {**version, "images": [{k: v for k, v in image.items() if k != "id"} for image in version["images"]]}
        shaped.pop("supportsGeneration")
        expected["modelVersions"].append({k: v for k, v in shaped.items() if v is not None and v != []})
    actual = dict(single)
    actual["modelVersions"] = []
    for version, in_list in zip(single["modelVersions"], listed["modelVersions"]):
        assert version["covered"] == in_list["supportsGeneration"] and version["status"] == "Published"
        assert isinstance(version["createdAt"], str)
        actual["modelVersions"].append({k: v for k, v in version.items() if k not in ("covered", "status", "createdAt")})
    return expected, actual


def test_model_by_id_is_the_all_levels_list_item(api: httpx.Client) -> None:
    listed = items(api, "limit=1&nsfw=true")[0]
    expected, actual = _as_by_id(listed, api.get(f"/api/v1/models/{listed['id']}").json())
    assert actual == expected


def test_model_by_id_previews_are_not_level_filtered(api: httpx.Client, landmarks: dict[str, Any]) -> None:
    # Review row "/models/{id} preview images": every rated level (image.service.ts:5398), not PG/PG-13.
    listed = items(api, f"nsfw=true&ids={landmarks['archived_model']['id']}")[0]
    model = api.get(f"/api/v1/models/{landmarks['archived_model']['id']}").json()
    assert model["nsfw"] is True
    expected, actual = _as_by_id(listed, model)
    assert actual == expected

    found = api.get("/api/v1/models?nsfw=true&limit=100").json()["items"]
    mature = next(m for m in found if any(i["nsfwLevel"] & ~SFW for v in m["modelVersions"] for i in v["images"]))
    by_id = api.get(f"/api/v1/models/{mature['id']}").json()
    assert any(i["nsfwLevel"] & ~SFW for v in by_id["modelVersions"] for i in v["images"])
    assert all("id" not in i for v in by_id["modelVersions"] for i in v["images"])


@pytest.mark.parametrize("key", ["draft_model", "unpublished_model", "deleted_model"])
def test_unpublished_models_are_404(api: httpx.Client, landmarks: dict[str, Any], key: str) -> None:
    response = api.get(f"/api/v1/models/{landmarks[key]['id']}")
    assert response.status_code == 404 and isinstance(response.json()["error"], str)


@pytest.mark.parametrize("value,status", [("999999", 404), ("2147483647", 404), ("0", 400), ("2147483648", 400),
                                          ("abc", 400), ("-1", 400), ("1.5", 400), ("%EF%BC%91", 400)])
def test_model_id_in_path(api: httpx.Client, value: str, status: int) -> None:
    response = api.get(f"/api/v1/models/{value}")
    assert response.status_code == status and isinstance(response.json()["error"], str)


@pytest.mark.parametrize("value,problem", [
    ("abc", "Invalid input: expected number, received NaN"), ("1.5", "Invalid input: expected int, received number"),
    ("0", "Too small: expected number to be >0"), ("2147483648", "Too big: expected number to be <=2147483647")])
def test_model_id_400_is_zods_prettified_error(api: httpx.Client, value: str, problem: str) -> None:
    # Review row "/models/{id} id validation": {error: z.prettifyError(...)} (models/[id].ts).
    assert api.get(f"/api/v1/models/{value}").json() == {"error": f"\u2716 {problem}\n  \u2192 at id"}


def test_model_id_is_read_as_a_number(api: httpx.Client) -> None:
    # z.coerce.number(): "1.0" and "0x1" are the id 1.
    one = api.get("/api/v1/models/1")
    assert api.get("/api/v1/models/1.0").json() == one.json() == api.get("/api/v1/models/0x1").json()


# --- in-process: the fragment cache follows the store --------------------------------------------------------

@pytest.fixture(scope="module")
def own_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    store = seed_into(Path(tmp_path_factory.mktemp("models")))
    yield store
    store.close()


def test_a_store_change_is_seen_by_the_next_request(own_store: Any) -> None:
    api = client(own_store)
    first = api.get("/api/v1/models?ids=1,2,3&nsfw=true").json()["items"][0]
    again = api.get("/api/v1/models?ids=1,2,3&nsfw=true").json()["items"][0]
    assert again == first
    with own_store.write() as db:
        db.execute("UPDATE models SET name = 'Renamed by the test' WHERE id = ?", (first["id"],))
    renamed = api.get(f"/api/v1/models/{first['id']}").json()
    listed = api.get("/api/v1/models?ids=1,2,3&nsfw=true").json()["items"][0]
    assert renamed["name"] == listed["name"] == "Renamed by the test"


def test_a_change_from_another_process_is_seen(own_store: Any) -> None:
    import sqlite3

    api = client(own_store)
    model_id = api.get("/api/v1/models?limit=1&nsfw=true").json()["items"][0]["id"]
    other = sqlite3.connect(own_store.path, isolation_level=None)  # not the store's connections
    try:
        other.execute("UPDATE models SET description = '<p>changed elsewhere</p>' WHERE id = ?", (model_id,))
    finally:
        other.close()
    assert api.get(f"/api/v1/models/{model_id}").json()["description"] == "<p>changed elsewhere</p>"

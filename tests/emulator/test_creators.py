"""GET /api/v1/creators: users with a published model, alphabetical, page totals exact or lower bounds."""

from __future__ import annotations

import math
from typing import Any

import pytest

from media_env import MediaEnv


def oracle(media: MediaEnv, needle: str | None = None) -> list[tuple[str, int]]:
    rows = media.sql("SELECT u.username, count(*) FROM models m JOIN users u ON u.id = m.user_id"
                     " WHERE m.status = 'Published' AND u.deleted_at IS NULL GROUP BY u.id"
                     " ORDER BY lower(u.username), u.id")
    return [(name, count) for name, count in rows if needle is None or needle.lower() in name.lower()]


def walk(media: MediaEnv, **params: Any) -> list[dict[str, Any]]:
    pages = [media.json("/creators", **params)]
    while "nextPage" in pages[-1]["metadata"]:
        assert len(pages) < 500
        pages.append(media.client.get(pages[-1]["metadata"]["nextPage"]).json())
    return pages


def test_alphabetical_complete_with_exact_totals(media: MediaEnv) -> None:
    expected = oracle(media)
    pages = walk(media, limit=7)
    items = [c for p in pages for c in p["items"]]
    assert [(c["username"], c["modelCount"]) for c in items] == expected
    for n, page in enumerate(pages, start=1):
        meta = page["metadata"]
        assert meta["totalItems"] == len(expected) and meta["totalPages"] == math.ceil(len(expected) / 7)
        assert meta["currentPage"] == n and meta["pageSize"] == 7
        assert "hasMore" not in meta  # only the search path probes instead of counting
    names = [c["username"] for c in items]
    assert "MediaGone" not in names, "a deleted user is not a creator"
    assert media.landmarks["deleted_user"]["username"] not in names
    assert media.landmarks["creator"]["username"] in names


def test_item_fields(media: MediaEnv) -> None:
    item = next(c for c in media.json("/creators", query="Media_Owner")["items"])
    assert item == {"username": "Media_Owner", "modelCount": 1,
                    "link": f"{media.base_url}/api/v1/models?username=Media_Owner",
                    "image": f"{media.base_url}/__emulator/media/avatar-owner.jpeg"}
    other = next(c for c in media.json("/creators", query="media.other")["items"])
    assert other["link"].endswith("/api/v1/models?username=media.other") and other["image"] is None


def test_with_query_totals_are_lower_bounds_exact_on_the_last_page(media: MediaEnv) -> None:
    expected = oracle(media, "e")
    assert len(expected) >= 3
    pages = walk(media, limit=1, query="e")
    assert [c["username"] for p in pages for c in p["items"]] == [name for name, _ in expected]
    totals = [p["metadata"]["totalItems"] for p in pages]
    assert totals == sorted(totals), "the lower bound only grows"
    assert all(t <= len(expected) for t in totals)
    assert totals[0] < len(expected), "the first page does not know the count"
    assert totals[-1] == len(expected) and pages[-1]["metadata"]["totalPages"] == len(expected)
    assert "nextPage" not in pages[-1]["metadata"]
    # getPagingData's hasMore path: totalPages is this page plus one while another follows, and hasMore says so.
    for n, page in enumerate(pages, start=1):
        more = n < len(pages)
        assert (page["metadata"]["hasMore"], page["metadata"]["totalPages"]) == (more, n + 1 if more else n)


def test_page_past_the_end(media: MediaEnv) -> None:
    total = len(oracle(media))
    page = media.json("/creators", page=10_000, limit=200)
    assert page["items"] == [] and "nextPage" not in page["metadata"]
    assert page["metadata"]["totalItems"] == total and page["metadata"]["totalPages"] == math.ceil(total / 200)
    # With query the platform counts nothing: the bound is the items skipped, and this page is the last.
    searched = media.json("/creators", page=10_000, limit=200, query="e")
    assert searched["items"] == [] and "nextPage" not in searched["metadata"]
    assert {k: searched["metadata"][k] for k in ("totalItems", "totalPages", "hasMore")} == {
        "totalItems": 9_999 * 200, "totalPages": 10_000, "hasMore": False}
    assert searched["metadata"]["prevPage"].endswith("page=9999&limit=200&query=e")


def test_no_creators_is_one_page(media: MediaEnv) -> None:
    # getPagingData: totalPages is 1 when the count is 0; with query, this page.
    for params in ({"query": "no-such-creator-zz"},):
        meta = media.json("/creators", **params)["metadata"]
        assert (meta["totalItems"], meta["totalPages"], meta["currentPage"]) == (0, 1, 1)
        assert "nextPage" not in meta and "prevPage" not in meta


def test_the_links_repeat_the_requests_query(media: MediaEnv) -> None:
    # getPaginationLinks: {...req.query, page}, so a parameter the route does not read is kept too.
    meta = media.json("/creators", limit=2, page=2, extra="kept")["metadata"]
    assert meta["nextPage"] == f"{media.base_url}/api/v1/creators?limit=2&page=3&extra=kept"
    assert meta["prevPage"] == f"{media.base_url}/api/v1/creators?limit=2&page=1&extra=kept"


@pytest.mark.parametrize("params", [{"limit": "0"}, {"limit": "201"}, {"page": "0"}, {"page": "x"},
                                    {"query": "q" * 1025}])
def test_invalid_parameters_are_400s_with_the_issues_array(media: MediaEnv, params: dict[str, str]) -> None:
    response = media.get("/creators", **params)
    assert response.status_code == 400
    body = response.json()
    assert isinstance(body, list) and body[0]["path"] == [next(iter(params))]

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


def test_page_past_the_end(media: MediaEnv) -> None:
    total = len(oracle(media))
    for params in ({}, {"query": "e"}):
        page = media.json("/creators", page=10_000, limit=200, **params)
        assert page["items"] == [] and "nextPage" not in page["metadata"]
        assert page["metadata"]["totalItems"] == len(oracle(media, params.get("query"))) <= total


@pytest.mark.parametrize("params", [{"limit": "0"}, {"limit": "201"}, {"page": "0"}, {"page": "x"},
                                    {"query": "q" * 1025}])
def test_invalid_parameters_are_400s_with_the_issues_array(media: MediaEnv, params: dict[str, str]) -> None:
    response = media.get("/creators", **params)
    assert response.status_code == 400
    body = response.json()
    assert isinstance(body, list) and body[0]["path"] == [next(iter(params))]

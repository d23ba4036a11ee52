"""GET /api/v1/tags: model tags only, most used first, totals, and the 60-second server-side cache."""

from __future__ import annotations

from typing import Any

import pytest

from media_env import MediaEnv


def walk(media: MediaEnv, **params: Any) -> list[dict[str, Any]]:
    pages = [media.json("/tags", **params)]
    while "nextPage" in pages[-1]["metadata"]:
        assert len(pages) < 500
        pages.append(media.client.get(pages[-1]["metadata"]["nextPage"]).json())
    return pages


def usage(media: MediaEnv) -> dict[str, int]:
    rows = media.sql("SELECT t.name, count(m.id) FROM tags t LEFT JOIN model_tags mt ON mt.tag_id = t.id"
                     " LEFT JOIN models m ON m.id = mt.model_id AND m.status = 'Published'"
                     " WHERE t.kind = 'model' GROUP BY t.id")
    return dict(rows)


def test_model_tags_only_most_used_first_with_exact_totals(media: MediaEnv) -> None:
    counts = usage(media)
    pages = walk(media, limit=9)
    names = [t["name"] for p in pages for t in p["items"]]
    assert sorted(names) == sorted(counts) and len(names) == len(set(names))
    assert [counts[n] for n in names] == sorted((counts[n] for n in names), reverse=True)
    assert "media-red" not in names and media.landmarks["tags"]["image_tag"]["name"] not in names
    assert media.landmarks["tags"]["model_tag"]["name"] in names
    assert media.landmarks["tags"]["model_category_tag"]["name"] in names
    for page in pages:
        assert page["metadata"]["totalItems"] == len(counts)
        assert page["metadata"]["totalPages"] == -(-len(counts) // 9)
    assert all(t["link"] == f"{media.base_url}/api/v1/models?tag={t['name'].replace(' ', '+')}"
               for p in pages for t in p["items"])


def test_with_query_totals_are_zero_and_next_page_drives_paging(media: MediaEnv) -> None:
    pages = walk(media, limit=1, query="ZZ-MEDIA")
    assert [t["name"] for p in pages for t in p["items"]] == ["zz-media-model-tag", "zz-media-model-category"]
    assert all(p["metadata"]["totalItems"] == 0 and p["metadata"]["totalPages"] == 0 for p in pages)
    assert "nextPage" in pages[0]["metadata"] and "nextPage" not in pages[-1]["metadata"]


def test_answers_are_cached_for_60_seconds_of_the_emulator_clock(media: MediaEnv) -> None:
    params = {"query": "zz-cache", "limit": 50}
    assert media.json("/tags", **params)["items"] == []
    with media.store.write() as db:
        db.execute("INSERT INTO tags (id, name, kind, created_at) VALUES (?, 'zz-cache-new', 'model', ?)",
                   (990_000_001, media.clock.iso()))
    assert media.json("/tags", **params)["items"] == [], "served from the cache"
    assert [t["name"] for t in media.json("/tags", query="zz-cache", limit=49)["items"]] == ["zz-cache-new"], \
        "another key is computed afresh"
    media.clock.advance(59)
    assert media.json("/tags", **params)["items"] == []
    media.clock.advance(1.5)
    assert [t["name"] for t in media.json("/tags", **params)["items"]] == ["zz-cache-new"]


@pytest.mark.parametrize("params", [{"limit": "0"}, {"limit": "201"}, {"page": "0"}, {"page": "-2"},
                                    {"limit": "1e3"}])
def test_invalid_parameters_are_400s_with_the_issues_array(media: MediaEnv, params: dict[str, str]) -> None:
    response = media.get("/tags", **params)
    assert response.status_code == 400
    body = response.json()
    assert isinstance(body, list) and body[0]["path"] == [next(iter(params))]

"""GET /api/v1/tags: model tags only, most used first, the platform's page metadata, the 60-second cache."""

from __future__ import annotations

from typing import Any

import pytest

from media_env import MediaEnv


def walk(media: MediaEnv, limit: int, **params: Any) -> list[dict[str, Any]]:
    """Every page, paged by the items' length: the platform's tags send no nextPage (getTags counts nothing)."""
    pages = [media.json("/tags", limit=limit, **params)]
    while len(pages[-1]["items"]) == limit:
        assert len(pages) < 500
        pages.append(media.json("/tags", limit=limit, page=len(pages) + 1, **params))
    return pages


def platform_metadata(page: int, limit: int) -> dict[str, int]:
    # tags.ts: getPagingData without a count (totalItems 0, totalPages 1), so getPaginationLinks adds no links.
    return {"totalItems": 0, "currentPage": page, "pageSize": limit, "totalPages": 1}


def usage(media: MediaEnv) -> dict[str, int]:
    rows = media.sql("SELECT t.name, count(m.id) FROM tags t LEFT JOIN model_tags mt ON mt.tag_id = t.id"
                     " LEFT JOIN models m ON m.id = mt.model_id AND m.status = 'Published'"
                     " WHERE t.kind = 'model' GROUP BY t.id")
    return dict(rows)


def test_model_tags_only_most_used_first_with_the_platforms_metadata(media: MediaEnv) -> None:
    counts = usage(media)
    pages = walk(media, limit=9)
    names = [t["name"] for p in pages for t in p["items"]]
    assert sorted(names) == sorted(counts) and len(names) == len(set(names))
    assert [counts[n] for n in names] == sorted((counts[n] for n in names), reverse=True)
    assert "media-red" not in names and media.landmarks["tags"]["image_tag"]["name"] not in names
    assert media.landmarks["tags"]["model_tag"]["name"] in names
    assert media.landmarks["tags"]["model_category_tag"]["name"] in names
    assert len(pages) > 2
    for n, page in enumerate(pages, start=1):
        assert page["metadata"] == platform_metadata(n, 9)
    assert all(t["link"] == f"{media.base_url}/api/v1/models?tag={t['name'].replace(' ', '+')}"
               for p in pages for t in p["items"])


def test_with_query_the_metadata_is_the_same_and_items_drive_paging(media: MediaEnv) -> None:
    pages = walk(media, limit=1, query="ZZ-MEDIA")
    assert [t["name"] for p in pages for t in p["items"]] == ["zz-media-model-tag", "zz-media-model-category"]
    assert [p["metadata"] for p in pages] == [platform_metadata(n, 1) for n in (1, 2, 3)]
    assert pages[-1]["items"] == []


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

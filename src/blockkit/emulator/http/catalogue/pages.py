"""What the media routes' responses share: how they are typed, and the pagination metadata.

Response shapes are TypedDicts whose keys are the spec's field names, built as plain
dicts and serialised by orjson. Pydantic models were measured first: on the large
seed, ``model_construct`` plus ``model_dump`` cost about 100-230 us per article
against about 6 us for a dict, which made a 100-item page spend most of its time
building models. A key a shape marks ``NotRequired`` is left out when it does not
apply (``nextCursor``/``nextPage`` on the last page, ``modelCount`` of zero, ...); a
value that is ``None`` goes out as null.
"""

from __future__ import annotations

import math
from typing import Optional

from typing_extensions import NotRequired, TypedDict

from blockkit.emulator.http.catalogue import links


class CursorMetadata(TypedDict):
    """Cursor pagination (images, articles): both keys absent on the last page. /images in page mode
    (``page`` without ``cursor``) adds currentPage and pageSize on every page."""

    nextCursor: NotRequired[str]
    nextPage: NotRequired[str]
    currentPage: NotRequired[int]
    pageSize: NotRequired[int]


class PageMetadata(TypedDict):
    """Page pagination (creators, tags)."""

    totalItems: int
    currentPage: int
    pageSize: int
    totalPages: int
    nextPage: NotRequired[str]
    prevPage: NotRequired[str]


def page_metadata(base_url: str, path: str, *, page: int, limit: int, total: int, more: bool,
                  query: Optional[str]) -> PageMetadata:
    """Totals as given; nextPage (same limit and query, the next page) only when ``more``; prevPage from
    page 2 on (getPaginationLinks, creators.ts:44 and tags.ts)."""
    metadata: PageMetadata = {"totalItems": total, "currentPage": page, "pageSize": limit,
                              "totalPages": math.ceil(total / limit) if total else 0}
    if more:
        params = [("limit", str(limit)), ("page", str(page + 1))] + ([("query", query)] if query else [])
        metadata["nextPage"] = links.api_url(base_url, path, params)
    if page > 1:
        params = [("limit", str(limit)), ("page", str(page - 1))] + ([("query", query)] if query else [])
        metadata["prevPage"] = links.api_url(base_url, path, params)
    return metadata

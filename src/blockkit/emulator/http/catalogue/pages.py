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
from collections.abc import Sequence
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
    """Page pagination (creators, tags): the platform's getPagingData, then getPaginationLinks's links."""

    totalItems: int
    currentPage: int
    pageSize: int
    totalPages: int
    hasMore: NotRequired[bool]   # only where the count is a lower bound (creators with query)
    nextPage: NotRequired[str]
    prevPage: NotRequired[str]


def paging_data(*, page: int, limit: int, total: Optional[int] = None, returned: int = 0,
                has_more: Optional[bool] = None) -> PageMetadata:
    """The platform's ``getPagingData`` (``server/utils/pagination-helpers.ts``).

    With ``has_more`` (a take+1 probe instead of a count): totalItems is the lower bound
    ``skipped + returned (+1 when more)``, totalPages ``page + 1`` when more else ``page``, and
    ``hasMore`` is sent too. Otherwise totalItems is ``total`` (0 when there is no count) and
    totalPages ``ceil(total / limit)``, or 1 when the total is 0.
    """
    if has_more is not None:
        skipped = (page - 1) * limit if page > 1 else 0
        return {"totalItems": skipped + returned + (1 if has_more else 0), "currentPage": page, "pageSize": limit,
                "totalPages": page + 1 if has_more else page, "hasMore": has_more}
    total = total or 0
    return {"totalItems": total, "currentPage": page, "pageSize": limit,
            "totalPages": math.ceil(total / limit) if total else 1}


def with_links(metadata: PageMetadata, base_url: str, path: str, params: Sequence[tuple[str, str]]
               ) -> PageMetadata:
    """The platform's ``getPaginationLinks``: nextPage while currentPage < totalPages, prevPage when
    totalPages > 1 and currentPage > 1; each is the request's own query with ``page`` set (in its place,
    or last when the request had none)."""
    current, pages = metadata["currentPage"], metadata["totalPages"]

    def link(page: int) -> str:
        items: list[tuple[str, str]] = []
        for key, value in params:
            if key != "page":
                items.append((key, value))
            elif not any(k == "page" for k, _ in items):
                items.append(("page", str(page)))
        if not any(k == "page" for k, _ in items):
            items.append(("page", str(page)))
        return links.api_url(base_url, path, items)

    if current < pages:
        metadata["nextPage"] = link(current + 1)
    if pages > 1 and current > 1:
        metadata["prevPage"] = link(current - 1)
    return metadata

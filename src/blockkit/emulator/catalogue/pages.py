"""What the list responses share: the response-model base and the pagination metadata.

Metadata keys a page does not have are left out (the models omit unset fields):
``nextCursor``/``nextPage`` are absent on the last page.
"""

from __future__ import annotations

import math
from typing import Optional

from pydantic import BaseModel, ConfigDict, Field

from blockkit.emulator.catalogue import links


class Out(BaseModel):
    """Base of the response models: camelCase aliases, built with model_construct (no re-validation)."""

    model_config = ConfigDict(populate_by_name=True)


class CursorMetadata(Out):
    """Cursor pagination (images, articles): both keys absent on the last page."""

    next_cursor: Optional[str] = Field(None, alias="nextCursor")
    next_page: Optional[str] = Field(None, alias="nextPage")


class PageMetadata(Out):
    """Page pagination (creators, tags)."""

    total_items: int = Field(alias="totalItems")
    current_page: int = Field(alias="currentPage")
    page_size: int = Field(alias="pageSize")
    total_pages: int = Field(alias="totalPages")
    next_page: Optional[str] = Field(None, alias="nextPage")


def page_metadata(base_url: str, path: str, *, page: int, limit: int, total: int, more: bool,
                  query: str | None) -> PageMetadata:
    """Totals as given; nextPage (same limit and query, the next page) only when ``more``."""
    fields: dict[str, object] = dict(total_items=total, current_page=page, page_size=limit,
                                     total_pages=math.ceil(total / limit) if total else 0)
    if more:
        params = [("limit", str(limit)), ("page", str(page + 1))] + ([("query", query)] if query else [])
        fields["next_page"] = links.api_url(base_url, path, params)
    return PageMetadata.model_construct(**fields)

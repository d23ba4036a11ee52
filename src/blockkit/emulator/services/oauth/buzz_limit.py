"""The consent's Buzz spend limit (``buzz_limit``): its shape, checked, and the page's choices.

The spec says buzz_limit is JSON-encoded and leaves the inner shape unshown. The
platform's public source gives it: an array of budgets, each one of

- ``{"type": "absolute", "limit": N, "currencies"?: [..]}``: a cap with no time window;
- ``{"type": "sliding", "limit": N, "window": second|minute|hour|day|week|month,
  "unit": N, "currencies"?: [..]}``: a rolling window of ``unit`` x ``window``;
- ``{"type": "rollover", "limit": N, "cron": "...", "currencies"?: [..]}``: resets on a schedule;

with positive integer limits and units. An empty value (or ``[]``) means no limit; the
emulator stores ``null`` for it. The consent page offers a few sliding budgets.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

import orjson
from pydantic import BaseModel, ConfigDict, Field, StrictInt, TypeAdapter, ValidationError

PositiveInt = Annotated[StrictInt, Field(gt=0, le=2**53 - 1)]
Currencies = Annotated[list[Annotated[str, Field(min_length=1, max_length=32)]], Field(max_length=8)]


class _Budget(BaseModel):
    model_config = ConfigDict(extra="forbid")
    limit: PositiveInt
    currencies: Currencies | None = None


class Absolute(_Budget):
    type: Literal["absolute"]


class Sliding(_Budget):
    type: Literal["sliding"]
    window: Literal["second", "minute", "hour", "day", "week", "month"]
    unit: PositiveInt


class Rollover(_Budget):
    type: Literal["rollover"]
    cron: Annotated[str, Field(min_length=1, max_length=100)]


Budget = Annotated[Union[Absolute, Sliding, Rollover], Field(discriminator="type")]
_LIMIT = TypeAdapter(Annotated[list[Budget], Field(max_length=10)])


class LimitError(ValueError):
    pass


def parse_limit(text: str | None) -> list[dict[str, Any]] | None:
    """The stored form of a ``buzz_limit`` field: None for no limit, else the checked budgets."""
    if text is None or not text.strip():
        return None
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        raise LimitError("not valid JSON") from None
    try:
        budgets = _LIMIT.validate_python(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = "/".join(str(p) for p in first["loc"])
        raise LimitError(f"{first['msg']} at {where or 'the top'}; expected an array of budgets") from None
    if not budgets:
        return None
    return [b.model_dump(exclude_none=True) for b in budgets]


def _sliding(limit: int, window: str, unit: int = 1) -> list[dict[str, Any]]:
    return [{"type": "sliding", "limit": limit, "window": window, "unit": unit}]


CHOICES: tuple[tuple[str, list[dict[str, Any]] | None], ...] = (
    ("No limit", None),
    ("100 Buzz a day", _sliding(100, "day")),
    ("500 Buzz a day", _sliding(500, "day")),
    ("1,000 Buzz a week", _sliding(1000, "week")),
    ("5,000 Buzz a month", _sliding(5000, "month")),
)


def options(stored: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The select's options, the stored limit selected (added when it is not a preset)."""
    found = False
    out = []
    for label, value in CHOICES:
        selected = value == stored
        found = found or selected
        out.append({"label": label, "value": "" if value is None else orjson.dumps(value).decode(),
                    "selected": selected})
    if not found and stored is not None:
        out.append({"label": "Your current limit", "value": orjson.dumps(stored).decode(), "selected": True})
    return out

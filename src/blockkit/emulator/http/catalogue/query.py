"""Query reading for the media routes, with each endpoint group's 400 body.

``params.query_dict`` reads the raw query string (a value that is not UTF-8 or holds
NUL, or a one-value parameter given twice, is invalid; unknown parameters are ignored).
This module adds the value types the media routes need and the four 400 bodies:
numbers are ASCII digits (a leading '-' parses, then fails the range), booleans are
true/false (any case) or 1/0, lists are comma-separated (not repeated: D-repeated) with
no empty entries and at most 1000 entries.

=============  ==========================================================  =====================
``ENVELOPE``   ``{"error": {"name": "ZodError", "message": "<issues JSON>"}}`` images, articles, collections
``SINGLE``     ``{"error": "<message>"}``                                   posts/{id}, articles/{id}, collections/{id}
``BARE``       ``{"name": "ZodError", "message": "<issues JSON>"}``         users
``ISSUES``     ``[{code, path, message, ...}, ...]`` (zod 4 issues)        creators, tags
=============  ==========================================================  =====================
"""

from __future__ import annotations

import enum
import re
from typing import Annotated, Any, Optional, TypeVar

from pydantic import BeforeValidator, Field, ValidationError

from blockkit.emulator.http.errors import ApiError, error_body, issue, validation_body
from blockkit.emulator.http.catalogue.params import MAX_ID, MAX_TEXT, QueryModel, issues_of, query_dict
from blockkit.emulator.http.catalogue.params import query_bool as strict_bool  # one reading of booleans for every family

T = TypeVar("T", bound=QueryModel)

MAX_LIST_ENTRIES = 1000          # entries in one list parameter (ids, tags, baseModels)

_INT = re.compile(r"-?[0-9]{1,30}")


class Shape(enum.Enum):
    ENVELOPE = "envelope"
    SINGLE = "single"
    BARE = "bare"
    ISSUES = "issues"


# --- value types ---------------------------------------------------------------------------

def strict_int(value: Any) -> Any:
    if isinstance(value, str):
        if not _INT.fullmatch(value):
            raise ValueError("Expected an integer (ASCII digits)")
        return int(value)
    return value


def _entries(value: Any) -> list[str]:
    values = value if isinstance(value, list) else [value]
    out: list[str] = []
    for item in values:
        if not isinstance(item, str):
            raise ValueError("Expected a comma-separated list")
        parts = item.split(",")
        if any(part == "" for part in parts):
            raise ValueError("Expected a comma-separated list without empty entries")
        out.extend(parts)
    if len(out) > MAX_LIST_ENTRIES:
        raise ValueError(f"At most {MAX_LIST_ENTRIES} entries")
    return out


def id_list(value: Any) -> Any:
    out = []
    for part in _entries(value):
        if not _INT.fullmatch(part):
            raise ValueError(f"Expected integer ids, got {part[:40]!r}")
        number = int(part)
        if not 1 <= number <= MAX_ID:
            raise ValueError(f"Ids are 1-{MAX_ID}, got {part[:40]}")
        out.append(number)
    return out


def text_list(value: Any) -> Any:
    out = []
    for part in _entries(value):
        if len(part) > MAX_TEXT:
            raise ValueError(f"Each entry is at most {MAX_TEXT} characters")
        out.append(part)
    return out


def empty_as_none(value: Any) -> Any:
    # An empty free-text value (``?query=``) means the filter is not set: clients often send
    # every parameter and leave the unused ones blank.
    return None if value == "" else value


Int = Annotated[int, BeforeValidator(strict_int)]
Bool = Annotated[bool, BeforeValidator(strict_bool)]
Id = Annotated[int, BeforeValidator(strict_int), Field(ge=1, le=MAX_ID)]
IdList = Annotated[list[int], BeforeValidator(id_list), Field(min_length=1)]
TextList = Annotated[list[str], BeforeValidator(text_list), Field(min_length=1)]
Text = Annotated[Optional[str], BeforeValidator(empty_as_none), Field(max_length=MAX_TEXT)]


# --- reading -------------------------------------------------------------------------------

def read_query(request: Any, model: type[T], shape: Shape = Shape.ENVELOPE) -> T:
    """Parse ``request``'s query into ``model``; a 400 in ``shape`` when anything is invalid.

    The raw query string is read by ``params.query_dict`` (bad bytes, NUL and repeats of
    a one-value parameter are issues; an empty free-text value counts as absent).
    """
    data, problems = query_dict(request, model)
    for key, value in data.items():
        # Lists here are comma-separated; only the models list lets a parameter repeat
        # (openapi.json, D-repeated).
        if isinstance(value, list) and len(value) > 1:
            problems.append(issue("Invalid input: expected one value, received array (comma-separate the values)",
                                  [key], "invalid_type", expected="string"))
    if not problems:
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            problems = issues_of(exc)
    raise invalid_query(problems, shape)


def invalid_query(issues: list[dict[str, Any]], shape: Shape) -> ApiError:
    if shape is Shape.ENVELOPE:
        return ApiError(400, validation_body(issues))
    if shape is Shape.BARE:
        return ApiError(400, validation_body(issues)["error"])
    if shape is Shape.ISSUES:
        return ApiError(400, [dict(i) for i in issues])
    first = issues[0]
    where = ".".join(str(p) for p in first["path"])
    return ApiError(400, error_body(f"{where}: {first['message']}" if where else first["message"]))


def invalid(message: str, param: str, shape: Shape) -> ApiError:
    """One invalid parameter found after parsing (a cursor, a combination), in ``shape``."""
    return invalid_query([issue(message, [param])], shape)


def path_id(value: str, what: str) -> int:
    """An id from a path segment: 1-2147483647, ASCII digits, else a 400 ``{error}``."""
    if not re.fullmatch(r"[0-9]{1,10}", value) or not 1 <= int(value) <= MAX_ID:
        shown = value if len(value) <= 40 else value[:40] + "..."
        raise ApiError(400, error_body(f"{what} id must be an integer from 1 to {MAX_ID}, got {shown!r}"))
    return int(value)


_SLUG_DROP = re.compile(r"[^A-Za-z0-9_.\-]")
_SPACES = re.compile(r"\s+")


def slugify_username(value: str) -> str:
    """A ``username`` parameter as the platform's usernames are spelled ("auto-slugified").

    Surrounding space goes, inner runs of space become one underscore, and characters a
    username cannot hold (anything but letters, digits, '_', '.', '-') are dropped. The
    store then compares case-insensitively.
    """
    return _SLUG_DROP.sub("", _SPACES.sub("_", value.strip()))


def known_pairs(request: Any, model: type[QueryModel]) -> tuple[tuple[str, str], ...]:
    """The request's parameters that ``model`` reads, in order: what a nextPage URL carries.

    Unknown parameters are left out (they are ignored, and may hold bytes that do not
    round-trip); call after ``read_query`` succeeded, so every kept value is valid text.
    """
    names = {field.alias or name for name, field in model.model_fields.items()}
    return tuple((k, v) for k, v in request.query_params.multi_items() if k in names)

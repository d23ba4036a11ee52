"""Strict query reading for the catalogue routes, with each endpoint group's 400 body.

``params.parse_query`` reads starlette's already-decoded parameters, which turn bad
bytes into U+FFFD and keep the last of a repeated value. The spec says invalid
parameters are a 400 (general behaviour 6), so :func:`read_query` reads the raw
query string itself:

- a known parameter whose value is not UTF-8 (an encoded lone surrogate, a stray
  continuation byte) or holds NUL is invalid;
- a single-valued parameter given twice is invalid (which one would win is a guess);
- an unknown parameter is ignored, whatever its bytes.

Numbers are ASCII digits only (no fullwidth or Arabic-Indic digits, no signs other
than a leading '-', no spaces, no exponent), booleans are true/false (any case) or
1/0, lists are comma-separated and repeatable with no empty entries.

The body of a 400 differs by endpoint group (openapi.json, D-error-validation):

=============  ==========================================================  =====================
``ENVELOPE``   ``{"error": {"issues": [...], "name": "ZodError"}}``         images, articles, collections
``SINGLE``     ``{"error": "<message>"}``                                   posts/{id}, articles/{id}, collections/{id}
``BARE``       ``{"issues": [...], "name": "ZodError"}``                    users
``ISSUES``     ``[{code, message, path}, ...]``                             creators, tags
=============  ==========================================================  =====================
"""

from __future__ import annotations

import enum
import re
from typing import Annotated, Any, Optional, TypeVar, get_args, get_origin
from urllib.parse import unquote_to_bytes

from pydantic import BeforeValidator, Field, ValidationError

from blockkit.emulator.catalogue.errors import ApiError, error_body, issue, validation_body
from blockkit.emulator.catalogue.params import QueryModel, issues_of

T = TypeVar("T", bound=QueryModel)

MAX_ID = 2_147_483_647           # ids: 1-2147483647 (spec, Limits)
MAX_SAFE_INTEGER = 9_007_199_254_740_991  # D-integer-range: page, browsingLevel
MAX_TEXT = 1024                  # D-string-length
MAX_LIST_ENTRIES = 1000          # entries in one list parameter (ids, tags, baseModels)

_INT = re.compile(r"-?[0-9]{1,30}")
_TRUE = frozenset({"true", "1"})
_FALSE = frozenset({"false", "0"})


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


def strict_bool(value: Any) -> Any:
    if isinstance(value, str):
        lowered = value.lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise ValueError("Expected true or false")
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

class _Invalid(Exception):
    def __init__(self, issues: list[dict[str, Any]]) -> None:
        super().__init__(issues)
        self.issues = issues


def _is_list(annotation: Any) -> bool:
    origin = get_origin(annotation)
    if origin is Annotated:
        return _is_list(get_args(annotation)[0])
    return origin is list


def _decode(raw: bytes) -> str:
    return unquote_to_bytes(raw.replace(b"+", b" ")).decode("utf-8", "replace")


def raw_values(request: Any, model: type[QueryModel]) -> dict[str, Any]:
    """The model's parameters from the raw query string (see the module docstring)."""
    fields = {(field.alias or name): _is_list(field.annotation) for name, field in model.model_fields.items()}
    found: dict[str, list[str]] = {}
    problems: list[dict[str, Any]] = []
    query_string: bytes = request.scope.get("query_string", b"")
    for part in query_string.split(b"&"):
        if not part:
            continue
        raw_name, _, raw_value = part.partition(b"=")
        name = _decode(raw_name)
        if name not in fields:
            continue  # unknown parameters are ignored, whatever their bytes
        try:
            value = unquote_to_bytes(raw_value.replace(b"+", b" ")).decode("utf-8")
        except UnicodeDecodeError:
            problems.append(issue("Not valid UTF-8", [name], code="invalid_string"))
            continue
        if "\x00" in value or any(0xD800 <= ord(c) <= 0xDFFF for c in value):
            problems.append(issue("Contains a NUL or a lone surrogate", [name], code="invalid_string"))
            continue
        found.setdefault(name, []).append(value)
    data: dict[str, Any] = {}
    for name, values in found.items():
        if fields[name]:
            data[name] = values
        elif len(values) > 1:
            problems.append(issue("Given more than once; send it once", [name], code="invalid_type"))
        else:
            data[name] = values[0]
    if problems:
        raise _Invalid(problems)
    return data


def read_query(request: Any, model: type[T], shape: Shape = Shape.ENVELOPE) -> T:
    """Parse ``request``'s query into ``model``; a 400 in ``shape`` when anything is invalid."""
    try:
        data = raw_values(request, model)
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            raise _Invalid(issues_of(exc)) from None
    except _Invalid as invalid:
        raise invalid_query(invalid.issues, shape) from None


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

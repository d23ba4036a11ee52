"""Query parameters as pydantic models: parse once, answer 400 with the validation body.

Declare a model per endpoint::

    class ModelsQuery(QueryModel):
        limit: QueryInt = Field(100, ge=1, le=100)
        types: CommaList[str] = []           # ?types=LORA&types=VAE or ?types=LORA,VAE
        nsfw: QueryBool = False              # "true"/"false" (any case; also 1/0)
        ids: CommaList[QueryId] = []         # ids 1-2147483647

and in the route ``query = parse_query(request, ModelsQuery)``. Unknown parameters
are ignored and invalid ones answer 400 (spec, general behaviour 6), with one
issue per problem (code, message, path) in the platform's validation body, or
``{"error": message}`` for the endpoints whose 400 is a plain message
(``parse_query(..., shape="error")``).

The raw query string is read here, not starlette's lenient parse, so that what the
OpenAPI document decides holds for every endpoint: a value that is not UTF-8 after
percent-decoding, or holds NUL, is a 400 [D-bad-bytes]; a one-value parameter given
twice is a 400 (list parameters may repeat) [D-repeated]; an empty value of an
optional free-text parameter counts as absent, an empty number, boolean or enum is a
400 [D-empty]. Integers are ASCII digits only (no sign, spaces, fractions or other
scripts' digits).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, TypeVar, Union, get_args, get_origin
from urllib.parse import unquote_to_bytes

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from blockkit.emulator.http.errors import ApiError, error_body, issue, validation_body

T = TypeVar("T", bound="QueryModel")

MAX_ID = 2_147_483_647             # every id, in a path or a query [D-id-range]
MAX_SAFE_INTEGER = 9_007_199_254_740_991   # other integers without a stated bound [D-integer-range]
MAX_TEXT = 1024                    # free-text parameters [D-string-length]

_TRUE = frozenset({"true", "1"})
_FALSE = frozenset({"false", "0"})
_DIGITS = re.compile(r"[0-9]+", re.ASCII)


def query_bool(value: Any) -> Any:
    if isinstance(value, str):
        lowered = value.lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise ValueError("Expected true or false")
    return value


def _query_int(value: Any) -> Any:
    # ASCII digits only: int() and pydantic's lax mode would take ' 1', '+1', '1_000', '1.0'.
    if isinstance(value, str):
        if not _DIGITS.fullmatch(value):
            raise ValueError("Expected a whole number (digits 0-9)")
        if len(value) > 20:  # past any range we check; do not build a huge int
            raise ValueError("Number too large")
        return int(value)
    return value


def _comma_list(value: Any) -> Any:
    values = value if isinstance(value, list) else [value]
    out: list[Any] = []
    for item in values:
        if isinstance(item, str):
            if item == "":
                continue  # ?ids= : no entries (a list with minItems says whether that is allowed)
            # An empty entry ('1,,2', 'LORA,') stays, so the item validator refuses it.
            out.extend(item.split(","))
        else:
            out.append(item)
    return out


QueryBool = Annotated[bool, BeforeValidator(query_bool)]

_JS_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
_JS_RADIX = re.compile(r"0([xXoObB])([0-9A-Fa-f]+)", re.ASCII)


def js_number(text: str) -> float:
    """JavaScript's Number(text) for a query or path value: NaN (float('nan')) when it is no number."""
    value = text.strip(" \t\n\r\v\f")
    if value == "":
        return 0.0
    if _JS_DECIMAL.fullmatch(value):
        return float(value)
    if value in ("Infinity", "+Infinity", "-Infinity"):
        return float(value.replace("Infinity", "inf"))
    match = _JS_RADIX.fullmatch(value)
    if match:
        base = {"x": 16, "o": 8, "b": 2}[match.group(1).lower()]
        try:
            return float(int(match.group(2), base))
        except ValueError:
            return float("nan")
    return float("nan")

# zod's stringbool (the platform's booleanString(), zod-helpers.ts:116-121), any case.
_STRINGBOOL_TRUE = frozenset({"true", "1", "yes", "on", "y", "enabled"})
_STRINGBOOL_FALSE = frozenset({"false", "0", "no", "off", "n", "disabled"})


def string_bool(value: Any) -> Any:
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in _STRINGBOOL_TRUE:
            return True
        if lowered in _STRINGBOOL_FALSE:
            return False
        raise ValueError('Invalid input: expected a boolean string ("true" or "false", "yes" or "no", ...)')
    return value


def coerced_bool(value: Any) -> Any:
    """z.coerce.boolean(): JavaScript's Boolean(value): any non-empty string is true ("false" too)."""
    if isinstance(value, str):
        return value != ""
    return value


StringBool = Annotated[bool, BeforeValidator(string_bool)]
CoercedBool = Annotated[bool, BeforeValidator(coerced_bool)]
QueryInt = Annotated[int, BeforeValidator(_query_int)]
QueryId = Annotated[int, BeforeValidator(_query_int), Field(ge=1, le=MAX_ID)]
QueryText = Annotated[str, Field(max_length=MAX_TEXT)]
ListText = Annotated[str, Field(min_length=1, max_length=MAX_TEXT)]


class _CommaList:
    def __class_getitem__(cls, item: Any) -> Any:
        return Annotated[list[item], BeforeValidator(_comma_list)]


# CommaList[int]: a repeated parameter, a comma-separated one, or both.
CommaList = _CommaList


class QueryModel(BaseModel):
    """Base of every query model: unknown parameters ignored, models immutable."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


def _is_list_field(annotation: Any) -> bool:
    origin = get_origin(annotation)
    if origin is Annotated:
        return _is_list_field(annotation.__origin__)
    if origin is Union:
        return any(_is_list_field(a) for a in get_args(annotation) if a is not type(None))
    return origin is list


def _is_text_field(annotation: Any) -> bool:
    origin = get_origin(annotation)
    if origin is Annotated:
        return _is_text_field(annotation.__origin__)
    if origin is Union:
        return any(_is_text_field(a) for a in get_args(annotation) if a is not type(None))
    return annotation is str


class _Undecodable:
    """A value that is not UTF-8 after percent-decoding, or holds NUL."""


UNDECODABLE = _Undecodable()


def _decode(raw: bytes) -> str | _Undecodable:
    try:
        text = unquote_to_bytes(raw.replace(b"+", b" ")).decode("utf-8")
    except UnicodeDecodeError:
        return UNDECODABLE
    return UNDECODABLE if "\x00" in text else text


def raw_params(request: Any) -> dict[str, list[str | _Undecodable]]:
    """Every parameter of the raw query string, decoded strictly (names that do not decode are dropped)."""
    out: dict[str, list[str | _Undecodable]] = {}
    for part in request.scope.get("query_string", b"").split(b"&"):
        if not part:
            continue
        name, _, value = part.partition(b"=")
        key = _decode(name)
        if isinstance(key, _Undecodable):
            continue  # not a parameter any endpoint knows: ignored, as unknown ones are
        out.setdefault(key, []).append(_decode(value))
    return out


def query_dict(request: Any, model: type[QueryModel]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The request's parameters for ``model`` (lists for list fields), and the issues found on the way."""
    params = raw_params(request)
    data: dict[str, Any] = {}
    problems: list[dict[str, Any]] = []
    for name, field in model.model_fields.items():
        key = field.alias or name
        values = params.get(key)
        if not values:
            continue
        if any(isinstance(v, _Undecodable) for v in values):
            problems.append(issue("Not valid UTF-8 text, or holds a NUL character", [key]))
            continue
        if _is_list_field(field.annotation):
            data[key] = values
            continue
        if len(values) > 1:
            problems.append(issue("Invalid input: expected one value, received array", [key], "invalid_type",
                                  expected="string"))
            continue
        if values[0] == "" and _is_text_field(field.annotation):
            continue  # an empty optional text counts as absent [D-empty]
        data[key] = values[0]
    return data, problems


def parse_query(request: Any, model: type[T], *, shape: str = "validation") -> T:
    """Parse ``request``'s query into ``model``; a 400 in the validation body, or ``{"error": msg}`` with shape="error"."""
    data, problems = query_dict(request, model)
    if not problems:
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            problems = issues_of(exc)
    if shape == "error":
        first = problems[0]
        where = ".".join(str(p) for p in first["path"])
        raise ApiError(400, error_body(f"{where}: {first['message']}" if where else first["message"]))
    raise ApiError(400, validation_body(problems))


_NUMBER_KINDS = {"int": "number", "float": "number", "bool": "boolean", "str": "string", "list": "array"}


def issues_of(exc: ValidationError) -> list[dict[str, Any]]:
    """pydantic's errors as zod 4 issues (the codes, keys and message forms zod gives)."""
    out = []
    for error in exc.errors(include_url=False):
        kind, ctx, path = error["type"], error.get("ctx") or {}, [p for p in error["loc"]]
        message = error["msg"].removeprefix("Value error, ")
        if kind in ("greater_than_equal", "greater_than"):
            bound = ctx.get("ge", ctx.get("gt"))
            inclusive = kind == "greater_than_equal"
            out.append(issue(f"Too small: expected number to be {'>=' if inclusive else '>'}{bound}", path,
                             "too_small", origin="number", minimum=bound, inclusive=inclusive))
        elif kind in ("less_than_equal", "less_than"):
            bound = ctx.get("le", ctx.get("lt"))
            inclusive = kind == "less_than_equal"
            out.append(issue(f"Too big: expected number to be {'<=' if inclusive else '<'}{bound}", path,
                             "too_big", origin="number", maximum=bound, inclusive=inclusive))
        elif kind == "too_short":
            out.append(issue(f"Too small: expected array to have >={ctx.get('min_length', 1)} items", path,
                             "too_small", origin="array", minimum=ctx.get("min_length", 1), inclusive=True))
        elif kind in ("string_too_long", "too_long"):
            limit = ctx.get("max_length")
            origin = "string" if kind == "string_too_long" else "array"
            unit = "characters" if origin == "string" else "items"
            out.append(issue(f"Too big: expected {origin} to have <={limit} {unit}", path, "too_big", origin=origin,
                             maximum=limit, inclusive=True))
        elif kind in ("literal_error", "enum"):
            expected = ctx.get("expected", "")
            values = [v.strip().strip("'") for v in str(expected).replace(" or ", ", ").split(", ") if v.strip()]
            shown = "|".join(f'"{v}"' for v in values)
            out.append(issue(f"Invalid option: expected one of {shown}", path, "invalid_value", values=values))
        elif kind.endswith("_parsing") or kind.endswith("_type"):
            expected = _NUMBER_KINDS.get(kind.split("_")[0], "string")
            out.append(issue(f"Invalid input: expected {expected}", path, "invalid_type", expected=expected))
        else:
            out.append(issue(message, path))
    return out

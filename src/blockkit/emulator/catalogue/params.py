"""Query parameters as pydantic models: parse once, answer 400 with the validation body.

Declare a model per endpoint::

    class ModelsQuery(QueryModel):
        limit: int = Field(100, ge=1, le=100)
        types: CommaList[str] = []           # ?types=LORA&types=VAE or ?types=LORA,VAE
        nsfw: QueryBool = False              # "true"/"false" (also 1/0)

and in the route ``query = parse_query(request, ModelsQuery)``. Unknown parameters
are ignored and invalid ones answer 400 (spec, general behaviour 6), with one
issue per problem (code, message, path) in the platform's validation body.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeVar, get_origin

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError

from blockkit.emulator.catalogue.errors import ApiError, issue, validation_body

T = TypeVar("T", bound="QueryModel")

_TRUE = frozenset({"true", "1"})
_FALSE = frozenset({"false", "0"})


def _query_bool(value: Any) -> Any:
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise ValueError("Expected true or false")
    return value


def _comma_list(value: Any) -> Any:
    values = value if isinstance(value, list) else [value]
    out: list[Any] = []
    for item in values:
        if isinstance(item, str):
            out.extend(part.strip() for part in item.split(",") if part.strip())
        else:
            out.append(item)
    return out


QueryBool = Annotated[bool, BeforeValidator(_query_bool)]


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
    return origin is list


def query_dict(request: Any, model: type[QueryModel]) -> dict[str, Any]:
    """The request's parameters for ``model``: lists for list fields, the last value otherwise."""
    params = request.query_params
    data: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        key = field.alias or name
        if key not in params:
            continue
        data[key] = params.getlist(key) if _is_list_field(field.annotation) else params.getlist(key)[-1]
    return data


def parse_query(request: Any, model: type[T]) -> T:
    try:
        return model.model_validate(query_dict(request, model))
    except ValidationError as exc:
        raise ApiError(400, validation_body(issues_of(exc))) from None


def issues_of(exc: ValidationError) -> list[dict[str, Any]]:
    """pydantic's errors as the platform's issues (code, message, path)."""
    out = []
    for error in exc.errors(include_url=False):
        message = error["msg"]
        if message.startswith("Value error, "):
            message = message[len("Value error, "):]
        out.append(issue(message, [p for p in error["loc"]], code=error["type"]))
    return out

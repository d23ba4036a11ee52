"""GET /api/v1/enums: the platform's enum lists (the example of a finished route family).

The shape of a family module: response models, then the service (plain functions
of the store and parsed parameters, no Request), then the routes (parse the
request, call the service, answer JSON), then ``routes``, which
``catalogue/__init__.py`` mounts under /api/v1.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from blockkit.emulator import facts
from blockkit.emulator.http.errors import json_response
from blockkit.emulator.state import emulator
from blockkit.emulator.store import Store
from blockkit.emulator.store import enums as enums_store

# --- response models -------------------------------------------------------------------


class Enums(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    model_type: list[str] = Field(alias="ModelType")
    model_file_type: list[str] = Field(alias="ModelFileType")
    active_base_model: list[str] = Field(alias="ActiveBaseModel")
    base_model: list[str] = Field(alias="BaseModel")
    base_model_type: list[str] = Field(alias="BaseModelType")


# --- service ---------------------------------------------------------------------------


def get_enums(store: Store) -> Enums:
    with store.read() as db:
        base_models = enums_store.base_model_names(db)
        active = enums_store.base_model_names(db, active_only=True)
    return Enums(
        model_type=list(facts.MODEL_TYPES),
        model_file_type=list(facts.MODEL_FILE_TYPES),
        active_base_model=active,
        base_model=base_models,
        base_model_type=list(facts.BASE_MODEL_TYPES),
    )


# --- routes ----------------------------------------------------------------------------


def enums_endpoint(request: Request) -> Response:
    # A sync endpoint: starlette runs it in its thread pool, where store.connection()
    # gives each thread its own SQLite connection. Keep store access out of async routes.
    return json_response(get_enums(emulator(request).store))


routes = [Route("/enums", enums_endpoint, methods=["GET"])]

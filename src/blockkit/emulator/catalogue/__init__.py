"""The catalogue origin: ``{base_url}/api/v1`` (one module per resource family).

``ROUTE_MODULES`` lists the family modules; each exposes ``routes`` (a list of
starlette routes relative to /api/v1). To add a family, write
``catalogue/<family>.py`` (see ``enums.py`` for the shape) and
``store/<family>.py`` (its SQL), then add the module here.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Mount

from blockkit.emulator.catalogue.errors import EXCEPTION_HANDLERS
from blockkit.emulator.region import RegionMiddleware

if TYPE_CHECKING:
    from blockkit.emulator.state import EmulatorState

API_PREFIX = "/api/v1"

# Family modules, each with ``routes``; mounted under /api/v1 in this order.
ROUTE_MODULES: tuple[str, ...] = (
    "blockkit.emulator.catalogue.enums",
    "blockkit.emulator.catalogue.openapi",
    "blockkit.emulator.catalogue.me",
    "blockkit.emulator.catalogue.models",
    "blockkit.emulator.catalogue.model_versions",
    "blockkit.emulator.catalogue.vault",
    "blockkit.emulator.catalogue.permissions",
    "blockkit.emulator.catalogue.images",
    "blockkit.emulator.catalogue.posts",
    "blockkit.emulator.catalogue.articles",
    "blockkit.emulator.catalogue.collections",
    "blockkit.emulator.catalogue.users",
    "blockkit.emulator.catalogue.creators",
    "blockkit.emulator.catalogue.tags",
    "blockkit.emulator.catalogue.entitlements",  # goods: GET /blocks/entitlements
    "blockkit.emulator.blockroutes",  # block tokens: mint, JWKS, /blocks/models|images|me
    "blockkit.emulator.blockrest",  # the bridge procedures' REST twins (/blocks/app-storage, workflows, buzz, ...)
)


def build_catalogue_app(state: EmulatorState) -> Starlette:
    from blockkit.emulator import control
    from blockkit.emulator.blockroutes import BlockScopeMiddleware
    from blockkit.emulator.catalogue import downloads
    from blockkit.emulator.catalogue.edge import EdgeCache
    from blockkit.emulator.oauth import legacy
    from blockkit.emulator.orchestration.media import media_routes

    api_routes = []
    for name in ROUTE_MODULES:
        api_routes.extend(importlib.import_module(name).routes)
    app = Starlette(
        routes=[Mount(API_PREFIX, routes=api_routes),
                Mount(control.PREFIX, routes=[*control.routes, *media_routes, *downloads.file_routes]),
                *downloads.routes,  # /api/download/models/{id}: outside /api/v1, as on the platform
                *legacy.routes],
        # The edge cache first: a repeat it answers skips the rest (catalogue/edge.py).
        middleware=[Middleware(EdgeCache, store=state.store),
                    Middleware(RegionMiddleware, sfw_only=state.options.sfw_only),
                    Middleware(BlockScopeMiddleware)],
        exception_handlers=EXCEPTION_HANDLERS,
    )
    app.state.emulator = state
    return app

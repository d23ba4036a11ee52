"""The catalogue origin: ``{base_url}/api/v1`` (one module per resource family).

``ROUTE_MODULES`` lists the family modules; each exposes ``routes`` (a list of
starlette routes relative to /api/v1). To add a family, write
``catalogue/<family>.py`` (see ``enums.py`` for the shape) and
``store/<family>.py`` (its SQL), then add the module here. The app itself (these families,
the block routes of ``http/blocks/``, the ``/__emulator`` controls, the download routes and
the legacy redirects, under the edge cache and the middlewares) is built by
``http/server.py: build_catalogue_app``.
"""

from __future__ import annotations

API_PREFIX = "/api/v1"

# Family modules, each with ``routes``; mounted under /api/v1 in this order.
ROUTE_MODULES: tuple[str, ...] = (
    "blockkit.emulator.http.catalogue.enums",
    "blockkit.emulator.http.catalogue.openapi",
    "blockkit.emulator.http.catalogue.me",
    "blockkit.emulator.http.catalogue.models",
    "blockkit.emulator.http.catalogue.model_versions",
    "blockkit.emulator.http.catalogue.vault",
    "blockkit.emulator.http.catalogue.permissions",
    "blockkit.emulator.http.catalogue.images",
    "blockkit.emulator.http.catalogue.posts",
    "blockkit.emulator.http.catalogue.articles",
    "blockkit.emulator.http.catalogue.collections",
    "blockkit.emulator.http.catalogue.users",
    "blockkit.emulator.http.catalogue.creators",
    "blockkit.emulator.http.catalogue.tags",
)

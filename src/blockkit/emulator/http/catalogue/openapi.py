"""GET /api/v1/openapi.json: the contract of this API (``blockkit/emulator/openapi.json``).

The document is package data, written from the spec by ``scripts/build_openapi.py``;
tests validate every answer against it and schemathesis loads it from this route.
The bytes go out as stored, so the served document is the shipped one.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route


@lru_cache(maxsize=1)
def document_bytes() -> bytes:
    return resources.files("blockkit.emulator").joinpath("openapi.json").read_bytes()


def openapi_endpoint(request: Request) -> Response:
    return Response(document_bytes(), media_type="application/json")


routes = [Route("/openapi.json", openapi_endpoint, methods=["GET"])]

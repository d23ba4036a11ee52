"""The catalogue app's route table and its OpenAPI document name the same paths and methods.

The document (``openapi.json``) is built from the spec by ``scripts/build_openapi.py``, not from
the routes, so nothing else keeps the two in step: an undocumented route would pass every
contract test as long as its errors are JSON. This test walks the app that ``build_apps`` makes
(every Mount, with its prefix) and holds it equal to the document, both ways.

Left out of the document on purpose, each by its path prefix (and each prefix must still match a
route, so the list cannot go stale): the block routes (the platform's block API, documented in
PLATFORM.md, not in the public REST reference the document follows), the emulator's media files
and the legacy OAuth redirects (308s to ``auth_url``, no API of their own). HEAD (answered for every
GET) and OPTIONS (CORS preflights) are not listed by the document and are not compared.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

from starlette.routing import Mount, Route

from blockkit.emulator.http.server import build_apps
from blockkit.emulator.http.access import is_console_path
from blockkit.emulator.options import EmulatorOptions
from blockkit.emulator.store import Store
from blockkit.emulator.store.clock import Clock

UNDOCUMENTED = {
    "/api/v1/block-tokens": "block tokens: the host page's mint and the JWKS (PLATFORM.md section 8)",
    "/api/v1/blocks/": "the block routes and the bridge's REST twins (PLATFORM.md)",
    "/__emulator/media/": "seed media files the catalogue's URLs point at",
    "/__emulator/callbacks": "the emulator's own list of undelivered workflow callbacks (docs/local-platform.md)",
    "/__emulator/submissions/": "the moderator's approve and reject of publish requests (docs/local-platform.md)",
    "/__emulator/journal": "the emulator's own request journal (docs/local-platform.md)",
    "/api/auth/oauth": "legacy OAuth paths on base_url, redirected (308) to auth_url",
}
METHODS = {"GET", "POST", "PUT", "PATCH", "DELETE"}


def _shape(path: str) -> str:
    # Parameter names differ in case ({model_version_id} / {modelVersionId}); a converter ({x:path}) too.
    return re.sub(r"\{[^}]*\}", "{}", path)


def _walk(routes: list, prefix: str = "") -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for route in routes:
        if isinstance(route, Mount):
            found |= _walk(route.routes, prefix + route.path)
        elif isinstance(route, Route):
            found |= {(_shape(prefix + route.path), m) for m in (route.methods or set()) & METHODS}
    return found


def _document() -> set[tuple[str, str]]:
    doc = json.loads(resources.files("blockkit.emulator").joinpath("openapi.json").read_text(encoding="utf-8"))
    return {(_shape(path), method.upper()) for path, item in doc["paths"].items() for method in item
            if method.upper() in METHODS}


def test_the_catalogue_serves_exactly_what_its_document_names(tmp_path: Path) -> None:
    with Store.open(tmp_path / "data") as store:
        catalogue, _auth, _orchestration = build_apps(store, Clock(store), EmulatorOptions())
        served = _walk(catalogue.routes)
    left_out = {(p, m) for p, m in served if p.startswith(tuple(UNDOCUMENTED))}
    # The web console's pages and actions (HTML for a person, docs/console.md), not platform API.
    console = {(p, m) for p, m in served if is_console_path(p)}
    assert ("/__emulator/", "GET") in console
    left_out |= console
    for prefix in UNDOCUMENTED:
        assert any(p.startswith(prefix) for p, _ in left_out), f"no route under {prefix}: drop it from UNDOCUMENTED"
    documented = _document()
    assert len(documented) > 20
    undocumented = sorted(served - left_out - documented)
    unserved = sorted(documented - served)
    assert undocumented == [], f"routes the OpenAPI document does not name: {undocumented}"
    assert unserved == [], f"paths the OpenAPI document names that no route serves: {unserved}"


def test_the_walk_sees_a_route_the_document_lacks(tmp_path: Path) -> None:
    # The check can fail: an extra family route shows up as undocumented.
    from blockkit.emulator.http import catalogue as families

    with Store.open(tmp_path / "data") as store:
        app, _, _ = build_apps(store, Clock(store), EmulatorOptions())
        app.routes.append(Mount(families.API_PREFIX, routes=[Route("/not-in-the-spec", lambda r: None)]))
        served = _walk(app.routes)
    assert ("/api/v1/not-in-the-spec", "GET") in served - _document()

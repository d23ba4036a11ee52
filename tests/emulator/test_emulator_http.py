"""The catalogue app's plumbing: region clamp, error bodies, query models, JSON, unknown paths."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from emulator_helpers import asgi_request, get_json

from blockkit.emulator.http import catalogue
from blockkit.emulator.http import errors
from blockkit.emulator.store.clock import Clock
from blockkit.emulator.options import EmulatorOptions
from blockkit.emulator.http.server import build_apps
from blockkit.emulator.store import Store


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    from blockkit.emulator.seed import ensure_seeded

    with Store.open(tmp_path_factory.mktemp("http")) as opened:
        ensure_seeded(opened, 1, "small")
        yield opened


def apps(store: Store, monkeypatch: pytest.MonkeyPatch, **options: Any) -> Any:
    monkeypatch.setattr(catalogue, "ROUTE_MODULES", (*catalogue.ROUTE_MODULES, "region_probe"))
    return build_apps(store, Clock(store), EmulatorOptions(**options))


def test_region_header_sets_the_per_request_clamp(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    app, _, _ = apps(store, monkeypatch)
    status, _, body = asgi_request(app, "GET", "/api/v1/probe")
    assert status == 200 and body["region_restricted"] is False and body["browsing_level"] == 31
    for value in ("restricted", "Restricted", " RESTRICTED "):
        _, _, body = asgi_request(app, "GET", "/api/v1/probe", headers={"X-Emulator-Region": value})
        assert body["region_restricted"] is True and body["browsing_level"] == 3  # PG | PG13
    _, _, body = asgi_request(app, "GET", "/api/v1/probe", headers={"X-Emulator-Region": "elsewhere"})
    assert body["region_restricted"] is False


def test_sfw_only_restricts_every_request(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    app, auth, _ = apps(store, monkeypatch, sfw_only=True)
    _, _, body = asgi_request(app, "GET", "/api/v1/probe", query="browsingLevel=28")
    assert body["region_restricted"] is True and body["browsing_level"] == 0
    assert auth.state.emulator.options.sfw_only is True


def test_sfw_only_over_a_real_socket(start_emulator: Any) -> None:
    started = start_emulator("--sfw-only")
    assert get_json(f"{started.info['base_url']}/api/v1/enums")[0] == 200


def test_query_models_parse_lists_booleans_and_aliases(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    app, _, _ = apps(store, monkeypatch)
    _, _, body = asgi_request(app, "GET", "/api/v1/probe",
                              query="limit=5&ids=1,2&ids=3&nsfw=true&browsingLevel=7&unknown=ignored")
    assert body["query"] == {"limit": 5, "ids": [1, 2, 3], "nsfw": True, "browsing_level": 7}


@pytest.mark.parametrize("query, path", [("limit=0", ["limit"]), ("limit=abc", ["limit"]), ("ids=1,x", ["ids", 1]),
                                         ("nsfw=maybe", ["nsfw"]), ("browsingLevel=1.5", ["browsingLevel"])])
def test_invalid_parameters_answer_400_with_the_validation_body(store: Store, monkeypatch: pytest.MonkeyPatch,
                                                                query: str, path: list[Any]) -> None:
    app, _, _ = apps(store, monkeypatch)
    status, headers, body = asgi_request(app, "GET", "/api/v1/probe", query=query)
    assert status == 400 and headers["content-type"] == "application/json"
    assert body["error"]["name"] == "ZodError" and set(body["error"]) == {"name", "message"}
    issue = json.loads(body["error"]["message"])[0]
    assert {"code", "message", "path"} <= set(issue) and issue["path"] == path and issue["message"]


def test_error_bodies_unknown_paths_methods_and_bugs_are_json(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    app, auth, orchestration = apps(store, monkeypatch)
    assert asgi_request(app, "GET", "/api/v1/probe/missing")[::2] == (404, {"error": "No probe with that id"})
    assert asgi_request(app, "GET", "/api/v1/nothing-here")[::2] == (404, {"error": "Not found"})
    assert asgi_request(app, "GET", "/")[::2] == (404, {"error": "Not found"})
    assert asgi_request(app, "DELETE", "/api/v1/enums")[::2] == (405, {"error": "Method not allowed"})
    assert asgi_request(app, "GET", "/api/v1/probe/broken")[::2] == (500, {"error": "Internal server error"})
    assert asgi_request(auth, "POST", "/api/auth/oauth/nothing-here")[::2] == (404, {"error": "Not found"})
    # An unknown path on the orchestration origin is a ProblemDetails 404.
    status, _headers, body = asgi_request(orchestration, "POST", "/api/auth/oauth/token")
    assert status == 404 and body["status"] == 404 and body["title"] == "Not Found"


def test_error_helpers_make_the_four_spec_shapes() -> None:
    assert errors.error_body("Unauthorized") == {"error": "Unauthorized"}
    assert errors.message_body("Could not check", "db down") == {"message": "Could not check", "error": "db down"}
    assert errors.message_body("Could not check") == {"message": "Could not check"}
    # zod 4: issues is not enumerable, message is the issues as indented JSON.
    assert errors.validation_body([errors.issue("Too big", ["limit"], "too_big", maximum=100)]) == {
        "error": {"name": "ZodError",
                  "message": '[\n  {\n    "maximum": 100,\n    "code": "too_big",\n    "path": [\n      "limit"\n    ],'
                             '\n    "message": "Too big"\n  }\n]'}}
    assert errors.oauth_body("invalid_grant", "code expired") == {"error": "invalid_grant",
                                                                  "error_description": "code expired"}
    raised = errors.oauth_error(400, "invalid_request")
    assert raised.status == 400 and raised.body == {"error": "invalid_request"}
    assert raised.headers["Cache-Control"] == "no-store"
    limited = errors.too_many_requests("Too many pages requested; use cursors", retry_after=2)
    assert limited.status == 429 and limited.headers == {"Retry-After": "2"}


def test_json_response_renders_pydantic_models_omitting_unset_fields() -> None:
    from pydantic import BaseModel, ConfigDict, Field

    class Item(BaseModel):
        model_config = ConfigDict(populate_by_name=True)
        id: int
        mode: str | None = None
        model_id: int | None = Field(None, alias="modelId")

    rendered = json.loads(errors.dumps([Item(id=1), Item(id=2, mode=None), Item(id=3, model_id=4)]))
    assert rendered == [{"id": 1}, {"id": 2, "mode": None}, {"id": 3, "modelId": 4}]


def test_enums_lists_every_base_model_from_the_one_table(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    from blockkit.emulator import facts

    app, _, _ = apps(store, monkeypatch)
    status, headers, body = asgi_request(app, "GET", "/api/v1/enums")
    assert status == 200 and headers["content-type"] == "application/json"
    assert body["BaseModel"] == [b.name for b in facts.BASE_MODELS]
    assert body["ActiveBaseModel"] == [b.name for b in facts.BASE_MODELS if b.active]
    assert body["ModelType"] == list(facts.MODEL_TYPES)
    assert body["ModelFileType"] == list(facts.MODEL_FILE_TYPES)


def test_concurrent_requests_use_one_connection_per_worker_thread(live_emulator: Any) -> None:
    from concurrent.futures import ThreadPoolExecutor

    url = f"{live_emulator.urls.base_url}/api/v1/enums"
    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(lambda _: get_json(url), range(64)))
    assert {status for status, _ in results} == {200}
    assert len({json.dumps(body) for _, body in results}) == 1
    assert len(live_emulator.store._held) >= 1  # the living threads' connections (a worker's ends with it)


def test_in_process_emulator_removes_its_temporary_data(tmp_path: Path) -> None:
    from blockkit.emulator.runtime import Emulator

    with Emulator(EmulatorOptions()) as emu:
        data = emu.data_dir
        assert data is not None and data.is_dir()
        assert get_json(f"{emu.urls.base_url}/api/v1/enums")[0] == 200
    assert not data.exists()


def test_pagination_helpers(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    app, _, _ = apps(store, monkeypatch)
    status, _, body = asgi_request(app, "GET", "/api/v1/paged", query="limit=50&tag=anime&page=2&tag=style",
                                   headers={"Host": "127.0.0.1:9999"})
    assert status == 200
    assert body["media"] == "http://127.0.0.1:9999/__emulator/media/x.jpeg"
    assert body["external"] == "https://example.com/x.jpeg"
    assert body["metadata"] == {"nextPage": "http://127.0.0.1:9999/api/v1/paged?limit=50&tag=anime&tag=style&page=3",
                                "currentPage": 2}
    status, _, body = asgi_request(app, "GET", "/api/v1/paged", query="limit=100&page=11")
    assert status == 429 and "cursor" in body["error"]
    assert asgi_request(app, "GET", "/api/v1/paged", query="limit=100&page=10")[0] == 200

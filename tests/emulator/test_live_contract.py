"""The running emulator against the contract: what the skeleton serves today, checked live."""

from __future__ import annotations

import json
from typing import Any

import httpx

from contract import OPENAPI_PATH


def test_served_document_is_the_shipped_one(api: httpx.Client) -> None:
    response = api.get("/api/v1/openapi.json")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.content == OPENAPI_PATH.read_bytes()


def test_enums_conform(api: httpx.Client) -> None:
    body = api.get("/api/v1/enums").json()
    assert "LORA" in body["ModelType"] and "Standard" in body["BaseModelType"]
    assert set(body["ActiveBaseModel"]) <= set(body["BaseModel"])


def test_clock_reads_and_advances(api: httpx.Client) -> None:
    before = api.get("/__emulator/clock").json()["now"]
    after = api.post("/__emulator/clock", json={"advance": 0}).json()["now"]
    assert after >= before


JSON = {"Content-Type": "application/json"}  # a control route takes JSON only (security review E03)


def test_clock_refuses_bad_advances(api: httpx.Client) -> None:
    for body in ({"advance": -1}, {"advance": "1"}, {"nope": 1}, [1], None, {"advance": True}):
        response = api.post("/__emulator/clock", content=json.dumps(body), headers=JSON)
        assert response.status_code == 400, body
    response = api.post("/__emulator/clock", content=b"{not json", headers=JSON)
    assert response.status_code == 400


def test_unknown_api_path_is_a_json_404(api: httpx.Client) -> None:
    assert api.get("/api/v1/no-such-thing").status_code == 404


def test_method_not_allowed_is_json(api: httpx.Client) -> None:
    assert api.delete("/api/v1/enums").status_code == 405


def test_landmarks_are_published(landmarks: dict[str, Any]) -> None:
    assert landmarks, "the seed publishes no landmarks"

"""The conformance helper catches what it must (no emulator needed: a mock transport answers)."""

from __future__ import annotations

import copy
import json
from typing import Any

import httpx
import pytest

from contract import NonConformingResponse, assert_conforms, conformance_hook, contract

TS = "2024-05-06T07:08:09.123Z"
SHA = "A" * 64
FILE = {
    "id": 11,
    "name": "m.safetensors",
    "type": "Model",
    "sizeKB": 1024.5,
    "metadata": {"format": "SafeTensor", "size": "pruned", "fp": "fp16"},
    "hashes": {"SHA256": SHA, "AutoV2": "0123456789"},
    "downloadUrl": "http://127.0.0.1:1/api/download/models/21",
    "primary": True,
    "overrideName": None,
    "pickleScanResult": "Success",
    "pickleScanMessage": "No Pickle imports",
    "virusScanResult": "Success",
    "virusScanMessage": None,
    "scannedAt": TS,
}
VERSION = {
    "id": 21,
    "name": "v1",
    "baseModel": "SD 1.5",
    "baseModelType": "Standard",
    "publishedAt": TS,
    "supportsGeneration": True,
    "stats": {"downloadCount": 1, "thumbsUpCount": 2, "thumbsDownCount": 0},
    "files": [FILE],
    "images": [{"id": 5, "url": "http://x/5.jpeg", "nsfwLevel": 1, "width": 512, "height": 512, "hash": None, "type": "image"}],
    "downloadUrl": "http://127.0.0.1:1/api/download/models/21",
}
MODEL = {
    "id": 1,
    "name": "A model",
    "description": "<p>hi</p>",
    "type": "LORA",
    "nsfw": False,
    "nsfwLevel": 1,
    "availability": "Public",
    "supportsGeneration": True,
    "allowNoCredit": True,
    "allowCommercialUse": ["Image", "Sell"],
    "allowDerivatives": True,
    "allowDifferentLicense": False,
    "minor": False,
    "poi": False,
    "sfwOnly": False,
    "stats": {"downloadCount": 1, "thumbsUpCount": 1, "thumbsDownCount": 0, "commentCount": 0, "tippedAmountCount": 0},
    "creator": {"username": "someone", "image": None},
    "tags": ["anime"],
    "modelVersions": [VERSION],
}


def respond(status: int, body: Any, headers: dict[str, str] | None = None, raw: bytes | None = None) -> httpx.Client:
    def handler(request: httpx.Request) -> httpx.Response:
        content = raw if raw is not None else json.dumps(body).encode()
        return httpx.Response(status, content=content, headers={"content-type": "application/json", **(headers or {})})

    return httpx.Client(base_url="http://emulator.test", transport=httpx.MockTransport(handler),
                        event_hooks={"response": [conformance_hook]})


def test_a_conforming_model_list_passes() -> None:
    with respond(200, {"items": [MODEL], "metadata": {"nextCursor": "2", "nextPage": "http://x/api/v1/models?cursor=2"}}) as c:
        assert c.get("/api/v1/models").status_code == 200


@pytest.mark.parametrize(
    "mutate,why",
    [
        (lambda m: m.pop("name"), "'name' is a required property"),
        (lambda m: m["modelVersions"][0]["files"][0].update(primary=False), "True was expected"),
        (lambda m: m.update(nsfwLevel="1"), "is not of type 'integer'"),
        (lambda m: m.update(type="Lora"), "is not one of"),
        (lambda m: m.update(allowCommercialUse="{Image,Sell}"), "is not of type 'array'"),
        (lambda m: m.update(allowCommercialUse=["Image", "Resell"]), "is not one of"),
        (lambda m: m["modelVersions"][0]["files"][0].pop("scannedAt"), "'scannedAt' is a required property"),
        (lambda m: m["modelVersions"][0].update(publishedAt="2024-05-06 07:08:09"), "is not valid under any"),
        (lambda m: m["modelVersions"][0]["files"][0]["hashes"].update(SHA256="abc"), "does not match"),
        (lambda m: m["modelVersions"][0]["files"][0].update(pickleScanResult=None), "is not of type 'string'"),
        (lambda m: m["modelVersions"][0].pop("downloadUrl"), "'downloadUrl' is a required property"),
        (lambda m: m.update(mode="Archived"), "[not]"),  # archived yet files/downloadUrl kept
    ],
)
def test_a_departing_model_fails(mutate: Any, why: str) -> None:
    body = copy.deepcopy(MODEL)
    mutate(body)
    with respond(200, body) as c, pytest.raises(NonConformingResponse) as caught:
        c.get("/api/v1/models/1")
    assert why in str(caught.value)


def test_archived_model_with_dropped_parts_passes() -> None:
    body = copy.deepcopy(MODEL)
    body["mode"] = "Archived"
    body["modelVersions"][0]["files"] = []
    del body["modelVersions"][0]["downloadUrl"]
    with respond(200, body) as c:
        c.get("/api/v1/models/1")


def test_undocumented_status_fails() -> None:
    with respond(418, {"error": "teapot"}) as c, pytest.raises(NonConformingResponse, match="418 is not documented"):
        c.get("/api/v1/enums")


def test_wrong_error_shape_for_the_group_fails() -> None:
    # /users answers its 400 as bare validation-error JSON; {error: string} is the wrong group's shape.
    with respond(400, {"error": "bad ids"}) as c, pytest.raises(NonConformingResponse):
        c.get("/api/v1/users?ids=x")
    with respond(400, {"name": "ZodError", "message": '[{"code": "custom", "path": ["ids"], "message": "bad"}]'}) as c:
        c.get("/api/v1/users?ids=x")


def test_missing_required_header_fails() -> None:
    with respond(429, {"error": "slow down"}) as c, pytest.raises(NonConformingResponse, match="Retry-After is missing"):
        c.get("/api/v1/articles")
    with respond(429, {"error": "slow down"}, {"Retry-After": "3", "Cache-Control": "no-store"}) as c:
        c.get("/api/v1/articles")


def test_wrong_cache_header_fails() -> None:
    with respond(200, {"items": [], "metadata": {}}, {"Cache-Control": "no-cache"}) as c, pytest.raises(
        NonConformingResponse, match="Cache-Control"
    ):
        c.get("/api/v1/collections")


def test_non_json_body_fails() -> None:
    with respond(500, None, raw=b"Internal Server Error") as c, pytest.raises(NonConformingResponse, match="not JSON"):
        c.get("/api/v1/users")


def test_undocumented_path_under_the_api_must_still_be_json_error() -> None:
    with respond(404, {"error": "Not found"}) as c:
        c.get("/api/v1/nothing-here")
    with respond(404, None, raw=b"<h1>Not Found</h1>") as c, pytest.raises(NonConformingResponse, match="not JSON"):
        c.get("/api/v1/nothing-here")
    with respond(200, {"ok": True}) as c, pytest.raises(NonConformingResponse, match="no such operation"):
        c.get("/api/v1/nothing-here")


def test_literal_paths_win_over_templates() -> None:
    c = contract()
    assert c.find("POST", "/api/v1/model-versions/by-hash")[0].path == "/api/v1/model-versions/by-hash"
    assert c.find("GET", "/api/v1/model-versions/by-hash/ABCD1234")[0].path == "/api/v1/model-versions/by-hash/{hash}"
    assert c.find("GET", "/api/v1/model-versions/mini/3")[0].path == "/api/v1/model-versions/mini/{id}"
    assert c.find("GET", "/api/v1/model-versions/3")[0].path == "/api/v1/model-versions/{id}"


def test_assert_conforms_returns_the_response() -> None:
    with httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(200, json={"now": TS}))) as c:
        response = c.get("http://emulator.test/__emulator/clock")
    assert assert_conforms(response) is response

"""Every documented operation answers a valid request with success, and every parameter
accepts each valid value the document allows; every answer conforms (the ``api`` hook).

Ids, hashes and cursors come from the emulator itself (the first items of its lists),
never hard-coded.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from contract import load_document, resolve

DOC = load_document()
OPS = [(m, p, op) for p, item in DOC["paths"].items() for m, op in item.items() if p.startswith("/api/v1/")]


@pytest.fixture(scope="module")
def known(api: httpx.Client) -> dict[str, Any]:
    """Ids, a hash and cursors taken from the emulator's own lists."""
    models = api.get("/api/v1/models", params={"limit": 2}).json()
    model = models["items"][0]
    version = model["modelVersions"][0]
    sha = next(f["hashes"]["SHA256"] for m in models["items"] for v in m["modelVersions"] for f in v["files"]
               if "SHA256" in f["hashes"])
    images = api.get("/api/v1/images", params={"limit": 2}).json()
    articles = api.get("/api/v1/articles", params={"limit": 1}).json()
    collections = api.get("/api/v1/collections", params={"limit": 1}).json()
    users = api.get("/api/v1/users").json()["items"]
    return {
        "model": model["id"],
        "version": version["id"],
        "sha256": sha,
        "models_cursor": models["metadata"]["nextCursor"],
        "image": images["items"][0]["id"],
        "post": images["items"][0]["postId"],
        "images_cursor": images["metadata"]["nextCursor"],
        "article": articles["items"][0]["id"],
        "articles_cursor": articles["metadata"].get("nextCursor"),
        "collection": collections["items"][0]["id"],
        "collections_cursor": collections["metadata"].get("nextCursor"),
        "user": users[0]["id"],
        "username": model["creator"]["username"],
        "tag": model["tags"][0] if model["tags"] else "a",
        "base_model": version["baseModel"],
        "version_file": version["files"][0]["id"],
    }


PATH_VALUES = {
    "/api/v1/models/{id}": "model",
    "/api/v1/model-versions/{id}": "version",
    "/api/v1/model-versions/by-hash/{hash}": "sha256",
    "/api/v1/model-versions/mini/{id}": "version",
    "/api/v1/posts/{id}": "post",
    "/api/v1/articles/{id}": "article",
    "/api/v1/collections/{id}": "collection",
}
# Query parameters whose valid value must come from the data.
QUERY_VALUES = {
    ("/api/v1/models", "ids"): "model",
    ("/api/v1/models", "cursor"): "models_cursor",
    ("/api/v1/models", "tag"): "tag",
    ("/api/v1/models", "username"): "username",
    ("/api/v1/models", "baseModels"): "base_model",
    ("/api/v1/images", "cursor"): "images_cursor",
    ("/api/v1/images", "postId"): "post",
    ("/api/v1/images", "modelId"): "model",
    ("/api/v1/images", "modelVersionId"): "version",
    ("/api/v1/images", "imageId"): "image",
    ("/api/v1/images", "userId"): "user",
    ("/api/v1/articles", "cursor"): "articles_cursor",
    ("/api/v1/collections", "cursor"): "collections_cursor",
    ("/api/v1/vault/check-vault", "modelVersionIds"): "version",
    ("/api/v1/vault/toggle-version", "modelVersionId"): "version",
    ("/api/v1/permissions/check", "entityIds"): "version",
    ("/api/v1/permissions/check", "userId"): "user",
    ("/api/v1/users", "ids"): "user",
    ("/api/v1/model-versions/mini/{id}", "modelFileId"): "version_file",
}


def _known(request: pytest.FixtureRequest, path: str, op: dict[str, Any], name: str = "") -> dict[str, Any]:
    # Only what needs data from the emulator asks for it (so /enums is judged on its own).
    needs = (
        path in PATH_VALUES
        or "requestBody" in op
        or (path, name) in QUERY_VALUES
        or any(p.get("required") and p["in"] == "query" for p in op.get("parameters", []))
    )
    return dict(request.getfixturevalue("known")) if needs else {}


def url_for(path: str, known: dict[str, Any]) -> str:
    if path in PATH_VALUES:
        placeholder = path[path.index("{"): path.index("}") + 1]
        return path.replace(placeholder, str(known[PATH_VALUES[path]]))
    return path


def required_params(path: str, op: dict[str, Any], known: dict[str, Any], skip: str = "") -> dict[str, Any]:
    return {
        p["name"]: known[QUERY_VALUES[(path, p["name"])]]
        for p in op.get("parameters", [])
        if p["in"] == "query" and p.get("required") and p["name"] != skip
    }


def headers_for(op: dict[str, Any], request: pytest.FixtureRequest, name: str = "") -> dict[str, str]:
    if op["x-blockkit-auth"] == "Authenticated" or name in ("favorites", "hidden"):
        return {"Authorization": f"Bearer {request.getfixturevalue('member_token')}"}
    return {}


def call(api: httpx.Client, method: str, url: str, params: dict[str, Any], headers: dict[str, str],
         op: dict[str, Any], known: dict[str, Any]) -> httpx.Response:
    body = None
    if "requestBody" in op:
        body = [known["sha256"]] if "by-hash" in url else {"advance": 0}
    return api.request(method, url, params=params, headers=headers, json=body)


@pytest.mark.parametrize("method,path,op", OPS, ids=[f"{m.upper()} {p}" for m, p, _ in OPS])
def test_operation_answers(method: str, path: str, op: dict[str, Any], api: httpx.Client,
                           request: pytest.FixtureRequest) -> None:
    known = _known(request, path, op)
    if path == "/api/v1/vault/toggle-version":
        # Toggle twice: add then remove (or the reverse), leaving the vault as it was.
        params = required_params(path, op, known)
        first = call(api, method, path, params, headers_for(op, request), op, known)
        second = call(api, method, path, params, headers_for(op, request), op, known)
        assert first.status_code == second.status_code == 200
        assert ("vaultId" in first.json()) != ("vaultId" in second.json())
        return
    response = call(api, method, url_for(path, known), required_params(path, op, known), headers_for(op, request), op, known)
    assert response.status_code == 200, response.text[:300]


def valid_values(path: str, param: dict[str, Any], known: dict[str, Any]) -> list[str]:
    if (path, param["name"]) in QUERY_VALUES:
        value = known[QUERY_VALUES[(path, param["name"])]]
        assert value is not None, f"the emulator gave no value for {path} {param['name']} (a cursor on a short list?)"
        return [str(value)]
    schema = resolve(param["schema"])
    kind = schema.get("type")
    if kind == "boolean":
        return ["true", "false", "TRUE", "1", "0"]
    if kind == "string" and "enum" in schema:
        return list(schema["enum"])
    if kind == "integer":
        low, high = schema.get("minimum", 1), schema.get("maximum")
        return sorted({str(low), str(min(low + 1, high or low + 1)), str(high) if high and high <= 200 else str(low)})
    if kind == "string":
        return ["a", ""]  # empty counts as absent (D-empty)
    if kind == "array":
        items = resolve(schema["items"])
        if "enum" in items:
            return [",".join(items["enum"][:3])]
        return ["1,2"] if items.get("type") == "integer" else ["a,b"]
    if "anyOf" in schema and any(s.get("format") for s in schema["anyOf"]):
        return ["2024-01-01", "2024-01-01T00:00:00.000Z"]
    if "anyOf" in schema:
        return ["None", "Soft", "Mature", "X", "true", "false"]
    raise AssertionError(f"no valid values for {param['name']}")


# toggle-version's one parameter is exercised by test_operation_answers (toggling twice).
PARAMS = [
    (m, p, op, q) for m, p, op in OPS for q in op.get("parameters", [])
    if q["in"] == "query" and p != "/api/v1/vault/toggle-version"
]


@pytest.mark.parametrize(
    "method,path,op,param", PARAMS, ids=[f"{m.upper()} {p} ?{q['name']}" for m, p, op, q in PARAMS]
)
def test_valid_parameter_values(method: str, path: str, op: dict[str, Any], param: dict[str, Any], api: httpx.Client,
                                request: pytest.FixtureRequest) -> None:
    known = _known(request, path, op, param["name"])
    for value in valid_values(path, param, known):
        params = {**required_params(path, op, known, skip=param["name"]), param["name"]: value}
        response = call(api, method, url_for(path, known), params, headers_for(op, request, param["name"]), op, known)
        assert response.status_code == 200, f"{param['name']}={value!r}: {response.status_code} {response.text[:300]}"


@pytest.mark.parametrize("landmark,mode", [("archived_model", "Archived"), ("taken_down_model", "TakenDown")])
def test_moderated_models_drop_their_parts(landmark: str, mode: str, api: httpx.Client,
                                            landmarks: dict[str, Any]) -> None:
    # The hook holds the drops (files, downloadUrl; images too when taken down) to the document.
    model = api.get(f"/api/v1/models/{landmarks[landmark]['id']}")
    assert model.status_code == 200 and model.json()["mode"] == mode
    for version_id in landmarks[landmark]["version_ids"]:
        version = api.get(f"/api/v1/model-versions/{version_id}")
        assert version.status_code in (200, 404)
        if version.status_code == 200:
            assert version.json()["model"]["mode"] == mode


def test_every_hash_kind_finds_the_version(api: httpx.Client, landmarks: dict[str, Any]) -> None:
    known = landmarks["known_hashes"]
    for kind in ("AutoV1", "AutoV2", "AutoV3", "SHA256", "CRC32", "BLAKE3"):
        for value in (known[kind], known[kind].lower()):
            response = api.get(f"/api/v1/model-versions/by-hash/{value}")
            assert response.status_code == 200, (kind, value)
            assert response.json()["id"] == known["version_id"]

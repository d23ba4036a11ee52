"""The OpenAPI document itself: valid, current, shipped, and faithful to the spec's rows."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate as validate_openapi

import spec_rows
from contract import OPENAPI_PATH, REPO, contract, load_document

DOC = load_document()
ROWS = spec_rows.load()
BUILDER = REPO / "scripts" / "build_openapi.py"


def _walk(node: Any, path: str = "") -> list[tuple[str, Any]]:
    out = [(path, node)]
    if isinstance(node, dict):
        for k, v in node.items():
            out.extend(_walk(v, f"{path}/{k}"))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.extend(_walk(v, f"{path}/{i}"))
    return out


def test_document_is_valid_openapi_3_1() -> None:
    assert DOC["openapi"].startswith("3.1")
    validate_openapi(DOC)  # raises with the first problem


def test_document_is_current_with_its_builder() -> None:
    done = subprocess.run([sys.executable, str(BUILDER), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_every_schema_is_valid_draft_2020_12() -> None:
    schemas = [(p, n) for p, n in _walk(DOC) if p.endswith("/schema") or re.fullmatch(r"/components/schemas/\w+", p)]
    assert len(schemas) > 100
    for where, schema in schemas:
        Draft202012Validator.check_schema(schema)  # raises SchemaError naming the keyword


def test_every_ref_resolves() -> None:
    refs = [n["$ref"] for _, n in _walk(DOC) if isinstance(n, dict) and "$ref" in n]
    names = set(DOC["components"]["schemas"])
    missing = sorted({r for r in refs if r.rsplit("/", 1)[-1] not in names})
    assert refs and not missing


def test_decisions_are_listed_and_each_is_used() -> None:
    listed = {d["id"] for d in DOC["info"]["x-blockkit-decisions"]}
    used: set[str] = set()
    for _, node in _walk(DOC):
        if isinstance(node, dict) and "x-blockkit-decision" in node:
            ids = re.findall(r"\[(D-[\w-]+)\]", node["x-blockkit-decision"])
            assert ids, node["x-blockkit-decision"]
            used.update(ids)
    assert used <= listed, used - listed
    assert listed <= used, f"decisions recorded but never attached: {sorted(listed - used)}"


def test_document_ships_in_the_wheel(tmp_path: Path) -> None:
    from hatchling.builders.wheel import WheelBuilder

    [wheel] = list(WheelBuilder(str(REPO)).build(directory=str(tmp_path), versions=["standard"]))
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read("blockkit/emulator/openapi.json") == OPENAPI_PATH.read_bytes()


# --- faithful to the spec --------------------------------------------------------------------


def _operation(endpoint: spec_rows.Endpoint) -> dict[str, Any]:
    item = DOC["paths"].get(endpoint.api_path)
    assert item is not None, f"{endpoint.key} is not in the document"
    op = item.get(endpoint.method.lower())
    assert op is not None, f"{endpoint.key}: the document has no {endpoint.method}"
    return op


@pytest.mark.parametrize("endpoint", ROWS.endpoints, ids=lambda e: e.key)
def test_spec_endpoint_is_documented_with_its_auth(endpoint: spec_rows.Endpoint) -> None:
    op = _operation(endpoint)
    assert op["x-blockkit-auth"] == endpoint.auth
    security = op["security"]
    if endpoint.auth == "Authenticated":
        assert security == [{"bearer": []}]
    elif endpoint.auth == "Mixed":
        assert {} in security and {"bearer": []} in security
    else:  # Public: no token needed (an optional one where it widens what is seen)
        assert security == [] or {} in security
    # Every operation states a success answer.
    assert any(code.startswith("2") for code in op["responses"])


def test_document_has_no_catalogue_endpoint_the_spec_lacks() -> None:
    ours = {
        (m.upper(), p)
        for p, item in DOC["paths"].items()
        for m in item
        if p.startswith("/api/v1/") and p != "/api/v1/openapi.json"
    }
    theirs = {(e.method, e.api_path) for e in ROWS.endpoints}
    assert ours == theirs


def _spec_values(text: str) -> list[str]:
    return [v.strip() for v in text.split(",") if v.strip()]


def _check_param_against_spec(param: spec_rows.Param, doc_param: dict[str, Any]) -> None:
    schema = doc_param["schema"]
    kind = param.type
    if param.where == "path" or "required" in kind:
        assert doc_param.get("required") is True
    # Ranges written "integer a-b" and lower bounds written ">= n".
    m = re.search(r"integer (\d+)-(\d+)", kind)
    if m:
        target = schema["items"] if schema.get("type") == "array" else schema
        assert (target["minimum"], target["maximum"]) == (int(m.group(1)), int(m.group(2)))
    m = re.search(r">= (\d+)", kind)
    if m:
        assert schema["minimum"] == int(m.group(1))
    if kind.startswith("integer"):
        assert schema["type"] == "integer"
    if "comma-separated integers" in kind or kind == "comma-separated integers":
        assert schema["type"] == "array" and schema["items"]["type"] == "integer"
        assert doc_param.get("explode") is False
    if kind == "boolean":
        assert schema["type"] == "boolean"
    m = re.search(r"up to (\d+) chars", kind)
    if m:
        assert schema["maxLength"] == int(m.group(1))
    # A closed list written in the Type column: the document's enum is that list.
    words = _spec_values(kind.split(", or")[0])
    if len(words) > 1 and all(re.fullmatch(r"[A-Z][\w]*( [A-Z][\w]*)*|image|video|audio", w) for w in words):
        enum = schema.get("enum") or next(s["enum"] for s in schema["anyOf"] if "enum" in s)
        assert enum == words
    # Sort enums given in the Notes column (vault) or partly named (models).
    if kind == "enum":
        named = re.findall(r"(?:^|, |includes )([A-Z][a-z]+(?: [A-Z][a-z]+)*)", param.notes)
        assert named and set(named) <= set(schema["enum"]), (named, schema["enum"])
    # Defaults.
    default = param.default
    if default and default != "anonymous":
        expected: Any = {"true": True, "false": False}.get(default, default)
        if isinstance(expected, str) and expected.isdigit():
            expected = int(expected)
        assert schema.get("default") == expected


PARAMS = [(e, p) for e in ROWS.endpoints for p in e.params]


@pytest.mark.parametrize("endpoint,param", PARAMS, ids=[ROWS.param_key(e, p) for e, p in PARAMS])
def test_spec_parameter_is_documented(endpoint: spec_rows.Endpoint, param: spec_rows.Param) -> None:
    op = _operation(endpoint)
    found = [p for p in op["parameters"] if p["name"] == param.name]
    assert len(found) == 1, f"{param.name} missing from {endpoint.key}"
    assert found[0]["in"] == param.where
    _check_param_against_spec(param, found[0])


# Parameters the platform reads where the spec's table is silent (a table that lists some
# parameters does not forbid the others): (endpoint key, name) -> the platform's source.
PLATFORM_ONLY_PARAMS: dict[tuple[str, str], str] = {
    ("GET /images", "withTags"): "src/pages/api/v1/images/index.ts (withTags adds tags [{id, name}])",
    ("GET /images", "flatMeta"): "src/pages/api/v1/images/index.ts; image-search.service.ts:248",
    ("GET /images", "requiringMeta"): "src/pages/api/v1/images/index.ts",
    ("GET /model-versions/mini/{id}", "modelFileId"): "src/pages/api/v1/model-versions/mini/[id].ts:44,196",
    ("GET /users", "limit"): "src/pages/api/v1/users/index.ts (getAllQuerySchema: limit 1-200, then unused)",
}


def test_no_parameter_the_spec_lacks() -> None:
    for endpoint in ROWS.endpoints:
        ours = {p["name"] for p in _operation(endpoint)["parameters"]}
        extra = {name for (key, name) in PLATFORM_ONLY_PARAMS if key == endpoint.key}
        assert ours == {p.name for p in endpoint.params} | extra, endpoint.key


# Error rows -> (operation, status) pairs that document them. Rows the emulator cannot
# be made to produce on demand (rate limits, overload, internal failures) are still held
# to their documented body shape here.
ERROR_ROW_OPERATIONS: dict[str, list[tuple[str, str, str]]] = {
    "any list endpoint|400": [
        ("get", f"/api/v1/{p}", "400") for p in ("models", "images", "articles", "collections", "vault/all", "users", "creators", "tags")
    ],
    "models, images|429": [("get", "/api/v1/models", "429"), ("get", "/api/v1/images", "429")],
    "models|400": [("get", "/api/v1/models", "400")],
    "models/{id}, articles/{id}, collections/{id}|404": [
        ("get", f"/api/v1/{p}/{{id}}", "404") for p in ("models", "articles", "collections")
    ],
    "model-versions/{id}, by-hash/{hash}, mini/{id}|404": [
        ("get", "/api/v1/model-versions/{id}", "404"),
        ("get", "/api/v1/model-versions/by-hash/{hash}", "404"),
        ("get", "/api/v1/model-versions/mini/{id}", "404"),
    ],
    "model-versions/by-hash|400": [("post", "/api/v1/model-versions/by-hash", "400")],
    "posts/{id}|400": [("get", "/api/v1/posts/{id}", "400")],
    "posts/{id}|404": [("get", "/api/v1/posts/{id}", "404")],
    "posts, articles, collections|429": [
        ("get", p, "429") for p in ("/api/v1/posts/{id}", "/api/v1/articles", "/api/v1/articles/{id}", "/api/v1/collections", "/api/v1/collections/{id}")
    ],
    "posts|503": [("get", "/api/v1/posts/{id}", "503")],
    "collections|400": [("get", "/api/v1/collections", "400")],
    "images (feed: cursor)|503": [("get", "/api/v1/images", "503")],
    "images (feed: cursor)|400": [("get", "/api/v1/images", "400")],
    "me|401": [("get", "/api/v1/me", "401")],
    "users|400": [("get", "/api/v1/users", "400")],
    "users, permissions|500": [("get", "/api/v1/users", "500"), ("get", "/api/v1/permissions/check", "500")],
    "permissions|400": [("get", "/api/v1/permissions/check", "400")],
    "vault/toggle-version|401": [("post", "/api/v1/vault/toggle-version", "401")],
    "vault/toggle-version|400": [("post", "/api/v1/vault/toggle-version", "400")],
    "vault/toggle-version|500": [("post", "/api/v1/vault/toggle-version", "500")],
}

# The body shape each spec row names, where it names one.
_ROW_SHAPES = {
    "me|401": {"error": "Unauthorized"},
    "posts/{id}|404": {"error": "a message"},
    "users, permissions|500": {"message": "text", "error": "detail"},
    "permissions|400": {"error": "entityIds malformed"},
    "vault/toggle-version|500": {"message": "text", "error": {"message": "Storage quota exceeded"}},
}


@pytest.mark.parametrize("row", ROWS.errors, ids=lambda r: r.key)
def test_error_row_documented(row: spec_rows.ErrorRow) -> None:
    key = f"{row.group}|{row.status}"
    assert key in ERROR_ROW_OPERATIONS, f"no operation mapped for {row.key}"
    c = contract()
    for method, path, status in ERROR_ROW_OPERATIONS[key]:
        response = DOC["paths"][path][method]["responses"].get(status)
        assert response is not None, f"{method.upper()} {path} does not document {status} ({row.key})"
        assert "application/json" in response["content"]
        if key in _ROW_SHAPES:
            body = json.dumps(_ROW_SHAPES[key]).encode()
            assert c.problems(method, path.replace("{id}", "1").replace("{hash}", "ABCDEF01"), int(status),
                              {"content-type": "application/json", "retry-after": "1", "cache-control": "no-store"},
                              body) == []
        if "Retry-After" in row.condition:
            assert response["headers"]["Retry-After"]["required"] is True
        if "Retry-After: 2" in row.condition:
            assert response["headers"]["Retry-After"]["schema"] == {"type": "string", "const": "2"}


def test_cache_headers_documented() -> None:
    def header(path: str) -> dict[str, Any]:
        return DOC["paths"][path]["get"]["responses"]["200"]["headers"]["Cache-Control"]["schema"]

    assert header("/api/v1/posts/{id}")["enum"] == ["public, s-maxage=300, stale-while-revalidate=150", "no-store"]
    for path in ("/api/v1/articles", "/api/v1/articles/{id}", "/api/v1/collections", "/api/v1/collections/{id}"):
        assert header(path) == {"type": "string", "const": "public, s-maxage=300"}

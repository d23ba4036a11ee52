"""Response conformance against the emulator's OpenAPI document.

``assert_conforms(response)`` finds the documented operation for the response's
request (method and path), then checks:

- the status is documented for that operation;
- a documented JSON body is JSON (``application/json``) and validates against the
  response schema (Draft 2020-12, the document's own ``$ref``s);
- every documented ``required`` header is present and its value matches its schema.

``conformance_hook`` is the same check as an httpx response event hook, so a client
built with ``event_hooks={"response": [conformance_hook]}`` checks every answer it
gets. A request the document does not describe (a path outside it, or a method the
path does not define) must still be a JSON ``{error}`` when it fails under the
emulator's own prefixes, and is otherwise left alone.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import urlsplit

import httpx
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

REPO = Path(__file__).resolve().parents[2]
OPENAPI_PATH = REPO / "src" / "blockkit" / "emulator" / "openapi.json"
DOC_URI = "urn:blockkit:emulator:openapi"
# Prefixes the emulator owns on the catalogue origin: anything failing under them is JSON.
OWNED_PREFIXES = ("/api/v1/", "/__emulator/")


def load_document() -> dict[str, Any]:
    return json.loads(OPENAPI_PATH.read_text(encoding="utf-8"))


def resolve(schema: dict[str, Any]) -> dict[str, Any]:
    """Follow a component ``$ref`` to the schema it names."""
    schemas = contract().document["components"]["schemas"]
    while "$ref" in schema:
        schema = schemas[schema["$ref"].rsplit("/", 1)[-1]]
    return schema


@dataclass(frozen=True)
class Operation:
    path: str  # the document's path template
    method: str  # lower case
    spec: dict[str, Any]

    @property
    def label(self) -> str:
        return f"{self.method.upper()} {self.path}"


def _pointer(*parts: str) -> str:
    return "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts)


class Contract:
    """The document, its path matcher and one validator per response schema."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        resource = Resource.from_contents(document, default_specification=DRAFT202012)
        self._registry: Registry = Registry().with_resource(DOC_URI, resource)
        self._validators: dict[str, Draft202012Validator] = {}
        # Literal paths win over templated ones (as the server routes them): most literal
        # segments first, then the longest.
        self._paths: list[tuple[re.Pattern[str], str]] = []
        for template in sorted(document["paths"], key=self._specificity):
            regex = "^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)) + "$"
            self._paths.append((re.compile(regex), template))

    @staticmethod
    def _specificity(template: str) -> tuple[int, int]:
        segments = template.strip("/").split("/")
        literal = sum(1 for s in segments if not s.startswith("{"))
        return (-literal, -len(segments))

    def operations(self) -> list[Operation]:
        methods = ("get", "post", "put", "patch", "delete")
        return [
            Operation(path, method, spec)
            for path, item in self.document["paths"].items()
            for method, spec in item.items()
            if method in methods
        ]

    def find(self, method: str, path: str) -> tuple[Operation | None, bool]:
        """The operation for ``method path``; the flag says whether the path is documented at all."""
        method = method.lower()
        matched = False
        for regex, template in self._paths:
            if regex.match(path):
                matched = True
                spec = self.document["paths"][template].get(method)
                if spec is not None:
                    return Operation(template, method, spec), True
        return None, matched

    def validator(self, pointer: str) -> Draft202012Validator:
        found = self._validators.get(pointer)
        if found is None:
            found = Draft202012Validator({"$ref": f"{DOC_URI}#/{pointer}"}, registry=self._registry)
            self._validators[pointer] = found
        return found

    def problems(
        self,
        method: str,
        path: str,
        status: int,
        headers: Mapping[str, str],
        body: bytes,
    ) -> list[str]:
        """Every way this response departs from the document (empty when it conforms)."""
        op, path_known = self.find(method, path)
        if op is None:
            return self._undocumented(method, path, status, headers, body, path_known)
        responses = op.spec["responses"]
        key = str(status)
        if key not in responses:
            key = f"{str(status)[0]}XX" if f"{str(status)[0]}XX" in responses else "default"
        if key not in responses:
            return [f"{op.label}: status {status} is not documented (documented: {', '.join(responses)})"]
        found: list[str] = []
        documented = responses[key]
        # Header names are case-insensitive (RFC 9110): callers may pass a plain dict of any case.
        by_name = {k.lower(): v for k, v in headers.items()}
        for name, spec in documented.get("headers", {}).items():
            value = by_name.get(name.lower())
            if value is None:
                if spec.get("required"):
                    found.append(f"{op.label} {status}: header {name} is missing")
                continue
            pointer = _pointer("paths", op.path, op.method, "responses", key, "headers", name, "schema")
            for error in self.validator(pointer).iter_errors(value):
                found.append(f"{op.label} {status}: header {name}={value!r}: {error.message}")
        content = documented.get("content")
        if not content:
            return found
        ctype = headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype not in content:
            found.append(f"{op.label} {status}: content-type {ctype!r}, documented {sorted(content)}")
            return found
        try:
            data = json.loads(body)
        except ValueError as exc:
            found.append(f"{op.label} {status}: body is not JSON ({exc}): {body[:200]!r}")
            return found
        pointer = _pointer("paths", op.path, op.method, "responses", key, "content", ctype, "schema")
        for error in sorted(self.validator(pointer).iter_errors(data), key=lambda e: list(e.absolute_path)):
            where = "/" + "/".join(str(p) for p in error.absolute_path)
            found.append(f"{op.label} {status}: body at {where}: [{error.validator}] {error.message[:300]}")
            if len(found) > 20:
                found.append("... more")
                break
        return found

    def _undocumented(
        self, method: str, path: str, status: int, headers: Mapping[str, str], body: bytes, path_known: bool
    ) -> list[str]:
        if not path.startswith(OWNED_PREFIXES):
            return []
        if status < 400:
            return [f"{method.upper()} {path}: answered {status} but the document has no such operation"]
        what = "method" if path_known else "path"
        try:
            data = json.loads(body)
        except ValueError:
            return [f"{method.upper()} {path} (undocumented {what}): {status} body is not JSON: {body[:200]!r}"]
        if not (isinstance(data, dict) and isinstance(data.get("error"), str)):
            return [f"{method.upper()} {path} (undocumented {what}): {status} body is not {{error}}: {data!r}"[:400]]
        return []


@lru_cache(maxsize=1)
def contract() -> Contract:
    return Contract(load_document())


def _request_path(response: httpx.Response) -> str:
    # The raw path: httpx keeps percent-escapes as sent, and routing happens on the decoded path,
    # which for the documented paths is plain ASCII.
    return urlsplit(str(response.request.url)).path


def response_problems(response: httpx.Response) -> list[str]:
    response.read()
    return contract().problems(
        response.request.method,
        _request_path(response),
        response.status_code,
        response.headers,
        response.content,
    )


class NonConformingResponse(AssertionError):
    pass


def assert_conforms(response: httpx.Response) -> httpx.Response:
    """Raise when ``response`` departs from the OpenAPI document; return it otherwise."""
    found = response_problems(response)
    if found:
        raise NonConformingResponse(
            f"{response.request.method} {response.request.url} -> {response.status_code} does not conform:\n  "
            + "\n  ".join(found)
        )
    return response


def conformance_hook(response: httpx.Response) -> None:
    """httpx response event hook: every response a client receives must conform."""
    assert_conforms(response)


async def async_conformance_hook(response: httpx.Response) -> None:
    await response.aread()
    assert_conforms(response)

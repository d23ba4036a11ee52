"""The emulator's OpenAPI document accepts what the real platform answered.

Each file under ``tests/fixtures/platform/`` is a body the platform sent, as someone
recorded it in a public repository (the README there names every source, and the
captures examined and left out). Every body must validate against the document's
component it names: a document that closes its objects again, requires a field the
platform leaves out, or narrows a type the platform widened (``allowCommercialUse`` as
an array, null stats, a version without ``supportsGeneration``) fails here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from contract import DOC_URI, load_document

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "platform"
RECORDED = sorted(FIXTURES.glob("*.json"))


def validator_for(component: str) -> Draft202012Validator:
    document = load_document()
    registry: Registry = Registry().with_resource(DOC_URI, Resource.from_contents(document, DRAFT202012))
    return Draft202012Validator({"$ref": f"{DOC_URI}#/components/schemas/{component}"}, registry=registry)


def test_there_are_recordings() -> None:
    assert len(RECORDED) >= 3


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.name)
def test_recorded_body_validates(path: Path) -> None:
    recording: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    assert {"repo", "commit", "path", "request"} <= set(recording["source"]), "a recording names its source"
    errors = sorted(validator_for(recording["schema"]).iter_errors(recording["body"]), key=lambda e: list(e.path))
    found = [f"{'/'.join(map(str, e.path))}: {e.message}" for e in errors]
    # A recording its recorder shortened names the errors the cut causes; nothing else may fail.
    assert found == recording.get("recorder_cuts", []), "\n".join(found[:10])


def closed_document() -> dict[str, Any]:
    """The document with every object closed (no property it does not name)."""
    document = load_document()

    def close(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "object" and "properties" in node:
                node["additionalProperties"] = False
            for value in node.values():
                close(value)
        elif isinstance(node, list):
            for value in node:
                close(value)

    close(document["components"]["schemas"])
    return document


def test_the_document_names_every_recorded_key() -> None:
    # Issue 33: the document names every key the recorded bodies carry (the scan fields, overrideName,
    # covered/status/createdAt on /models/{id}), so they validate with its objects closed as well.
    registry: Registry = Registry().with_resource(DOC_URI, Resource.from_contents(closed_document(), DRAFT202012))
    for path in RECORDED:
        recording = json.loads(path.read_text(encoding="utf-8"))
        validator = Draft202012Validator({"$ref": f"{DOC_URI}#/components/schemas/{recording['schema']}"},
                                         registry=registry)
        errors = sorted(validator.iter_errors(recording["body"]), key=lambda e: list(e.path))
        found = [f"{'/'.join(map(str, e.path))}: {e.message}" for e in errors]
        assert found == recording.get("recorder_cuts", []), path.name


def test_the_check_can_fail() -> None:
    # A recorded body with the spec's brace string for allowCommercialUse, or without a key the
    # platform always sends, does not validate.
    for path in RECORDED:
        recording = json.loads(path.read_text(encoding="utf-8"))
        if recording["schema"] != "Model":
            continue
        validator = validator_for("Model")
        retyped = dict(recording["body"], allowCommercialUse="{Image,Sell}")
        assert list(validator.iter_errors(retyped)), path.name
        body = json.loads(json.dumps(recording["body"]))
        body["modelVersions"][0]["files"][0].pop("scannedAt")
        assert list(validator.iter_errors(body)), path.name

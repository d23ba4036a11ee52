"""Every output format carries the same code, message and position for every finding.

Each format's output is read back the way its consumer reads it, then compared
with the Report it was rendered from.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Callable, Optional
from urllib.parse import unquote

import pytest

from blockkit.engine import ALL_LAYERS, check
from blockkit.render import FORMATS, render
from blockkit.report import Report
from blockkit.source import read_text

# Findings from every layer, with ',', ':' and '%' in messages and in the path.
TEXT = """{
  "blockId": "demo-block",
  "version": "1.0",
  "name": "Demo",
  "contentRating": "g",
  "trustTier": "verified",
  "a:b,c%d": 1,
  "scopes": ["user:read:self", "user:read:self", "ai:write:budgeted"],
  "iframe": {"minHeight": 400, "maxHeight": 100, "resizable": false, "sandbox": "allow-scripts allow-popups"},
  "version": "1.0.1"
}
"""
PATH = "dir, with:odd%chars/block.manifest.json"

# (code, message, line, column, end_line or None, end_column or None)
Row = tuple[str, str, int, int, Optional[int], Optional[int]]

_LOCATED = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>BK\d{3}) (?:\[(?:warning|info)\] )?"
                      r"(?P<message>.*)$")


def _from_located_lines(lines: list[str]) -> list[Row]:
    rows = []
    for line in lines:
        match = _LOCATED.match(line)
        if match and match["path"] == PATH:
            rows.append((match["code"], match["message"], int(match["line"]), int(match["col"]), None, None))
    return rows


def read_text_format(out: str) -> list[Row]:
    return _from_located_lines(out.splitlines())


def read_json(out: str) -> list[Row]:
    (file,) = json.loads(out)["files"]
    assert file["path"] == PATH
    return [(d["code"], d["message"], d["line"], d["column"], d["end_line"], d["end_column"])
            for d in file["diagnostics"]]


def _unescape(value: str) -> str:
    for escaped, raw in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        value = value.replace(escaped, raw)
    return value


def read_github(out: str) -> list[Row]:
    rows = []
    for line in out.splitlines():
        match = re.match(r"^::(error|warning|notice) (?P<props>[^:]*)::(?P<data>.*)$", line)
        assert match, line
        props = dict(pair.split("=", 1) for pair in match["props"].split(","))
        props = {k: _unescape(v) for k, v in props.items()}
        assert props["file"] == PATH
        message = _unescape(match["data"]).split("\nhint: ")[0]
        rows.append((props["title"], message, int(props["line"]), int(props["col"]), int(props["endLine"]),
                     int(props["endColumn"])))
    return rows


def read_sarif(out: str) -> list[Row]:
    rows = []
    for result in json.loads(out)["runs"][0]["results"]:
        location = result["locations"][0]["physicalLocation"]
        # A URI reference: percent-encoded, and no ':' that could be read as a scheme.
        uri = location["artifactLocation"]["uri"]
        assert unquote(uri) == PATH and ":" not in uri and " " not in uri
        region = location["region"]
        rows.append((result["ruleId"], result["message"]["text"].split("\nhint: ")[0], region["startLine"],
                     region["startColumn"], region["endLine"], region["endColumn"]))
    return rows


def read_junit(out: str) -> list[Row]:
    root = ET.fromstring(out)
    lines: list[str] = []
    for case in root.iter("testcase"):
        assert case.get("name") == PATH
        for element in (*case.findall("failure"), *case.findall("system-out")):
            lines += (element.text or "").splitlines()
    return _from_located_lines(lines)


READERS: dict[str, Callable[[str], list[Row]]] = {
    "text": read_text_format, "json": read_json, "github": read_github, "sarif": read_sarif, "junit": read_junit,
}


def test_every_format_has_a_reader() -> None:
    assert set(READERS) == set(FORMATS)


@pytest.fixture(scope="module")
def report() -> Report:
    file = check(read_text(TEXT, PATH), layers=ALL_LAYERS)
    assert {f.layer for f in file.findings} >= {"parse", "schema", "server", "lint"}
    assert {f.severity for f in file.findings} >= {"error", "warning"}
    return Report(files=[file])


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_same_code_message_and_position(fmt: str, report: Report) -> None:
    rows = READERS[fmt](render(report, fmt))
    expected = [(f.code, f.message, f.line, f.column, f.end_line, f.end_column) for f in report.findings]
    if rows and rows[0][4] is None:  # this format carries no end position
        expected = [(*row[:4], None, None) for row in expected]
    assert sorted(rows) == sorted(expected)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_output_file_holds_the_same_report(fmt: str, tmp_path: Path) -> None:
    import subprocess
    import sys

    manifest = tmp_path / "block.manifest.json"
    manifest.write_text(TEXT, encoding="utf-8")
    out = tmp_path / f"report.{fmt}"
    args = [sys.executable, "-m", "blockkit.cli", "validate", "--format", fmt, "--output", str(out), str(manifest)]
    result = subprocess.run(args, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1"})
    assert result.returncode == 1 and result.stdout == ""
    expected = render(Report(files=[check(read_text(TEXT, str(manifest)))]), fmt)
    assert out.read_text(encoding="utf-8") == expected

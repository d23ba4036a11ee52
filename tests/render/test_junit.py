"""JUnit XML is read back by junitparser (a real consumer) and checked against the shape
Jenkins and GitLab expect: <testsuites>/<testsuite>/<testcase>, one <failure> at most per
testcase, counts that agree with the testcases."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from junitparser import Failure, JUnitXml

from blockkit.engine import ALL_LAYERS, check
from blockkit.render.junit import render
from blockkit.report import Report
from blockkit.source import read_text

GOOD = ('{"$schema": "https://civitai.com/schemas/app-block/v1.json", "blockId": "demo-block", "version": "1.0.0",'
        ' "name": "Demo", "contentRating": "g", "scopes": [], "iframe": {"minHeight": 400, "maxHeight": null,'
        ' "resizable": false, "sandbox": "allow-scripts"}}')
BAD = GOOD.replace('"version": "1.0.0"', '"version": "1.0", "trustTier": "x"')
WARNED = GOOD.replace('"scopes": []', '"scopes": [], "appId": "a"')


def report_of(*texts: tuple[str, str], strict: bool = False) -> Report:
    return Report(files=[check(read_text(text, name), layers=ALL_LAYERS) for name, text in texts], strict=strict)


def parse(tmp_path: Path, xml: str) -> JUnitXml:
    path = tmp_path / "report.xml"
    path.write_text(xml, encoding="utf-8")
    return JUnitXml.fromfile(str(path))


def test_one_suite_one_case_per_file_and_one_failure_per_failing_file(tmp_path: Path) -> None:
    report = report_of(("good.json", GOOD), ("bad.json", BAD), ("warned.json", WARNED))
    xml = render(report)
    parsed = parse(tmp_path, xml)
    suites = list(parsed)
    assert len(suites) == 1
    suite = suites[0]
    assert suite.tests == 3 and suite.failures == 1 and suite.errors == 0
    cases = {case.name: case for case in suite}
    assert set(cases) == {"good.json", "bad.json", "warned.json"}
    assert cases["good.json"].is_passed and cases["warned.json"].is_passed
    results = cases["bad.json"].result
    assert len(results) == 1 and isinstance(results[0], Failure)
    bad = report.files[1]
    first = bad.findings[0]
    assert results[0].type == first.code
    assert results[0].message.startswith(f"{first.line}:{first.column}: {first.code} {first.message}")
    body = results[0].text.splitlines()
    for finding in bad.findings:
        if finding.severity == "error":
            assert f"bad.json:{finding.line}:{finding.column}: {finding.code} {finding.message}" in body
    # Advice that does not fail the file is kept, outside the failure.
    assert "BK301" in cases["warned.json"].system_out


def test_strict_turns_warnings_into_failures(tmp_path: Path) -> None:
    parsed = parse(tmp_path, render(report_of(("warned.json", WARNED), strict=True)))
    suite = next(iter(parsed))
    assert suite.failures == 1
    case = next(iter(suite))
    assert case.result[0].type == "BK301"


def test_shape_matches_what_ci_servers_read() -> None:
    root = ET.fromstring(render(report_of(("good.json", GOOD), ("bad.json", BAD))))
    assert root.tag == "testsuites"
    for key in ("tests", "failures", "errors", "time"):
        assert root.get(key) is not None
    (suite,) = list(root)
    assert suite.tag == "testsuite"
    assert {"name", "tests", "failures", "errors", "skipped", "time"} <= set(suite.attrib)
    cases = suite.findall("testcase")
    assert int(suite.get("tests")) == len(cases)
    assert int(suite.get("failures")) == sum(1 for c in cases if c.find("failure") is not None)
    for case in cases:
        assert case.get("name") and case.get("classname") and case.get("time") is not None
        assert len(case.findall("failure")) <= 1  # Jenkins, GitLab and Azure show only the first
        for failure in case.findall("failure"):
            assert failure.get("message") and failure.get("type") and failure.text


def test_characters_xml_cannot_carry_are_escaped(tmp_path: Path) -> None:
    text = GOOD.replace('"contentRating": "g"', '"contentRating": "\\ud800\\u0001"')
    xml = render(report_of(("odd <&>.json", text)))
    ET.fromstring(xml)  # well-formed
    case = next(iter(next(iter(parse(tmp_path, xml)))))
    assert case.name == "odd <&>.json"
    assert "\\ud800\\u0001" in case.result[0].text

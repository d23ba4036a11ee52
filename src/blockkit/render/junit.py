"""JUnit XML, as Jenkins, GitLab, Azure DevOps and GitHub test-report actions read it.

One ``<testsuite>`` per run and one ``<testcase>`` per manifest. A manifest that
fails carries exactly one ``<failure>`` listing every failing finding, one per
line in the ruff-style ``path:line:col: CODE message`` form: consumers show
only the first ``<failure>`` of a testcase, so several would hide findings.
Findings that do not fail the file go to ``<system-out>``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from blockkit.report import FileReport, Finding, Report

# Characters XML 1.0 cannot carry at all, even escaped.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(value: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", value)


def finding_line(path: str, finding: Finding) -> str:
    label = "" if finding.severity == "error" else f"[{finding.severity}] "
    line = f"{path}:{finding.line}:{finding.column}: {finding.code} {label}{finding.message}"
    if finding.hint:
        line += f"\n  = hint: {finding.hint}"
    return line


def _fails(report: Report, finding: Finding) -> bool:
    return finding.severity == "error" or (report.strict and finding.severity == "warning")


def _testcase(report: Report, file: FileReport, suite: str) -> ET.Element:
    case = ET.Element("testcase", {"classname": suite, "name": _xml_text(file.path),
                                   "file": _xml_text(file.path), "time": "0"})
    failing = [f for f in file.findings if _fails(report, f)]
    other = [f for f in file.findings if not _fails(report, f)]
    if failing:
        first = failing[0]
        more = f" (and {len(failing) - 1} more)" if len(failing) > 1 else ""
        failure = ET.SubElement(case, "failure", {
            "type": first.code,
            "message": _xml_text(f"{first.line}:{first.column}: {first.code} {first.message}{more}"),
        })
        failure.text = _xml_text("\n".join(finding_line(file.path, f) for f in failing))
    if other:
        out = ET.SubElement(case, "system-out")
        out.text = _xml_text("\n".join(finding_line(file.path, f) for f in other))
    return case


def render(report: Report, *, suite: str = "blockkit", **_: object) -> str:
    failures = sum(1 for file in report.files if not file.ok(report.strict))
    counts = {"tests": str(len(report.files)), "failures": str(failures), "errors": "0", "skipped": "0",
              "time": "0"}
    root = ET.Element("testsuites", {"name": suite, **counts})
    testsuite = ET.SubElement(root, "testsuite", {"name": suite, **counts})
    for file in report.files:
        testsuite.append(_testcase(report, file, suite))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"

"""GitHub Actions workflow commands: one ``::error``/``::warning``/``::notice`` line per finding.

GitHub turns these lines into annotations on the pull request. Values are
escaped as the Actions runner unescapes them: in the message ``%``, CR and LF;
in properties also ``:`` and ``,``, which would otherwise end a property.
"""

from __future__ import annotations

from blockkit.report import Finding, Report

_COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def annotation(path: str, finding: Finding) -> str:
    properties = {
        "file": path,
        "line": str(finding.line),
        "col": str(finding.column),
        "endLine": str(finding.end_line),
        "endColumn": str(finding.end_column),
        "title": finding.code,
    }
    props = ",".join(f"{key}={escape_property(value)}" for key, value in properties.items())
    message = finding.message if not finding.hint else f"{finding.message}\nhint: {finding.hint}"
    return f"::{_COMMANDS[finding.severity]} {props}::{escape_data(message)}"


def render(report: Report, **_: object) -> str:
    lines = [annotation(file.path, finding) for file in report.files for finding in file.findings]
    return "".join(line + "\n" for line in lines)

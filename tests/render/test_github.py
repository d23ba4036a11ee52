from __future__ import annotations

import re

import blockkit
from blockkit.render.github import escape_data, escape_property, render


def test_escaping_follows_the_actions_runner() -> None:
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("a:b,c%d\ne") == "a%3Ab%2Cc%25d%0Ae"
    # '%' is escaped first, so an existing escape sequence is not mistaken for one.
    assert escape_data("%0A") == "%250A"
    assert escape_data("a:b,c") == "a:b,c"  # message data keeps ':' and ','


def test_one_workflow_command_per_finding_with_severity_mapping() -> None:
    text = '{"blockId": "demo-block", "version": "1.0", "name": "Demo", "contentRating": "g", "scopes": [],\n' \
           ' "iframe": {"minHeight": 400, "maxHeight": null, "resizable": false, "sandbox": "allow-scripts"},\n' \
           ' "version": "1.0.1"}'
    report = blockkit.validate(text, path="odd, path:x.json")
    out = render(report)
    lines = out.splitlines()
    assert len(lines) == len(report.findings) and out.endswith("\n")
    by_code = {f.code: f for f in report.findings}
    warning = by_code["BK009"]  # duplicate key: a warning
    expected = (f"::warning file=odd%2C path%3Ax.json,line={warning.line},col={warning.column},"
                f"endLine={warning.end_line},endColumn={warning.end_column},title=BK009::")
    assert any(line.startswith(expected) for line in lines)
    for line in lines:
        assert re.match(r"^::(error|warning|notice) file=[^:]*,line=\d+,col=\d+,endLine=\d+,endColumn=\d+,"
                        r"title=BK\d{3}::", line), line
        assert "\n" not in line and "\r" not in line


def test_info_findings_are_notices() -> None:
    from blockkit.engine import ALL_LAYERS, check
    from blockkit.report import Report
    from blockkit.source import read_text

    source = read_text('{"blockId": "demo-block", "version": "1.0.0", "name": "D", "contentRating": "g",'
                       ' "scopes": [], "iframe": {"minHeight": 400, "maxHeight": null, "resizable": false,'
                       ' "sandbox": "allow-scripts"}}', "m.json")
    report = Report(files=[check(source, layers=ALL_LAYERS)])
    infos = [f for f in report.findings if f.severity == "info"]
    assert infos, "the fixture should produce an info finding ($schema missing)"
    assert render(report).count("::notice ") == len(infos)

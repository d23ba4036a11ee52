"""The JSON contract of DESIGN.md (``--format json``)."""

from __future__ import annotations

import json

from blockkit.report import Report


def render(report: Report, **_: object) -> str:
    return json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n"

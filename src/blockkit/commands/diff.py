"""``blockkit diff OLD NEW``: what review will say about going from OLD to NEW."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import click

from blockkit.commands._common import emit, fail, report_options, use_color


def run_diff(old_path: str, new_path: str, *, fmt: str, strict: bool, output: Optional[Path]) -> int:
    from blockkit.api import resolve_manifest_path
    from blockkit.diff import comparable, compare
    from blockkit.engine import UnreadableFile, check, read_path
    from blockkit.render import render
    from blockkit.report import FileReport, Report

    try:
        old = read_path(resolve_manifest_path(old_path), old_path)
        new = read_path(resolve_manifest_path(new_path), new_path)
    except UnreadableFile as exc:
        fail(str(exc))
    problem = comparable(old)
    if problem is not None:
        fail(f"{old_path}: cannot compare against it: {problem}")
    # NEW is the file the report is about: its own parse problems are findings in it.
    file = FileReport(path=new.path, text=new.text, data=new.data)
    if comparable(new) is not None:
        file.findings = check(new, layers=("parse",)).findings
    else:
        file.findings = compare(old, new)
    report = Report(files=[file], strict=strict)
    emit(render(report, fmt, color=use_color(output is not None)), output)
    return report.exit_code


@click.command("diff")
@click.argument("old", type=click.Path(path_type=str))
@click.argument("new", type=click.Path(path_type=str))
@report_options
def command(old: str, new: str, fmt: str, strict: bool, output: Optional[Path]) -> None:
    """Compare two versions of a manifest as review would.

    Reports a version that does not increase (semver precedence), goods removed
    or renamed (orphaned entitlements), price and catalogue changes (re-review)
    and scope changes (viewer consent). Positions refer to NEW. Exit status: 0
    no errors, 1 errors found, 2 the tool could not do its job.
    """
    raise SystemExit(run_diff(old, new, fmt=fmt, strict=strict, output=output))

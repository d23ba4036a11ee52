"""``blockkit validate``: the platform's verdict on each manifest."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

import click

from blockkit.commands._common import ContextFlags, context_options, emit, expand_paths, fail, use_color
from blockkit.render import FORMATS

if TYPE_CHECKING:
    from blockkit.lint.policy import LintPolicy


def run_check(paths: tuple[str, ...], flags: ContextFlags, *, layers: tuple[str, ...], strict: bool,
              fmt: str, output: Optional[Path], project_aware: bool = False,
              policy: Optional["LintPolicy"] = None) -> int:
    """Check every manifest under ``paths`` and render the report; returns the exit status.

    ``project_aware``: rules may read the project next to a manifest named
    block.manifest.json. ``policy``: lint settings and baseline (blockkit.lint.policy).
    """
    from blockkit.context import ConfigError
    from blockkit.engine import UnreadableFile, check, read_path
    from blockkit.platform import MANIFEST_FILENAME
    from blockkit.render import render
    from blockkit.report import Report

    report = Report(strict=strict)
    problems: list[str] = []
    for manifest, problem in expand_paths(paths):
        if problem:
            problems.append(problem)
            continue
        try:
            config = flags.config_for(manifest)
            if policy is not None:
                policy.prepare(manifest, config)
            source = read_path(manifest)
        except (UnreadableFile, ConfigError) as exc:
            problems.append(str(exc))
            continue
        # A manifest under another name is a copy or a fixture, not the file of a block project.
        project_dir = manifest.parent if project_aware and manifest.name == MANIFEST_FILENAME else None
        file_report = check(source, config.context, layers=layers, project_dir=project_dir)
        if policy is not None:
            policy.review(manifest, config, file_report)
        report.files.append(file_report)
    if policy is not None:
        try:
            policy.finish(report)
        except ConfigError as exc:
            problems.append(str(exc))
    for problem in problems:
        click.echo(f"blockkit: error: {problem}", err=True)
    if report.files or not problems:
        emit(render(report, fmt, color=use_color(output is not None)), output)
    if problems:
        return 2
    return report.exit_code


@click.command("validate")
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--format", "fmt", type=click.Choice(sorted(FORMATS)), default="text", show_default=True,
              help="Output format.")
@click.option("--strict", is_flag=True, help="Warnings fail too.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the report to FILE instead of standard output.")
@context_options
def command(paths: tuple[str, ...], fmt: str, strict: bool, output: Optional[Path], **context: object) -> None:
    """Check manifests against the schema and every platform rule.

    PATH is a block.manifest.json, or a directory holding one (searched
    recursively). Default: ./block.manifest.json. Exit status: 0 no errors,
    1 errors found, 2 the tool could not do its job.
    """
    flags = ContextFlags(**context)  # type: ignore[arg-type]
    raise SystemExit(run_check(paths, flags, layers=("parse", "schema", "server"), strict=strict,
                               fmt=fmt, output=output))

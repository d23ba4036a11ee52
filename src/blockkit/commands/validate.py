"""``blockkit validate``: the platform's verdict on each manifest."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import click

from blockkit.commands._common import ContextFlags, context_options, emit, expand_paths, fail, use_color
from blockkit.render import FORMATS


def run_check(paths: tuple[str, ...], flags: ContextFlags, *, layers: tuple[str, ...], strict: bool,
              fmt: str, output: Optional[Path], project_aware: bool = False) -> int:
    from blockkit.context import ConfigError
    from blockkit.engine import UnreadableFile, check, read_path
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
            source = read_path(manifest)
        except (UnreadableFile, ConfigError) as exc:
            problems.append(str(exc))
            continue
        project_dir = manifest.parent if project_aware else None
        report.files.append(check(source, config.context, layers=layers, project_dir=project_dir))
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

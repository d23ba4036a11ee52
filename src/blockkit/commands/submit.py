"""``blockkit submit [DIR]``: package the block, judge it, show its size, ask, and submit it for review."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from blockkit.commands._common import context_options
from blockkit.commands._submit_common import client, connection_options, fail
from blockkit.submission import EXIT_GENERIC, EXIT_USAGE, SubmissionFailed


@click.command("submit")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path), default=".", required=False)
@connection_options
@click.option("--yes", "-y", is_flag=True, help="Upload without asking (needed when there is no terminal).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="How to print the publish request (the verdict and sizes go to stderr).")
@context_options
def command(directory: Path, base_url: str | None, token_file: Path | None, yes: bool, fmt: str,
            **context: Any) -> None:
    """Package DIR (default: .) as 'blockkit package' does and submit it for review.

    The bundle is judged first (every cap, the credential scan, the manifest's verdict): with
    an error nothing is uploaded. The size report follows, then a question before uploading
    (--yes answers it; without a terminal --yes is needed). Prints the publish request.

    Exit status as the platform's CLI: 0 submitted, 1 not submitted (the bundle has errors,
    or the answer was no), 2 refused by the platform (400) or a usage error, 3 the key was
    refused (401/403), 4 not found, 5 the platform could not be reached, 6 rate limited.
    """
    import orjson

    from blockkit.bundle import check_bundle
    from blockkit.bundle.package import PackageError, package_tree
    from blockkit.commands._common import ContextFlags
    from blockkit.commands.package import size_lines
    from blockkit.context import ConfigError
    from blockkit.platform import MANIFEST_FILENAME
    from blockkit.render import render

    if not (directory / MANIFEST_FILENAME).is_file():
        fail("submit", SubmissionFailed(EXIT_USAGE, f"{directory}: no {MANIFEST_FILENAME} here"))
    the_client = client("submit", base_url, token_file)
    try:
        config = ContextFlags(**context).config_for(directory / MANIFEST_FILENAME)
        package = package_tree(directory)
    except (ConfigError, PackageError) as exc:
        fail("submit", SubmissionFailed(EXIT_USAGE, str(exc)))
    prefix = "" if str(directory) in ("", ".") else f"{directory.as_posix().rstrip('/')}/"
    report = check_bundle(package.data, config.context, label=str(directory), prefix=prefix)
    if report.findings:
        click.echo(render(report, "text", color=False).rstrip("\n"), err=True)
    skipped = package.skipped_line()
    for line in ([skipped] if skipped else []) + size_lines(report, package):
        click.echo(line, err=True)
    if report.errors:
        fail("submit", SubmissionFailed(EXIT_GENERIC, f"not submitted: the bundle has {report.errors} error(s)"))
    if not yes:
        if not sys.stdin.isatty():
            fail("submit", SubmissionFailed(EXIT_USAGE, "no terminal to ask on: pass --yes to upload"))
        if not click.confirm(f"Upload {report.request_body_bytes} bytes to {the_client.base_url}?", default=False,
                             err=True):
            fail("submit", SubmissionFailed(EXIT_GENERIC, "not uploaded"))
    try:
        result = the_client.submit(package.data)
    except SubmissionFailed as exc:
        fail("submit", exc)
    if fmt == "json":
        click.echo(orjson.dumps(result).decode())
        return
    click.echo(f"submitted {result.get('slug')} {result.get('version')}: {result.get('publishRequestId')}"
               f" ({result.get('status')})")

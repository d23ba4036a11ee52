"""``blockkit submit [DIR]``: package the block, show its size, ask, and submit it for review."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from blockkit.commands._submit_common import client, connection_options, fail
from blockkit.submission import EXIT_USAGE, SUBMIT_BODY_LIMIT_BYTES, SubmissionFailed, build_bundle, request_body_size


def _size(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB" if n >= 1 << 20 else f"{n / 1024:.1f} KiB" if n >= 1024 else f"{n} B"


@click.command("submit")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path), default=".", required=False)
@connection_options
@click.option("--yes", "-y", is_flag=True, help="Upload without asking (needed when there is no terminal).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def command(directory: Path, base_url: str | None, token_file: Path | None, yes: bool, fmt: str) -> None:
    """Package DIR (default: .) and submit it for review; prints the publish request.

    Exit status as the platform's CLI: 0 submitted, 2 refused (400) or a usage error, 3 the key
    was refused (401/403), 4 not found, 5 the platform could not be reached, 6 rate limited, 1
    anything else.
    """
    import orjson

    if not (directory / "block.manifest.json").is_file():
        fail("submit", SubmissionFailed(EXIT_USAGE, f"{directory}: no block.manifest.json here"))
    the_client = client("submit", base_url, token_file)
    try:
        bundle = build_bundle(directory)
    except OSError as exc:
        fail("submit", SubmissionFailed(EXIT_USAGE, f"{directory}: cannot package: {exc.strerror or exc}"))
    body = request_body_size(len(bundle))
    click.echo(f"bundle: {_size(len(bundle))} zipped; request body {_size(body)} (limit"
               f" {_size(SUBMIT_BODY_LIMIT_BYTES)})", err=True)
    if body > SUBMIT_BODY_LIMIT_BYTES:
        fail("submit", SubmissionFailed(EXIT_USAGE, f"the request body would be {body} bytes, over the platform's"
                                                    f" {SUBMIT_BODY_LIMIT_BYTES}-byte limit"))
    if not yes:
        if not sys.stdin.isatty():
            fail("submit", SubmissionFailed(EXIT_USAGE, "no terminal to ask on: pass --yes to upload"))
        if not click.confirm(f"Upload to {the_client.base_url}?", default=False, err=True):
            click.echo("blockkit submit: not uploaded", err=True)
            raise SystemExit(1)
    try:
        result = the_client.submit(bundle)
    except SubmissionFailed as exc:
        fail("submit", exc)
    if fmt == "json":
        click.echo(orjson.dumps(result).decode())
        return
    click.echo(f"submitted {result.get('slug')} {result.get('version')}: {result.get('publishRequestId')}"
               f" ({result.get('status')})")

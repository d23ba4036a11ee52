"""``blockkit submissions``: your submissions and their review state."""

from __future__ import annotations

from pathlib import Path

import click

from blockkit.commands._submit_common import client, connection_options, fail
from blockkit.submission import SubmissionFailed


@click.command("submissions")
@connection_options
@click.option("--id", "request_id", metavar="ID", help="Only this publish request (exit 4 when it is not yours).")
@click.option("--block-id", metavar="BLOCK_ID", help="Only this block's submissions.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def command(base_url: str | None, token_file: Path | None, request_id: str | None, block_id: str | None,
            fmt: str) -> None:
    """List your submissions, newest first: id, block, version, status, and a rejection's reason."""
    import orjson

    the_client = client("submissions", base_url, token_file)
    try:
        rows = the_client.submissions(request_id, block_id)
    except SubmissionFailed as exc:
        fail("submissions", exc)
    if fmt == "json":
        click.echo(orjson.dumps({"submissions": rows}).decode())
        return
    if not rows:
        click.echo("no submissions")
    for row in rows:
        line = f"{row.get('id')}  {row.get('blockId')}  {row.get('version')}  {row.get('status')}"
        if row.get("rejectionReason"):
            line += f"  reason: {row['rejectionReason']}"
        if row.get("liveUrl"):
            line += f"  {row['liveUrl']}"
        click.echo(line)

"""``blockkit withdraw ID``: pull a pending submission back from review."""

from __future__ import annotations

from pathlib import Path

import click

from blockkit.commands._submit_common import client, connection_options, fail
from blockkit.submission import SubmissionFailed


@click.command("withdraw")
@click.argument("request_id", metavar="ID")
@connection_options
def command(request_id: str, base_url: str | None, token_file: Path | None) -> None:
    """Withdraw your pending publish request ID (exit 4 when it is not yours, 1 when no longer pending)."""
    the_client = client("withdraw", base_url, token_file)
    try:
        the_client.withdraw(request_id)
    except SubmissionFailed as exc:
        fail("withdraw", exc)
    click.echo(f"withdrew {request_id}")

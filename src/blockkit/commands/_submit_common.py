"""What ``submit``, ``submissions`` and ``withdraw`` share: the base URL and key options, and failing."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

import click

from blockkit.submission import ENV_API_KEY, ENV_BASE_URL, Client, SubmissionFailed, base_url, read_api_key


def fail(command: str, exc: SubmissionFailed) -> NoReturn:
    click.echo(f"blockkit {command}: {exc.message}", err=True)
    raise SystemExit(exc.exit_code)


def connection_options(command: Any) -> Any:
    command = click.option(
        "--token-file", type=click.Path(dir_okay=False, path_type=Path), metavar="PATH",
        help=f"Read the personal API key from PATH (mode 0600). Default: the {ENV_API_KEY} environment"
             " variable. The key is never taken on the command line, which other local users can read.")(command)
    command = click.option(
        "--base-url", metavar="URL",
        help=f"The platform to talk to (default: {ENV_BASE_URL}, which 'blockkit emulator exec' sets, else"
             " https://civitai.com).")(command)
    return command


def client(command: str, base: str | None, token_file: Path | None) -> Client:
    try:
        return Client(base_url(base), read_api_key(token_file))
    except SubmissionFailed as exc:
        fail(command, exc)

"""``blockkit emulator``: the local platform (catalogue API, OAuth, orchestration) on loopback."""

from __future__ import annotations

from pathlib import Path

import click

from blockkit.emulator.errors import EmulatorError

EXIT_CANNOT_RUN = 2


def _fail(message: str) -> None:
    click.echo(f"blockkit emulator: {message}", err=True)
    raise SystemExit(EXIT_CANNOT_RUN)


@click.group("emulator")
def emulator() -> None:
    """Serve the platform's catalogue API, OAuth provider and orchestration service locally."""


@emulator.command("start")
@click.option("--data", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Keep the state in DIR across restarts (default: a temporary directory removed at exit).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Loopback address to listen on.")
@click.option("--port", type=int, default=0, show_default=True,
              help="Catalogue port; OAuth on PORT+1, orchestration on PORT+2. 0: three free ports.")
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of the fixture data.")
@click.option("--scale", type=click.Choice(["small", "large"]), default="small", show_default=True,
              help="How much fixture data (large: benchmarks).")
@click.option("--ready-file", type=click.Path(dir_okay=False, path_type=Path), metavar="PATH",
              help="Once all three origins accept connections, write their URLs, pid and data dir here (JSON).")
@click.option("--sfw-only", is_flag=True, help="Clamp every request to safe-for-work content (a restricted region).")
def start(data: Path | None, host: str, port: int, seed: int, scale: str, ready_file: Path | None,
          sfw_only: bool) -> None:
    """Serve until Ctrl-C or SIGTERM."""
    from blockkit.emulator.options import EmulatorOptions
    from blockkit.emulator.runtime import run_foreground

    try:
        options = EmulatorOptions(data=data, host=host, port=port, seed=seed, scale=scale, ready_file=ready_file,
                                  sfw_only=sfw_only)
        raise SystemExit(run_foreground(options))
    except EmulatorError as exc:
        _fail(str(exc))


command = emulator

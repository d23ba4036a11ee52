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


# --- token: an access token for a seeded user (self-contained: the auth helper's part) ------

@emulator.command("token")
@click.option("--user", "username", required=True, metavar="USERNAME", help="The seeded user the token acts for.")
@click.option("--scope", type=click.IntRange(min=0), default=1, show_default=True,
              help="OAuth scope bitmask (1 = UserRead; catalogue routes do not check scopes).")
@click.option("--data", type=click.Path(file_okay=False, path_type=Path), metavar="DIR", required=True,
              help="The data directory (as given to 'start --data').")
def token_command(username: str, scope: int, data: Path) -> None:
    """Print a fresh access token for USERNAME as JSON (works while the emulator runs).

    The token lives 3600 seconds by the emulator's clock, like one from the OAuth provider.
    """
    import orjson

    from blockkit.emulator.clock import Clock
    from blockkit.emulator.store import DB_FILENAME, Store
    from blockkit.emulator.store import tokens as tokens_store
    from blockkit.emulator.store import users as users_store

    if not (data / DB_FILENAME).is_file():
        _fail(f"{data}: no emulator data here (start once with --data {data})")
    try:
        with Store.open(data, check=False) as store, store.guard():
            clock = Clock(store)
            with store.write() as db:
                user = users_store.find_by_username(db, username)
                if user is None or user.deleted:
                    _fail(f"--user {username}: no such user ('blockkit emulator users --data {data}' lists them)")
                assert user is not None
                raw = tokens_store.issue_access_token(db, user_id=user.id, scope=scope, now=clock.now())
    except EmulatorError as exc:
        _fail(str(exc))
    click.echo(orjson.dumps({"access_token": raw, "expires_in": tokens_store.DEFAULT_TTL_SECONDS, "user_id": user.id,
                             "scope": scope}).decode())

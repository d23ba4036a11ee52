"""``blockkit emulator``: the local platform (catalogue API, OAuth, orchestration) on loopback."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from blockkit.emulator.errors import EmulatorError

if TYPE_CHECKING:
    from blockkit.emulator.options import EmulatorOptions
    from blockkit.emulator.store import Store

EXIT_CANNOT_RUN = 2


def _fail(message: str) -> NoReturn:
    click.echo(f"blockkit emulator: {message}", err=True)
    raise SystemExit(EXIT_CANNOT_RUN)


@click.group("emulator")
def emulator() -> None:
    """Serve the platform's catalogue API, OAuth provider and orchestration service locally."""
    from blockkit.extras import server_missing_line

    missing = server_missing_line("blockkit emulator")
    if missing is not None:
        _fail(missing)


# The options 'start' and 'exec' share: how the emulator runs.
_START_OPTIONS = (
    click.option("--data", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
                 help="Keep the state in DIR across restarts (default: a temporary directory removed at exit)."),
    click.option("--host", default="127.0.0.1", show_default=True, help="Loopback address to listen on."),
    click.option("--port", type=int, default=0, show_default=True,
                 help="Catalogue port; OAuth on PORT+1, orchestration on PORT+2. 0: three free ports."),
    click.option("--seed", type=int, default=1, show_default=True, help="Seed of the fixture data."),
    click.option("--scale", type=click.Choice(["small", "large"]), default="small", show_default=True,
                 help="How much fixture data (large: benchmarks)."),
    click.option("--ready-file", type=click.Path(dir_okay=False, path_type=Path), metavar="PATH",
                 help="Once all three origins accept connections, write their URLs, pid, data dir and access key"
                      " here (JSON)."),
    click.option("--sfw-only", is_flag=True, help="Clamp every request to safe-for-work content (a restricted region)."),
    click.option("--access-key", metavar="KEY", envvar="BLOCKKIT_EMULATOR_ACCESS_KEY",
                 help="The access key sign-in, the control routes and block-token minting ask for (default: a new"
                      " random key each start, printed as a sign-in link and written to the ready file). Other"
                      " local users can read a command line (ps): prefer --access-key-file or the"
                      " BLOCKKIT_EMULATOR_ACCESS_KEY environment variable."),
    click.option("--access-key-file", type=click.Path(dir_okay=False, path_type=Path), metavar="PATH",
                 help="Read the access key from PATH (its first line)."),
    click.option("--no-access-key", is_flag=True,
                 help="Ask for no access key: every local user and process can then sign in as anyone."),
    click.option("--journal-size", type=int, default=None, metavar="N", envvar="BLOCKKIT_EMULATOR_JOURNAL",
                 help="Requests the request journal keeps ('blockkit emulator log'; default 2000; 0 turns it off)."),
)


def _start_options(command: Any) -> Any:
    for option in reversed(_START_OPTIONS):
        command = option(command)
    return command


def _emulator_options(data: Path | None, host: str, port: int, seed: int, scale: str, ready_file: Path | None,
                      sfw_only: bool, access_key: str | None, no_access_key: bool,
                      access_key_file: Path | None = None, journal_size: int | None = None) -> EmulatorOptions:
    """The start options, checked (EmulatorError for a bad one); a new access key unless one is given or refused."""
    from blockkit.emulator.http.access import new_access_key
    from blockkit.emulator.options import EmulatorOptions

    if access_key_file is not None:
        if access_key is not None:
            raise EmulatorError("--access-key and --access-key-file: give one or the other")
        try:
            lines = access_key_file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise EmulatorError(f"--access-key-file {access_key_file}: cannot read it: "
                                f"{getattr(exc, 'strerror', None) or exc}") from None
        access_key = lines[0].strip() if lines else ""
    if access_key is not None and no_access_key:
        raise EmulatorError("--access-key and --no-access-key: give one or the other")
    return EmulatorOptions(data=data, host=host, port=port, seed=seed, scale=scale, ready_file=ready_file,
                           sfw_only=sfw_only, access_key=None if no_access_key else access_key or new_access_key(),
                           journal_size=journal_size)


@emulator.command("start")
@_start_options
def start(**start_options: Any) -> None:
    """Serve until Ctrl-C or SIGTERM."""
    from blockkit.emulator.runtime import run_foreground

    try:
        raise SystemExit(run_foreground(_emulator_options(**start_options)))
    except EmulatorError as exc:
        _fail(str(exc))


@emulator.command("wait")
@click.option("--ready-file", required=True, type=click.Path(dir_okay=False, path_type=Path), metavar="PATH",
              help="The --ready-file the emulator was started with.")
@click.option("--pid", type=int, metavar="PID",
              help="The starting emulator's process id ($! after 'blockkit emulator start ... &'): fail as soon"
                   " as it ends, and take only its ready file.")
@click.option("--timeout", type=click.FloatRange(min=0), default=120, show_default=True, metavar="SECONDS",
              help="Give up after this long.")
def wait_command(ready_file: Path, pid: int | None, timeout: float) -> None:
    """Wait until 'blockkit emulator start --ready-file PATH' answers on all three origins.

    Exit 0 once it does; 2 at once when the emulator (--pid) ended before that, or after --timeout.
    """
    from blockkit.emulator.runtime import wait_until_ready

    try:
        wait_until_ready(ready_file, pid=pid, timeout_s=timeout)
    except EmulatorError as exc:
        _fail(str(exc))


@emulator.command("exec", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@_start_options
@click.option("--import", "import_from", type=click.Path(file_okay=False, exists=True, path_type=Path),
              metavar="DIR", help="Start from an export (replacing the seeded data).")
@click.option("--export-on-exit", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="When COMMAND ends, export the final state into DIR (an earlier export there is replaced).")
@click.option("--user", "username", metavar="USERNAME",
              help="Also give COMMAND a Full-scope access token for USERNAME, as BLOCKKIT_ACCESS_TOKEN and"
                   " CIVITAI_TOKEN (which published catalogue clients read), and a personal API key as BLOCKKIT_API_KEY"
                   " ('blockkit submit' reads it).")
@click.argument("command", nargs=-1, type=click.UNPROCESSED, required=True)
def exec_command(import_from: Path | None, export_on_exit: Path | None, username: str | None,
                 command: tuple[str, ...], **start_options: Any) -> None:
    """Run COMMAND against a fresh local platform, then stop it: 'blockkit emulator exec -- pytest'.

    COMMAND gets BLOCKKIT_BASE_URL, BLOCKKIT_AUTH_URL and BLOCKKIT_ORCHESTRATION_URL in its
    environment, and BLOCKKIT_ACCESS_KEY (send it as X-Blockkit-Access-Key to sign in or move
    the clock). The exit status is COMMAND's (128+N when a signal N ended it). Ctrl-C and
    SIGTERM reach COMMAND; when it ends, nothing it started is left running and the emulator
    stops.
    """
    from blockkit.emulator.execrun import run_exec

    args = list(command)
    if args and args[0] == "--":
        args = args[1:]
    try:
        options = _emulator_options(**start_options)
        raise SystemExit(run_exec(options, args, export_on_exit=export_on_exit, import_from=import_from,
                                  user=username))
    except EmulatorError as exc:
        _fail(str(exc))


_data_option = click.option("--data", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
                            help="The data directory (as given to 'start --data').")


def _open_store(data: Path, *, must_exist: bool = True) -> Store:
    from blockkit.emulator.store import DB_FILENAME, Store

    if must_exist and not (data / DB_FILENAME).is_file():
        _fail(f"{data}: no emulator data here (start once with --data {data}, or import an export)")
    return Store.open(data)


@emulator.command("users")
@_data_option
@click.option("--seed", type=int, default=1, show_default=True, help="Without --data: the users this seed makes.")
@click.option("--scale", type=click.Choice(["small", "large"]), default="small", show_default=True,
              help="Without --data: the users this scale makes.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def users(data: Path | None, seed: int, scale: str, fmt: str) -> None:
    """List the users you can sign in as: id, username, tier, status.

    Without --data, the users a fresh 'start --seed N --scale S' has (the seed is deterministic).
    """
    import orjson

    from blockkit.emulator.store import users as users_store

    try:
        if data is None:
            import tempfile

            from blockkit.emulator.seed.generate import generate_users
            from blockkit.emulator.store import Store

            with tempfile.TemporaryDirectory(prefix="blockkit-emulator-") as tmp:
                with Store.open(Path(tmp), check=False) as store:
                    generate_users(store, seed, scale)  # the users alone: --scale large in a blink
                    with store.read() as db:
                        rows = users_store.list_users(db)
        else:
            with _open_store(data) as store, store.guard(), store.read() as db:
                rows = users_store.list_users(db)
    except EmulatorError as exc:
        _fail(str(exc))
    if fmt == "json":
        click.echo(orjson.dumps({"users": [
            {"id": u.id, "username": u.username, "tier": u.tier, "status": u.status, "moderator": u.is_moderator,
             "deleted": u.deleted} for u in rows]}, option=orjson.OPT_INDENT_2).decode())
        return
    width = max((len(u.username) for u in rows), default=8)
    click.echo(f"{'id':>6}  {'username':<{width}}  {'tier':<7}  {'status':<7}  notes")
    for u in rows:
        notes = ", ".join(n for n, on in (("system", u.id < 0), ("moderator", u.is_moderator),
                                           ("deleted", u.deleted)) if on)
        click.echo(f"{u.id:>6}  {u.username:<{width}}  {u.tier:<7}  {u.status:<7}  {notes}".rstrip())


@emulator.command("export")
@click.argument("target", type=click.Path(path_type=Path), metavar="DIR")
@_data_option
@click.option("--seed", type=int, default=1, show_default=True, help="Without --data: export this seed's data.")
@click.option("--scale", type=click.Choice(["small", "large"]), default="small", show_default=True)
def export_command(target: Path, data: Path | None, seed: int, scale: str) -> None:
    """Write every table as JSON Lines (primary-key order), the stored blobs and the signing key (files/), and
    manifest.json into DIR (new or empty)."""
    from blockkit.emulator.transfer import export

    try:
        if data is None:
            import tempfile

            from blockkit.emulator.seed import seed_store
            from blockkit.emulator.store import Store

            with tempfile.TemporaryDirectory(prefix="blockkit-emulator-") as tmp:
                with Store.open(Path(tmp), check=False) as store:
                    seed_store(store, seed, scale)
                    manifest = export(store, target)
        else:
            with _open_store(data) as store:
                manifest = export(store, target)
    except EmulatorError as exc:
        _fail(str(exc))
    rows = sum(entry["rows"] for entry in manifest["tables"].values())
    click.echo(f"exported {len(manifest['tables'])} tables, {rows} rows and {len(manifest.get('files', {}))} files"
               f" (blobs, signing key) to {target}")


@emulator.command("import")
@click.argument("source", type=click.Path(path_type=Path), metavar="DIR")
@_data_option
@click.option("--replace", is_flag=True, help="Replace the data of a store that already holds some.")
def import_command(source: Path, data: Path | None, replace: bool) -> None:
    """Load an export into the data directory (checked first; all or nothing)."""
    from blockkit.emulator.store import DB_FILENAME
    from blockkit.emulator.transfer import discard_new_store, import_export

    if data is None:
        _fail("import needs --data DIR: the data directory to load the export into")
    new_dir, new_store = not data.exists(), not (data / DB_FILENAME).exists()
    try:
        with _open_store(data, must_exist=False) as store:
            manifest = import_export(store, source, replace=replace)
    except EmulatorError as exc:
        if new_store:  # refused: leave no empty store (and no directory) behind
            discard_new_store(data, remove_dir=new_dir)
        _fail(str(exc))
    rows = sum(entry["rows"] for entry in manifest["tables"].values())
    click.echo(f"imported {rows} rows and {len(manifest.get('files', {}))} files into {data} (seed"
               f" {manifest.get('seed')}, scale {manifest.get('scale')})")


@emulator.command("reset")
@_data_option
@click.option("--seed", type=int, help="Seed to re-seed with (default: the one the data was seeded with).")
@click.option("--scale", type=click.Choice(["small", "large"]), help="Scale (default: the data's own).")
def reset_command(data: Path | None, seed: int | None, scale: str | None) -> None:
    """Throw away every change and re-seed (works while the emulator runs; the clock offset stays)."""
    from blockkit.emulator.store import meta
    from blockkit.emulator.transfer import reset

    if data is None:
        _fail("reset needs --data DIR (without --data the emulator's data is temporary anyway)")
    try:
        with _open_store(data) as store:
            with store.guard(), store.read() as db:
                seed = seed if seed is not None else meta.get(db, meta.SEED, 1)
                scale = scale or meta.get(db, meta.SCALE, "small")
            if seed is not None and seed < 0:
                raise EmulatorError(f"--seed {seed}: must be 0 or more")
            reset(store, seed, scale)
    except EmulatorError as exc:
        _fail(str(exc))
    click.echo(f"reset {data}: seeded with --seed {seed} --scale {scale}")


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

    from blockkit.emulator.store.clock import Clock
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


# --- client add: register an OAuth client (the OAuth provider's part) -------------------------

@emulator.group("client")
def client_group() -> None:
    """OAuth clients of the local platform."""


@client_group.command("add")
@click.option("--name", required=True, help="The client's name, as the consent page shows it.")
@click.option("--redirect-uri", "redirect_uris", multiple=True, required=True, metavar="URI",
              help="A redirect URI (exact match at authorize); repeatable.")
@click.option("--confidential", is_flag=True, help="A confidential client: it gets a client_secret (shown once).")
@click.option("--allowed-scopes", type=int, default=None, metavar="N",
              help="Scope bitmask the client may ask for (default: Full, 33554431).")
@click.option("--allowed-origin", "allowed_origins", multiple=True, metavar="ORIGIN",
              help="A browser origin a public client may call the token endpoint from; repeatable.")
@click.option("--owner", metavar="USERNAME", help="The seeded user who owns the client (client_credentials acts"
              " as them; default: the first active user).")
@click.option("--data", type=click.Path(file_okay=False, path_type=Path), metavar="DIR", required=True,
              help="The data directory (as given to 'start --data').")
def client_add(name: str, redirect_uris: tuple[str, ...], confidential: bool, allowed_scopes: int | None,
               allowed_origins: tuple[str, ...], owner: str | None, data: Path) -> None:
    """Register a client and print {"client_id", "client_secret"?} as JSON (works while the emulator runs)."""
    import orjson

    from blockkit.emulator.store.clock import Clock
    from blockkit.emulator.services.oauth import scopes
    from blockkit.emulator.services.oauth.clients import register_client

    try:
        with _open_store(data) as store, store.guard():
            registered = register_client(
                store, Clock(store), name=name, redirect_uris=list(redirect_uris), confidential=confidential,
                allowed_scopes=scopes.FULL if allowed_scopes is None else allowed_scopes,
                allowed_origins=list(allowed_origins), owner=owner)
    except EmulatorError as exc:
        _fail(str(exc))
    click.echo(orjson.dumps(registered.as_dict()).decode())


# --- apikey add: an orchestration API key (the orchestration origin's part) -------------------

@emulator.group("apikey")
def apikey_group() -> None:
    """Orchestration API keys (Authorization: Bearer <API_KEY> on the orchestration origin)."""


@apikey_group.command("add")
@click.option("--user", "username", required=True, metavar="USERNAME", help="The seeded user the key acts for.")
@click.option("--data", type=click.Path(file_okay=False, path_type=Path), metavar="DIR", required=True,
              help="The data directory (as given to 'start --data').")
def apikey_add(username: str, data: Path) -> None:
    """Print a new API key for USERNAME as {"api_key", "user_id"} JSON (works while the emulator runs).

    The key is shown once; the store keeps only its sha256.
    """
    import orjson

    from blockkit.emulator.store.clock import Clock
    from blockkit.emulator.services.errors import ServiceError
    from blockkit.emulator.services.orchestration.funds import create_api_key
    from blockkit.emulator.store import DB_FILENAME, Store

    if not (data / DB_FILENAME).is_file():
        _fail(f"{data}: no emulator data here (start once with --data {data})")
    try:
        with Store.open(data, check=False) as store, store.guard():
            created = create_api_key(store, Clock(store), username)
    except ServiceError:
        _fail(f"--user {username}: no such user ('blockkit emulator users --data {data}' lists them)")
    except EmulatorError as exc:
        _fail(str(exc))
    click.echo(orjson.dumps(created).decode())


# --- submissions: the moderator's review of publish requests (the submission routes' part) -------

@emulator.group("submissions", invoke_without_command=True)
@click.pass_context
def submissions_group(ctx: click.Context) -> None:
    """Publish requests submitted to the local platform: list them, approve or reject one.

    Without a subcommand: 'list'. Each works on --data DIR while the emulator runs.
    """
    if ctx.invoked_subcommand is None:
        _fail("say what to do: 'blockkit emulator submissions list|approve ID|reject ID --reason TEXT --data DIR'")


def _review_store(data: Path) -> Any:
    from blockkit.emulator.store import DB_FILENAME, Store

    if not (data / DB_FILENAME).is_file():
        _fail(f"{data}: no emulator data here (start once with --data {data})")
    return Store.open(data, check=False)


@submissions_group.command("list")
@click.option("--status", type=click.Choice(["pending", "approved", "rejected", "withdrawn"]),
              help="Only the requests in this status.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--data", type=click.Path(file_okay=False, path_type=Path), metavar="DIR", required=True,
              help="The data directory (as given to 'start --data').")
def submissions_list(status: str | None, fmt: str, data: Path) -> None:
    """List the publish requests, newest first: id, block, version, status, submitter."""
    import orjson

    from blockkit.emulator.services.publish_requests import list_all

    try:
        with _review_store(data) as store:
            rows = list_all(store, status=status)
    except EmulatorError as exc:
        _fail(str(exc))
    if fmt == "json":
        click.echo(orjson.dumps({"submissions": rows}).decode())
        return
    if not rows:
        click.echo("no submissions")
        return
    for row in rows:
        reason = f"  ({row['rejectionReason']})" if row["rejectionReason"] else ""
        click.echo(f"{row['id']}  {row['blockId']}  {row['version']}  {row['status']}  user"
                   f" {row['submittedByUserId']}  {row['submittedAt']}{reason}")


def _review(data: Path, action: str, request_id: str, text: str | None) -> None:
    import orjson

    from blockkit.emulator.services import publish_requests as service
    from blockkit.emulator.store.clock import Clock

    try:
        with _review_store(data) as store, store.guard():
            if action == "approve":
                shaped = service.approve(store, Clock(store), request_id, text)
            else:
                shaped = service.reject(store, Clock(store), request_id, text or "")
    except service.SubmissionError as exc:
        _fail(f"{action} {request_id}: {exc}")
    except EmulatorError as exc:
        _fail(str(exc))
    click.echo(orjson.dumps({"submission": shaped}).decode())


@submissions_group.command("approve")
@click.argument("request_id", metavar="ID")
@click.option("--notes", help="Approval notes the submitter reads.")
@click.option("--data", type=click.Path(file_okay=False, path_type=Path), metavar="DIR", required=True,
              help="The data directory (as given to 'start --data').")
def submissions_approve(request_id: str, notes: str | None, data: Path) -> None:
    """Approve pending request ID: it becomes the block's served version. Prints it as JSON."""
    _review(data, "approve", request_id, notes)


@submissions_group.command("reject")
@click.argument("request_id", metavar="ID")
@click.option("--reason", required=True, help="Why (3 to 2000 characters); the submitter reads it.")
@click.option("--data", type=click.Path(file_okay=False, path_type=Path), metavar="DIR", required=True,
              help="The data directory (as given to 'start --data').")
def submissions_reject(request_id: str, reason: str, data: Path) -> None:
    """Reject pending request ID with a reason. Prints it as JSON."""
    _review(data, "reject", request_id, reason)


@emulator.command("log")
@click.option("--data", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="The data directory of the running emulator (as given to 'start --data').")
@click.option("--ready-file", type=click.Path(dir_okay=False, path_type=Path), metavar="PATH",
              help="The --ready-file the running emulator was started with.")
@click.option("--follow", "-f", is_flag=True, help="Keep printing new requests as they come (Ctrl-C stops).")
@click.option("--status", metavar="STATUS", help="Only these statuses: 404, 4xx, or several: 4xx,5xx.")
@click.option("--origin", type=click.Choice(["catalogue", "auth", "orchestration", "bridge"]),
              help="Only this origin (bridge: blockkit dev's host page).")
@click.option("--client", metavar="CLIENT_ID", help="Only requests of this OAuth client.")
@click.option("--user", "user_id", type=int, metavar="USER_ID", help="Only requests of this user id.")
@click.option("--limit", type=click.IntRange(1, 2000), default=100, show_default=True,
              help="Without --follow: at most this many of the newest entries.")
@click.option("--bodies", is_flag=True, help="Include headers and bodies (redacted) in --format json.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text: a line per request (and its refusal's reason); json: a JSON object per line.")
@click.option("--pause", "recording", flag_value="pause", default=None,
              help="Pause the journal (requests are answered, not recorded) instead of printing it.")
@click.option("--resume", "recording", flag_value="resume", help="Record again after --pause.")
def log_command(data: Path | None, ready_file: Path | None, follow: bool, status: str | None, origin: str | None,
                client: str | None, user_id: int | None, limit: int, bodies: bool, fmt: str,
                recording: str | None) -> None:
    """Print the running emulator's request journal: every request, and why each refusal was refused."""
    from blockkit.emulator import journal_client

    try:
        if recording is not None:
            if follow:
                raise click.UsageError("--follow prints the journal; --pause and --resume change it: give one")
            click.echo(journal_client.set_recording(data=data, ready_file=ready_file, recording=recording == "resume"))
            return
        journal_client.run(data=data, ready_file=ready_file, follow=follow, status=status, origin=origin,
                           client=client, user=user_id, limit=limit, bodies=bodies, fmt=fmt,
                           echo=lambda line: click.echo(line), warn=lambda line: click.echo(line, err=True))
    except EmulatorError as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        raise SystemExit(0) from None

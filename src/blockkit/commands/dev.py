"""``blockkit dev``: run a block in a local host that behaves like the platform."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from blockkit.dev.browser import BROWSER_ENV
from blockkit.dev.errors import DevError
from blockkit.dev.protocol import THEMES
from blockkit.dev.terminal import printable

if TYPE_CHECKING:
    from blockkit.dev.contract import Violation
    from blockkit.dev.session import DevSession

EXIT_USAGE = 2


def _parse_context(values: tuple[str, ...]) -> dict[str, str]:
    context: dict[str, str] = {}
    for value in values:
        key, sep, text = value.partition("=")
        if not sep or not key:
            raise DevError(f"--context {value!r}: write KEY=VALUE, like modelId=42")
        context[key] = text
    return context


@click.argument("block_dir", metavar="[DIR]", default=".", type=click.Path(path_type=Path))
@click.option("--surface", metavar="page|SLOT", help="Where to mount the block: page, or a model slot id. Default: from the manifest.")
@click.option("--proxy", metavar="URL", help="Serve the block through a running dev server (e.g. Vite's http://localhost:5173).")
@click.option("--theme", type=click.Choice(THEMES), default=THEMES[0], show_default=True, help="The viewer's theme.")
@click.option("--anonymous", is_flag=True, help="A signed-out viewer (viewer: null).")
@click.option("--scenario", "scenarios", metavar="NAME", multiple=True,
              help="Switch on an unhappy path in the local platform for this run (--check too). Repeatable. "
                   "anonymous; insufficient-buzz (the viewer's Buzz emptied for the run); workflow-fails (the next "
                   "workflow fails and is refunded); storage-write-fails (the next app-storage write is refused); "
                   "consent-denied (REQUEST_CONSENT answered as Not now); slow or slow=MS (every reply waits); "
                   "token-expires-early (60 s tokens, not refreshed). docs/dev.md, Scenarios.")
@click.option("--context", "context_values", metavar="KEY=VALUE", multiple=True, help="Set a context member, e.g. slug=my-app or modelId=42. Repeatable.")
@click.option("--trace", "trace_path", type=click.Path(path_type=Path), help="Protocol trace file (JSONL). Default: DIR/.blockkit/dev-trace.jsonl.")
@click.option("--block-port", type=click.IntRange(0, 65535), default=0, help="Port of the block origin (default: any free port).")
@click.option("--host-port", type=click.IntRange(0, 65535), default=0, help="Port of the host page (default: any free port).")
@click.option("--allowed-host", "allowed_hosts", metavar="NAME", multiple=True, help="Also answer requests for this host name (NAME, NAME:PORT, or .NAME for every name below it). Repeatable. Default: localhost, 127.0.0.1 and [::1] only.")
@click.option("--approved", is_flag=True, help="Serve the block's approved version from the local platform's store "
              "(unpacked, and built with the platform's frozen install when it has a buildCommand) instead of DIR. "
              "DIR's manifest names the block.")
@click.option("--data", "approved_data", type=click.Path(file_okay=False, path_type=Path), metavar="DATA",
              help="With --approved: the local platform's data directory to read it from (as given to "
                   "'blockkit emulator start --data'). Default: this dev run's own (DIR/.blockkit/emulator).")
@click.option("--check", is_flag=True, help="Run the handshake in headless Chromium, print a verdict, exit 0 or 1.")
@click.option("--browser", "browser_path", metavar="PATH", help=f"The Chromium --check drives (default: ${BROWSER_ENV}, a chromium on PATH, then Playwright's download).")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True, help="Verdict format for --check.")
# Multiplies every host timing; the tests use it to run the 37 s page schedule in seconds.
@click.option("--time-scale", type=click.FloatRange(min=0, min_open=True), default=1.0, hidden=True)
def dev(
    block_dir: Path,
    surface: str | None,
    proxy: str | None,
    theme: str,
    anonymous: bool,
    scenarios: tuple[str, ...],
    context_values: tuple[str, ...],
    trace_path: Path | None,
    block_port: int,
    host_port: int,
    allowed_hosts: tuple[str, ...],
    approved: bool,
    approved_data: Path | None,
    check: bool,
    browser_path: str | None,
    output_format: str,
    time_scale: float,
) -> None:
    """Serve the block on one origin and a host page on another, as the platform does.

    The host page mounts the block in a sandboxed iframe, speaks the bridge
    (BLOCK_INIT, tokens, theme, resize), flags contract violations and shows
    a live protocol trace. With --check it runs headless and prints a verdict.
    """
    from blockkit.extras import server_missing_line

    missing = server_missing_line("blockkit dev")
    if missing is not None:
        _say(f"blockkit dev: {missing}", err=True)
        raise SystemExit(EXIT_USAGE)
    from blockkit.dev.proxy import require_dev_server
    from blockkit.dev.session import DevOptions, DevSession
    from blockkit.dev.timings import PLATFORM_TIMINGS

    try:
        platform_dir: Path | None = None
        served_dir = block_dir
        if approved_data is not None and not approved:
            raise DevError("--data names where --approved reads the approved version; add --approved")
        if approved:
            if proxy is not None:
                raise DevError("--approved serves the approved bundle's files; it cannot be combined with --proxy")
            served_dir, platform_dir, trace_path = _approved_source(block_dir, approved_data, trace_path)
        options = DevOptions(
            block_dir=served_dir,
            platform_dir=platform_dir,
            surface=surface,
            proxy=proxy,
            theme=theme,
            anonymous=anonymous,
            scenarios=scenarios,
            context=_parse_context(context_values),
            timings=PLATFORM_TIMINGS.scaled(time_scale),
            trace_path=trace_path,
            block_port=block_port,
            host_port=host_port,
            allowed_hosts=allowed_hosts,
            # Interactive runs say each violation in the terminal too; --check lists them at the end.
            on_violation=None if check else _print_violation,
            on_note=_print_note,
            on_failed_call=None if check else _print_failed_call,
        )
        if browser_path is not None and not check:
            raise DevError("--browser names the Chromium that --check drives; add --check")
        session = DevSession(options)
        if proxy is not None:
            require_dev_server(proxy)
        if check:
            raise SystemExit(_run_check(session, output_format, browser_path))
        _serve(session)
    except DevError as exc:
        _say(f"blockkit dev: {exc}", err=True)
        raise SystemExit(EXIT_USAGE) from None


def _approved_source(block_dir: Path, data: Path | None, trace_path: Path | None) -> tuple[Path, Path, Path]:
    """Where --approved serves from, the dev platform's own data, and the trace (kept in DIR)."""
    import os

    from blockkit.dev.approved import prepare_approved
    from blockkit.dev.platform import DATA_DIR, DATA_ENV
    from blockkit.dev.session import DEFAULT_TRACE_NAME

    env = os.environ.get(DATA_ENV)
    own = (Path(env) if env else block_dir / DATA_DIR).absolute()
    source, label = prepare_approved(block_dir, (data or own).absolute())
    _print_note(f"serving {label} from {source}")
    return source, own, (trace_path or block_dir / DEFAULT_TRACE_NAME).absolute()


def _say(line: str, *, err: bool = False) -> None:
    # Block names, message types and console text are the block's: never raw to the terminal.
    click.echo(printable(line), err=err)


def _print_violation(violation: Violation) -> None:
    _say(f"violation: {violation.one_line()}", err=True)


def _print_failed_call(call: dict[str, Any]) -> None:
    from blockkit.dev.failures import failure_words

    _say(f"failed call: {call.get('type')}: {failure_words(call)}", err=True)


def _print_note(note: str) -> None:
    _say(f"note: {note}", err=True)


def _run_check(session: DevSession, output_format: str, browser_path: str | None) -> int:
    from blockkit.dev.browser import require_browser
    from blockkit.dev.check import run_check
    from blockkit.dev.verdict import exit_code, render_json, render_text

    executable = require_browser(browser_path)
    progress = _CheckProgress()
    try:
        with session:
            result = run_check(session, executable, progress)
    finally:
        progress.done()
    # render_text escapes what came from the block; JSON escapes every control character.
    click.echo(render_json(result) if output_format == "json" else render_text(result))
    return exit_code(result)


class _CheckProgress:
    """What ``--check`` waits for, on standard error. On a terminal, one status line rewritten
    every second (erased before the verdict); elsewhere (a CI log), one line per wait, when it
    starts."""

    def __init__(self) -> None:
        import sys

        self.stream = sys.stderr
        self.live = bool(getattr(self.stream, "isatty", lambda: False)())
        self.phase: str | None = None
        self.shown = False

    def __call__(self, phase: str, text: str) -> None:
        text = printable(text)
        if self.live:
            self.stream.write(f"\r\x1b[K{text}")
            self.stream.flush()
            self.shown = True
        elif phase != self.phase:
            self.stream.write(f"{text}\n")
            self.stream.flush()
        self.phase = phase

    def done(self) -> None:
        if self.live and self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def _serve(session: DevSession) -> None:
    for note in session.notes:
        _print_note(note)
    with session:
        _say(f"blockkit dev: {session.manifest.name} on {session.surface.label}")
        _say(f"  host page  {session.page_url}   <- open this (the link holds this run's key)")
        _say(f"  block      {session.block_url}   ({session.source.describe()})")
        _say(f"  trace      {session.trace_path}")
        if session.allowed_hosts:
            _say(f"  also for   {', '.join(session.allowed_hosts)}")
        if session.platform is not None:
            urls = session.platform.urls
            viewer = session.platform.viewer()
            _say(f"  platform   {urls.base_url}/api/v1   (the block's apiBaseUrl; OAuth {urls.auth_url},"
                 f" orchestration {urls.orchestration_url})")
            _say(f"  sign in    {session.platform.sign_in_url}   (the emulator's OAuth sign-in; the link holds"
                 " this run's access key)")
            _say(f"  data       {session.platform.data_dir}")
            _say(f"  viewer     {viewer['username'] if viewer else 'signed out'}   (switch in the host page)")
        click.echo("Ctrl-C stops.")
        try:
            session.wait()
        except KeyboardInterrupt:
            click.echo("\nstopping")


command = click.command("dev")(dev)

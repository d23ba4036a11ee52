"""What validate and lint share: path expansion, context flags, config discovery, output."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, NoReturn, Optional

import click

from blockkit.context import STAGES, Config, ConfigError, load_config, merge_flags
from blockkit.platform import MANIFEST_FILENAME, TRUST_TIERS

_SKIP_DIRS = frozenset({"node_modules", ".git", ".hg", ".svn", "dist", "build", ".venv", "venv", "__pycache__"})


class UsageProblem(Exception):
    """Something that makes the tool unable to do its job: exit status 2."""


# The path argument that means "read the manifest from standard input".
STDIN = "-"
STDIN_PATH = Path(STDIN)


def expand_paths(paths: tuple[str, ...]) -> Iterator[tuple[Path, Optional[str]]]:
    """Yield (manifest path, problem). A directory means its block.manifest.json, or every one below it.

    ``-`` is yielded as STDIN_PATH: standard input, once.
    """
    seen_stdin = False
    for raw in paths or (MANIFEST_FILENAME,):
        path = Path(raw)
        if raw == STDIN:
            if seen_stdin:
                yield path, "-: standard input can be read only once"
            else:
                seen_stdin = True
                yield STDIN_PATH, None
        elif path.is_dir():
            direct = path / MANIFEST_FILENAME
            if direct.is_file():
                yield direct, None
                continue
            found = sorted(_walk(path))
            if not found:
                yield path, f"{raw}: no {MANIFEST_FILENAME} in this directory or below it"
            for manifest in found:
                yield manifest, None
        elif not path.exists():
            yield path, f"{raw}: no such file or directory"
        else:
            yield path, None


def _walk(root: Path) -> Iterator[Path]:
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.startswith(".")]
        if MANIFEST_FILENAME in files:
            yield Path(folder) / MANIFEST_FILENAME


@dataclass
class ContextFlags:
    tier: Optional[str] = None
    allowed_origins: tuple[str, ...] = ()
    granted_scopes: tuple[str, ...] = ()
    app_domain: Optional[str] = None
    stage: Optional[str] = None
    config: Optional[Path] = None
    _cache: dict[Path, Config] = field(default_factory=dict)

    def config_for(self, manifest: Path) -> Config:
        """The config nearest to ``manifest`` (or --config), with flags applied on top."""
        folder = manifest.parent
        cached = self._cache.get(folder)
        if cached is None:
            base = load_config(folder, self.config)
            try:
                context = merge_flags(base.context, tier=self.tier, allowed_origins=self.allowed_origins,
                                      granted_scopes=self.granted_scopes, app_domain=self.app_domain,
                                      stage=self.stage)
            except ConfigError as exc:
                raise ConfigError(f"invalid option: {exc}") from None
            cached = Config(context=context, path=base.path, raw=base.raw)
            self._cache[folder] = cached
        return cached


def context_options(func: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option("--tier", type=click.Choice(TRUST_TIERS), help="Trust tier of the app (default: unverified)."),
        click.option("--allowed-origin", "allowed_origins", multiple=True, metavar="URL",
                     help="An origin the app's OAuth client allows (repeatable; default https://<blockId>.<app-domain>)."),
        click.option("--granted-scope", "granted_scopes", multiple=True, metavar="SCOPE",
                     help="A scope review granted (repeatable); declared scopes must stay within the grant."),
        click.option("--app-domain", metavar="DOMAIN", help="The platform's app domain (default civit.ai)."),
        click.option("--stage", type=click.Choice(STAGES), help="Which platform checks to run (default all)."),
        click.option("--config", "config", type=click.Path(dir_okay=False, path_type=Path),
                     help="Read settings from this blockkit.toml or pyproject.toml instead of the nearest one."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def report_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """--format, --strict and --output: how a command that produces a Report delivers it."""
    from blockkit.render import FORMATS

    options = [
        click.option("--format", "fmt", type=click.Choice(sorted(FORMATS)), default="text", show_default=True,
                     help="Output format."),
        click.option("--strict", is_flag=True, help="Warnings fail too."),
        click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path),
                     help="Write the report to FILE instead of standard output."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def stdin_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """--stdin-filename: what a manifest read from ``-`` is called, and where its settings are found."""
    return click.option(
        "--stdin-filename", type=click.Path(dir_okay=False, path_type=Path), metavar="PATH",
        help="With PATH '-': report the manifest read from standard input as PATH, and read settings "
             "(and, for lint, the project) as for a file there.")(func)


def error_line(message: str) -> str:
    """``blockkit: error: message`` for standard error, with control characters escaped: a path
    holding a line feed must not start a line of its own (CI runners read stderr for commands too)."""
    from blockkit.render.terminal import visible

    return f"blockkit: error: {visible(message)}"


def fail(message: str) -> NoReturn:
    click.echo(error_line(message), err=True)
    sys.exit(2)


def use_color(output_is_file: bool) -> bool:
    if output_is_file or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty()


def emit(text: str, output: Optional[Path]) -> None:
    # A "\ud800" escape in a manifest reaches messages as a lone surrogate, which UTF-8 cannot encode.
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    if output is None:
        click.echo(text, nl=False)
        return
    from blockkit.fix.atomic import write_file

    try:
        # A fresh, exclusively created temporary name: a planted "FILE.tmp" link is never followed.
        write_file(output, text.encode("utf-8"))
    except OSError as exc:
        fail(f"{output}: cannot write output: {exc.strerror or exc}")

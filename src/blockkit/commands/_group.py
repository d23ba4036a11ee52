"""The click group behind ``blockkit``: every command, --help, --version and usage errors.

``blockkit.cli`` builds it on first use; a plain ``validate`` or ``lint`` run never does
(commands/_options.py).
"""

from __future__ import annotations

import importlib

import click

from blockkit._version import __version__
from blockkit.commands._common import echo
from blockkit.commands._run import (
    CANNOT_RUN,
    COMMANDS,
    DEBUG_VARIABLE,
    INTERRUPTED,
    caused_by_interrupt,
    closed_output,
    end_closed_output,
    internal_error_line,
)


class LazyGroup(click.Group):
    """Imports a subcommand's module only when that subcommand is asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name, (module, _) in COMMANDS.items() if _module_exists(module))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None or not _module_exists(entry[0]):
            return None
        return importlib.import_module(entry[0]).command


    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        name = click.utils.make_str(args[0]) if args else ""
        if args and self.get_command(ctx, name) is None and not name.startswith("-"):
            import difflib

            close = difflib.get_close_matches(name, self.list_commands(ctx), n=1, cutoff=0.6)
            if close:
                ctx.fail(f"No such command {name!r}. Did you mean {close[0]!r}?")
        return super().resolve_command(ctx, args)


def _module_exists(module: str) -> bool:
    from importlib.util import find_spec

    try:
        return find_spec(module) is not None
    except ModuleNotFoundError:
        return False


class _Group(LazyGroup):
    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: object) -> click.Context:
        # --help and --version print while the arguments are read, before invoke.
        try:
            return super().make_context(info_name, args, parent=parent, **extra)  # type: ignore[arg-type]
        except OSError as exc:
            if closed_output(exc):
                end_closed_output(exc)
            raise

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except (KeyboardInterrupt, click.Abort):  # Abort: Ctrl-C or end of input at a prompt
            echo("\nblockkit: interrupted", err=True)
            ctx.exit(INTERRUPTED)
        except (click.ClickException, click.exceptions.Exit):
            raise
        except Exception as exc:  # a bug of ours: one line and exit 2, never a traceback, never "ok"
            import os

            if closed_output(exc):  # `blockkit ... | head`: the reader left; end quietly
                end_closed_output(exc)
            if caused_by_interrupt(exc):  # cleanup that failed under a Ctrl-C: still an interrupt
                echo("\nblockkit: interrupted", err=True)
                ctx.exit(INTERRUPTED)

            if os.environ.get(DEBUG_VARIABLE):
                raise
            echo(internal_error_line(exc), err=True)
            ctx.exit(CANNOT_RUN)

    # The stock help lists commands by loading each one; ours reads the table.
    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [
            (name, help_text)
            for name, (module, help_text) in sorted(COMMANDS.items())
            if _module_exists(module)
        ]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="blockkit")
def main() -> None:
    """blockkit: validate, lint, scaffold and run app blocks."""

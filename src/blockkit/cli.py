"""The ``blockkit`` command line.

Subcommands live in ``blockkit.commands.<name>`` and are imported only when
they run, so ``blockkit --version`` and ``blockkit --help`` never load the
validation stack.
"""

from __future__ import annotations

import importlib

import click

from blockkit._version import __version__

# name -> (module, one-line help shown by --help without importing the module)
COMMANDS: dict[str, tuple[str, str]] = {
    "validate": ("blockkit.commands.validate", "Check manifests against the schema and every platform rule."),
    "lint": ("blockkit.commands.lint", "Validate, then advise on mistakes that pass validation."),
    "fix": ("blockkit.commands.fix", "Apply safe (or, with --unsafe, all) autofixes."),
    "explain": ("blockkit.commands.explain", "Explain a rule: what, why, example, fix."),
    "rules": ("blockkit.commands.rules", "List every rule."),
    "diff": ("blockkit.commands.diff", "Compare two versions of a manifest as review would."),
    "new": ("blockkit.commands.new", "Scaffold a new block."),
    "dev": ("blockkit.commands.dev", "Run a block in a local host that behaves like the platform."),
    "emulator": ("blockkit.commands.emulator", "Serve the platform's APIs (catalogue, OAuth, orchestration) locally."),
}


class LazyGroup(click.Group):
    """Imports a subcommand's module only when that subcommand is asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name, (module, _) in COMMANDS.items() if _module_exists(module))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None or not _module_exists(entry[0]):
            return None
        return importlib.import_module(entry[0]).command


def _module_exists(module: str) -> bool:
    from importlib.util import find_spec

    try:
        return find_spec(module) is not None
    except ModuleNotFoundError:
        return False


# Exit status of a run the user interrupted (128 + SIGINT), as shells report it: never 1,
# which means "errors found", and never 0.
INTERRUPTED = 130


# Exit status when blockkit could not do its job (see the README's exit statuses).
CANNOT_RUN = 2
# Set to see the traceback behind an internal error.
DEBUG_VARIABLE = "BLOCKKIT_DEBUG"


class _Group(LazyGroup):
    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except (KeyboardInterrupt, click.Abort):  # Abort: Ctrl-C or end of input at a prompt
            click.echo("\nblockkit: interrupted", err=True)
            ctx.exit(INTERRUPTED)
        except (click.ClickException, click.exceptions.Exit):
            raise
        except Exception as exc:  # a bug of ours: one line and exit 2, never a traceback, never "ok"
            import os

            if os.environ.get(DEBUG_VARIABLE):
                raise
            click.echo(f"blockkit: internal error: {type(exc).__name__}: {exc} (a bug in blockkit; please"
                       f" report it, with the traceback that {DEBUG_VARIABLE}=1 shows)", err=True)
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


if __name__ == "__main__":  # pragma: no cover
    main()

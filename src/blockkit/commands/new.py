"""``blockkit new DIR``: scaffold a block that validates, builds and answers the host."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from blockkit.platform import AUTH_MODES, CATEGORIES, CONTENT_RATINGS, PAGE_SLOT, REPOSITORY_HOSTS
from blockkit.scaffold.catalog import TEMPLATES
from blockkit.scaffold.options import SURFACES
from blockkit.scaffold.package_managers import PACKAGE_MANAGERS

USAGE_ERROR = 2


class _Choice(click.Choice):
    """click.Choice, case-insensitive, that says which choice a wrong value probably meant
    ("PG-13" -> pg13, "game" -> games)."""

    def __init__(self, choices: Any) -> None:
        super().__init__(tuple(choices), case_sensitive=False)

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as exc:
            from blockkit.scaffold.options import did_you_mean

            guess = did_you_mean(str(value), tuple(str(c) for c in self.choices))
            if guess is None:
                raise
            self.fail(f"{exc.message} Did you mean {guess!r}?", param, ctx)


def _fail(message: str) -> None:
    click.echo(f"blockkit new: error: {message}", err=True)
    sys.exit(USAGE_ERROR)


def _flags(values: dict[str, Any]) -> dict[str, Any]:
    from blockkit.scaffold.options import parse_justify_flags

    given = {k: v for k, v in values.items() if v is not None and k not in ("scopes", "justify")}
    if values["scopes"]:
        given["scopes"] = values["scopes"]
    if values["justify"]:
        given["justifications"] = parse_justify_flags(values["justify"])
    return given


def _report(outcome: Any) -> None:
    from blockkit.scaffold.flow import next_steps
    from blockkit.scaffold.package_managers import PACKAGE_MANAGERS

    answers, files = outcome.answers, outcome.files
    where = "its own page" if answers.on_page else f"the {answers.surface} slot"
    what = f"{answers.name!r} ({answers.block_id}) in {outcome.directory}: {answers.template} template, on {where}"
    if not outcome.rerun:
        click.echo(f"Created {what}.")
        click.echo(f"  wrote {len(files.written)} file(s)")
    elif files.written:
        click.echo(f"Updated {what}.")
        click.echo(f"  wrote {len(files.written)} file(s): {', '.join(files.written)}")
    else:
        click.echo(f"{what[0].upper()}{what[1:]}.")
        click.echo(f"  already up to date: {len(files.unchanged)} file(s), nothing written")
    if outcome.rerun and files.written and files.unchanged:
        click.echo(f"  {len(files.unchanged)} file(s) already up to date")
    for names, why in (
        (files.changed, "you changed"),
        (files.removed, "you removed"),
        (files.foreign, "blockkit did not write"),
    ):
        if names:
            verb = "left out" if names is files.removed else "kept"
            click.secho(f"  {verb} {len(names)} file(s) {why}: {', '.join(names)}", fg="yellow")
    if files.upgrades_missed:
        click.secho(
            f"  the template has a newer version of {', '.join(files.upgrades_missed)}, not applied because you"
            " changed it; to take it, move your copy away, run again and merge by hand",
            fg="yellow",
        )
    if not outcome.ok:
        from blockkit.scaffold.selfcheck import describe

        click.secho("Self-check failed: the manifest written is not valid. This is a blockkit bug:", fg="red", err=True)
        click.echo(describe(outcome.findings), err=True)
        return
    click.echo("Self-check: block.manifest.json is valid for a new (unverified) app.")
    if not answers.on_page:
        click.echo(
            f"Note: model slots are open to moderators' apps only at launch; {answers.surface} is accepted but not yet shown."
        )
    if outcome.git_root is not None:
        click.echo(
            f"Note: this block is inside the git repository at {outcome.git_root}. pre-commit reads only"
            f" {outcome.git_root / '.pre-commit-config.yaml'}, so move the hooks of .pre-commit-config.yaml there"
            " and give them this folder's path."
        )
    click.echo("\nNext steps:")
    for step in next_steps(outcome):
        click.echo(f"  {step}")
    if answers.package_manager:
        lockfile = PACKAGE_MANAGERS[answers.package_manager].lockfile
        click.echo(f"\nCommit {lockfile}: the platform builds strictly from it.")


@click.command("new", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("directory", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "--template", type=_Choice(tuple(TEMPLATES)), help="static (no build), vite (vanilla TS), react (TS)."
)
@click.option("--surface", type=_Choice((*SURFACES, PAGE_SLOT)), help="page (default) or a model slot.")
@click.option("--name", help="Display name; the blockId is derived from it.")
@click.option("--block-id", help="The blockId, when the name does not give a usable one.")
@click.option("--content-rating", type=_Choice(CONTENT_RATINGS), help="Default: g.")
@click.option("--category", type=_Choice(CATEGORIES), help="Store category.")
@click.option("--tagline", help="One-line store tagline (at most 140 characters).")
@click.option("--repository", metavar="URL", help=f"Public source repository on {', '.join(REPOSITORY_HOSTS)}.")
@click.option(
    "--scope", "scopes", multiple=True, metavar="SCOPE", help="A scope to request; repeat, or comma-separate."
)
@click.option("--justify", multiple=True, metavar="SCOPE=TEXT", help="Why a sensitive scope is needed; repeatable.")
@click.option("--goods/--no-goods", default=None, help="Start a goods catalogue (adds the scopes it needs).")
@click.option("--auth", type=_Choice(AUTH_MODES), help="block-token (default) or oauth (adds user:read:self).")
@click.option(
    "--package-manager", "-p", type=_Choice(tuple(PACKAGE_MANAGERS)), help="npm (default), pnpm or yarn."
)
@click.option("--buzz-budget", type=int, metavar="N", help="Buzz per generation, for a page with ai:write:budgeted.")
@click.option("--boot-skeleton/--no-boot-skeleton", default=None, help="Loading skeleton in index.html (default: on).")
@click.option(
    "--defaults", "use_defaults", is_flag=True, help="Take the default for every question not answered by a flag."
)
@click.option("--no-input", is_flag=True, help="Never prompt; fail listing any required answer not given.")
@click.option("--force", is_flag=True, help="Write into a non-empty directory; files you changed are kept.")
def command(directory: Path, use_defaults: bool, no_input: bool, force: bool, **values: Any) -> None:
    """Scaffold a new block in DIRECTORY.

    On a terminal, asks for every answer not given as a flag. Without one (or
    with --no-input) it never asks, and fails listing what it lacks.
    """
    from blockkit.scaffold.flow import ScaffoldError, create, gather
    from blockkit.scaffold.options import AnswerError
    from blockkit.scaffold.questions import MissingAnswers

    prompter = None
    if not (use_defaults or no_input) and sys.stdin.isatty():
        from blockkit.scaffold.prompts import TerminalPrompter

        prompter = TerminalPrompter()
    try:
        answers, previous = gather(directory, _flags(values), prompter=prompter, use_defaults=use_defaults, force=force)
        outcome = create(directory, answers, previous)
    except MissingAnswers as exc:
        why = "with --no-input" if no_input else "and no terminal to ask on" if not use_defaults else "with no default"
        click.echo(f"blockkit new: error: missing answers ({why}):\n{exc}", err=True)
        hint = "Give them as flags" + ("." if use_defaults else ", or pass --defaults to take the defaults.")
        click.echo(hint, err=True)
        sys.exit(USAGE_ERROR)
    except (AnswerError, ScaffoldError) as exc:
        _fail(str(exc))
    _report(outcome)
    sys.exit(0 if outcome.ok else 1)

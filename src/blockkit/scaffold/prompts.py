"""Asking the questions on a terminal, with click."""

from __future__ import annotations

from typing import Any

import click

from blockkit.scaffold.options import AnswerError
from blockkit.scaffold.questions import SCOPE_LIST, Known, Question, scope_menu


def _shown(default: Any) -> str | None:
    if default is None:
        return None
    if isinstance(default, tuple):
        return ", ".join(default) or "none"
    return str(default)


class TerminalPrompter:
    """Asks on the terminal and re-asks, saying why, until the answer parses."""

    def note(self, text: str) -> None:
        click.secho(text, fg="yellow", err=True)

    def ask(self, question: Question, default: Any, known: Known) -> Any:
        if question is SCOPE_LIST or question.key == SCOPE_LIST.key:
            click.echo("Known scopes:\n" + scope_menu())
        label = question.label or question.text
        if question is SCOPE_LIST or question.key == SCOPE_LIST.key:
            # The scopes the templates' code and the goods need are declared whatever the answer:
            # say so, rather than a bare "[none]" that the manifest then contradicts.
            from blockkit.scaffold import options as o

            anyway = o.all_scopes((), goods=bool(known.get("goods")), auth=known.get("auth") or o.DEFAULT_AUTH)
            label = f"More scopes, comma-separated ({', '.join(anyway)} declared already)"
        if question.yes_no:
            return click.confirm(label, default=bool(default))
        if question.choices:
            label = f"{label} ({', '.join(question.choices)})"
        shown = _shown(default)
        optional = shown is None and not question.required
        while True:
            raw = click.prompt(
                label,
                # An optional question with no default accepts an empty answer.
                default="" if optional else shown,
                show_default=not optional,
            )
            try:
                return question.parse(raw, known)
            except AnswerError as exc:
                click.secho(f"  {exc}", fg="red", err=True)

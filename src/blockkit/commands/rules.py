"""``blockkit rules``: every rule, as a table, JSON, or the guide's Markdown index (docs/rules.md)."""

from __future__ import annotations

import json
from typing import Any

import click


def all_rules() -> list[dict[str, Any]]:
    from blockkit.ruleinfo import describe
    from blockkit.rules import load_all

    return [describe(rule) for _, rule in sorted(load_all().items())]


def render_text(rules: list[dict[str, Any]]) -> str:
    rows = [(r["code"], r["severity"], r["layer"], r["fixable"] or "-", r["name"], r["summary"]) for r in rules]
    header = ("CODE", "SEVERITY", "LAYER", "FIX", "NAME", "SUMMARY")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(5)]
    lines = []
    for row in [header, *rows]:
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[5])
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    # A pipe would end the table cell, and a line break the row.
    return " ".join(text.split()).replace("|", "\\|")


def render_markdown(rules: list[dict[str, Any]]) -> str:
    """The guide's rule index (docs/rules.md): one table row per rule, generated from the rules' own docs."""
    lines = [
        "| Code | Name | Layer | Severity | Autofix | Summary |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in rules:
        lines.append(f"| {r['code']} | `{r['name']}` | {r['layer']} | {r['severity']} | "
                     f"{r['fixable'] or ''} | {_cell(r['summary'])} |")
    return "\n".join(lines) + "\n"


RENDERERS = {"text": render_text, "json": lambda rules: json.dumps(rules, indent=2, ensure_ascii=False) + "\n",
             "markdown": render_markdown}


@click.command("rules")
@click.option("--format", "fmt", type=click.Choice(sorted(RENDERERS)), default="text", show_default=True,
              help="Output format (markdown is the guide's rule index).")
def command(fmt: str) -> None:
    """List every rule: code, severity, layer, autofix and summary. `blockkit explain CODE` says more."""
    click.echo(RENDERERS[fmt](all_rules()), nl=False)

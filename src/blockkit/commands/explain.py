"""``blockkit explain CODE``: a rule's four parts, its severity, layer and fixability."""

from __future__ import annotations

import json
from difflib import get_close_matches
from typing import Any, Optional

import click

from blockkit.ruleinfo import describe  # noqa: F401 (explain's JSON; rules.py reads it from here too)


def find_rule(query: str) -> tuple[Optional[Any], list[str]]:
    """The rule a code or name names (case-insensitive), or None and the closest codes."""
    from blockkit.rules import load_all

    registry = load_all()
    wanted = query.strip()
    by_code = {code.upper(): rule for code, rule in registry.items()}
    found = by_code.get(wanted.upper())
    if found is not None:
        return found, []
    named = sorted(code for code, rule in registry.items() if rule.name == wanted.lower())
    if len(named) == 1:
        return registry[named[0]], []
    if named:  # two layers may use one name (a schema rule and a lint rule): let the user pick
        return None, named
    names: dict[str, list[str]] = {}
    for code, rule in sorted(registry.items()):
        names.setdefault(rule.name, []).append(code)
    close = get_close_matches(wanted.upper(), list(by_code), n=3, cutoff=0.6)
    for name in get_close_matches(wanted.lower(), list(names), n=3, cutoff=0.6):
        close += names[name]
    return None, list(dict.fromkeys(close))


def render_text(info: dict[str, Any]) -> str:
    if info["fixable"] == "safe":
        fixable = f"yes, safe: `blockkit fix` will {info['autofix']}"
    elif info["fixable"] == "unsafe":
        fixable = f"yes, unsafe: `blockkit fix --unsafe` will {info['autofix']}"
    else:
        fixable = "no"
    if info["layer"] == "diff":
        stage = "when a new version is compared with the last (`blockkit diff`, `blockkit lint --against`)"
    elif info["layer"] == "bundle":
        stage = "when a submission's zip is checked (`blockkit package`, `blockkit.check_bundle`)"
    else:
        stage = {"submit": "at submit (and every later check)", "approve": "at moderator approval"}.get(
            info["stage"], info["stage"])
    lines = [
        f"{info['code']} ({info['name']}): {info['summary']}",
        "",
        f"  Severity: {info['severity']}",
        f"  Layer:    {info['layer']}",
        f"  Checked:  {stage}",
        f"  Autofix:  {fixable}",
    ]
    for title, key in (("What it does", "what"), ("Why it matters", "why"), ("Example", "example"),
                       ("Fix", "fix")):
        lines += ["", f"## {title}", info[key]]
    return "\n".join(lines) + "\n"


@click.command("explain")
@click.argument("code")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Output format.")
def command(code: str, fmt: str) -> None:
    """Explain the rule CODE (for example BK110, or its name): what, why, example, fix."""
    rule, suggestions = find_rule(code)
    if rule is None:
        hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else "; `blockkit rules` lists them all"
        click.echo(f"blockkit: error: no rule {code!r}{hint}", err=True)
        raise SystemExit(2)
    info = describe(rule)
    if fmt == "json":
        click.echo(json.dumps(info, indent=2, ensure_ascii=False))
    else:
        click.echo(render_text(info), nl=False)

"""The options of ``validate`` and ``lint``, as one table each: the single source of truth for
both the click command (help, usage errors) and a small argv parser that needs no click.

Importing click costs ~25 ms, more than a third of what blockkit adds to the interpreter's
start on a cold one-file ``blockkit validate`` (the pre-commit hook's case). So
``blockkit.cli`` first offers the argument list to :func:`parse_fast`. That parser accepts
only what it understands completely, and gives back exactly the keyword arguments click
would pass to the command's callback. Everything else (``--help``, ``-h``, ``--version``,
an unknown option, a missing or bad value, a value that begins with ``-``, a path click's
checks would refuse) makes it return None, and click parses the same list as it always
did, with its own messages. ``tests/test_cli_fast.py`` runs a matrix of argument lists
both ways and compares every byte of output.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

# Kinds of option
FLAG = "flag"  # --strict: True when given
VALUE = "value"  # --app-domain DOMAIN: a string, the last one given wins
MULTIPLE = "multiple"  # --allowed-origin URL: every one given, in order, as a tuple
CHOICE = "choice"  # --tier unverified|verified|internal
FILE = "file"  # --output FILE: a path that must not be a directory (click.Path(dir_okay=False))


class Option:
    """One command-line option. A plain class: a dataclass would cost its generated code
    at import, on the path where every millisecond shows."""

    __slots__ = ("flags", "dest", "kind", "help", "metavar", "choices", "default", "show_default")

    def __init__(self, flags: tuple[str, ...], dest: str, kind: str, help: str, *, metavar: Optional[str] = None,
                 choices: Optional[Callable[[], Sequence[str]]] = None, default: Any = None,
                 show_default: bool = False) -> None:
        self.flags = flags  # as click is given them: the long name first, then any short one
        self.dest = dest
        self.kind = kind
        self.help = help
        self.metavar = metavar
        self.choices = choices  # called when needed: the tables live in modules loaded later
        self.default = default
        self.show_default = show_default


def _formats() -> list[str]:
    from blockkit.render import FORMATS

    return sorted(FORMATS)


def _tiers() -> Sequence[str]:
    from blockkit.platform import TRUST_TIERS

    return TRUST_TIERS


def _stages() -> Sequence[str]:
    from blockkit.context import STAGES

    return STAGES


# --format, --strict and --output: how a command that produces a Report delivers it.
REPORT_OPTIONS: tuple[Option, ...] = (
    Option(("--format",), "fmt", CHOICE, "Output format.", choices=_formats, default="text", show_default=True),
    Option(("--strict",), "strict", FLAG, "Warnings fail too.", default=False),
    Option(("--output", "-o"), "output", FILE, "Write the report to FILE instead of standard output."),
)

# --stdin-filename: what a manifest read from ``-`` is called, and where its settings are found.
STDIN_OPTIONS: tuple[Option, ...] = (
    Option(("--stdin-filename",), "stdin_filename", FILE,
           "With PATH '-': report the manifest read from standard input as PATH, and read settings "
           "(and, for lint, the project) as for a file there.", metavar="PATH"),
)

# The platform state a verdict depends on (blockkit.context).
CONTEXT_OPTIONS: tuple[Option, ...] = (
    Option(("--tier",), "tier", CHOICE, "Trust tier of the app (default: unverified).", choices=_tiers),
    Option(("--allowed-origin",), "allowed_origins", MULTIPLE,
           "An origin the app's OAuth client allows; a bare host such as cdn.example.com:8443 means "
           "https://cdn.example.com:8443, as on the platform (repeatable; default https://<blockId>.<app-domain>).",
           metavar="URL", default=()),
    Option(("--granted-scope",), "granted_scopes", MULTIPLE,
           "A scope review granted (repeatable); declared scopes must stay within the grant.",
           metavar="SCOPE", default=()),
    Option(("--app-domain",), "app_domain", VALUE, "The platform's app domain (default civit.ai).",
           metavar="DOMAIN"),
    Option(("--stage",), "stage", CHOICE, "Which platform checks to run (default all).", choices=_stages),
    Option(("--config",), "config", FILE,
           "Read settings from this blockkit.toml or pyproject.toml instead of the nearest one."),
)

LINT_OPTIONS: tuple[Option, ...] = (
    Option(("--baseline",), "baseline", FILE,
           "Hide the lint findings recorded in FILE; report only new ones (and entries that went stale).",
           metavar="FILE"),
    Option(("--update-baseline",), "update_baseline", FLAG,
           "Record today's lint findings in the --baseline FILE (created if absent), then report the rest.",
           default=False),
    Option(("--against",), "against", VALUE,
           "Also compare each manifest with its state at git revision REV, as review would (BK4xx).",
           metavar="REV"),
)

# Each command: its options in the order its --help lists them. Both take PATH arguments.
VALIDATE: tuple[Option, ...] = REPORT_OPTIONS + STDIN_OPTIONS + CONTEXT_OPTIONS
LINT: tuple[Option, ...] = REPORT_OPTIONS + LINT_OPTIONS + STDIN_OPTIONS + CONTEXT_OPTIONS


# --- click ---------------------------------------------------------------------------------------


def click_option(option: Option) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The ``click.option`` decorator for ``option``."""
    import click

    names = (*option.flags, option.dest)
    kwargs: dict[str, Any] = {"help": option.help}
    if option.metavar is not None:
        kwargs["metavar"] = option.metavar
    if option.kind == FLAG:
        kwargs["is_flag"] = True
    elif option.kind == MULTIPLE:
        kwargs["multiple"] = True
    elif option.kind == CHOICE:
        assert option.choices is not None
        kwargs["type"] = click.Choice(option.choices())
    elif option.kind == FILE:
        kwargs["type"] = click.Path(dir_okay=False, path_type=Path)
    if option.kind == CHOICE and option.default is not None:
        kwargs["default"] = option.default
    if option.show_default:
        kwargs["show_default"] = True
    return click.option(*names, **kwargs)


def click_options(options: Sequence[Option]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a command's function with ``options``, listed in --help in table order."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            func = click_option(option)(func)
        return func

    return decorate


def click_command(name: str, options: Sequence[Option], callback: Callable[..., Any]) -> Any:
    """The click command ``name``: PATH arguments, then ``options``; its help is ``callback``'s docstring."""
    import click

    func = click.argument("paths", nargs=-1, type=click.Path(path_type=str))(click_options(options)(callback))
    return click.command(name)(func)


# --- the fast parser -----------------------------------------------------------------------------


def _path_ok(value: str, *, dir_okay: bool) -> bool:
    """Whether click.Path(exists=False, readable=True, dir_okay=...) accepts ``value`` as it is."""
    if dir_okay:
        # A PATH argument: accepted if it does not exist, or if it can be read. One call answers
        # the usual case (it exists and can be read) without the stat (~2.5 ms per 1000 paths).
        try:
            if os.access(value, os.R_OK):
                return True
        except ValueError:  # an embedded NUL: whatever click makes of it
            return False
    try:
        st = os.stat(value)
    except OSError:
        return True  # a path that does not exist is accepted (and reported later, by us)
    except ValueError:  # an embedded NUL: whatever click makes of it
        return False
    if not dir_okay and stat.S_ISDIR(st.st_mode):
        return False
    return os.access(value, os.R_OK)


def parse_fast(argv: Sequence[str], options: Sequence[Option]) -> Optional[dict[str, Any]]:
    """The keyword arguments click would give the command for ``argv``, or None when click
    must parse it: whatever this parser does not understand completely, and every error."""
    long: dict[str, Option] = {}
    short: dict[str, Option] = {}
    for option in options:
        for flag in option.flags:
            (long if flag.startswith("--") else short)[flag] = option
    values: dict[str, Any] = {option.dest: option.default for option in options}
    multiple: dict[str, list[str]] = {}
    paths: list[str] = []
    rest = list(argv)
    rest.reverse()
    only_paths = False
    while rest:
        arg = rest.pop()
        if only_paths or arg[:1] != "-" or arg == "-":
            paths.append(arg)
            continue
        if arg == "--":
            only_paths = True
            continue
        value: Optional[str]
        if arg[:2] == "--":
            name, equals, attached = arg.partition("=")
            option = long.get(name)
            if option is None:
                return None
            value = attached if equals else None
        else:
            option = short.get(arg[:2])
            if option is None or option.kind == FLAG:
                return None
            value = arg[2:] or None
            if value is not None and value[:1] == "=":
                return None
        if option.kind == FLAG:
            if value is not None:
                return None  # click: "Option '--strict' does not take a value."
            values[option.dest] = True
            continue
        if value is None:
            if not rest:
                return None  # click: "Option '--tier' requires an argument."
            value = rest.pop()
        if value[:1] == "-":
            return None  # click would take it as the value; a slip more often than not: let click decide
        if option.kind == CHOICE:
            assert option.choices is not None
            if value not in option.choices():
                return None
        elif option.kind == FILE:
            if not _path_ok(value, dir_okay=False):
                return None
        if option.kind == MULTIPLE:
            multiple.setdefault(option.dest, []).append(value)
        elif option.kind == FILE:
            values[option.dest] = Path(value)
        else:
            values[option.dest] = value
    for path in paths:
        if not _path_ok(path, dir_okay=True):
            return None
    for dest, given in multiple.items():
        values[dest] = tuple(given)
    values["paths"] = tuple(paths)
    return values

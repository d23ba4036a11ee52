"""``blockkit lsp``: the language server for block.manifest.json, on standard input and output."""

from __future__ import annotations

import click

from blockkit.commands._common import echo

MISSING = "blockkit: error: blockkit lsp needs pygls and lsprotocol: pip install 'blockkit[lsp]'"


@click.command("lsp")
@click.option("--stdio", is_flag=True, help="Talk over standard input and output (the default and only way; "
                                            "accepted because editors pass it).")
def command(stdio: bool) -> None:
    """Serve the Language Server Protocol on standard input and output.

    Editors start it and send it the manifests being edited: it reports every validate and
    lint finding as you type (the same codes and ranges as `blockkit lint --format json`),
    offers `blockkit fix`'s fixes as code actions, and explains keys, scopes and rules on
    hover. Settings come from blockkit.toml or [tool.blockkit] as for lint; the editor may
    pass tier, allowedOrigins, grantedScopes, appDomain, stage and config as initialization
    options (the --tier, --allowed-origin, --granted-scope, ... flags).
    """
    try:
        import lsprotocol  # noqa: F401
        import pygls  # noqa: F401
    except ImportError:
        echo(MISSING, err=True)
        raise SystemExit(2) from None
    from blockkit.lsp.server import serve

    serve()

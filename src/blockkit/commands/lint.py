"""``blockkit lint``: validation, then advice on mistakes that pass validation."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from blockkit.commands import _options
from blockkit.commands._common import ContextFlags, echo, fail
from blockkit.commands.validate import run_check

# The options, in --help order: the click command and the fast parser both read this table.
OPTIONS = _options.LINT


def execute(paths: tuple[str, ...], fmt: str, strict: bool, output: Optional[Path], baseline: Optional[Path],
            update_baseline: bool, against: Optional[str], stdin_filename: Optional[Path], **context: object) -> None:
    """Validate manifests, then lint them and the block project next to them.

    PATH is a block.manifest.json, or a directory holding one (searched
    recursively), or - for standard input. Lint reads index.html, package.json, the lockfiles and the
    block's source beside a file named block.manifest.json. Settings come from
    blockkit.toml or [tool.blockkit]: select, ignore, per-file-ignores,
    severity and exceptions, which apply to lint rules (BK3xx) only. Exit
    status: 0 no errors, 1 errors found, 2 the tool could not do its job.
    """
    from blockkit.context import ConfigError
    from blockkit.engine import ALL_LAYERS
    from blockkit.lint.baseline import load
    from blockkit.lint.policy import LintPolicy

    if update_baseline and baseline is None:
        fail("--update-baseline needs --baseline FILE")
    try:
        recorded = load(baseline, missing_ok=update_baseline) if baseline is not None else None
    except ConfigError as exc:
        fail(str(exc))
    policy = LintPolicy(recorded, update_baseline=update_baseline)
    flags = ContextFlags(**context)  # type: ignore[arg-type]
    checker = policy
    if against is not None:
        from blockkit.diff.against import AgainstRevision

        checker = AgainstRevision(policy, against)  # type: ignore[assignment]
    status = run_check(paths, flags, layers=ALL_LAYERS, strict=strict, fmt=fmt, output=output,
                       project_aware=True, policy=checker, stdin_filename=stdin_filename)
    if policy.written is not None:
        echo(f"blockkit: wrote {policy.written} baseline entr{'y' if policy.written == 1 else 'ies'} "
             f"to {baseline}", err=True)
    raise SystemExit(status)


def __getattr__(name: str) -> object:
    # ``command``, the click command, is built on first use: the fast path never needs click.
    if name == "command":
        built = globals()["command"] = _options.click_command("lint", OPTIONS, execute)
        return built
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

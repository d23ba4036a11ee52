"""Rules about lint's own suppressions: exceptions and baseline entries that match nothing.

They have no check function: ``blockkit.lint.policy`` reports them once every
manifest of a run has been checked, at the entry in the config or baseline file.
"""

from __future__ import annotations

from blockkit.rules.base import declare

UNUSED_EXCEPTION = declare(
    "BK390", "unused-exception", layer="lint", severity="warning",
    doc="""An exception in the config matches no finding.

    ## What it does
    Reports an entry of `exceptions` in `blockkit.toml` or `[tool.blockkit]` that
    excused no finding in any manifest it applies to during this run, at the entry
    in the config file. Exceptions with a `path` are judged only when a manifest
    matching it was checked.

    ## Why it matters
    An exception documents a decision about one finding. Once the manifest changes
    (the key removed, the pointer moved) a leftover exception excuses nothing
    today but would silently swallow the next finding that lands on that pointer.

    ## Example
    [[tool.blockkit.exceptions]]
    pointer = "/appId"
    codes = ["BK301"]
    reason = "read by our deploy script"
    (and the manifest no longer has "appId")

    ## Fix
    Delete the exception, or point it at where the finding is now.
    """,
)

STALE_BASELINE_ENTRY = declare(
    "BK391", "stale-baseline-entry", layer="lint", severity="warning",
    doc="""A baseline entry matches no finding any more.

    ## What it does
    Reports an entry of the `--baseline` file whose manifest was checked in this run
    (or no longer exists) but which matched none of its findings, at the entry in
    the baseline file.

    ## Why it matters
    A baseline lists the findings a project accepted when it adopted lint, so that
    only new ones fail. An entry whose finding was fixed would hide the same
    problem if it came back; keeping the baseline exact keeps it shrinking.

    ## Example
    {"path": "block.manifest.json", "code": "BK302", "pointer": "/scopes/3"}
    after the repeated scope was removed

    ## Fix
    Run `blockkit lint --baseline FILE --update-baseline` to record the findings as
    they are now, or delete the entry.
    """,
)

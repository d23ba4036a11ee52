"""Server rules on `settings.*.pattern`: the platform's submission gate for setting patterns.

Source: civitai/civitai@ebed661, ``BlockManifestValidator.validateSubmission``
(src/server/services/block-manifest-validator.service.ts), which runs
``collectSettingsPatternErrors`` (src/server/services/blocks/settings-pattern-guard.ts) on
every submission and approval. It reads the raw manifest: `settings` must be an object
(not an array); each of its values that is an object (not an array) and has a string
`pattern` is checked, whatever its `type`; nothing else in `settings` is looked at here.
"""

from __future__ import annotations

from typing import Any, Iterator

from blockkit.jsstr import show
from blockkit.platform import SETTINGS_PATTERN_MAX_LENGTH
from blockkit.rules.base import Hit, RuleContext, pointer_join, rule
from blockkit.rules.guard import at

# A manifest passes when no setting has a string `pattern`: then no rule here finds anything.
_GUARD = at(["settings"], {"additionalProperties": {"properties": {"pattern": {"not": {"type": "string"}}}}})


def _patterned(manifest: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], str]]:
    """(key, field, pattern) for every setting the platform's gate looks at, in document order."""
    settings = manifest.get("settings")
    if not isinstance(settings, dict):
        return
    for key, field in settings.items():
        if isinstance(field, dict) and isinstance(field.get("pattern"), str):
            yield key, field, field["pattern"]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@rule("BK225", "settings-pattern-unbounded", layer="server", severity="error", stage="submit",
      keys=("settings",), guard=_GUARD)
def settings_pattern_unbounded(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """A setting with a `pattern` does not bound its input with `max_length` of at most 1000.

    ## What it does
    For every entry of `settings` that is an object with a string `pattern` (of any
    `type`), reports a `max_length` that is missing or not a number ("must also
    declare max_length"), and one above 1000. Only the upper bound is the
    platform's rule here: a `max_length` of 0 or 2.5 passes this gate.

    ## Why it matters
    The platform refuses the manifest at submission and at approval: its setting
    patterns are run against viewers' input, and the bound on that input is what
    keeps a pattern's matching time in check. Source: civitai/civitai@ebed661
    settings-pattern-guard.ts (the limit is MAX_PATTERNED_INPUT_LEN in
    manifest-settings.meta.schema.ts).

    ## Example
    "settings": {"code": {"type": "string", "pattern": "^[a-z]+$", ...}}   (no max_length)

    ## Fix
    Declare the longest input the field takes, at most 1000:
    "code": {"type": "string", "pattern": "^[a-z]+$", "max_length": 64, ...}.
    """
    for key, field, _ in _patterned(manifest):
        base = pointer_join("/settings", key)
        bound = field.get("max_length")
        if not _is_number(bound):
            shown = "is missing" if "max_length" not in field else f"is {show(bound)}, not a number"
            yield Hit(base, f"settings.{key} declares \"pattern\" and must also declare \"max_length\" "
                            f"(<= {SETTINGS_PATTERN_MAX_LENGTH}); max_length {shown}",
                      at="key", hint=f"add \"max_length\": the longest input the field takes, at most "
                                     f"{SETTINGS_PATTERN_MAX_LENGTH}")
        elif bound > SETTINGS_PATTERN_MAX_LENGTH:
            yield Hit(pointer_join(base, "max_length"),
                      f"settings.{key}: max_length must be <= {SETTINGS_PATTERN_MAX_LENGTH} when a pattern is "
                      f"declared; it is {show(bound)}",
                      hint=f"lower max_length to at most {SETTINGS_PATTERN_MAX_LENGTH}")


@rule("BK226", "settings-pattern-invalid", layer="server", severity="error", stage="submit",
      keys=("settings",), guard=_GUARD)
def settings_pattern_invalid(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    r"""A setting's `pattern` is not a valid JavaScript regular expression.

    ## What it does
    Compiles every string `pattern` in `settings` as the platform does,
    `new RegExp(pattern)` with no flags: ECMA-262 syntax with its Annex B
    leniencies (`a{`, a lone `]` and `\8` are literals; `\1` with no group is an
    octal escape), read as UTF-16 code units, so `[😀-😁]` is an out-of-order
    range. A quantifier on `\b` or `\B`, an unclosed group and an unknown group
    syntax are errors. Flags cannot be given: `(?i)` is an error.

    ## Why it matters
    The platform refuses the manifest at submission and at approval ("pattern is not
    a valid RegExp source"), and the settings form could not check the field.
    Source: civitai/civitai@ebed661 settings-pattern-guard.ts.

    ## Example
    "pattern": "^(\\d{3}-\\d{4}$"

    ## Fix
    Close the group, escape the character, or test the pattern with
    `new RegExp(pattern)` in a JavaScript console: "^(\\d{3})-\\d{4}$".
    """
    from blockkit.rules.jsregex import compile_problem

    for key, _, pattern in _patterned(manifest):
        problem = compile_problem(pattern)
        if problem is not None:
            yield Hit(pointer_join("/settings", key, "pattern"),
                      f"settings.{key}: pattern is not a valid RegExp source ({problem})",
                      hint="it must compile as new RegExp(pattern) in JavaScript, without flags")


@rule("BK227", "settings-pattern-redos", layer="server", severity="error", stage="submit",
      keys=("settings",), guard=_GUARD)
def settings_pattern_redos(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    r"""A setting's `pattern` is open to catastrophic backtracking (ReDoS).

    ## What it does
    Analyses every string `pattern` in `settings` that compiles (BK226 reports the
    others) for super-linear backtracking, with the criteria of the checker the
    platform uses (recheck 4.5, no flags): a pattern is refused when some input
    makes a backtracking engine take exponential time (`(a+)+$`, `(x+x+)+y`,
    `([a-zA-Z]+)*$`) or polynomial time of degree 2 or more. The pattern is tried
    at every start position unless it begins with `^`, so an unanchored `\s+$` or
    `[a-z]+$` is quadratic and refused, while `^[a-z]+$` is linear and accepted;
    without a final `$` the first match ends the search, so `(a+)+` alone is safe.
    See blockkit/rules/redos.py and docs/platform-shapes.md for the analysis and
    where it approximates the platform's (look-arounds, back-references and
    repetition counts summing to 30 or more, which recheck fuzzes instead). A
    pattern whose automaton outgrows the analysis's limits is refused too, as the
    platform refuses a pattern its checker cannot decide within 5 seconds.

    ## Why it matters
    The platform refuses the manifest at submission and at approval. It runs the
    pattern against viewers' input, and such a pattern can freeze the page on an
    input of a few dozen characters whatever `max_length` allows. Source:
    civitai/civitai@ebed661 settings-pattern-guard.ts (`recheck`, status other than
    "safe" refused).

    ## Example
    "pattern": "^([a-z0-9]+-?)*$"

    ## Fix
    Remove nested or overlapping unbounded quantifiers, and anchor the pattern:
    "^[a-z0-9]+(-[a-z0-9]+)*$".
    """
    from blockkit.rules.jsregex import compile_problem
    from blockkit.rules.redos import analyse

    for key, _, pattern in _patterned(manifest):
        if compile_problem(pattern) is not None:
            continue
        verdict = analyse(pattern)
        if verdict.status == "unknown" and verdict.complexity == "too-large":
            yield Hit(pointer_join("/settings", key, "pattern"),
                      f"settings.{key}: pattern is too complex to analyse for ReDoS; the platform refuses a pattern "
                      "its checker cannot prove safe within its time limit",
                      hint="simplify the expression: fewer nested and alternated repetitions")
        elif verdict.status == "vulnerable":
            yield Hit(pointer_join("/settings", key, "pattern"),
                      f"settings.{key}: pattern is vulnerable to ReDoS (catastrophic backtracking): its matching "
                      f"time is {verdict.describe()} in the input's length",
                      hint="remove nested or overlapping unbounded quantifiers (e.g. \"(a+)+\"), anchor it with ^, "
                           "or simplify the expression")

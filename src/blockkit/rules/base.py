"""The rule model: every check blockkit makes is a Rule with a stable code.

A rule's documentation is its docstring, in four sections that ``blockkit
explain`` prints and the README's rule index is generated from::

    One-line summary.

    ## What it does
    ## Why it matters
    ## Example
    ## Fix

Check functions take the parsed manifest and a RuleContext and yield Hits; the
engine turns Hits into positioned Findings. Checks never print and never raise
on odd input: the schema layer reports wrong types, so a check simply skips
values that are not the type it expects.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Literal, NamedTuple, Optional

from blockkit.report import Fix, Layer, Severity

if TYPE_CHECKING:
    from blockkit.context import Context
    from blockkit.rules.guard import Guard

Stage = Literal["submit", "approve"]
At = Literal["value", "key", "open"]  # what a pointer's position covers; "open": a container's first character


class Hit(NamedTuple):
    """What a check found: a message at a JSON Pointer (or at ``span``). Immutable.

    A named tuple, not a frozen dataclass: a manifest with findings makes many of them,
    and a frozen dataclass sets each field through object.__setattr__ (about three times
    slower to build); generating its methods also cost the import a millisecond.
    """

    pointer: str
    message: str
    at: At = "value"
    hint: Optional[str] = None
    fix: Optional[Fix] = None
    # Character offsets to report instead of the pointer's own position (parse problems).
    span: Optional[tuple[int, int]] = None


@dataclass(frozen=True)
class RuleDoc:
    summary: str
    what: str
    why: str
    example: str
    fix: str


class RuleContext:
    """What a check may consult besides the manifest itself (one per manifest checked)."""

    __slots__ = ("context", "text", "project_dir", "locate", "cache")

    def __init__(self, context: "Context", text: Optional[str] = None, project_dir: Optional[Path] = None,
                 locate: Optional[Callable[[str, At], tuple[int, int]]] = None,
                 cache: Optional[dict[str, Any]] = None) -> None:
        self.context = context
        self.text = text  # the decoded source, for checks that build autofixes
        self.project_dir = project_dir  # set by lint when the manifest sits in a block project
        self.locate = locate  # pointer -> (start, end) offsets
        self.cache: dict[str, Any] = {} if cache is None else cache

    def __repr__(self) -> str:
        return f"RuleContext(context={self.context!r}, project_dir={self.project_dir!r})"


Check = Callable[[Any, RuleContext], Iterable[Hit]]


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    layer: Layer
    severity: Severity
    stage: Stage
    # The documentation as written (a docstring); parsed into ``doc`` on first use: a run that
    # prints no explanation never parses any.
    docstring: str
    check: Optional[Check] = None
    fixable: Optional[Literal["safe", "unsafe"]] = None
    # The top-level keys the check reads: it finds nothing in a manifest that has none of them,
    # so the engine does not call it (None: always called). tests/test_rule_keys.py holds each
    # rule to its claim.
    keys: Optional[frozenset[str]] = None
    # A JSON Schema (or a function of the Context giving one) that a manifest can pass only
    # when the check finds nothing in it: see blockkit.rules.guard. None: always called.
    guard: Optional["Guard"] = field(default=None, hash=False, compare=False)  # a schema is a dict

    @cached_property
    def doc(self) -> RuleDoc:
        return parse_doc(self.code, self.docstring)

    @property
    def summary(self) -> str:
        return self.doc.summary


REGISTRY: dict[str, Rule] = {}

_SECTION = re.compile(r"^##\s+(.+?)\s*$", re.M)
_SECTION_KEYS = {"what it does": "what", "why it matters": "why", "example": "example", "fix": "fix"}


def parse_doc(code: str, docstring: str | None) -> RuleDoc:
    import inspect  # only when a documentation is read

    text = inspect.cleandoc(docstring or "")
    parts = _SECTION.split(text)
    summary = parts[0].strip()
    sections = {"what": "", "why": "", "example": "", "fix": ""}
    for title, body in zip(parts[1::2], parts[2::2]):
        key = _SECTION_KEYS.get(title.lower())
        if key is None:
            raise ValueError(f"rule {code}: unknown doc section {title!r}")
        sections[key] = body.strip()
    missing = [k for k, v in sections.items() if not v]
    if not summary or missing:
        raise ValueError(f"rule {code}: documentation lacks {['summary', *missing]}")
    return RuleDoc(summary=summary, **sections)


def register(rule: Rule) -> Rule:
    if rule.code in REGISTRY:
        raise ValueError(f"rule code {rule.code} registered twice")
    REGISTRY[rule.code] = rule
    return rule


def rule(
    code: str,
    name: str,
    *,
    layer: Layer,
    severity: Severity,
    stage: Stage = "approve",
    fixable: Optional[Literal["safe", "unsafe"]] = None,
    keys: Optional[Iterable[str]] = None,
    guard: Optional["Guard"] = None,
) -> Callable[[Check], Check]:
    """Register the decorated function as the check of rule ``code``.

    ``keys``: the top-level keys without which the check finds nothing (see ``Rule.keys``).
    ``guard``: a schema only manifests in which the check finds nothing pass (``Rule.guard``).
    """

    def decorate(check: Check) -> Check:
        register(
            Rule(
                code=code,
                name=name,
                layer=layer,
                severity=severity,
                stage=stage,
                docstring=check.__doc__ or "",
                check=check,
                fixable=fixable,
                keys=None if keys is None else frozenset(keys),
                guard=guard,
            )
        )
        return check

    return decorate


def declare(
    code: str,
    name: str,
    *,
    layer: Layer,
    severity: Severity,
    doc: str,
    stage: Stage = "approve",
    fixable: Optional[Literal["safe", "unsafe"]] = None,
) -> Rule:
    """Register a rule that has no check function of its own (parse and schema layers)."""
    return register(
        Rule(code=code, name=name, layer=layer, severity=severity, stage=stage, docstring=doc, fixable=fixable)
    )


# --- small helpers for checks ------------------------------------------------


def escape_pointer_token(token: str | int) -> str:
    text = str(token)
    if "~" in text or "/" in text:  # most tokens (all indices) need no escaping: skip building copies
        return text.replace("~", "~0").replace("/", "~1")
    return text


def pointer_join(base: str, *tokens: str | int) -> str:
    for token in tokens:
        base += "/" + escape_pointer_token(token)
    return base


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def declared_scopes(manifest: dict[str, Any]) -> list[str]:
    return [s for s in as_list(manifest.get("scopes")) if isinstance(s, str)]


def iter_strings(manifest: dict[str, Any], key: str) -> Iterator[tuple[int, str]]:
    for index, value in enumerate(as_list(manifest.get(key))):
        if isinstance(value, str):
            yield index, value

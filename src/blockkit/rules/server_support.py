"""Small helpers shared by the server-layer rule modules (no rules live here)."""

from __future__ import annotations

from typing import Any, Iterator, Optional

from blockkit.rules.base import RuleContext, as_dict, as_list, pointer_join
from blockkit.schema import human_path

__all__ = ["human_path", "schema_reports_approve", "iter_goods", "string_span", "only_ascii_strings"]


def schema_reports_approve(ctx: RuleContext) -> bool:
    """Whether the schema layer's approve-stage findings are part of this run.

    A server rule leaves to the schema layer what the schema already says (an
    empty string, an unknown scope id), except when only the submit stage runs:
    then the schema is silent there and the server rule must speak for itself.
    """
    return ctx.context.runs("approve")


def only_ascii_strings(ctx: RuleContext) -> bool:
    """Whether every string of the manifest (names too) is ASCII, read off its source text.

    An ASCII text without a \\u escape decodes to ASCII strings only: the other escapes
    stand for ASCII characters. False when there is no text to read.
    """
    text = ctx.text
    return text is not None and text.isascii() and "\\u" not in text


def iter_goods(manifest: dict[str, Any]) -> Iterator[tuple[int, dict[str, Any]]]:
    for index, good in enumerate(as_list(manifest.get("goods"))):
        if isinstance(good, dict):
            yield index, good


def good_pointer(index: int, *tokens: str) -> str:
    return pointer_join("/goods", index, *tokens)


def string_span(ctx: RuleContext, pointer: str, start: int, end: int) -> Optional[tuple[int, int]]:
    """Source offsets of ``value[start:end]`` for the string at ``pointer``.

    Only when the literal has no escapes, so characters map one to one; otherwise
    None and the finding covers the whole string.
    """
    if ctx.locate is None or ctx.text is None:
        return None
    try:
        lo, hi = ctx.locate(pointer, "value")
    except Exception:
        return None
    text = ctx.text
    # Looked at in place, not sliced: a rule may ask for many spans of one very long string.
    if hi - lo < 2 or text[lo] != '"' or text[hi - 1] != '"' or text.find("\\", lo, hi) != -1:
        return None
    return (lo + 1 + start, lo + 1 + end)


def sensitive_justification(manifest: dict[str, Any], scope: str) -> Any:
    return as_dict(manifest.get("scopeJustifications")).get(scope)

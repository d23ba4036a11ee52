"""Completion items at an offset: keys the schema allows there (minus those present), enum
values, scopes (sensitive ones marked), slot ids, sandbox tokens, each with its docs."""

from __future__ import annotations

import json
from typing import Any, Optional, Union

from lsprotocol import types

from blockkit import platform
from blockkit.lsp import knowledge
from blockkit.lsp.cursor import Place, locate, pointer_of
from blockkit.lsp.positions import LineIndex


def _markdown(text: Optional[str]) -> Optional[types.MarkupContent]:
    return types.MarkupContent(kind=types.MarkupKind.Markdown, value=text) if text else None


def _range(index: LineIndex, start: int, end: int) -> types.Range:
    return types.Range(types.Position(*index.position(start)), types.Position(*index.position(end)))


def _replaced(place: Place, offset: int) -> tuple[int, int]:
    """The characters a chosen item replaces: the string or word under the cursor, else none."""
    return place.token if place.token is not None else (offset, offset)


def items_at(text: str, offset: int, index: LineIndex, tier: str) -> list[types.CompletionItem]:
    place = locate(text, offset)
    if place.role == "key":
        return _keys(text, place, offset, index, tier)
    if place.role == "value":
        return _values(text, place, offset, index, tier)
    return []


def _keys(text: str, place: Place, offset: int, index: LineIndex, tier: str) -> list[types.CompletionItem]:
    parent: list[Union[str, int]] = place.path[:-1] if place.token is not None else list(place.path)
    present = list(place.keys)
    if place.token is not None and place.text in present:
        present.remove(place.text)  # the key being typed
    required = set(knowledge.required_keys(parent))
    start, end = _replaced(place, offset)
    # A key that already has its colon (renaming "ta": 1) gets the name alone.
    has_colon = text[end:].lstrip(" \t\r\n")[:1] == ":"
    items = []
    for order, key in enumerate(knowledge.allowed_keys(parent)):
        if key in present:
            continue
        path = parent + [key]
        scope = platform.SCOPES.get(key) if parent == ["scopeJustifications"] else None
        detail = "required" if key in required else None
        if scope is not None and scope.sensitive:
            detail = "sensitive scope: a justification is required"
        items.append(types.CompletionItem(
            label=key, kind=types.CompletionItemKind.Property, detail=detail,
            documentation=_markdown(knowledge.key_hover(path, tier)),
            sort_text=f"{0 if key in required or (scope is not None and scope.sensitive) else 1}{order:03d}",
            filter_text=json.dumps(key) if place.is_string else key,
            text_edit=types.TextEdit(range=_range(index, start, end),
                                     new_text=json.dumps(key) + ("" if has_colon else ": "))))
    return items


def _values(text: str, place: Place, offset: int, index: LineIndex, tier: str) -> list[types.CompletionItem]:
    pattern = knowledge.pattern_of(pointer_of(place.path))
    if pattern == "/iframe/sandbox" and place.is_string and place.token is not None:
        return _sandbox(text, place, offset, index, tier)
    start, end = _replaced(place, offset)
    if pattern == "/targets/*/slotId":
        return [_value(slot, f"**`{slot}`**: {knowledge.SLOT_NOTES[slot]}.", None, start, end, index, place, n)
                for n, slot in enumerate(platform.MODEL_SLOTS)]
    values = knowledge.enum_values(place.path)
    items = []
    for order, value in enumerate(values):
        detail = None
        if pattern == "/scopes/*":
            info = platform.SCOPES.get(value)
            detail = "sensitive" if info is not None and info.sensitive else None
            documentation = knowledge.scope_hover(value, tier)
        else:
            documentation = knowledge.value_hover(place.path, value, tier) if isinstance(value, str) else None
        items.append(_value(value, documentation, detail, start, end, index, place, order))
    return items


def _value(value: Any, documentation: Optional[str], detail: Optional[str], start: int, end: int,
           index: LineIndex, place: Place, order: int) -> types.CompletionItem:
    written = json.dumps(value)
    return types.CompletionItem(
        label=value if isinstance(value, str) else written, kind=types.CompletionItemKind.EnumMember,
        detail=detail, documentation=_markdown(documentation),
        label_details=types.CompletionItemLabelDetails(description=detail) if detail else None,
        sort_text=f"{order:03d}", filter_text=written if place.is_string else None,
        text_edit=types.TextEdit(range=_range(index, start, end), new_text=written))


def _sandbox(text: str, place: Place, offset: int, index: LineIndex, tier: str) -> list[types.CompletionItem]:
    """Tokens for the space-separated list inside the sandbox string: the word at the cursor is replaced."""
    assert place.token is not None
    first = place.token[0] + 1
    last = place.token[1] - 1 if text[place.token[1] - 1:place.token[1]] == '"' and place.token[1] - 1 >= first \
        else place.token[1]
    start = offset
    while start > first and not text[start - 1].isspace():
        start -= 1
    end = offset
    while end < last and not text[end].isspace():
        end += 1
    present = set(text[first:last].split())
    allowed = platform.SANDBOX_TOKENS_BY_TIER.get(tier, frozenset())
    items = []
    for order, (token, tiers) in enumerate(knowledge.sandbox_tokens()):
        if token in present and token != text[start:end]:
            continue
        ok = token in allowed
        detail = None if ok else f"not allowed at the {tier} tier (needs {' or '.join(tiers)})"
        items.append(types.CompletionItem(
            label=token, kind=types.CompletionItemKind.EnumMember, detail=detail,
            documentation=_markdown(f"**`{token}`**: allowed at the {', '.join(tiers)} tier(s)."),
            sort_text=f"{0 if ok else 1}{order:03d}",
            text_edit=types.TextEdit(range=_range(index, start, end), new_text=token)))
    return items

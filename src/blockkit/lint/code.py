"""Block source as the lint rules read it: code without its comments.

A comment that names ``BLOCK_READY`` or ``useAppStorage`` is prose, not a
call, and scaffolds document both in comments; so rules search code with the
comments blanked out. Blanking (not deleting) keeps every line number.

This is a tokenizer, not a parser: string literals are recognised so that a
``//`` inside ``'https://…'`` does not start a comment, and a string that
never closes ends at its line, which bounds the damage of anything we misread
(a regex literal holding a quote) to one line. Misreading can only leave
comment text in place, never blank out code.
"""

from __future__ import annotations

import re
from pathlib import PurePath

# Files whose text may be HTML: their <!-- --> comments are blanked too. In a
# script file a "<!--" is just characters (often inside a string), so HTML
# comments are never looked for there.
MARKUP_SUFFIXES = frozenset({".html", ".htm", ".vue", ".svelte"})
SCRIPT_SUFFIXES = frozenset({".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"})
SOURCE_SUFFIXES = MARKUP_SUFFIXES | SCRIPT_SUFFIXES

_JS_TOKEN = re.compile(
    r"""
      //[^\n]*                        # line comment
    | /\*[\s\S]*?\*/                  # block comment (an unclosed one is left as code)
    | '(?:\\.|[^'\\\n])*'?            # strings end at their quote or their line
    | "(?:\\.|[^"\\\n])*"?
    | `(?:\\[\s\S]|[^`\\])*`?         # template literals may span lines
    """,
    re.X,
)
# An unclosed <!-- is left as it is: blanking to the end of the file could hide code.
_HTML_COMMENT = re.compile(r"<!--[\s\S]*?-->")
_NOT_NEWLINE = re.compile(r"[^\n]")


def _blank(match: re.Match[str]) -> str:
    return _NOT_NEWLINE.sub(" ", match.group())


def _blank_js_comment(match: re.Match[str]) -> str:
    text = match.group()
    if text.startswith("//") or text.startswith("/*"):
        return _NOT_NEWLINE.sub(" ", text)
    return text


def strip_comments(text: str, suffix: str) -> str:
    """``text`` with its comments replaced by spaces (newlines kept), read as a ``suffix`` file."""
    if suffix.lower() in MARKUP_SUFFIXES:
        text = _HTML_COMMENT.sub(_blank, text)
    return _JS_TOKEN.sub(_blank_js_comment, text)


def is_source(path: PurePath) -> bool:
    return path.suffix.lower() in SOURCE_SUFFIXES


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1

"""Block source as the lint rules read it: code without its comments.

A comment that names ``BLOCK_READY`` or ``useAppStorage`` is prose, not a
call, and scaffolds document both in comments; so rules search code with the
comments blanked out. Blanking (not deleting) keeps every line number.

This is a tokenizer, not a parser: string literals are recognised so that a
``//`` inside ``'https://…'`` does not start a comment, and a string that
never closes ends at its line, which bounds the damage of anything we misread
to one line. Regular expression literals are recognised too, where a ``/``
can only start one (after ``(``, ``=``, ``,``, an operator or ``return``):
``/^https?:\\/\\//`` holds a ``//`` and ``/\\/*$/`` a ``/*``, and read as
comments they would blank the rest of the line (in a minified bundle, the
whole bundle) or everything up to the next ``*/``.
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

# Where a "/" starts a regular expression and cannot be a division: after one of
# these characters or keywords (a division follows a value: a name, a number, ")" or "]").
_REGEX_CONTEXT = r"(?:(?<=[(,=:\[!&|?{;+\-*%>~^])|(?<=\breturn)|(?<=\btypeof)|(?<=\bcase)|(?<=\bvoid))"
_JS_TOKEN = re.compile(
    _REGEX_CONTEXT + r"""
      [ \t]*/(?![/*])                  # a regular expression literal: kept as code, never read as a
      (?:\\.|\[(?:\\.|[^\]\\\n])*\]?|[^/\\\n\[])*/?  # comment; a class may hold "/"; ends at its line
    | //[^\n]*                        # line comment
    | /\*                             # a block comment opens (strip_comments finds where it ends)
    | '(?:\\.|[^'\\\n])*'?            # strings end at their quote or their line
    | "(?:\\.|[^"\\\n])*"?
    | `(?:\\[\s\S]|[^`\\])*`?         # template literals may span lines
    """,
    re.X,
)
_NOT_NEWLINE = re.compile(r"[^\n]")


def _blank(text: str) -> str:
    return _NOT_NEWLINE.sub(" ", text)


def _blank_delimited(text: str, opener: str, closer: str, out: list[str], pos: int, start: int,
                     never_closed: bool) -> tuple[int, bool]:
    """Blank the comment opened at ``start``; returns where to go on and whether ``closer`` is gone for good.

    An unclosed comment is left as code (blanking to the end of the file could hide
    code). Once no closer follows, none follows any later opener either, which keeps
    a file of many unclosed openers linear instead of quadratic.
    """
    end = -1 if never_closed else text.find(closer, start + len(opener))
    if end == -1:
        out.append(text[pos:start + len(opener)])
        return start + len(opener), True
    end += len(closer)
    out.append(text[pos:start])
    out.append(_blank(text[start:end]))
    return end, never_closed


def _strip_html_comments(text: str) -> str:
    out: list[str] = []
    pos, never_closed = 0, False
    while not never_closed:
        start = text.find("<!--", pos)
        if start == -1:
            break
        pos, never_closed = _blank_delimited(text, "<!--", "-->", out, pos, start, never_closed)
    out.append(text[pos:])
    return "".join(out)


def _strip_js_comments(text: str) -> str:
    out: list[str] = []
    pos, never_closed = 0, False
    cursor = 0
    while True:
        match = _JS_TOKEN.search(text, cursor)
        if match is None:
            break
        token = match.group()
        if token == "/*":
            pos, never_closed = _blank_delimited(text, "/*", "*/", out, pos, match.start(), never_closed)
        elif token.startswith("//"):
            out.append(text[pos:match.start()])
            out.append(_blank(token))
            pos = match.end()
        cursor = max(match.end(), pos)
    out.append(text[pos:])
    return "".join(out)


def strip_comments(text: str, suffix: str) -> str:
    """``text`` with its comments replaced by spaces (newlines kept), read as a ``suffix`` file."""
    if suffix.lower() in MARKUP_SUFFIXES:
        text = _strip_html_comments(text)
    return _strip_js_comments(text)


def is_source(path: PurePath) -> bool:
    return path.suffix.lower() in SOURCE_SUFFIXES


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1

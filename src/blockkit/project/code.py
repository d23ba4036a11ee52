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
_REGEX_CONTEXT_CHARS = r"(,=:\[!&|?{;+\-*%>~^"
_REGEX_CONTEXT_WORDS = ("return", "typeof", "case", "void")
# After a context, optional blanks and maybe a regular expression literal: kept as code,
# never read as a comment; a class may hold "/"; it ends at its line.
_MAYBE_REGEX = r"[ \t]*(?:/(?![/*])(?:\\.|\[(?:\\.|[^\]\\\n])*\]?|[^/\\\n\[])*/?)?"
_CODE_PIECES = (
    rf"[^/'\"`{_REGEX_CONTEXT_CHARS}rtcv]+",  # plain code (a word may start a keyword: r t c v)
    rf"[{_REGEX_CONTEXT_CHARS}]{_MAYBE_REGEX}",
    rf"\b(?:{'|'.join(_REGEX_CONTEXT_WORDS)}){_MAYBE_REGEX}",
    r"'(?:\\.|[^'\\\n])*'?",  # strings end at their quote or their line
    r'"(?:\\.|[^"\\\n])*"?',
    r"`(?:\\[\s\S]|[^`\\])*`?",  # template literals may span lines
    r"/(?![/*])",  # a division
    r"[rtcv]",
)
# A run of code, then the comment that ends it if any. Every piece of code starts
# with a character no other piece starts with, so the run never backtracks; the
# engine steps over code and strings in C and Python sees one match per comment,
# which keeps 1 MB of tiny tokens well under a second. The count bound keeps the
# engine's bookkeeping per match small (a run that reaches it just goes on in the
# next match). A block comment that never closes matches to the end of the file
# in one step (then see _strip_js_comments), never once per opener.
_RUN_BOUND = 4096
_LINE_COMMENT = r"//[^\n]*"
_BLOCK_COMMENT = r"/\*(?:[\s\S]*?\*/|[\s\S]*)"
_JS_SCAN = re.compile(rf"(?:{'|'.join(_CODE_PIECES)}){{0,{_RUN_BOUND}}}(?:({_LINE_COMMENT})|({_BLOCK_COMMENT}))?")
# Once no "*/" follows, a "/*" is code (an unclosed comment is kept, as blanking to the
# end of the file could hide code), and its "*" is a context like any other.
_JS_SCAN_NO_CLOSE = re.compile(
    rf"(?:{'|'.join((*_CODE_PIECES, rf'/[*]{_MAYBE_REGEX}'))}){{0,{_RUN_BOUND}}}({_LINE_COMMENT})?")
_LINE, _BLOCK = 1, 2  # the group of each kind of comment


_NOT_NEWLINE = re.compile(r"[^\n]")


def _blank(text: str) -> str:
    if "\n" not in text:
        return " " * len(text)
    return _NOT_NEWLINE.sub(" ", text)


def _strip_html_comments(text: str) -> str:
    """Blank every closed ``<!-- -->``; an unclosed one is left as code (blanking to the
    end of the file could hide code). Once no closer follows, none follows a later opener
    either, which keeps a file of many unclosed openers linear instead of quadratic."""
    out: list[str] = []
    pos = 0
    while True:
        start = text.find("<!--", pos)
        if start == -1:
            break
        end = text.find("-->", start + 4)
        if end == -1:
            break
        end += 3
        out.append(text[pos:start])
        out.append(_blank(text[start:end]))
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _strip_js_comments(text: str) -> str:
    out: list[str] = []
    add = out.append
    pos = 0  # text[:pos] is in out
    scan, begin = _JS_SCAN, 0
    while scan is not None:
        current, scan = scan, None
        for match in current.finditer(text, begin):
            kind = match.lastindex
            if kind is None:  # a run that reached its count bound, or the end
                continue
            start, end = match.span(kind)
            if kind == _LINE:
                blank = " " * (end - start)
            elif end - start < 4 or not text.startswith("*/", end - 2):
                scan, begin = _JS_SCAN_NO_CLOSE, start  # unclosed: read on from its "/*" as code
                break
            else:
                blank = _blank(text[start:end])
            add(text[pos:start])
            add(blank)
            pos = end
    add(text[pos:])
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


# --- module references, for the entry graph (blockkit.project.entry) ------------------
# Each pattern starts with its keyword's text (so the engine searches for it) and checks
# afterwards that the keyword is not the end of a longer name or a property (``x.from``);
# every repetition is bounded, so an attempt costs a constant. They run on code whose
# comments are blanked; a specifier is one line of at most 256 characters.
_SPEC = r"""(['"])([^'"\\\n]{1,256})\1"""
_CLOSES = r"(?=\s{0,256}[,)])"


def _keyword(word: str) -> str:
    return rf"{word}(?<![\w$.]{word})"


MODULE_REFERENCE_PATTERNS: dict[str, re.Pattern[str]] = {
    # import x from "./a", import {x} from "./a", export * from "./a"
    "import from": re.compile(rf"{_keyword('from')}\s{{0,256}}{_SPEC}"),
    # import "./style.css"
    "import for effect": re.compile(rf"{_keyword('import')}\s{{0,256}}{_SPEC}"),
    # import("./a"), require("./a"): group 2 is a literal, group 3 a template literal without
    # ${}; neither matched means a specifier computed at run time.
    "import call": re.compile(
        rf"{_keyword('import')}\s{{0,256}}\(\s{{0,256}}(?:{_SPEC}{_CLOSES}|`([^`$\\\n]{{0,256}})`{_CLOSES})?"),
    "require call": re.compile(
        rf"{_keyword('require')}\s{{0,256}}\(\s{{0,256}}(?:{_SPEC}{_CLOSES}|`([^`$\\\n]{{0,256}})`{_CLOSES})?"),
    # import.meta.glob("./pages/*.ts"): Vite loads files by pattern
    "import glob": re.compile(r"import\.meta\.glob"),
}
_CALLS = ("import call", "require call")


def module_references(code: str) -> tuple[list[str], list[tuple[int, str]]]:
    """The module specifiers ``code`` names, and the places (offset, what) where it names
    one that is computed at run time, which no static reading can follow."""
    specs: list[tuple[int, str]] = []
    computed: list[tuple[int, str]] = []
    for name, pattern in MODULE_REFERENCE_PATTERNS.items():
        for match in pattern.finditer(code):
            if name == "import glob":
                computed.append((match.start(), "import.meta.glob()"))
            elif name in _CALLS:
                spec = match.group(2) if match.group(2) is not None else match.group(3)
                if spec is None:
                    computed.append((match.start(), f"{name.split()[0]}() of a computed specifier"))
                else:
                    specs.append((match.start(), spec))
            else:
                specs.append((match.start(), match.group(2)))
    specs.sort()
    return [spec for _, spec in specs], sorted(computed)

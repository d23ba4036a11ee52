"""What the lint rules need from index.html: whether ``#root`` paints anything.

A small tokenizer after the HTML standard's, enough to find the first element
with id "root" and see what comes before its end tag: tags and their
attributes, comments, the text of raw-text elements (script, style...). It
reads any text and never raises.

Lint reads index.html from projects it does not trust, so every step here moves
forward through the text and nothing is scanned twice: a construct that never
closes (a comment, a quoted attribute, a tag, a script) runs to the end of the
file, as the standard says, and ends the scan. (The standard library's
``html.parser`` took seconds for 32 KB of ``<a<a<a...`` on Python 3.11 before
its 2025 fixes: quadratic time.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from html import unescape
from typing import Optional

from blockkit.jsstr import is_blank

ROOT_ID = "root"
# Elements that never have content or an end tag.
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
                   "track", "wbr"})
# Elements whose content is text up to their own end tag (raw text and escapable raw text).
_RAW_TEXT = frozenset({"script", "style", "xmp", "iframe", "noembed", "noframes", "noscript", "textarea",
                       "title"})

_RAW_TEXT_END = {name: re.compile(rf"</{name}[\s/>]", re.IGNORECASE) for name in _RAW_TEXT}
# One token: text, a comment, a doctype or other bogus comment, an end tag or a start
# tag. A construct that never closes matches to the end of the file in one step
# (then the scan ends), so no "<" is ever the start of a second long scan. In a tag,
# each piece starts with a character the others cannot start with, so the attributes
# never backtrack. Groups: text, tag name, attributes, the tag's ">".
_ATTRIBUTES = r"""(?:[\s/]+|[^\s/>][^\s/>=]*(?:\s*=\s*(?:"[^"]*"?|'[^']*'?|[^\s>]*))?)*"""
_TOKEN = re.compile(rf"""
    ((?:[^<]+|<+(?![A-Za-z!?/])){{1,4096}})            # text (a long one comes in pieces)
  | <!--(?:>|->|[\s\S]*?-->|[\s\S]*)                    # a comment ("<!-->" and "<!--->" are whole ones)
  | <[!?][^>]*>? | </(?![A-Za-z])[^>]*>?              # a doctype, "<?...>", "</>" and other bogus comments
  | </?([A-Za-z][^\s/>]*)({_ATTRIBUTES})(>)?          # a tag
""", re.VERBOSE)
_ATTRIBUTE = re.compile(r"""([^\s/>][^\s/>=]*)(?:\s*=\s*(?:"([^"]*)"?|'([^']*)'?|([^\s>]*)))?""")


@dataclass(frozen=True)
class RootElement:
    line: int  # 1-based line of the start tag in index.html
    tag: str
    empty: bool  # no element children and no text but whitespace (comments do not count)


def find_root(html: str) -> Optional[RootElement]:
    """The first element with id "root", or None when there is none.

    One pass over the tokens: until the root's start tag, looking for it; then until
    its end tag, looking for anything that paints (an element, or text that is not
    blank). Comments never count; a construct that never closes ends the file.
    """
    root: Optional[RootElement] = None
    pos = 0
    while pos is not None:
        tokens, pos = _TOKEN.finditer(html, pos), None
        for match in tokens:
            text, name, attributes, closed = match.groups()
            if text is not None:
                if root is not None and not _blank(text):
                    return replace(root, empty=False)
                continue
            if name is None:
                continue  # a comment or the like
            if closed is None:
                break  # a tag that never ends: the rest of the file is inside it
            name = name.lower()
            if html[match.start() + 1] == "/":
                if root is not None and name == root.tag:
                    return root
                continue
            if root is not None:
                return replace(root, empty=False)
            # Cheap test first: the id can only be "root" if the tag says so or has a character reference.
            if ("root" in attributes or "&" in attributes) and _id_of(attributes) == ROOT_ID:
                root = RootElement(line=html.count("\n", 0, match.start()) + 1, tag=name, empty=True)
                if name in _VOID:  # HTML ignores the "/" of <div/>: only void elements are closed by it
                    return root
            if name in _RAW_TEXT:  # its text runs to its own end tag, whatever it holds
                close = _RAW_TEXT_END[name].search(html, match.end())
                end = close.start() if close else len(html)
                if root is not None and not _blank(html[match.end():end]):
                    return replace(root, empty=False)
                pos = end
                break
    return root


def _blank(text: str) -> bool:
    return is_blank(unescape(text) if "&" in text else text)


def _id_of(attributes: str) -> Optional[str]:
    """The value of the first id attribute (as the standard keeps the first of duplicates)."""
    for attribute in _ATTRIBUTE.finditer(attributes):
        if attribute.group(1).lower() == "id":
            value = next((v for v in attribute.groups()[1:] if v is not None), "")
            return unescape(value)
    return None


@dataclass(frozen=True)
class Script:
    """One ``<script>`` element of index.html, as the entry graph needs it."""

    line: int  # 1-based line of the start tag
    src: Optional[str]  # the src attribute, None when the script is inline
    kind: str  # "module", "classic", or "data" (a type the browser does not run: JSON, an import map...)
    text: str  # the inline code ("" for an external script)


def _script_kind(type_attribute: Optional[str]) -> str:
    value = (type_attribute or "").strip().lower()
    if value == "module":
        return "module"
    # The standard's JavaScript MIME type essence matches; an empty or absent type is classic.
    if value == "" or "javascript" in value or "ecmascript" in value or value in ("jscript", "livescript"):
        return "classic"
    return "data"


def find_scripts(html: str) -> list[Script]:
    """Every ``<script>`` element outside comments, in document order.

    The same single pass as ``find_root``: a script's text runs to its own end tag, a tag
    that never ends ends the scan, and nothing is read twice.
    """
    found: list[Script] = []
    pos: Optional[int] = 0
    counted, line = 0, 1  # lines are counted forward only: html[:counted] holds line - 1 newlines
    while pos is not None:
        tokens, pos = _TOKEN.finditer(html, pos), None
        for match in tokens:
            _text, name, attributes, closed = match.groups()
            if name is None:
                continue
            if closed is None:
                break
            name = name.lower()
            if html[match.start() + 1] == "/" or name not in _RAW_TEXT:
                continue
            close = _RAW_TEXT_END[name].search(html, match.end())
            end = close.start() if close else len(html)
            if name == "script":
                values = _attributes_of(attributes)
                line += html.count("\n", counted, match.start())
                counted = match.start()
                found.append(Script(line=line, src=values.get("src"),
                                    kind=_script_kind(values.get("type")),
                                    text="" if "src" in values else html[match.end():end]))
            pos = end
            break
    return found


def _attributes_of(attributes: str) -> dict[str, str]:
    """Attribute names (lower case) to values; the first of duplicates wins, as in the standard."""
    values: dict[str, str] = {}
    for attribute in _ATTRIBUTE.finditer(attributes):
        key = attribute.group(1).lower()
        if key not in values:
            value = next((v for v in attribute.groups()[1:] if v is not None), "")
            values[key] = unescape(value).strip() if "&" in value else value.strip()
    return values

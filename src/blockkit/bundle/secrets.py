"""Finding credentials in the text of a file that would ship: where, and under what name, never the value.

Every pattern starts with literal text, and every repetition in it is bounded, so a scan is
linear in the size of the file (a bundle holds up to 200 MiB of it).
"""

from __future__ import annotations

import re
from typing import Iterator, NamedTuple


class Credential(NamedTuple):
    """A credential-shaped value: its 1-based line and column (and end column), and its name:
    the key it is assigned to, or the kind of token it is. Never the value itself."""

    line: int
    column: int
    end_column: int
    name: str


# Token formats recognisable by themselves: (name, pattern). Each is searched only in a text that
# holds its literal start (the first element of the tuple's third item), which most files do not.
_FORMATS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("private key", r"-----BEGIN (?:[A-Z0-9]{1,16} ){0,3}PRIVATE KEY(?: BLOCK)?-----", ("-----BEGIN",)),
    ("AWS access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", ("AKIA", "ASIA")),
    ("GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})", ("gh", "github_pat_")),
    ("Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,255}", ("xox",)),
    ("Stripe secret key", r"\b[rs]k_live_[A-Za-z0-9]{16,255}", ("k_live_",)),
    ("Google API key", r"\bAIza[0-9A-Za-z_-]{35}", ("AIza",)),
    ("OpenAI API key", r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{32,255}", ("sk-",)),
    ("JSON Web Token", r"\beyJ[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,8192}\.[A-Za-z0-9_-]{16,1024}", ("eyJ",)),
    ("URL with an embedded password", r"\b[a-zA-Z][a-zA-Z0-9+.-]{0,15}://[^\s/:@'\"`]{1,128}:[^\s/@'\"`]{1,256}@",
     ("://",)),
)
_COMPILED = tuple((name, re.compile(pattern), literals) for name, pattern, literals in _FORMATS)

# A name that says it holds a secret, inside a longer identifier (VITE_LIVE_BLOCK_TOKEN, apiKey).
# Searched in the lowercased text: a case-insensitive alternation is ten times slower.
_SECRET_WORD = re.compile(r"api[_-]?key|secret|token|passw(?:or)?d|private[_-]?key|access[_-]?key|credential")
_IDENTIFIER_CHAR = re.compile(r"[A-Za-z0-9_.-]")
# After the name: an optional closing quote, = or :, and a literal value (optionally quoted).
_ASSIGNED = re.compile(r"""[A-Za-z0-9_]{0,64}["']?\s{0,8}(?::|=|:=|=>)\s{0,8}(["'`]?)([A-Za-z0-9_+/=.~-]{16,512})""")
# Values that are plainly not a secret: placeholders and references to one.
_PLACEHOLDER = re.compile(r"(?i)your|example|sample|placeholder|change[_-]?me|dummy|fake|test|xxxx|<|\$\{|redacted")
_IDENTIFIER_LEFT_MAX = 64
_IDENTIFIER_TAIL = re.compile(r"[A-Za-z0-9_]{0,64}")


def _is_secret_literal(value: str) -> bool:
    if _PLACEHOLDER.search(value):
        return False
    if len(set(value)) < 6:  # "aaaaaaaaaaaaaaaa", "0000-0000-0000"
        return False
    # A dotted path (process.env.API_TOKEN, import.meta.env.X, response.data.token) is code, not a value.
    if "." in value and re.fullmatch(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+", value):
        return False
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return has_digit and has_alpha


def scan_text(text: str) -> list[Credential]:
    """Every credential-shaped value in ``text``, in order, at most one per (line, name)."""
    return scan_bytes(text.encode("utf-8", "surrogatepass"))


def scan_bytes(content: bytes) -> list[Credential]:
    """``scan_text`` on a file's bytes. Every pattern is ASCII, so the bytes are read as Latin-1
    (one character a byte, lowercased without changing its length); columns are counted in the
    characters of the UTF-8 text, as an editor shows them."""
    text = content.decode("latin-1")
    found: list[tuple[int, int, str]] = []  # (start, end, name), offsets in bytes
    for name, pattern, literals in _COMPILED:
        if not any(literal in text for literal in literals):
            continue
        for match in pattern.finditer(text):
            found.append((match.start(), match.end(), name))
    found.extend(_assignments(text, text.lower()))
    found.sort()
    out: list[Credential] = []
    seen: set[tuple[int, str]] = set()
    taken_until = -1
    for start, end, name, line, line_start in _positions(text, found):
        if start < taken_until:  # a value inside one already reported (a JWT assigned to TOKEN)
            continue
        if (line, name) in seen:
            continue
        seen.add((line, name))
        taken_until = end
        column = len(content[line_start:start].decode("utf-8", "replace")) + 1
        out.append(Credential(line, column, column + len(content[start:end].decode("utf-8", "replace")), name))
    return out


def _assignments(text: str, lowered: str) -> Iterator[tuple[int, int, str]]:
    for word in _SECRET_WORD.finditer(lowered):
        # The whole identifier the word is part of, leftwards (bounded) and rightwards.
        left = word.start()
        limit = max(0, left - _IDENTIFIER_LEFT_MAX)
        while left > limit and _IDENTIFIER_CHAR.match(text, left - 1):
            left -= 1
        assigned = _ASSIGNED.match(text, word.end())
        if assigned is None:
            continue
        value = assigned.group(2)
        if not _is_secret_literal(value):
            continue
        tail = _IDENTIFIER_TAIL.match(text, word.end())
        key = text[left:tail.end() if tail else word.end()].strip("\"'.-")
        yield left, assigned.end(2), key or word.group(0)


def _positions(text: str, found: list[tuple[int, int, str]]) -> Iterator[tuple[int, int, str, int, int]]:
    """``found`` (sorted by start) with the 1-based line of each start and the offset its line starts at."""
    line, line_start, scanned = 1, 0, 0
    for start, end, name in found:
        newline = text.rfind("\n", scanned, start)
        if newline >= 0:
            line += text.count("\n", scanned, start)
            line_start = newline + 1
        scanned = start
        yield start, end, name, line, line_start

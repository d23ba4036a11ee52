"""Deriving a blockId from a block's display name."""

from __future__ import annotations

import re
import unicodedata

from blockkit.platform import LIMITS

# The manifest's blockId pattern. Both Python and ECMA-262 read it the same
# way once fullmatch is used (no trailing-newline leniency).
BLOCK_ID_PATTERN = re.compile(r"[a-z][a-z0-9-]*[a-z0-9]")
_NOT_ID_CHAR = re.compile(r"[^a-z0-9]+")


class NamingError(ValueError):
    """A name or blockId that cannot be used; the message is for people."""


def check_block_id(block_id: str) -> str:
    if not LIMITS.block_id_min <= len(block_id) <= LIMITS.block_id_max:
        raise NamingError(f"blockId {block_id!r} must be {LIMITS.block_id_min}-{LIMITS.block_id_max} characters long")
    if not block_id.isascii() or not BLOCK_ID_PATTERN.fullmatch(block_id):
        raise NamingError(
            f"blockId {block_id!r} must start with a lowercase letter, end with a letter or digit,"
            " and hold only lowercase letters, digits and '-'"
        )
    return block_id


def _lost_letters(name: str) -> list[str]:
    """The letters of ``name`` that folding to ASCII drops (日, ж, ß stay letters nowhere in a
    blockId); accented Latin letters keep their base letter (é -> e) and are not lost."""
    lost: list[str] = []
    for char in name:
        if unicodedata.category(char).startswith("L") and not any(
            c.isascii() and c.isalnum() for c in unicodedata.normalize("NFKD", char)
        ):
            if char not in lost:
                lost.append(char)
    return lost


def derive_block_id(name: str) -> str:
    """Turn ``"My Cool Block!"`` into ``"my-cool-block"``, or explain why it can't.

    It never drops a letter or cuts the id short: two names that differ only there would get one
    id, and two blocks one app (the platform's CLI refuses the same names, cli#259, #291, #333).
    Emoji and punctuation are separators."""
    hint = "choose one with --block-id (3-40 characters: a-z, 0-9 and '-', starting with a letter)"
    # NFKD splits accents off letters (é -> e + accent) so they survive as ASCII.
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    slug = _NOT_ID_CHAR.sub("-", folded.lower()).strip("-")
    lost = _lost_letters(name)
    if lost:
        shown = ", ".join(lost[:8]) + (", ..." if len(lost) > 8 else "")
        became = f"it would become {slug!r}" if slug else "nothing would be left"
        raise NamingError(f"cannot derive a blockId from the name {name!r}: a blockId holds only a-z, 0-9 and '-', "
                          f"so its letters {shown} would be lost ({became}); {hint}")
    if len(slug) > LIMITS.block_id_max:
        raise NamingError(f"cannot derive a blockId from the name {name!r}: it would be {len(slug)} characters "
                          f"long, and a blockId is at most {LIMITS.block_id_max} ({slug!r}); {hint}")
    if not slug:
        raise NamingError(f"cannot derive a blockId from the name {name!r}: it has no ASCII letters or digits; {hint}")
    try:
        return check_block_id(slug)
    except NamingError as exc:
        raise NamingError(f"cannot derive a blockId from the name {name!r} ({exc}); {hint}") from None

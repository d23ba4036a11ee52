"""Parsing a manifest with orjson, only where it must give what blockkit's json path gives.

``blockkit.source`` parses with the C scanner of ``json``, an object_pairs_hook that counts
repeated member names, and options for NaN, Infinity and long integers. orjson parses the
same text about twice as fast, but it has no hook, and where it reads a text differently
it does so silently. ``parse`` answers only when orjson's document is provably the one the
json path builds with no repeated names and no finding; otherwise it answers NOT_PARSED and
the json path reads the text as before. Where orjson and the json path part ways:

==========================================  =======================================================
orjson                                      what ``parse`` does
==========================================  =======================================================
an integer beyond 64 bits becomes a float   a run of 19 or more digits anywhere: NOT_PARSED
1e400 (beyond the doubles) raises           NOT_PARSED (orjson raised); json reads inf
a lone surrogate (escaped or not) raises    NOT_PARSED
NaN, Infinity, bad syntax, control chars    NOT_PARSED (orjson raised); the json path locates them
repeated member names: the last one wins,   counted (below); any repeat: NOT_PARSED, so that the
no hook to notice                           json path counts them for BK009
nesting: its own limit (1024)               ``orjson.dumps`` refuses documents past
                                            LIMITS.nesting_max (3.8 stops at 256 levels), probed
                                            at import; where it does not, brackets are counted
a byte order mark, invalid UTF-8            not asked: ``blockkit.source`` reports them first
==========================================  =======================================================

Recursion: orjson before 3.9.15 parsed with no depth limit, so half a megabyte of ``[``
overflowed the native stack and killed the process (CVE-2024-27454), and its ``dumps``
had an unsafe limit until 3.11.6 (GHSA-hx9q-6w63-j58v). blockkit requires a newer orjson;
with an older one installed anyway, importing this module fails and the json path reads
every text.

Floats: orjson rounds decimal literals to the nearest double as ``float()`` does (the tests
compare them on hard cases). Smaller integers, strings, literals, lists and objects
come out as the same Python values.

Repeated names, without a hook: each member of an object written in the text is followed by
exactly one structural colon, and every other colon of the text is inside a string. orjson's
compact dump of the document writes each member that survives (one per distinct name) with
one colon, and the strings that survive with their colons unescaped. So, when no string
writes a colon as ``\\u003a``, the colons of the text number at least those of the dump, and
exactly as many only if no member was written twice (the surplus is the repeated members,
and the colons inside the strings they dropped).
"""

from __future__ import annotations

from typing import Any

import orjson
from packaging.version import InvalidVersion, Version

from blockkit.platform import LIMITS

# The first orjson whose loads and dumps both bound their recursion (see the module docstring).
ORJSON_MIN = "3.11.6"


def _recent_enough(version: str) -> bool:
    try:
        return Version(version) >= Version(ORJSON_MIN)
    except InvalidVersion:
        return False


if not _recent_enough(getattr(orjson, "__version__", "")):
    raise ImportError(f"orjson {getattr(orjson, '__version__', '(unknown version)')} can overflow the stack on "
                      f"deeply nested input: blockkit parses with json instead (it needs orjson >= {ORJSON_MIN})")

NOT_PARSED: Any = object()

# Every ASCII digit becomes "9", every other byte a space: a run of digits is then found by a
# substring search at C speed (a regex search for [0-9]{19} tried every offset, 10x slower).
# UTF-8 continuation bytes are never ASCII digits, so the runs are those of the text.
_DIGITS_ONLY = bytes(0x39 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
# 19 digits: the shortest integer orjson may turn into a float (-9223372036854775809).
_LONG_DIGITS = b"9" * 19
# Any 19 consecutive offsets hold two consecutive multiples of 9, so a run of 19 digits puts two
# digits side by side in every 9th byte: that ninth of the text is searched first (no real
# manifest has such a pair), the whole text only when it has one.
_SAMPLE = 9


def _long_digit_run(raw: bytes) -> bool:
    """Whether ``raw`` holds 19 or more ASCII digits in a row."""
    return b"99" in raw[::_SAMPLE].translate(_DIGITS_ONLY) and _LONG_DIGITS in raw.translate(_DIGITS_ONLY)


def _dump_bounds_depth() -> bool:
    """Whether ``orjson.dumps`` refuses a list, and an object, nested deeper than LIMITS.nesting_max
    (orjson 3.x writes at most 255 levels), so that a document it writes needs no depth check."""
    for wrap in (lambda inner: [inner], lambda inner: {"a": inner}):
        deep: Any = []
        for _ in range(LIMITS.nesting_max):
            deep = wrap(deep)
        try:
            orjson.dumps(deep)
        except orjson.JSONEncodeError:
            continue
        return False
    return True


_DEPTH_BOUNDED = _dump_bounds_depth()


def parse(raw: bytes) -> Any:
    """The document in ``raw`` (UTF-8, no byte order mark), or NOT_PARSED when the json path
    must read it: orjson refused it or could read it differently, or a member name repeats."""
    if _long_digit_run(raw):
        return NOT_PARSED
    try:
        data = orjson.loads(raw)
        dump = orjson.dumps(data)  # refuses too deep a document, so it is not returned
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):
        return NOT_PARSED
    if raw.count(b":") != dump.count(b":"):
        return NOT_PARSED  # a repeated member name (or a colon written as an escape)
    if b"\\" in raw and b"\\u003" in raw:
        return NOT_PARSED  # a colon may be written as \u003a: the count above proves nothing
    if not _DEPTH_BOUNDED and raw.count(b"[") + raw.count(b"{") > LIMITS.nesting_max:
        return NOT_PARSED  # an orjson that writes deeper documents: the json path checks depth
    return data

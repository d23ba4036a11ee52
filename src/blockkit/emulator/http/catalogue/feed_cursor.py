"""The images feed's cursors: ``feed:`` keyset cursors (ours) and legacy offset cursors.

A ``feed:`` cursor is opaque to clients: ``feed:<base64url JSON>.<check>``. The JSON
holds a format version, a hash of the filters it was made under, the data it was
made on (seed and scale), the keyset position (sort key and image id of the last
candidate examined; null for "from the start", which limit=0 hands out) and when it
was issued (emulator clock, whole seconds). So:

- a cursor that does not decode, or whose check does not match, is malformed (400);
- a cursor followed with other filters answers 400 "cursor cannot be continued with
  these filters" (spec rule 3), not a silently different list;
- a cursor issued more than 24 hours ago by the emulator clock, or made on other data
  (a reset store seeded differently), answers 400 "cursor can no longer be continued;
  start again without it" (openapi.json, D-feed-expiry). Each page issues a fresh
  cursor, so a walk that keeps going never expires.

A legacy cursor is ``<offset>|<timestamp>`` (ASCII digits; the timestamp is
milliseconds since the epoch): the offset into the list of images created up to
that instant, under the previous rules (spec rule 2).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import orjson

from blockkit.emulator.http.errors import ApiError, error_body
from blockkit.emulator.store.clock import format_timestamp

PREFIX = "feed:"
VERSION = 1
_LEGACY = re.compile(r"([0-9]{1,9})\|([0-9]{1,13})")
_CHECK_LENGTH = 10

MALFORMED = "malformed cursor: pass metadata.nextCursor back verbatim, or drop the cursor"
OTHER_FILTERS = ("cursor cannot be continued with these filters (restore the filters or drop the cursor)")
STALE = "cursor can no longer be continued; start again without it"
LIFETIME_S = 24 * 3600


@dataclass(frozen=True, slots=True)
class FeedPosition:
    filters: str          # filter_hash() of the request that made it
    data: str             # store data identity
    after: tuple[Any, int] | None   # (sort key, image id) of the last candidate examined
    issued: int = 0       # emulator clock, POSIX seconds


@dataclass(frozen=True, slots=True)
class LegacyPosition:
    offset: int
    created_before: str   # the stored timestamp form


def filter_hash(filters: dict[str, Any]) -> str:
    """A short stable hash of the normalised filters (sorted keys, JSON)."""
    return hashlib.sha256(orjson.dumps(filters, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]


def _check(body: str) -> str:
    return hashlib.sha256(b"blockkit-feed-cursor:" + body.encode()).hexdigest()[:_CHECK_LENGTH]


def encode(position: FeedPosition) -> str:
    after = list(position.after) if position.after is not None else None
    body = base64.urlsafe_b64encode(orjson.dumps([VERSION, position.filters, position.data, after, position.issued]))
    text = body.decode().rstrip("=")
    return f"{PREFIX}{text}.{_check(text)}"


def encode_legacy(position: LegacyPosition) -> str:
    moment = datetime.strptime(position.created_before, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    return f"{position.offset}|{int(moment.timestamp() * 1000)}"


def malformed() -> ApiError:
    return ApiError(400, error_body(MALFORMED))


def decode(text: str) -> FeedPosition | LegacyPosition:
    """Read a cursor; a malformed one raises the 400."""
    legacy = _LEGACY.fullmatch(text)
    if legacy:
        millis = int(legacy.group(2))
        try:
            moment = datetime.fromtimestamp(millis / 1000, tz=timezone.utc)
        except (OverflowError, OSError, ValueError):
            raise malformed() from None
        return LegacyPosition(int(legacy.group(1)), format_timestamp(moment))
    if not text.startswith(PREFIX):
        raise malformed()
    body, _, check = text[len(PREFIX):].rpartition(".")
    if not body or not re.fullmatch(r"[A-Za-z0-9_-]+", body) or check != _check(body):
        raise malformed()
    try:
        data = orjson.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except (binascii.Error, ValueError):
        raise malformed() from None
    if not (isinstance(data, list) and len(data) == 5 and data[0] == VERSION and isinstance(data[1], str)
            and isinstance(data[2], str) and isinstance(data[4], int) and not isinstance(data[4], bool)):
        raise malformed()
    after = data[3]
    if after is not None:
        if not (isinstance(after, list) and len(after) == 2 and isinstance(after[1], int)
                and not isinstance(after[1], bool) and isinstance(after[0], (int, str))
                and not isinstance(after[0], bool)):
            raise malformed()
        after = (after[0], after[1])
    return FeedPosition(data[1], data[2], after, data[4])


def check_continuable(position: FeedPosition, filters: str, data: str, now: float) -> None:
    """Raise the spec's 400s for a cursor that cannot be followed with this request."""
    if position.data != data or now - position.issued > LIFETIME_S:
        raise ApiError(400, error_body(STALE))
    if position.filters != filters:
        raise ApiError(400, error_body(OTHER_FILTERS))

"""The local platform's request journal: the last N requests to its three origins, and why each refusal.

A bounded ring (``collections.deque``) of entries, one per request to the catalogue, auth and
orchestration origins, recorded by the outermost ASGI middleware of each origin
(``http/journal.py``): method, path, query, status, duration, time, origin, who (user id,
OAuth client id, block), the request's and the answer's headers and the first bytes of their
bodies, tokens and secrets redacted (:func:`redact_pairs`, :func:`redact_text`).

This module is on the ground floor (no HTTP), so the code that refuses a request, in any
layer, can say why in words with :func:`note_reason` (and who asked with :func:`note_who`):
the words go to the journal only, never into the answer, so the wire stays the platform's.
While a request is being answered the middleware holds a fresh dict in a context variable;
the sync endpoints run in a thread pool that copies the context, so a service on a worker
thread writes into the same dict. Outside a request (the CLI, in-process services, tests
without the middleware) both calls do nothing.

The size: ``EmulatorOptions.journal_size`` (``emulator start --journal-size N``), else the
``BLOCKKIT_EMULATOR_JOURNAL`` environment variable, else 2000 entries; 0 turns it off.
"""

from __future__ import annotations

import functools
import os
import re
import threading
from collections import deque
from collections.abc import Iterable, Sequence
from contextvars import ContextVar
from typing import Any
from urllib.parse import unquote_plus

from blockkit.emulator.errors import EmulatorError

DEFAULT_SIZE = 2000
MAX_SIZE = 1_000_000
SIZE_VARIABLE = "BLOCKKIT_EMULATOR_JOURNAL"
BODY_LIMIT = 2048  # bytes of each body kept
REDACTED = "[redacted]"
PATH = "/__emulator/journal"
RAW = "_raw"  # an entry's headers and bodies as they passed, until first read (then redacted)
_HIDDEN = frozenset({RAW, "request", "response"})

_current: ContextVar[dict[str, Any] | None] = ContextVar("blockkit_journal_entry", default=None)


# --- what the refusing code tells ---------------------------------------------------------------

def note_reason(text: str) -> None:
    """Why the request being answered is refused, in words (the first one said counts)."""
    holder = _current.get()
    if holder is not None and "reason" not in holder:
        holder["reason"] = text


def note_who(*, user: int | None = None, client: str | None = None, block: str | None = None) -> None:
    """Who sent the request being answered: a user id, an OAuth client id, a block (its app id)."""
    holder = _current.get()
    if holder is None:
        return
    who = holder.setdefault("who", {})
    for name, value in (("user", user), ("client", client), ("block", block)):
        if value is not None and value != "":
            who.setdefault(name, value)


def begin() -> tuple[dict[str, Any], Any]:
    """The middleware: a fresh holder for this request, and the token to end it with."""
    holder: dict[str, Any] = {}
    return holder, _current.set(holder)


def end(token: Any) -> None:
    _current.reset(token)


def described(words: Sequence[Any]) -> str:
    """``a, b and c`` (or ``none``)."""
    items = [str(word) for word in words]
    if not items:
        return "none"
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


# --- redaction ----------------------------------------------------------------------------------

_SECRET_WORDS = ("token", "secret", "password", "passwd", "verifier", "apikey", "credential", "cookie",
                 "authorization", "signature", "accesskey")
_SECRET_NAMES = frozenset({"code", "key", "devicecode", "usercode", "csrf", "session", "otp", "pin", "jwt",
                           "assertion", "clientassertion", "xblockkitaccesskey"})
_KEEP_NAMES = frozenset({"tokentype", "tokentypehint", "tokenendpointauthmethod", "granttypes"})
_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie", "x-blockkit-access-key",
                             "x-api-key", "x-csrf-token"})


@functools.lru_cache(maxsize=4096)
def sensitive(name: str) -> bool:
    """Whether a field, parameter or header called ``name`` holds a secret (its value is redacted)."""
    folded = re.sub(r"[^a-z0-9]", "", name.lower())
    if folded in _KEEP_NAMES:
        return False
    return folded in _SECRET_NAMES or any(word in folded for word in _SECRET_WORDS)


_URL_HEADERS = frozenset({"location", "referer", "content-location"})


def redact_url(url: str) -> str:
    """A URL with its query's secrets redacted (an OAuth redirect's ``code``), and its fragment's."""
    for mark in ("?", "#"):
        head, sep, tail = url.partition(mark)
        if sep:
            url = head + sep + redact_pairs(tail)
    return redact_path(url)


_GRANT_PATH = re.compile(r"(/__emulator/downloads/)[^/?#]+")


def redact_path(path: str) -> str:
    """A path with the secrets it carries redacted (a download grant)."""
    return _GRANT_PATH.sub(rf"\g<1>{REDACTED}", path)


def redact_headers(headers: Iterable[tuple[bytes, bytes]]) -> list[list[str]]:
    out: list[list[str]] = []
    for raw_name, raw_value in headers:
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1")
        if name in _SECRET_HEADERS or sensitive(name):
            value = REDACTED
        elif name in _URL_HEADERS:
            value = redact_url(value)
        out.append([name, value])
    return out


_PAIR = re.compile(r"(^|[&;])([^=&;]*)=([^&;]*)")


def redact_pairs(text: str) -> str:
    """A query string or form body with the values of secret names replaced."""
    if "=" not in text:
        return text

    def one(match: re.Match[str]) -> str:
        lead, name, value = match.groups()
        return f"{lead}{name}={REDACTED}" if sensitive(unquote_plus(name)) and value else match.group(0)

    return _PAIR.sub(one, text)


# A JSON member "name": "value" (the value maybe cut off at the end of the kept bytes), or a
# number/true/false/null value.
_JSON_MEMBER = re.compile(r'"([^"\\]{1,80})"(\s*:\s*)("[^"\\]*(?:\\.[^"\\]*)*(?:"|$)|[-0-9.eE+]+|true|false|null)')
_BEARER = re.compile(r"(?i)(bearer\s+)[A-Za-z0-9\-._~+/]+=*")
# A JWT anywhere (a block token inside a bridge reply's {"token": {"raw": ...}}, whatever it is called).
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")


def redact_text(text: str, content_type: str = "") -> str:
    """A body with secrets redacted: JSON members and form pairs named like secrets, bearer tokens and JWTs."""
    kind = content_type.split(";")[0].strip().lower()

    def member(match: re.Match[str]) -> str:
        name, colon, value = match.groups()
        if not sensitive(name) or value == "null":
            return match.group(0)
        return f'"{name}"{colon}"{REDACTED}"'

    if kind == "application/x-www-form-urlencoded":
        text = redact_pairs(text)
    elif "json" in kind or text.lstrip()[:1] in ("{", "["):
        text = _JSON_MEMBER.sub(member, text)
    elif kind.startswith("text/html"):
        # The device and consent pages carry their codes in form fields.
        text = re.sub(r'(?i)(name="[^"]*(?:code|token|csrf|secret|key)[^"]*"[^>]*value=")[^"]*', rf"\g<1>{REDACTED}",
                      text)
    text = _BEARER.sub(rf"\g<1>{REDACTED}", text)
    return _JWT.sub(REDACTED, text) if "eyJ" in text else text


def body_text(data: bytes, total: int, content_type: str) -> str | None:
    """The kept first bytes of a body as redacted text (None when empty); binary bodies by size."""
    if total == 0:
        return None
    kind = content_type.split(";")[0].strip().lower()
    textual = (not kind or kind.startswith("text/") or "json" in kind or "xml" in kind
               or kind in ("application/x-www-form-urlencoded", "application/javascript"))
    if not textual:
        return f"({total} bytes of {kind or 'data'})"
    text = redact_text(data[:BODY_LIMIT].decode("utf-8", "replace"), content_type)
    if total > BODY_LIMIT:
        text += f"... ({total} bytes in all)"
    return text


# --- the ring -----------------------------------------------------------------------------------

def journal_size(option: int | None) -> int:
    """The size to use: the start option, else the environment variable, else the default."""
    if option is not None:
        size, where = option, "--journal-size"
    else:
        raw = os.environ.get(SIZE_VARIABLE, "").strip()
        if not raw:
            return DEFAULT_SIZE
        try:
            size = int(raw)
        except ValueError:
            raise EmulatorError(f"{SIZE_VARIABLE}={raw}: give a number of entries (0 turns the journal off)") from None
        where = SIZE_VARIABLE
    if not 0 <= size <= MAX_SIZE:
        raise EmulatorError(f"{where} {size}: give 0 (off) to {MAX_SIZE} entries")
    return size


def status_matches(status: int, wanted: str) -> bool:
    """``404``, ``4xx``, ``4XX`` or a list of them (``4xx,5xx``)."""
    for one in wanted.split(","):
        one = one.strip().lower()
        if len(one) == 3 and one.endswith("xx") and one[0].isdigit():
            if status // 100 == int(one[0]):
                return True
        elif one.isdigit() and int(one) == status:
            return True
    return False


def valid_status_filter(wanted: str) -> bool:
    parts = [part.strip().lower() for part in wanted.split(",")]
    return bool(parts) and all((len(p) == 3 and p[0].isdigit() and (p[1:] == "xx" or p[1:].isdigit())) for p in parts)


class Journal:
    """The ring: ``add(entry)`` gives it the next id; ``entries(...)`` reads it, oldest first."""

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        self.size = size
        self._ring: deque[dict[str, Any]] = deque(maxlen=max(size, 1))
        self._lock = threading.Lock()
        self._last = 0

    @property
    def enabled(self) -> bool:
        return self.size > 0

    @property
    def last_id(self) -> int:
        return self._last

    def add(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self._last += 1
            entry["id"] = self._last
            self._ring.append(entry)

    def __len__(self) -> int:
        return len(self._ring)

    def entries(self, *, since: int | None = None, status: str | None = None, origin: str | None = None,
                client: str | None = None, user: int | None = None, limit: int = 100,
                bodies: bool = False) -> list[dict[str, Any]]:
        """The entries that pass the filters, oldest first: after id ``since``, the ``limit`` oldest of
        them (to page forward); without ``since``, the ``limit`` newest."""
        with self._lock:
            ring = list(self._ring)
        if since is None:
            ring.reverse()
        found: list[dict[str, Any]] = []
        for entry in ring:
            if since is not None and entry["id"] <= since:
                continue
            who = entry.get("who") or {}
            if status is not None and not status_matches(entry["status"], status):
                continue
            if origin is not None and entry["origin"] != origin:
                continue
            if client is not None and str(who.get("client")) != client:
                continue
            if user is not None and who.get("user") != user:
                continue
            if bodies:
                if RAW in entry:
                    with self._lock:
                        _materialise(entry)
                found.append({k: v for k, v in entry.items() if k != RAW})
            else:
                found.append({k: v for k, v in entry.items() if k not in _HIDDEN})
            if len(found) >= limit:
                break
        if since is None:
            found.reverse()
        return found


def _materialise(entry: dict[str, Any]) -> None:
    """Replace an entry's raw headers and bodies by their redacted form (once, under the ring's lock)."""
    raw = entry.pop(RAW, None)
    if raw is None:
        return
    request_headers, request_body, request_total, response_headers, response_body, response_total = raw
    request_type = _content_type(request_headers)
    response_type = _content_type(response_headers)
    entry["request"] = {"headers": redact_headers(request_headers),
                        "body": body_text(request_body, request_total, request_type)}
    entry["response"] = {"headers": redact_headers(response_headers),
                         "body": body_text(response_body, response_total, response_type)}


def _content_type(headers: Iterable[tuple[bytes, bytes]]) -> str:
    for name, value in headers:
        if name.lower() == b"content-type":
            return value.decode("latin-1")
    return ""

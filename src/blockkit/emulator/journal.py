"""The local platform's request journal: the last N requests to its three origins, and why each refusal.

A bounded ring (``collections.deque``) of entries, one per request to the catalogue, auth and
orchestration origins, recorded by the outermost ASGI middleware of each origin
(``http/journal.py``): method, path, query, status, duration, time, origin, who (user id,
OAuth client id, block), the request's and the answer's headers and the first bytes of their
bodies, tokens and secrets redacted (:func:`redact_pairs`, :func:`redact_text`).

This module is on the ground floor (no HTTP), so the code that refuses a request, in any
layer, can say why in words with :func:`note_reason` (and who asked with :func:`note_who`):
the words go to the journal only, never into the answer, so the wire stays the platform's.
A refusal the platform answers with a success status (a block's workflow over its budget is a 200
failed snapshot; a second vote answers the count) shows its reason too once the code says so
(:func:`note_resolved_refusal`); any other success shows none.
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
import time
from collections import deque
from collections.abc import Iterable, Sequence
from contextvars import ContextVar
from typing import Any
from urllib.parse import unquote_plus

import orjson

from blockkit.emulator.errors import EmulatorError

DEFAULT_SIZE = 2000
MAX_SIZE = 1_000_000
SIZE_VARIABLE = "BLOCKKIT_EMULATOR_JOURNAL"
BODY_LIMIT = 2048  # bytes of each body kept
REDACTED = "[redacted]"
PATH = "/__emulator/journal"
RAW = "_raw"  # an entry's headers and bodies as they passed, until first read (then redacted)
_HIDDEN = frozenset({RAW, "request", "response"})

class Holder:
    """What the code answering a request tells the journal: why it refused, and who asked."""

    __slots__ = ("reason", "who", "resolved")

    def __init__(self) -> None:
        self.reason: str | None = None
        self.who: dict[str, Any] | None = None
        self.resolved = False  # a refusal answered with a success status (note_resolved_refusal)


_current: ContextVar[Holder | None] = ContextVar("blockkit_journal_entry", default=None)


# --- what the refusing code tells ---------------------------------------------------------------

def note_reason(text: str) -> None:
    """Why the request being answered is refused, in words (the first one said counts)."""
    holder = _current.get()
    if holder is not None and holder.reason is None:
        holder.reason = text


def note_resolved_refusal() -> None:
    """The refusal being answered goes out with a success status, as the platform answers it (a block's
    workflow over its budget is a 200 failed snapshot): the journal shows its reason all the same."""
    holder = _current.get()
    if holder is not None:
        holder.resolved = True


def note_who(*, user: int | None = None, client: str | None = None, block: str | None = None) -> None:
    """Who sent the request being answered: a user id, an OAuth client id, a block (its app id)."""
    holder = _current.get()
    if holder is None:
        return
    who = holder.who
    if who is None:
        who = holder.who = {}
    for name, value in (("user", user), ("client", client), ("block", block)):
        if value is not None and value != "":
            who.setdefault(name, value)


def begin(holder: Holder | None = None) -> tuple[Holder, Any]:
    """A holder (a fresh one, or the entry being recorded) current for this request, and the token to end it with."""
    if holder is None:
        holder = Holder()
    return holder, _current.set(holder)


def end(token: Any) -> None:
    _current.reset(token)


def described(words: Sequence[Any]) -> str:
    """``a, b and c`` (or ``none``)."""
    items = [str(word) for word in words]
    if not items:
        return "none"
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def kind_of(value: Any) -> str:
    """What a JSON value is, for a reason: a number as it is, anything else by its kind (a string's text
    may be long or secret)."""
    if isinstance(value, str):
        return f"a string of {len(value)} characters"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, dict):
        return "an object"
    return "null" if value is None else type(value).__name__


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

    if kind == "application/x-www-form-urlencoded" or (not kind and text.lstrip()[:1] not in ("{", "[")):
        text = redact_pairs(text)  # a form, or a body that names no type (it may be one)
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


class Entry(Holder):
    """One recorded request, read back from the ring. Nothing is formatted, decoded or redacted on the
    request path: the middleware (``http/journal.py``) hands the request's parts to
    :meth:`Journal.record`, which keeps them :func:`packed`, a tuple of strings, bytes and numbers that
    Python's garbage collector stops following (a ring of live objects made every collection walk it:
    issue 36, the cost at 16 connections). :meth:`unpacked` makes the record an entry again, worked out
    into text (:meth:`summary`, :meth:`detail`) when it is read."""

    __slots__ = ("id", "wall", "duration_ns", "origin", "method", "path", "query", "status",
                 "request_headers", "request_body", "request_total", "response_headers", "response_body",
                 "response_total")

    @classmethod
    def unpacked(cls, record: tuple[Any, ...]) -> Entry:
        """An entry back from its :func:`packed` record, to read."""
        entry = cls.__new__(cls)
        (entry.id, entry.wall, entry.duration_ns, entry.origin, entry.method, entry.path, entry.query, entry.status,
         entry.request_headers, entry.request_body, entry.request_total, entry.response_headers,
         entry.response_body, entry.response_total, entry.reason, who) = record
        entry.who = dict(who) if who else None
        entry.resolved = False  # folded in when packed: a success keeps its reason only when resolved
        return entry

    def summary(self) -> dict[str, Any]:
        """The entry as the listing shows it (redacted)."""
        return self._summarise()

    def detail(self) -> dict[str, Any]:
        """The summary with the headers and bodies (redacted)."""
        return {**self.summary(), **self.exchange()}

    def exchange(self) -> dict[str, Any]:
        """The request's and the answer's headers and bodies (redacted)."""
        request_type = _content_type(self.request_headers)
        response_type = _content_type(self.response_headers)
        return {"request": {"headers": redact_headers(self.request_headers),
                            "body": body_text(_joined(self.request_body), self.request_total, request_type)},
                "response": {"headers": redact_headers(self.response_headers),
                             "body": body_text(_joined(self.response_body), self.response_total, response_type)}}

    def _summarise(self) -> dict[str, Any]:
        status = self.status
        raw_query = self.query
        who = dict(self.who) if self.who else {}
        if "client" not in who:
            request_body = _joined(self.request_body)
            if b"client_id" in raw_query or b"client_id" in request_body:
                # The OAuth endpoints name the client in the query or the form.
                client = client_id_of(raw_query, request_body)
                if client:
                    who["client"] = client
        reason = None
        if status >= 400:
            reason = self.reason or reason_from_body(_joined(self.response_body),
                                                     _content_type(self.response_headers), status)
        elif self.reason:
            # An OAuth refusal sent back to the client's redirect_uri, or one the platform answers 200
            # (``packed`` keeps a success's reason only when the code said so: note_resolved_refusal).
            reason = self.reason
        path = self.path
        if path.startswith("/__emulator/downloads/"):
            path = redact_path(path)
        return {"id": self.id, "time": iso_time(self.wall), "origin": self.origin, "method": self.method,
                "path": path, "query": redact_pairs(raw_query.decode("latin-1")) if raw_query else "",
                "status": status, "duration_ms": round(self.duration_ns / 1e6, 2), "who": who, "reason": reason}


def packed(number: int, wall: float, duration_ns: int, origin: str, method: str, path: str, query: bytes,
           status: int, request_headers: Sequence[Any], request_body: bytes | list[bytes], request_total: int,
           response_headers: Sequence[Any], response_body: bytes | list[bytes], response_total: int,
           reason: str | None, who: dict[str, Any] | None, resolved: bool = False) -> tuple[Any, ...]:
    """A request as the ring keeps it (:meth:`Entry.unpacked` reads it back): only atoms and tuples of
    atoms, which the garbage collector stops following once it has seen them. A success (below 300)
    keeps its reason only when the code answered a refusal with it (``resolved``)."""
    if status < 300 and not resolved:
        reason = None
    return (number, wall, duration_ns, origin, method, path, query, status, _atoms(request_headers),
            request_body if type(request_body) is bytes else _joined(request_body), request_total,
            _atoms(response_headers), response_body if type(response_body) is bytes else _joined(response_body),
            response_total, reason, tuple(who.items()) if who else None)


def _kept(kept: bytes | list[bytes], total: int, chunk: bytes) -> bytes | list[bytes]:
    if total >= BODY_LIMIT or not chunk:
        return kept
    room = BODY_LIMIT - total
    part = chunk if len(chunk) <= room else chunk[:room]
    if not kept:
        return part
    if isinstance(kept, list):
        kept.append(part)
        return kept
    return [kept, part]


def _joined(kept: bytes | list[bytes]) -> bytes:
    return b"".join(kept) if isinstance(kept, list) else kept


def _atoms(headers: Sequence[Any]) -> tuple[tuple[bytes, bytes], ...]:
    """Headers as a tuple of their (name, value) pairs. ASGI servers hand over a list of tuples of bytes,
    so one copy into a tuple, made in C, is all it takes (the first pair tells the form); headers whose
    pairs are lists are made tuples pair by pair, or the ring would hold live objects the collector walks."""
    pairs = headers if type(headers) is tuple else tuple(headers)
    if pairs and type(pairs[0]) is not tuple:
        return tuple(pair if type(pair) is tuple else (bytes(pair[0]), bytes(pair[1])) for pair in pairs)
    return pairs  # type: ignore[return-value]


def iso_time(wall: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(wall)) + f".{int(wall * 1000) % 1000:03d}Z"


def client_id_of(query: bytes, form: bytes) -> str | None:
    """The ``client_id`` named in a query or a form body."""
    from urllib.parse import parse_qsl

    for raw in (query, form):
        if b"client_id" in raw:
            for name, value in parse_qsl(raw.decode("latin-1"), keep_blank_values=False):
                if name == "client_id":
                    return value[:128]
    return None


def reason_from_body(body: bytes, content_type: str, status: int) -> str:
    """No code said why: the answer's own words (its error description, detail or error)."""
    if "json" in content_type:
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError:
            data = None
        if isinstance(data, str):
            return data
        if isinstance(data, dict):
            for key in ("error_description", "detail", "message", "error"):
                value = data.get(key)
                if isinstance(value, str) and value:
                    return value
                if isinstance(value, dict) and isinstance(value.get("message"), str):
                    return value["message"]
    elif content_type.startswith("text/plain"):
        text = body.decode("utf-8", "replace").strip()
        if text:
            return text.splitlines()[0]
    return f"answered {status}"


class Journal:
    """The ring: ``record(...)`` (a request, from the middleware) and ``add(entry)`` (a bridge call) give
    the next id; ``entries(...)`` reads it, oldest first.

    A request is kept packed (a tuple, made an :class:`Entry` and worked out into text when it is read);
    a bridge call is a plain dict, already in its listed form, with its raw headers and bodies under
    ``RAW`` until first read."""

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        self.size = size
        self._ring: deque[tuple[Any, ...] | dict[str, Any]] = deque(maxlen=max(size, 1))
        self._lock = threading.Lock()
        self._last = 0
        # Whether requests are being recorded now: a journal that is on (``enabled``) may be paused
        # (``pause``) and resumed, from the console or ``POST /__emulator/journal``. A plain attribute,
        # read on every request.
        self.recording = size > 0

    @property
    def enabled(self) -> bool:
        """Whether this run has a journal at all (``--journal-size`` above 0); see ``recording``."""
        return self.size > 0

    def pause(self) -> None:
        """Stop recording (the entries held stay readable) until :meth:`resume`."""
        self.recording = False

    def resume(self) -> None:
        """Record again (a journal of size 0 stays off)."""
        self.recording = self.size > 0

    @property
    def last_id(self) -> int:
        return self._last

    def add(self, entry: dict[str, Any]) -> None:
        """Keep a bridge call's ``entry`` as the newest, with the next id (nothing while paused)."""
        if not self.recording:
            return
        with self._lock:
            self._last = number = self._last + 1
            entry["id"] = number
            self._ring.append(entry)

    def record(self, wall: float, duration_ns: int, origin: str, method: str, path: str, query: bytes, status: int,
               request_headers: Sequence[Any], request_body: bytes | list[bytes], request_total: int,
               response_headers: Sequence[Any], response_body: bytes | list[bytes], response_total: int,
               reason: str | None, who: dict[str, Any] | None, resolved: bool) -> None:
        """Keep a request, from its parts as the middleware read them, as the newest (nothing while
        paused). No entry object is made on the request path: it is packed at once."""
        if not self.recording:
            return
        with self._lock:
            self._last = number = self._last + 1
            self._ring.append(packed(number, wall, duration_ns, origin, method, path, query, status, request_headers,
                                     request_body, request_total, response_headers, response_body, response_total,
                                     reason, who, resolved))

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
        for item in ring:
            packed = type(item) is tuple
            number = item[0] if packed else item["id"]
            if since is not None and number <= since:
                continue
            if origin is not None and (item[3] if packed else item["origin"]) != origin:
                continue
            if packed:
                item = Entry.unpacked(item)
                entry = item.summary()
            else:
                entry = item
            who = entry.get("who") or {}
            if status is not None and not status_matches(entry["status"], status):
                continue
            if client is not None and str(who.get("client")) != client:
                continue
            if user is not None and who.get("user") != user:
                continue
            if isinstance(item, Entry):
                found.append({**entry, **item.exchange()} if bodies else entry)
            elif bodies:
                if RAW in item:
                    with self._lock:
                        _materialise(item)
                found.append({k: v for k, v in item.items() if k != RAW})
            else:
                found.append({k: v for k, v in item.items() if k not in _HIDDEN})
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

"""The request journal over HTTP: the outermost middleware of each origin, and its control route.

:class:`JournalMiddleware` wraps each origin outside everything else (the Host check and the
access guard included, so their refusals are journalled too) and records one entry per request
into the run's :class:`~blockkit.emulator.journal.Journal` once the answer is sent. It reads the
answer as it passes and changes nothing in it.

``GET {base_url}/__emulator/journal`` (:func:`journal_endpoint`) reads the ring as JSON, guarded
like the other control routes that name secrets' neighbours (``access.py``: the access key, and
no other origin's page). Its own requests are not journalled (a follower would see itself).

Query parameters: ``since`` (an entry id: the entries after it, oldest first; without it the
newest), ``status`` (``404``, ``4xx``, ``4xx,5xx``), ``origin`` (catalogue, auth, orchestration, bridge),
``client`` (an OAuth client id), ``user`` (a user id), ``limit`` (1-2000, default 100), ``wait``
(seconds, at most 30: with ``since``, wait that long for a new matching entry before answering
an empty list), ``bodies`` (1: the headers and bodies too). The answer:
``{"entries": [...], "last_id": N, "size": S, "enabled": bool, "recording": bool}``.

``POST {base_url}/__emulator/journal {"recording": false}`` pauses the journal (``true`` resumes it), a
control write like the others (the access key, JSON, the emulator's own origins only).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

import orjson

from blockkit.emulator import journal as journal_mod
from blockkit.emulator.http.bodies import read_limited
from blockkit.emulator.journal import BODY_LIMIT, Holder, Journal, _current, _kept
from blockkit.emulator.http.errors import bad_request, json_response

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from blockkit.emulator.http.hostcheck import ASGIApp, Receive, Scope, Send

MAX_WAIT_S = 30.0
POLL_S = 0.05
MAX_LIMIT = 2000
ORIGINS = ("catalogue", "auth", "orchestration", "bridge")  # bridge: blockkit dev's host page (dev/host_app.py)
_SKIP_PATH = journal_mod.PATH


class _Recorder(Holder):
    """A request's holder while it is answered (the notes of the code that answers it go into it) and the
    reader of its answer: :meth:`sending` is the ``send`` the app is given; it reads the status, the
    headers and the first bytes of the body as they pass."""

    __slots__ = ("status", "headers", "body", "total", "send")

    def __init__(self, send: Send) -> None:
        self.reason = None
        self.who = None
        self.resolved = False
        self.status = 0
        self.headers: Any = ()
        self.body: bytes | list[bytes] = b""
        self.total = 0
        self.send: Send | None = send

    def sending(self, message: Any) -> Any:
        # Not a coroutine: it reads the message and hands back the server's own send's awaitable, which the
        # app awaits as it would have; one coroutine frame fewer for every message of every answer.
        if message["type"] == "http.response.start":
            if not self.status:
                self.status = message["status"]
                self.headers = message.get("headers") or ()
        else:
            chunk = message.get("body")
            if chunk:
                total = self.total
                if total < BODY_LIMIT:
                    self.body = _kept(self.body, total, chunk)
                self.total = total + len(chunk)
        return self.send(message)  # type: ignore[misc]


class _Reader:
    """The first bytes of a request's body, read as they pass (``receiving`` is the app's ``receive``)."""

    __slots__ = ("receive", "body", "total")

    def __init__(self, receive: Receive) -> None:
        self.receive: Receive | None = receive
        self.body: bytes | list[bytes] = b""
        self.total = 0

    async def receiving(self) -> Any:
        message = await self.receive()  # type: ignore[misc]
        if message["type"] == "http.request":
            chunk = message.get("body")
            if chunk:
                self.body = _kept(self.body, self.total, chunk)
                self.total += len(chunk)
        return message


# HTTP gives a GET's or a HEAD's body no meaning; their receive is not wrapped (no body is kept).
_NO_BODY = frozenset({"GET", "HEAD"})


class JournalMiddleware:
    """Record every HTTP request to one origin (``origin``: catalogue, auth or orchestration).

    On the request path it does the least it can: one small :class:`_Recorder` per request (the request's
    journal holder, and the reader of its answer), the clock read twice, and the ring's append of the
    request's parts as they came (:meth:`Journal.record`). The query, the path's secrets, the reason
    from the answer's body, the client named in a form, the time's text, the headers and the bodies are
    all worked out when the entry is first read (``journal.Entry``).
    """

    def __init__(self, app: ASGIApp, journal: Journal, origin: str) -> None:
        self.app = app
        self.journal = journal
        self.origin = origin

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.journal.recording or scope["path"] == _SKIP_PATH:
            await self.app(scope, receive, send)
            return
        wall = time.time()
        started = time.perf_counter_ns()
        method = scope["method"]
        recorder = _Recorder(send)
        reader = None
        if method not in _NO_BODY:
            reader = _Reader(receive)
            receive = reader.receiving
        token = _current.set(recorder)
        try:
            await self.app(scope, receive, recorder.sending)
        except BaseException:
            if not recorder.status:
                recorder.status = 500
            raise
        finally:
            _current.reset(token)
            duration = time.perf_counter_ns() - started
            recorder.send = None  # nothing of the connection outlives the request
            try:
                if reader is None:
                    self.journal.record(wall, duration, self.origin, method, scope["path"],
                                        scope.get("query_string") or b"", recorder.status, scope.get("headers") or (),
                                        b"", 0, recorder.headers, recorder.body, recorder.total, recorder.reason,
                                        recorder.who, recorder.resolved)
                else:
                    reader.receive = None
                    self.journal.record(wall, duration, self.origin, method, scope["path"],
                                        scope.get("query_string") or b"", recorder.status, scope.get("headers") or (),
                                        reader.body, reader.total, recorder.headers, recorder.body, recorder.total,
                                        recorder.reason, recorder.who, recorder.resolved)
            except Exception:  # noqa: BLE001 - the journal never costs a request its answer
                import logging

                logging.getLogger("blockkit.emulator").exception("the request journal could not record a request")


# --- the control route ----------------------------------------------------------------------------

def _int(request: Request, name: str, low: int, high: int | None = None) -> int | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return None
    try:
        value = int(raw)
    except ValueError:
        raise bad_request(f"{name} must be a whole number") from None
    if value < low or (high is not None and value > high):
        raise bad_request(f"{name} must be from {low} to {high}" if high is not None else f"{name} must be {low} or more")
    return value


async def journal_endpoint(request: Request) -> Response:
    from blockkit.emulator.state import emulator

    journal: Journal | None = getattr(emulator(request), "journal", None)
    params = request.query_params
    since = _int(request, "since", 0)
    limit = _int(request, "limit", 1, MAX_LIMIT) or 100
    user = _int(request, "user", 0)
    status = params.get("status") or None
    if status is not None and not journal_mod.valid_status_filter(status):
        raise bad_request("status must be a status (404) or a class (4xx), or several separated by commas")
    origin = params.get("origin") or None
    if origin is not None and origin not in ORIGINS:
        raise bad_request(f"origin must be one of {', '.join(ORIGINS)}")
    try:
        wait = float(params.get("wait") or 0)
    except ValueError:
        raise bad_request("wait must be a number of seconds") from None
    if not 0 <= wait <= MAX_WAIT_S:
        raise bad_request(f"wait must be from 0 to {MAX_WAIT_S:g} seconds")
    bodies = params.get("bodies", "0")
    if bodies not in ("0", "1"):
        raise bad_request("bodies must be 0 or 1")
    if journal is None:
        return json_response({"entries": [], "last_id": 0, "size": 0, "enabled": False},
                             headers={"Cache-Control": "no-store"})

    def read() -> list[dict[str, Any]]:
        return journal.entries(since=since, status=status, origin=origin, client=params.get("client") or None,
                               user=user, limit=limit, bodies=bodies == "1")

    # last_id as it was before the read: a follower that got no entries goes on from it and misses none.
    last = journal.last_id
    found = read()
    if not found and wait > 0 and since is not None and journal.enabled:
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            await asyncio.sleep(POLL_S)
            if await request.is_disconnected():
                break
            if journal.last_id != last:
                last = journal.last_id
                found = read()
                if found:
                    break
    return json_response({"entries": found, "last_id": last, "size": journal.size,
                          "enabled": journal.enabled, "recording": journal.recording},
                         headers={"Cache-Control": "no-store"})


RECORDING_USAGE = 'send a JSON object: {"recording": true} or {"recording": false}'


async def recording_endpoint(request: Request) -> Response:
    """``POST /__emulator/journal {"recording": bool}``: pause the journal or resume it. The entries it
    holds stay. Answers ``{"last_id", "size", "enabled", "recording"}``; a run without a journal
    (``--journal-size 0``) answers 409, since there is nothing to resume."""
    from blockkit.emulator.state import emulator

    body = await read_limited(request, 256)
    try:
        payload = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise bad_request(RECORDING_USAGE) from None
    if not isinstance(payload, dict) or set(payload) != {"recording"} or type(payload["recording"]) is not bool:
        raise bad_request(RECORDING_USAGE)
    journal: Journal | None = getattr(emulator(request), "journal", None)
    if journal is None or not journal.enabled:
        return json_response({"error": "this run has no request journal (it was started with --journal-size 0)"},
                             status_code=409)
    if payload["recording"]:
        journal.resume()
    else:
        journal.pause()
    return json_response({"last_id": journal.last_id, "size": journal.size, "enabled": journal.enabled,
                          "recording": journal.recording}, headers={"Cache-Control": "no-store"})


def control_routes() -> list[Any]:
    from starlette.routing import Route

    return [Route("/journal", journal_endpoint, methods=["GET"]),
            Route("/journal", recording_endpoint, methods=["POST"])]

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
``{"entries": [...], "last_id": N, "size": S, "enabled": bool}``.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

import orjson

from blockkit.emulator import journal as journal_mod
from blockkit.emulator.journal import BODY_LIMIT, Journal
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


def _header(headers: list[tuple[bytes, bytes]], name: bytes) -> str:
    for key, value in headers:
        if key.lower() == name:
            return value.decode("latin-1")
    return ""


class JournalMiddleware:
    """Record every HTTP request to one origin (``origin``: catalogue, auth or orchestration)."""

    def __init__(self, app: ASGIApp, journal: Journal, origin: str) -> None:
        self.app = app
        self.journal = journal
        self.origin = origin

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.journal.enabled or scope.get("path") == _SKIP_PATH:
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        wall = time.time()
        holder, token = journal_mod.begin()
        # The first BODY_LIMIT bytes of each body, as the chunks that carried them (one, mostly: kept
        # as it is, not copied).
        request_chunks: list[bytes] = []
        response_chunks: list[bytes] = []
        sizes = [0, 0]  # request, response bytes in all
        answer: dict[str, Any] = {"status": None, "headers": ()}

        async def reading() -> Any:
            message = await receive()
            if message["type"] == "http.request":
                chunk = message.get("body", b"")
                if chunk:
                    if sizes[0] < BODY_LIMIT:
                        request_chunks.append(chunk[:BODY_LIMIT - sizes[0]])
                    sizes[0] += len(chunk)
            return message

        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                answer["status"] = message["status"]
                answer["headers"] = message.get("headers") or ()
            else:
                chunk = message.get("body", b"")
                if chunk:
                    if sizes[1] < BODY_LIMIT:
                        response_chunks.append(chunk[:BODY_LIMIT - sizes[1]])
                    sizes[1] += len(chunk)
            await send(message)

        try:
            await self.app(scope, reading, sending)
        except BaseException:
            if answer["status"] is None:
                answer["status"] = 500
            raise
        finally:
            journal_mod.end(token)
            try:
                self._record(scope, holder, started, wall, _joined(request_chunks), sizes[0], answer,
                             _joined(response_chunks), sizes[1])
            except Exception:  # noqa: BLE001 - the journal never costs a request its answer
                import logging

                logging.getLogger("blockkit.emulator").exception("the request journal could not record a request")

    def _record(self, scope: Scope, holder: dict[str, Any], started: float, wall: float, request_body: bytes,
                request_total: int, answer: dict[str, Any], response_body: bytes, response_total: int) -> None:
        # On the request path: only what the listing shows. Headers and bodies are kept as they
        # passed and redacted when first read (journal.py: Journal.entries).
        status = int(answer["status"] or 0)
        request_headers = scope.get("headers") or []
        raw_query: bytes = scope.get("query_string", b"")
        query = journal_mod.redact_pairs(raw_query.decode("latin-1")) if raw_query else ""
        path = str(scope.get("path", ""))
        if path.startswith("/__emulator/downloads/"):
            path = journal_mod.redact_path(path)
        who = dict(holder["who"]) if "who" in holder else {}
        if "client" not in who and (b"client_id" in raw_query or b"client_id" in request_body):
            # The OAuth endpoints name the client in the query or the form.
            client = _client_id(raw_query, request_body)
            if client:
                who["client"] = client
        entry: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(wall)) + f".{int(wall * 1000) % 1000:03d}Z",
            "origin": self.origin,
            "method": scope.get("method", ""),
            "path": path,
            "query": query,
            "status": status,
            "duration_ms": round((time.perf_counter() - started) * 1000, 2),
            "who": who,
            "reason": None,
            journal_mod.RAW: (request_headers, request_body, request_total, answer["headers"], response_body,
                              response_total),
        }
        if status >= 400:
            entry["reason"] = holder.get("reason") or _reason_from_body(
                response_body, _header(answer["headers"], b"content-type"), status)
        elif status >= 300 and "reason" in holder:  # an OAuth refusal sent back to the client's redirect_uri
            entry["reason"] = holder["reason"]
        self.journal.add(entry)


def _joined(chunks: list[bytes]) -> bytes:
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _client_id(query: bytes, form: bytes) -> str | None:
    from urllib.parse import parse_qsl

    for raw in (query, form):
        if b"client_id" in raw:
            for name, value in parse_qsl(raw.decode("latin-1"), keep_blank_values=False):
                if name == "client_id":
                    return value[:128]
    return None


def _reason_from_body(body: bytes, content_type: str, status: int) -> str:
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
                          "enabled": journal.enabled}, headers={"Cache-Control": "no-store"})


def control_routes() -> list[Any]:
    from starlette.routing import Route

    return [Route("/journal", journal_endpoint, methods=["GET"])]

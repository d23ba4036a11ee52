"""The host page's bridge calls in the local platform's request journal (issue 36, item 6).

``blockkit dev`` runs its local platform in this process (``platform.py``), so the host page
(``host_app.py``) writes each block message it answers straight into the emulator's
:class:`~blockkit.emulator.journal.Journal`, beside the requests to the three origins: origin
``bridge``, method the message type (``REQUEST_TOKEN``, ``APP_STORAGE_SET``, ``SUBMIT_WORKFLOW``...),
path ``postMessage``, who the block (``appId/blockId``) and the viewer, the time it took, and for a
refusal a status and the reason in words.

While the bridge answers a message, a journal holder is current (``journal.begin``), so a service
that says why it refused (``journal.note_reason``: the storage quota, Buzz short, a reused
idempotency key) is heard here as on the HTTP routes; without one, the refusal's own sentence is
the reason. The status: the one the refusing service named (its HTTP status on the platform),
else 401 for a call that needs a signed-in viewer or a block token, 403 for a scope the block did
not declare or the viewer has not granted, 404 for a page this run did not load, 500 for an
exception, else 400; an answered call, or a dialog the viewer dismissed, is 200. The message's
payload and the reply are kept as the request's and the answer's bodies (first 2 KiB, redacted
when first read: a token in a reply never leaves the journal).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import orjson

from blockkit.emulator import journal as journal_mod
from blockkit.emulator.journal import BODY_LIMIT

if TYPE_CHECKING:
    from blockkit.dev.bridge import Outcome

ORIGIN = "bridge"
PATH = "postMessage"
_JSON = ((b"content-type", b"application/json"),)


def _status(outcome: Outcome) -> int:
    from blockkit.dev import bridge
    from blockkit.dev.platform import CONSENT_REQUIRED

    call = outcome.call
    if call is None or call.get("ok") is not False or call.get("error") == bridge.CANCELED:
        return 200
    if outcome.status is not None and 400 <= outcome.status < 600:
        return outcome.status
    status = call.get("status")
    if isinstance(status, int) and 400 <= status < 600:
        return status
    error = str(call.get("error") or "")
    if error in (bridge.SIGN_IN_ERROR, bridge.BLOCK_TOKEN_ERROR):
        return 401
    if error in (bridge.SCOPE_ERROR, CONSENT_REQUIRED, bridge.TOKEN_REFUSED) or error.startswith("block lacks "):
        return 403
    if error == bridge.UNKNOWN_PAGE_ERROR:
        return 404
    if error == bridge.PLATFORM_ERROR:
        return 500
    return 400


def _body(value: Any) -> tuple[bytes, int]:
    if value is None:
        return b"", 0
    try:
        data = orjson.dumps(value, default=str)
    except TypeError:
        data = repr(value).encode()
    return data[:BODY_LIMIT], len(data)


class BridgeCall:
    """One block message being answered: ``with BridgeCall(journal, type_, payload) as call: ...``,
    then ``call.record(outcome, block=..., user=...)``. With no journal it does nothing."""

    def __init__(self, journal: Any, message_type: str | None, payload: Any) -> None:
        self.journal = journal
        self.message_type = message_type
        self.payload = payload
        self.holder = journal_mod.Holder()
        self._token: Any = None
        self._started = 0
        self._wall = 0.0

    def __enter__(self) -> BridgeCall:
        if self.journal is not None:
            self.holder, self._token = journal_mod.begin(self.holder)
            self._started = time.perf_counter_ns()
            self._wall = time.time()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            journal_mod.end(self._token)
            self._token = None

    def record(self, outcome: Outcome, *, block: str | None, user: int | None) -> None:
        """Add the entry (a message with neither a reply nor a call, e.g. a dialog just opened, is not one)."""
        if self.journal is None or self.message_type is None or (outcome.reply is None and outcome.call is None):
            return
        status = _status(outcome)
        reason = None
        if status >= 400:
            call = outcome.call or {}
            reason = self.holder.reason or call.get("message") or call.get("error") or f"answered {status}"
        who: dict[str, Any] = {}
        if block:
            who["block"] = block
        if user is not None:
            who["user"] = user
        wall = self._wall
        request_body, request_total = _body(self.payload)
        reply = outcome.reply.get("payload") if isinstance(outcome.reply, dict) else None
        response_body, response_total = _body(reply)
        self.journal.add({
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(wall)) + f".{int(wall * 1000) % 1000:03d}Z",
            "origin": ORIGIN,
            "method": self.message_type,
            "path": PATH,
            "query": "",
            "status": status,
            "duration_ms": round((time.perf_counter_ns() - self._started) / 1e6, 2),
            "who": who,
            "reason": reason,
            journal_mod.RAW: (_JSON, request_body, request_total, _JSON, response_body, response_total),
        })

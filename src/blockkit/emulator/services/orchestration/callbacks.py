"""The orchestration background worker: workflow callbacks, expiry refunds, crash recovery.

``Background(store, clock)``: ``start()`` first recovers what a crash cut short (``upscaler.recover``:
refund every recipe job still 'running', a ledger row naming each), then runs two daemon threads:

- the **settler** refunds workflows whose step expired (``workflows.settle_due``) every ``interval``
  seconds, on its own, so no callback receiver can hold it up;
- the **dispatcher** hands the callback events that are due on the emulator clock
  (``workflow_events``, written in the transaction that created or canceled the workflow) to a small
  pool of ``DELIVERY_THREADS`` senders: one ``POST`` of the event's JSON to the callback's URL each.
  At most ``PER_ORIGIN`` deliveries to one origin, and one per workflow, run at a time, so a slow
  receiver holds at most that many senders and never another receiver's events.

Each delivery has a **deadline for the whole of it** (``DELIVERY_DEADLINE_SECONDS``: connect, send,
the answer's head and up to 64 KiB of its body; a receiver that trickles a byte at a time is cut off
there), besides the per-operation ``TIMEOUT_SECONDS``. A 2xx marks the event delivered; anything else
(a status, a refused connection, a timeout, the deadline) is tried again after 0.5, 1, 2, 4 s ...,
doubling up to ``RETRY_CAP_SECONDS``, ``MAX_ATTEMPTS`` times in all (about 55 minutes, so a receiver
that is down for a while still gets its events when it is back), then it is marked ``failed`` with
its last error, and one line on stderr names it. Every attempt is a row of ``callback_attempts`` (when it
started, how long it took, the HTTP status or the error), written with the event's new state. ``GET {base_url}/__emulator/callbacks`` lists the
events that failed or are still pending. Events that were pending at a crash are delivered after the
restart (at least once).

The request that caused an event never waits for its delivery. ``stop()`` ends the threads and cuts
off the deliveries in flight.

Event bodies (@civitai/client ``WorkflowEvent``, ``WorkflowStepEvent``, ``WorkflowStepJobEvent``):

- ``workflow:*`` -> ``{"$type": "workflow", workflowId, status, timestamp, details?}``;
- ``step:*`` -> ``{"$type": "step", workflowId, name, status, details?}``;
- ``job:*`` -> ``{"$type": "job", workflowId, stepName, jobId, status, progress?}``.

``details`` comes with a callback whose ``detailed`` is true: WorkflowEventDetails (metadata,
arguments, createdAt, startedAt, completedAt, steps [{name, status, startedAt, completedAt,
metadata, input, output, cost}]) or WorkflowStepEventDetails, as the workflow stood at the event.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import orjson

from blockkit.emulator.store.clock import parse_timestamp
from blockkit.emulator.store import orchestration as orch_store

if TYPE_CHECKING:
    from blockkit.emulator.store.clock import Clock
    from blockkit.emulator.store import Store

MAX_ATTEMPTS = 20
TIMEOUT_SECONDS = 5.0              # each socket operation
DELIVERY_DEADLINE_SECONDS = 10.0   # the whole of one delivery
RETRY_CAP_SECONDS = 300.0
DELIVERY_THREADS = 4
PER_ORIGIN = 2
ANSWER_BYTES = 65536
USER_AGENT = "blockkit-emulator-orchestrator/1 (workflow callbacks)"


def retry_delay(attempts: int) -> float:
    """Seconds before the next try, after ``attempts`` failed ones: 0.5, 1, 2, 4 ... up to the cap."""
    return min(RETRY_CAP_SECONDS, 0.5 * 2 ** (attempts - 1))


def event_body(row: dict[str, Any], clock: Clock, spec: dict[str, Any], due_at: str) -> dict[str, Any]:
    from blockkit.emulator.services.orchestration import workflows

    workflow = workflows.render(row, clock, at=parse_timestamp(due_at))
    status = spec["status"]
    if spec["scope"] == "workflow":
        body: dict[str, Any] = {"$type": "workflow", "workflowId": row["id"], "status": status, "timestamp": due_at}
        if spec.get("detailed"):
            body["details"] = {
                "metadata": workflow["metadata"], "arguments": workflow["arguments"],
                "createdAt": workflow["createdAt"], "startedAt": workflow["startedAt"],
                "completedAt": workflow["completedAt"],
                "steps": [{"name": s["name"], "status": s["status"], "startedAt": s["startedAt"],
                           "completedAt": s["completedAt"], "metadata": s["metadata"], "input": s["input"],
                           "output": s.get("output"), "cost": _step_cost(row, s["name"])}
                          for s in workflow["steps"]]}
        return body
    step = next((s for s in workflow["steps"] if s["name"] == spec.get("step")), None)
    if spec["scope"] == "step":
        body = {"$type": "step", "workflowId": row["id"], "name": spec.get("step"), "status": status}
        if spec.get("detailed") and step is not None:
            body["details"] = {"startedAt": step["startedAt"], "completedAt": step["completedAt"],
                               "estimatedProgressRate": step.get("estimatedProgressRate"),
                               "retries": max(0, len(step.get("jobs") or []) - 1), "metadata": step["metadata"],
                               "input": step["input"], "output": step.get("output")}
        return body
    body = {"$type": "job", "workflowId": row["id"], "stepName": spec.get("step"), "jobId": spec.get("job"),
            "status": status}
    if status == "succeeded":
        body["progress"] = 1.0
    return body


def _step_cost(row: dict[str, Any], name: str) -> int | None:
    for step in orjson.loads(row["document"])["steps"]:
        if step["name"] == name:
            return int(step["cost"])
    return None


class DeadlineExceeded(OSError):
    """A delivery that did not finish within its deadline."""


class _Abortable:
    """One delivery's connection, which the deadline (or ``stop()``) can cut off from another thread."""

    def __init__(self) -> None:
        self.conn: http.client.HTTPConnection | None = None
        self.aborted = threading.Event()
        self.lock = threading.Lock()

    def abort(self) -> None:
        with self.lock:
            self.aborted.set()
            sock = self.conn.sock if self.conn is not None else None
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)  # wakes a recv or send blocked in the sender
                except OSError:
                    pass


def post_json(url: str, body: bytes, *, deadline: float = DELIVERY_DEADLINE_SECONDS,
              handle: _Abortable | None = None) -> int:
    """One POST (no proxy, no redirect following) finished within ``deadline`` seconds in all; the
    answer's status. Raises OSError when unreachable, DeadlineExceeded past the deadline."""
    parts = urlsplit(url)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    handle = handle or _Abortable()
    conn: http.client.HTTPConnection
    if parts.scheme == "https":
        conn = http.client.HTTPSConnection(parts.hostname or "", parts.port, timeout=TIMEOUT_SECONDS,
                                           context=ssl.create_default_context())
    else:
        conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=TIMEOUT_SECONDS)
    with handle.lock:
        handle.conn = conn
    timer = threading.Timer(deadline, handle.abort)
    timer.daemon = True
    timer.start()
    try:
        if handle.aborted.is_set():
            raise DeadlineExceeded("stopped before it began")
        conn.connect()
        if handle.aborted.is_set():
            raise DeadlineExceeded(f"no answer within {deadline:g} s")
        conn.request("POST", path, body=body, headers={"Content-Type": "application/json", "User-Agent": USER_AGENT})
        answer = conn.getresponse()
        answer.read(ANSWER_BYTES)
        if handle.aborted.is_set():
            raise DeadlineExceeded(f"no answer within {deadline:g} s")
        return answer.status
    except (OSError, http.client.HTTPException) as exc:
        if handle.aborted.is_set():
            raise DeadlineExceeded(f"no whole answer within {deadline:g} s") from exc
        raise
    finally:
        timer.cancel()
        conn.close()


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def deliver_one(store: Store, clock: Clock, event: dict[str, Any], *, handle: _Abortable | None = None,
                note: Callable[[str], None] | None = None) -> bool:
    """POST one due event and record the outcome; True when it was delivered."""
    with store.read() as db:
        row = orch_store.find_workflow(db, event["workflow_id"])
    if row is None:  # deleted meanwhile
        with store.write() as db:
            orch_store.mark_event(db, event["id"], "dropped", event["attempts"], 0, "workflow deleted")
        return False
    error: str | None = None
    try:
        body = event_body(row, clock, orjson.loads(event["body"]), event["due_at"])
    except (ValueError, KeyError, TypeError) as exc:  # a row edited out of shape: never retried forever
        with store.write() as db:
            orch_store.mark_event(db, event["id"], "failed", event["attempts"], 0, f"unrenderable: {exc}"[:300])
        return False
    started_at, began = clock.iso(), time.monotonic()
    status: int | None = None
    try:
        status = post_json(event["url"], orjson.dumps(body), handle=handle)
        if not 200 <= status < 300:
            error = f"HTTP {status}"
    except (OSError, http.client.HTTPException) as exc:
        error = f"{type(exc).__name__}: {exc}"[:300]
    duration_ms = max(0, round((time.monotonic() - began) * 1000))
    attempts = event["attempts"] + 1
    if error is None:
        state, next_try = "delivered", 0.0
    elif attempts >= MAX_ATTEMPTS:
        state, next_try = "failed", 0.0
    else:
        state, next_try = "pending", time.time() + retry_delay(attempts)
    with store.write() as db:
        orch_store.mark_event(db, event["id"], state, attempts, next_try, error)
        orch_store.add_attempt(db, event["id"], attempts, started_at, duration_ms, status, error, event["url"])
    if state == "failed" and note is not None:
        note(f"callback {event['event_type']} of workflow {event['workflow_id']} to {event['url']} dropped after"
             f" {attempts} attempts (last: {error}); GET /__emulator/callbacks lists what failed")
    return error is None


def deliver_due(store: Store, clock: Clock, limit: int = 50) -> int:
    """POST every due event once, one after another (those waiting for a retry excepted); how many
    were delivered. The worker delivers concurrently (``Background``); this is the plain form."""
    with store.read() as db:
        events = orch_store.due_events(db, clock.iso(), time.time(), limit)
    return sum(1 for event in events if deliver_one(store, clock, event))


class Background:
    """The settler and the dispatcher with its senders (see the module docstring)."""

    def __init__(self, store: Store, clock: Clock, *, interval: float = 0.2,
                 note: Callable[[str], None] | None = None) -> None:
        self.store, self.clock, self.interval = store, clock, interval
        self.note = note or (lambda text: None)
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        # event id -> (origin, workflow id, its connection)
        self._inflight: dict[int, tuple[str, str, _Abortable]] = {}
        self.recovered: list[str] = []

    def start(self) -> Background:
        from blockkit.emulator.services.orchestration import upscaler

        self.recovered = upscaler.recover(self.store, self.clock)
        self._pool = ThreadPoolExecutor(max_workers=DELIVERY_THREADS, thread_name_prefix="blockkit-callback")
        for name, target in (("blockkit-orchestration-settle", self._settle),
                             ("blockkit-orchestration-dispatch", self._dispatch)):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def _settle(self) -> None:
        from blockkit.emulator.services.orchestration import workflows

        while not self._stop.wait(self.interval):
            try:
                workflows.settle_due(self.store, self.clock)
            except Exception:  # the store closing under us at stop, a locked database: try again
                if self._stop.is_set():
                    return

    def _dispatch(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self._dispatch_once()
            except Exception:  # as above
                if self._stop.is_set():
                    return

    def _dispatch_once(self) -> None:
        with self._lock:
            free = DELIVERY_THREADS - len(self._inflight)
        if free <= 0:
            return
        with self.store.read() as db:
            # A window wider than the free senders: events of a busy origin or workflow are passed over.
            events = orch_store.due_events(db, self.clock.iso(), time.time(), 500)
        for event in events:
            if free <= 0 or self._stop.is_set():
                return
            origin = _origin(event["url"])
            with self._lock:
                if event["id"] in self._inflight:
                    continue
                if sum(1 for o, _w, _h in self._inflight.values() if o == origin) >= PER_ORIGIN:
                    continue
                if any(w == event["workflow_id"] for _o, w, _h in self._inflight.values()):
                    continue  # one at a time per workflow: its events go out in the order they fell due
                handle = _Abortable()
                self._inflight[event["id"]] = (origin, event["workflow_id"], handle)
            free -= 1
            assert self._pool is not None
            try:
                self._pool.submit(self._send, event, handle)
            except RuntimeError:  # the pool shut down: stopping
                with self._lock:
                    self._inflight.pop(event["id"], None)
                return

    def _send(self, event: dict[str, Any], handle: _Abortable) -> None:
        try:
            if not self._stop.is_set():
                deliver_one(self.store, self.clock, event, handle=handle, note=self.note)
        except Exception:  # noqa: BLE001 - the store closing under us at stop; the event stays pending
            pass
        finally:
            with self._lock:
                self._inflight.pop(event["id"], None)

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            handles = [handle for _o, _w, handle in self._inflight.values()]
        for handle in handles:  # cut off the deliveries in flight: nothing waits for a slow receiver
            handle.abort()
        for thread in self._threads:
            thread.join(timeout=TIMEOUT_SECONDS + 2)
        self._threads = []
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

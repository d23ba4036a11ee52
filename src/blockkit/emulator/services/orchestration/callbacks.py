"""The orchestration background worker: workflow callbacks, expiry refunds, crash recovery.

``Background(store, clock)``: ``start()`` first recovers what a crash cut short (``upscaler.recover``:
refund every recipe job still 'running', a ledger row naming each), then runs one daemon thread that,
every ``interval`` seconds,

- refunds workflows whose step expired (``workflows.settle_due``), and
- delivers the callback events that are due on the emulator clock (``workflow_events``, written in the
  transaction that created or canceled the workflow): one ``POST`` of the event's JSON to the callback's
  URL. A 2xx marks it delivered; anything else (a status, a refused connection, a timeout) is tried
  again after 0.5, 1, 2, 4 s ..., at most ``MAX_ATTEMPTS`` times, then it is marked failed. Events that
  were pending at a crash are delivered after the restart (at least once).

The request that caused an event never waits for its delivery. ``stop()`` ends the thread.

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
import ssl
import threading
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import orjson

from blockkit.emulator.store.clock import parse_timestamp
from blockkit.emulator.store import orchestration as orch_store

if TYPE_CHECKING:
    from blockkit.emulator.store.clock import Clock
    from blockkit.emulator.store import Store

MAX_ATTEMPTS = 6
TIMEOUT_SECONDS = 5.0
USER_AGENT = "blockkit-emulator-orchestrator/1 (workflow callbacks)"


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


def post_json(url: str, body: bytes) -> int:
    """One POST (no proxy, no redirect following); the answer's status. Raises OSError when unreachable."""
    parts = urlsplit(url)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    conn: http.client.HTTPConnection
    if parts.scheme == "https":
        conn = http.client.HTTPSConnection(parts.hostname or "", parts.port, timeout=TIMEOUT_SECONDS,
                                           context=ssl.create_default_context())
    else:
        conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=TIMEOUT_SECONDS)
    try:
        conn.request("POST", path, body=body, headers={"Content-Type": "application/json", "User-Agent": USER_AGENT})
        answer = conn.getresponse()
        answer.read(65536)
        return answer.status
    finally:
        conn.close()


def deliver_due(store: Store, clock: Clock, limit: int = 50) -> int:
    """POST every due event once (those waiting for a retry excepted); how many were delivered."""
    with store.read() as db:
        events = orch_store.due_events(db, clock.iso(), time.time(), limit)
    delivered = 0
    for event in events:
        with store.read() as db:
            row = orch_store.find_workflow(db, event["workflow_id"])
        if row is None:  # deleted meanwhile
            with store.write() as db:
                orch_store.mark_event(db, event["id"], "dropped", event["attempts"], 0, "workflow deleted")
            continue
        error: str | None = None
        try:
            body = event_body(row, clock, orjson.loads(event["body"]), event["due_at"])
        except (ValueError, KeyError, TypeError) as exc:  # a row edited out of shape: never retried forever
            with store.write() as db:
                orch_store.mark_event(db, event["id"], "failed", event["attempts"], 0, f"unrenderable: {exc}"[:300])
            continue
        try:
            status = post_json(event["url"], orjson.dumps(body))
            if not 200 <= status < 300:
                error = f"HTTP {status}"
        except (OSError, http.client.HTTPException) as exc:
            error = f"{type(exc).__name__}: {exc}"[:300]
        attempts = event["attempts"] + 1
        if error is None:
            state, next_try = "delivered", 0.0
            delivered += 1
        elif attempts >= MAX_ATTEMPTS:
            state, next_try = "failed", 0.0
        else:
            state, next_try = "pending", time.time() + min(30.0, 0.5 * 2 ** (attempts - 1))
        with store.write() as db:
            orch_store.mark_event(db, event["id"], state, attempts, next_try, error)
    return delivered


class Background:
    """The worker thread (see the module docstring)."""

    def __init__(self, store: Store, clock: Clock, *, interval: float = 0.2) -> None:
        self.store, self.clock, self.interval = store, clock, interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.recovered: list[str] = []

    def start(self) -> Background:
        from blockkit.emulator.services.orchestration import upscaler

        self.recovered = upscaler.recover(self.store, self.clock)
        self._thread = threading.Thread(target=self._run, name="blockkit-orchestration-worker", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        from blockkit.emulator.services.orchestration import workflows

        while not self._stop.wait(self.interval):
            try:
                workflows.settle_due(self.store, self.clock)
                deliver_due(self.store, self.clock)
            except Exception:  # the store closing under us at stop, a locked database: try again
                if self._stop.is_set():
                    return

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=TIMEOUT_SECONDS + 2)
            self._thread = None

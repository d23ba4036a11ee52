"""``GET {base_url}/__emulator/callbacks[?state=failed|pending|delivered|dropped]``: the workflow
callback events the emulator could not deliver (``failed``, the default with ``pending``), newest
first, at most 500: ``{"events": [{id, workflowId, url, type, state, attempts, dueAt, lastError,
attemptLog}]}``. ``attempts`` is the event's count; ``attemptLog`` lists each delivery attempt in the
order made, ``{attempt, startedAt, durationMs, httpStatus, error, url}`` (``httpStatus`` is null when
the receiver gave no answer: refused, timed out, or cut off), as the console's Work page shows them.

A receiver that was down for longer than the retries (``services/orchestration/callbacks.py``) can
see here what it missed. The list names callback URLs, so it asks for the access key like the
control writes (``access.py``).
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from blockkit.emulator.http.errors import bad_request, json_response
from blockkit.emulator.state import emulator
from blockkit.emulator.store import orchestration as orch_store

STATES = ("failed", "pending", "delivered", "dropped")
LIMIT = 500


async def callbacks_endpoint(request: Request) -> Response:
    wanted = request.query_params.getlist("state") or ["failed", "pending"]
    if any(state not in STATES for state in wanted):
        raise bad_request(f"state must be one of {', '.join(STATES)}")
    store = emulator(request).store

    def read() -> list[dict[str, object]]:
        with store.read() as db:
            rows = orch_store.events_in(db, tuple(dict.fromkeys(wanted)), LIMIT)
            return rows, orch_store.attempts_of(db, [r["id"] for r in rows])

    rows, tries = await run_in_threadpool(read)
    return json_response({"events": [{"id": r["id"], "workflowId": r["workflow_id"], "url": r["url"],
                                      "type": r["event_type"], "state": r["state"], "attempts": r["attempts"],
                                      "dueAt": r["due_at"], "lastError": r["last_error"],
                                      "attemptLog": [_attempt(a) for a in tries[r["id"]]]} for r in rows]},
                         headers={"Cache-Control": "no-store"})


def _attempt(row: dict[str, object]) -> dict[str, object]:
    return {"attempt": row["attempt"], "startedAt": row["started_at"], "durationMs": row["duration_ms"],
            "httpStatus": row["http_status"], "error": row["error"], "url": row["url"]}


routes = [Route("/callbacks", callbacks_endpoint, methods=["GET"])]

"""``GET {base_url}/__emulator/callbacks[?state=failed|pending|delivered|dropped]``: the workflow
callback events the emulator could not deliver (``failed``, the default with ``pending``), newest
first, at most 500: ``{"events": [{id, workflowId, url, type, state, attempts, dueAt, lastError}]}``.

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
            return orch_store.events_in(db, tuple(dict.fromkeys(wanted)), LIMIT)

    rows = await run_in_threadpool(read)
    return json_response({"events": [{"id": r["id"], "workflowId": r["workflow_id"], "url": r["url"],
                                      "type": r["event_type"], "state": r["state"], "attempts": r["attempts"],
                                      "dueAt": r["due_at"], "lastError": r["last_error"]} for r in rows]},
                         headers={"Cache-Control": "no-store"})


routes = [Route("/callbacks", callbacks_endpoint, methods=["GET"])]

"""The console's requests: the request journal (``journal.py``, filled by ``http/journal.py``) as a page,
filterable by origin, status, client and user, each refusal with its reason in words, and the headers
and bodies (secrets already redacted by the journal) a click away. The console's own requests are
left out, so reading the page does not fill it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.responses import Response
from starlette.routing import Route

from blockkit.emulator.http.access import is_console_path
from blockkit.emulator.http.console import action, done, page
from blockkit.emulator.services.errors import ServiceError
from blockkit.emulator.state import EmulatorState, emulator

if TYPE_CHECKING:
    from starlette.requests import Request

ORIGINS = ("catalogue", "auth", "orchestration", "bridge")
LIMIT = 200


def _filters(params: Any) -> dict[str, Any]:
    from blockkit.emulator.journal import valid_status_filter

    origin = params.get("origin") or None
    status = (params.get("status") or "").strip() or None
    client = (params.get("client") or "").strip() or None
    raw_user = (params.get("user") or "").strip()
    problems = []
    if origin is not None and origin not in ORIGINS:
        problems.append(f"origin is one of {', '.join(ORIGINS)}")
        origin = None
    if status is not None and not valid_status_filter(status):
        problems.append("status is a code or a class, such as 404, 4xx or 4xx,5xx")
        status = None
    user = int(raw_user) if raw_user.lstrip("-").isdigit() else None
    if raw_user and user is None:
        problems.append("user is a user id")
    return {"origin": origin, "status": status, "client": client, "user": user, "problems": problems}


def requests_page(request: Request) -> Response:
    state = emulator(request)
    wanted = _filters(request.query_params)
    journal = state.journal
    entries: list[dict[str, Any]] = []
    if journal is not None and journal.enabled:
        found = journal.entries(status=wanted["status"], origin=wanted["origin"], client=wanted["client"],
                                user=wanted["user"], limit=LIMIT * 4, bodies=True)
        entries = [e for e in reversed(found) if not (e["origin"] == "catalogue" and is_console_path(e["path"]))]
        entries = entries[:LIMIT]
    return page(request, "requests.html", "requests", entries=entries, wanted=wanted, origins=ORIGINS,
                enabled=journal is not None and journal.enabled, size=getattr(journal, "size", 0),
                recording=journal is not None and journal.recording,
                follow=request.query_params.get("follow") == "1")


@action("journal-recording")
def recording_action(request: Request, state: EmulatorState, payload: dict[str, Any]) -> Response:
    """Pause the journal or resume it (``{"recording": "0" | "1"}``); what it holds stays."""
    journal = state.journal
    if journal is None or not journal.enabled:
        raise ServiceError(409, "journal_off", "this run has no request journal (it was started with --journal-size 0)")
    wanted = payload.get("recording")
    if wanted not in ("0", "1", True, False):
        raise ServiceError(400, "bad_recording", "recording is 1 (record) or 0 (pause)")
    if wanted in ("1", True):
        journal.resume()
        return done("the journal records again")
    journal.pause()
    return done("the journal is paused: requests are answered but not recorded until you resume it")


routes = [Route("/requests", requests_page, methods=["GET"])]

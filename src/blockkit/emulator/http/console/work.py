"""The console's orchestration and goods: workflows (steps, status, cost, output thumbnails), callback
deliveries ("deliver again"), recipe jobs, goods catalogues, purchases and entitlements (refund)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.responses import Response
from starlette.routing import Route

from blockkit.emulator.http.console import action, done, integer, page, text
from blockkit.emulator.services import console as service
from blockkit.emulator.services import goods
from blockkit.emulator.state import EmulatorState, emulator
from blockkit.emulator.store import console as queries

if TYPE_CHECKING:
    from starlette.requests import Request


def images_in(value: Any) -> list[str]:
    """The URLs of the images a step's output holds (``{"images": [{"url": ...}]}`` and the like)."""
    found: list[str] = []
    if isinstance(value, dict):
        url = value.get("url")
        if isinstance(url, str) and url.startswith(("http://", "https://")) and value.get("type", "image") == "image":
            found.append(url)
        for item in value.values():
            if isinstance(item, (dict, list)):
                found.extend(images_in(item))
    elif isinstance(value, list):
        for item in value:
            found.extend(images_in(item))
    return found


def work_page(request: Request) -> Response:
    from blockkit.emulator.services.orchestration import workflows

    state = emulator(request)
    with state.store.read() as db:
        rows = queries.recent_workflows(db)
        events = queries.callback_events(db)
        catalogues = queries.goods_catalogues(db)
        bought = queries.purchases(db)
        jobs = queries.recipe_jobs(db)
    shown = []
    for row in rows:
        rendered = workflows.render(row, state.clock)
        steps = [{"name": s["name"], "type": s["$type"], "status": s["status"], "started": s.get("startedAt"),
                  "completed": s.get("completedAt"), "images": images_in(s.get("output"))}
                 for s in rendered["steps"]]
        shown.append({"id": row["id"], "username": row["username"], "user_id": row["user_id"],
                      "app_id": row["app_id"], "status": rendered["status"], "created": rendered["createdAt"],
                      "started": rendered["startedAt"], "completed": rendered["completedAt"],
                      "cost": rendered["cost"].get("total", row["cost"]), "refunded": rendered["forceRefunded"],
                      "steps": steps})
    return page(request, "work.html", "work", workflows=shown, events=events, catalogues=catalogues,
                purchases=bought, jobs=jobs)


@action("deliver-again")
def deliver_again_action(request: Request, state: EmulatorState, payload: dict[str, Any]) -> Response:
    event_id = integer(payload, "event_id")
    service.deliver_again(state.store, event_id)
    return done(f"callback event {event_id}: queued to be delivered again")


@action("refund")
def refund_action(request: Request, state: EmulatorState, payload: dict[str, Any]) -> Response:
    purchase_id = text(payload, "purchase_id")
    goods.refund(state.store, state.clock, purchase_id)
    return done(f"purchase {purchase_id}: refunded; the entitlement is gone")


routes = [Route("/work", work_page, methods=["GET"])]

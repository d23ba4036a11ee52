"""The console's overview: the origins, seed and scale, data directory, clock, reset, export, import."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.responses import Response
from starlette.routing import Route

from blockkit.emulator.http.console import (IMPORT_PATH, SECURITY_HEADERS, action, checked_token, done, page,
                                            refusal, text)
from blockkit.emulator.services import console as service
from blockkit.emulator.services.errors import ServiceError
from blockkit.emulator.state import EmulatorState, emulator
from blockkit.emulator.store import console as queries
from blockkit.emulator.store import meta
from blockkit.emulator.store.clock import format_timestamp

if TYPE_CHECKING:
    from starlette.requests import Request

UNITS = ("minutes", "hours", "days", "seconds")


def _preview(state: EmulatorState, params: Any) -> dict[str, Any] | None:
    """What advancing as the query asks would cross (?amount=N&unit=U, or ?to=DATE), or None."""
    if "amount" not in params and "to" not in params:
        return None
    asked = {"amount": params.get("amount", ""), "unit": params.get("unit", "minutes"), "to": params.get("to", "")}
    found: dict[str, Any] = {"asked": asked, "error": None, "seconds": 0, "start": "", "end": "",
                             "early_access": [], "tokens": []}
    try:
        if asked["to"]:
            seconds = service.seconds_until(state.clock, asked["to"])
        else:
            seconds = service.advance_seconds(asked["amount"], asked["unit"])
        end = format_timestamp(state.clock.after(seconds))
    except ServiceError as exc:
        return {**found, "error": exc.detail}
    except (OverflowError, ValueError):
        return {**found, "error": "that is past the year 9999"}
    start = state.clock.iso()
    with state.store.read() as db:
        crossed = queries.crossings(db, start, end)
    return {**found, "seconds": seconds, "start": start, "end": end, **crossed}


def overview_page(request: Request) -> Response:
    state = emulator(request)
    with state.store.read() as db:
        seed = meta.get(db, meta.SEED, state.options.seed)
        scale = meta.get(db, meta.SCALE, state.options.scale)
        counts = queries.counts(db)
    preview = _preview(state, request.query_params)
    return page(request, "overview.html", "overview", urls=state.urls.as_dict(), seed=seed, scale=scale,
                data_dir=str(state.store.path.parent), offset=state.clock.offset, counts=counts, preview=preview,
                units=UNITS, access_key=state.options.access_key is not None)


@action("clock-advance")
def advance_action(request: Request, state: EmulatorState, payload: dict[str, Any]) -> Response:
    if payload.get("to"):
        seconds = service.seconds_until(state.clock, payload["to"])
    else:
        seconds = service.advance_seconds(payload.get("amount"), payload.get("unit", "minutes"))
    now = service.advance(state.clock, seconds)
    return done(f"the clock now reads {format_timestamp(now)}", now=format_timestamp(now), redirect="/__emulator/")


@action("reset")
def reset_action(request: Request, state: EmulatorState, payload: dict[str, Any]) -> Response:
    raw_seed = text(payload, "seed")
    if not raw_seed.isdigit():
        raise ServiceError(400, "bad_seed", "the seed is a whole number, 0 or more")
    seed, scale = service.reset(state.store, int(raw_seed), payload.get("scale", "small"), state.data_ops)
    return done(f"reset: seeded with --seed {seed} --scale {scale}")


async def export_route(request: Request) -> Response:
    site = request.headers.get("sec-fetch-site", "none").lower()
    if site not in ("same-origin", "none"):
        return refusal(403, "the export downloads from the console's own page only")
    state = emulator(request)
    try:
        data = await run_in_threadpool(service.export_zip, state.store, state.data_ops)
    except ServiceError as exc:
        return refusal(exc.status, exc.detail)
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    return Response(data, media_type="application/zip", headers={
        **SECURITY_HEADERS, "Content-Disposition": f'attachment; filename="blockkit-emulator-{stamp}.zip"'})


async def import_route(request: Request) -> Response:
    """``POST /__emulator/console/import``: the zip as the body (``application/zip``, the guard allows it here)."""
    if not checked_token(request):
        return refusal(403, "the console's token is missing or wrong: reload the console page and try again")
    from blockkit.emulator.http.bodies import read_limited

    body = await read_limited(request, service.MAX_IMPORT_BYTES)
    state = emulator(request)
    try:
        manifest = await run_in_threadpool(service.import_zip, state.store, body, state.data_ops)
    except ServiceError as exc:
        return refusal(exc.status, exc.detail)
    rows = sum(entry["rows"] for entry in manifest["tables"].values())
    return done(f"imported {rows} rows (seed {manifest.get('seed')}, scale {manifest.get('scale')})",
                redirect="/__emulator/")


routes = [
    Route("/", overview_page, methods=["GET"]),
    Route("/console/export.zip", export_route, methods=["GET"]),
    Route(IMPORT_PATH.removeprefix("/__emulator"), import_route, methods=["POST"]),
]

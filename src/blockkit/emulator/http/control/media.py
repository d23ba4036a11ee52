"""``/__emulator/media/<path>`` and ``/__emulator/blobs/<id>.<ext>``: files the emulator serves.

What each path answers (drawing, caching, which paths exist) is the media service's,
``services/orchestration/media.py``; these routes find the file in a worker thread and send it as
a CDN does: GET and HEAD, byte ranges, ``ETag`` and ``Last-Modified`` (Starlette's
``FileResponse``), cached for a year (the bytes behind a path never change).
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from blockkit.emulator.http.errors import ApiError, error_body, not_found
from blockkit.emulator.services.orchestration import video
from blockkit.emulator.services.orchestration.media import BLOB_PREFIX, blob_file, media_file
from blockkit.emulator.state import emulator

CACHE = {"Cache-Control": "public, max-age=31536000, immutable"}


async def media_endpoint(request: Request) -> Response:
    state = emulator(request)
    try:
        found = await run_in_threadpool(media_file, state.store, request.path_params["path"])
    except video.VideoUnavailable as exc:
        # Said once, where it matters: to someone whose block or page asked for a video.
        state.note_once(video.note_line(str(exc)))
        raise ApiError(501, error_body(str(exc))) from None
    if found is None:
        raise not_found()
    return FileResponse(found[0], media_type=found[1], headers=CACHE)


async def blob_endpoint(request: Request) -> Response:
    found = await run_in_threadpool(blob_file, emulator(request).store, request.path_params["name"])
    if found is None:
        raise not_found()
    return FileResponse(found[0], media_type=found[1], headers=CACHE)


media_routes = [Route("/media/{path:path}", media_endpoint, methods=["GET"])]  # under /__emulator (catalogue)
blob_routes = [Route(BLOB_PREFIX + "{name}", blob_endpoint, methods=["GET"])]

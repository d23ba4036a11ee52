"""Media the emulator serves: procedural seed media and stored blobs (upscales, generations).

- ``{base_url}/__emulator/media/<path>``: the seed's media paths. An image is drawn from its
  path (``imaging.procedural``) at the width and height the catalogue gives it (512 x 512 when
  none is stored; avatars 128 x 128), encoded by its extension (JPEG, PNG, WebP) and cached in
  ``<data>/media-cache/``. An ``.mp3`` answers a one-second silent WAV (``audio/wav``). An ``.mp4``
  (the seed's videos) is a real H.264 MP4 (``video/mp4``, encoded by PyAV in ``video.py``): the
  path's picture at the catalogue's width and height, for the catalogue's duration (2 s when none
  is stored), cached likewise. Without the ``video`` extra it answers 501 ``{"error": "seeded
  videos (.mp4) need PyAV: pip install 'blockkit[video]'"}`` (not cached).
- ``{orchestration_url}/__emulator/blobs/<id>.<ext>``: a stored blob's file from ``<data>/blobs/``.

Both answer as a CDN does: GET and HEAD, byte ranges (``Range``, 206 with ``Content-Range``,
416 past the end; what a ``<video>`` asks for to seek), ``ETag`` and ``Last-Modified``
(Starlette's ``FileResponse`` over the cached file).

``resolve_local(urls, store, url)`` reads either kind for an input URL without any network.
"""

from __future__ import annotations

import io
import re
import uuid
import wave
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from PIL import Image
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from blockkit.emulator.catalogue.errors import ApiError, error_body, not_found
from blockkit.emulator.orchestration import imaging, video
from blockkit.emulator.state import emulator
from blockkit.emulator.store import orchestration as orch_store

if TYPE_CHECKING:
    from blockkit.emulator.state import Urls
    from blockkit.emulator.store import Store

MEDIA_PREFIX = "/__emulator/media/"
BLOB_PREFIX = "/__emulator/blobs/"
MAX_MEDIA_SIDE = 4096      # a stored size above this is drawn at this cap, proportionally
DEFAULT_SIDE = 512
AVATAR_SIDE = 128
_MEDIA_PATH = re.compile(r"[A-Za-z0-9_-]+(?:/[A-Za-z0-9_-]+)*\.(jpeg|jpg|png|webp|mp3|mp4)", re.ASCII)
_BLOB_NAME = re.compile(r"([0-9a-f-]{36})\.(png|jpeg|webp)", re.ASCII)
CACHE = {"Cache-Control": "public, max-age=31536000, immutable"}
DEFAULT_VIDEO_SECONDS = 2.0
MAX_VIDEO_SECONDS = 600.0


def blob_dir(store: Store) -> Path:
    return store.path.parent / "blobs"


def write_blob_file(store: Store, now: str, user_id: int | None, image: Image.Image,
                    fmt: str = "png") -> orch_store.BlobRow:
    """Write an image's blob file and return the row to insert (the caller inserts it, inside the
    transaction that also charges for it; a file without a row is never served)."""
    blob_id = str(uuid.uuid4())
    folder = blob_dir(store)
    folder.mkdir(parents=True, exist_ok=True)
    filename = f"{blob_id}.{fmt}"
    (folder / filename).write_bytes(imaging.encode(image, fmt))
    return orch_store.BlobRow(blob_id, user_id, filename, imaging.FORMATS[fmt][1], image.width, image.height, now)


def remove_blob_files(store: Store, rows: list[orch_store.BlobRow]) -> None:
    """Remove the files of blobs whose rows were never committed."""
    for row in rows:
        (blob_dir(store) / row.filename).unlink(missing_ok=True)


def save_blob(store: Store, now: str, user_id: int | None, image: Image.Image, fmt: str = "png") -> orch_store.BlobRow:
    """Store an image as a blob (file first, then the row) and return its row."""
    row = write_blob_file(store, now, user_id, image, fmt)
    with store.write() as db:
        orch_store.insert_blob(db, row)
    return row


def blob_url(urls: Urls, row: orch_store.BlobRow) -> str:
    return f"{urls.orchestration_url}{BLOB_PREFIX}{row.filename}"


def blob_file(store: Store, name: str) -> tuple[Path, str] | None:
    """The file and media type of a stored blob, or None."""
    match = _BLOB_NAME.fullmatch(name)
    if not match:
        return None
    with store.read() as db:
        row = orch_store.find_blob(db, match.group(1))
    if row is None or row.filename != name:
        return None
    path = blob_dir(store) / row.filename
    return (path, row.media_type) if path.is_file() else None


def read_blob(store: Store, name: str) -> tuple[bytes, str] | None:
    found = blob_file(store, name)
    if found is None:
        return None
    try:
        return found[0].read_bytes(), found[1]
    except OSError:
        return None


def _stored_size(store: Store, path: str) -> tuple[int, int]:
    stored = f"{MEDIA_PREFIX.rstrip('/')}/{path}"
    with store.read() as db:
        row = db.execute("SELECT width, height FROM images WHERE url = ? UNION ALL SELECT thumbnail_width,"
                         " thumbnail_height FROM images WHERE thumbnail_url = ? LIMIT 1", (stored, stored)).fetchone()
    if row is not None and row[0] and row[1]:
        width, height = int(row[0]), int(row[1])
    elif path.startswith("avatars/"):
        width = height = AVATAR_SIDE
    else:
        width = height = DEFAULT_SIDE
    scale = min(1.0, MAX_MEDIA_SIDE / max(width, height))
    return max(1, round(width * scale)), max(1, round(height * scale))


def _video_seconds(store: Store, path: str) -> float:
    stored = f"{MEDIA_PREFIX.rstrip('/')}/{path}"
    with store.read() as db:
        row = db.execute("SELECT duration FROM images WHERE url = ? LIMIT 1", (stored,)).fetchone()
    seconds = float(row[0]) if row is not None and row[0] else DEFAULT_VIDEO_SECONDS
    return min(max(seconds, 0.04), MAX_VIDEO_SECONDS)


def _silence() -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as handle:
        handle.setnchannels(1)
        handle.setsampwidth(2)
        handle.setframerate(8000)
        handle.writeframes(b"\0\0" * 8000)
    return out.getvalue()


def media_file(store: Store, path: str) -> tuple[Path, str] | None:
    """The cached file and media type of a seed media path (drawn into ``<data>/media-cache`` on
    first use), or None for a path that is not one.

    Raises :class:`video.VideoUnavailable` for an uncached ``.mp4`` without the ``video`` extra.
    """
    match = _MEDIA_PATH.fullmatch(path)
    if not match:
        return None
    ext = match.group(1)
    cache = store.path.parent / "media-cache" / path
    media_type = "audio/wav" if ext == "mp3" else "video/mp4" if ext == "mp4" else imaging.FORMATS[ext][1]
    if cache.is_file():
        return cache, media_type
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_suffix(cache.suffix + f".{uuid.uuid4().hex}.tmp")
    try:
        if ext == "mp3":
            tmp.write_bytes(_silence())
        elif ext == "mp4":
            width, height = _stored_size(store, path)
            video.write_mp4(imaging.procedural(path, width, height), _video_seconds(store, path), tmp)
        else:
            width, height = _stored_size(store, path)
            tmp.write_bytes(imaging.encode(imaging.procedural(path, width, height), ext))
        tmp.replace(cache)  # whole or not at all, for a reader in another thread
    finally:
        tmp.unlink(missing_ok=True)
    return cache, media_type


def read_media(store: Store, path: str) -> tuple[bytes, str] | None:
    """The bytes and media type of a seed media path (``media_file``), or None."""
    found = media_file(store, path)
    return None if found is None else (found[0].read_bytes(), found[1])


def resolve_local(urls: Urls, store: Store, url: str) -> bytes | None:
    """The bytes behind a URL on this emulator's own origins (media or blobs), else None. No network."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    origin = f"{parts.scheme}://{parts.netloc}"
    if parts.query or parts.fragment:
        return None
    if origin == urls.base_url and parts.path.startswith(MEDIA_PREFIX):
        found = _read_or_none(store, parts.path[len(MEDIA_PREFIX):])
    elif origin == urls.orchestration_url and parts.path.startswith(BLOB_PREFIX):
        found = read_blob(store, parts.path[len(BLOB_PREFIX):])
    else:
        return None
    return None if found is None else found[0]


def _read_or_none(store: Store, path: str) -> tuple[bytes, str] | None:
    try:
        return read_media(store, path)
    except video.VideoUnavailable:
        return None  # an input URL to a video the emulator cannot draw: unreadable, like a missing one


async def media_endpoint(request: Request) -> Response:
    try:
        found = await run_in_threadpool(media_file, emulator(request).store, request.path_params["path"])
    except video.VideoUnavailable as exc:
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

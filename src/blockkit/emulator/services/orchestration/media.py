"""Media the emulator serves: procedural seed media and stored blobs (upscales, generations).

- ``{base_url}/__emulator/media/<path>``: the seed's media paths. An image is drawn from its
  path (``imaging.procedural``) at the width and height the catalogue gives it (512 x 512 when
  none is stored; avatars 128 x 128), encoded by its extension (JPEG, PNG, WebP) and cached in
  ``<data>/media-cache/``. An ``.mp3`` answers a one-second silent WAV (``audio/wav``). An ``.mp4``
  (the seed's videos) is a real H.264 MP4 (``video/mp4``, encoded by PyAV in ``video.py``): the
  path's picture at the catalogue's width and height, for the catalogue's duration (2 s when none
  is stored), cached likewise. Without the ``video`` extra it answers 501 ``{"error": "seeded
  videos (.mp4) need PyAV: pip install 'blockkit[video]'"}`` (not cached).
  Only paths the store holds are served (an image's or a video thumbnail's URL, an avatar, a
  vault cover); any other path answers 404 and draws nothing, so requests cannot fill the disk.
  The cache is bounded too: past ``MEDIA_CACHE_MAX_BYTES`` the least recently drawn files go.
- ``{orchestration_url}/__emulator/blobs/<id>.<ext>``: a stored blob's file from ``<data>/blobs/``.

Both answer as a CDN does: GET and HEAD, byte ranges (``Range``, 206 with ``Content-Range``,
416 past the end; what a ``<video>`` asks for to seek), ``ETag`` and ``Last-Modified``
(Starlette's ``FileResponse`` over the cached file).

``resolve_local(urls, store, url)`` reads either kind for an input URL without any network.
The routes that serve both are ``http/control/media.py``.
"""

from __future__ import annotations

import io
import os
import re
import threading
import uuid
import wave
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from PIL import Image

from blockkit.emulator.services.orchestration import imaging, video
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
MAX_MEDIA_PATH = 1024      # longer: not a path the seed makes (and too long for a file name)
MEDIA_CACHE_MAX_BYTES = 256 * 1024 * 1024
MEDIA_CACHE_KEEP = 0.75    # an eviction goes down to this share of the cap
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
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    filename = f"{blob_id}.{fmt}"
    write_private(folder / filename, imaging.encode(image, fmt))
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


def write_private(path: Path, data: bytes) -> None:
    """Write a new file readable by this user only (0600), whatever the umask."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        os.fchmod(handle.fileno(), 0o600)
        handle.write(data)


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


def is_stored(store: Store, path: str) -> bool:
    """Whether a media path is one the store refers to (so the emulator may draw and cache it)."""
    stored = f"{MEDIA_PREFIX.rstrip('/')}/{path}"
    with store.read() as db:
        row = db.execute("SELECT 1 FROM images WHERE url = ?1 UNION ALL SELECT 1 FROM images WHERE thumbnail_url = ?1"
                         " UNION ALL SELECT 1 FROM users WHERE image = ?1"
                         " UNION ALL SELECT 1 FROM vault_items WHERE cover_image_url = ?1 LIMIT 1",
                         (stored,)).fetchone()
    return row is not None


class _CacheBudget:
    """The media cache's size, kept under a cap by removing the oldest files (per cache folder)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sizes: dict[Path, int] = {}

    def added(self, folder: Path, size: int, cap: int) -> None:
        with self._lock:
            total = self._sizes.get(folder)
            if total is None:
                total = sum(size for _path, size, _mtime in _cached_files(folder))
            else:
                total += size
            if total > cap:
                total = _evict(folder, int(cap * MEDIA_CACHE_KEEP))
            self._sizes[folder] = total


def _cached_files(folder: Path) -> list[tuple[Path, int, float]]:
    found = []
    for path in folder.rglob("*"):
        try:
            info = path.stat()
        except OSError:
            continue
        if path.is_file():
            found.append((path, info.st_size, info.st_mtime))
    return found


def _evict(folder: Path, keep: int) -> int:
    """Remove the oldest cached files until at most ``keep`` bytes remain; the bytes that remain."""
    files = sorted(_cached_files(folder), key=lambda item: item[2])
    total = sum(size for _path, size, _mtime in files)
    for path, size, _mtime in files:
        if total <= keep:
            break
        path.unlink(missing_ok=True)
        total -= size
    return total


_BUDGET = _CacheBudget()


def media_file(store: Store, path: str) -> tuple[Path, str] | None:
    """The cached file and media type of a seed media path (drawn into ``<data>/media-cache`` on
    first use), or None for a path that is not one.

    Raises :class:`video.VideoUnavailable` for an uncached ``.mp4`` without the ``video`` extra.
    """
    match = _MEDIA_PATH.fullmatch(path) if len(path) <= MAX_MEDIA_PATH else None
    if not match or not is_stored(store, path):
        return None
    ext = match.group(1)
    folder = store.path.parent / "media-cache"
    cache = folder / path
    media_type = "audio/wav" if ext == "mp3" else "video/mp4" if ext == "mp4" else imaging.FORMATS[ext][1]
    if cache.is_file():
        return cache, media_type
    cache.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = cache.with_suffix(cache.suffix + f".{uuid.uuid4().hex}.tmp")
    try:
        if ext == "mp3":
            write_private(tmp, _silence())
        elif ext == "mp4":
            width, height = _stored_size(store, path)
            write_private(tmp, b"")  # made 0600 first; the encoder then writes into it
            video.write_mp4(imaging.procedural(path, width, height), _video_seconds(store, path), tmp)
        else:
            width, height = _stored_size(store, path)
            write_private(tmp, imaging.encode(imaging.procedural(path, width, height), ext))
        size = tmp.stat().st_size
        tmp.replace(cache)  # whole or not at all, for a reader in another thread
    finally:
        tmp.unlink(missing_ok=True)
    _BUDGET.added(folder, size, MEDIA_CACHE_MAX_BYTES)
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

"""The protocol trace: every message and host event, in order, as JSONL.

Events come from the host page (which stamps ``t``, milliseconds on the page's
clock) and from the host server (violations it found). Each gets a ``seq`` in
arrival order and a wall-clock ``at``. The newest events (up to MEMORY_CHARS_MAX) are kept in memory too, for
``--check`` and the tests.
"""

from __future__ import annotations

import base64
import errno
import json
import os
import re
import stat
import threading
from collections import deque
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from blockkit.dev.errors import DevError

MESSAGE = "message"
LIFECYCLE = "lifecycle"
VIOLATION = "violation"
# A request the host brokered to the local platform, with its result.
CALL = "call"


# The in-memory copy keeps the newest events up to this many characters of JSON lines; the
# file keeps every event. A block that posts large messages in a loop for hours would otherwise
# grow the dev server without bound; a --check run or a test stays far below it.
MEMORY_CHARS_MAX = 32 << 20


class TraceLog:
    """The trace of one run, in memory and (when ``path`` is set) in a fresh JSONL file.

    ``root``, when given, is a directory that ``path`` lies in whose contents nobody
    vouches for (the block's own folder): no directory between it and the file
    may be a symbolic link either. See :func:`open_fresh`.

    Memory holds the newest events, at most ``memory_chars_max`` characters of JSON lines
    (always at least the newest one); ``dropped`` counts the older events let go of
    there. The file, when there is one, has them all; ``seq`` numbers every event.
    """

    def __init__(self, path: Path | None, root: Path | None = None, *,
                 memory_chars_max: int = MEMORY_CHARS_MAX) -> None:
        self.path = path
        self._events: deque[tuple[dict[str, Any], int]] = deque()
        self._chars = 0
        self._seq = 0
        self.dropped = 0
        self._memory_chars_max = memory_chars_max
        self._lock = threading.Lock()
        self._file: IO[str] | None = None
        if path is not None:
            # A fresh trace per run: mixing runs would make the timings meaningless.
            self._file = open_fresh(path, root)

    def append(self, event: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self._seq += 1
            stamped = {
                "seq": self._seq,
                "at": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
                **event,
            }
            line = json.dumps(stamped, ensure_ascii=False, default=str) + "\n"
            size = len(line)
            # The file never holds a usable token: each block token is written as its claims.
            file_line = json.dumps(without_tokens(stamped), ensure_ascii=False, default=str) + "\n"
            self._events.append((stamped, size))
            self._chars += size
            while self._chars > self._memory_chars_max and len(self._events) > 1:
                self._chars -= self._events.popleft()[1]
                self.dropped += 1
            if self._file is not None:
                self._file.write(file_line)
                self._file.flush()
            return stamped

    def events(self) -> list[dict[str, Any]]:
        """The events kept in memory, oldest first (all of them unless ``dropped``)."""
        with self._lock:
            return [event for event, _ in self._events]

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


# O_NOFOLLOW is POSIX; where it is missing, the lstat checks below still refuse a link.
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# A FIFO planted as the trace would block a plain open for writing until a reader came.
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def open_fresh(path: Path, root: Path | None = None) -> IO[str]:
    """Open ``path`` as an empty text file to write, never writing through a link.

    The block folder may come from anyone (a cloned repository, an unpacked
    archive). A planted ``.blockkit/dev-trace.jsonl -> ~/notes.txt`` must not make
    ``blockkit dev`` truncate the file it points to, nor a planted hard link or
    FIFO stand in for the trace. So the file is opened with O_NOFOLLOW and must be
    a regular file with one link; and when ``root`` is given, every directory from
    ``root`` down to the file is opened the same way, relative to the last one, so
    no symbolic link on the way is followed either. Raises DevError with a one-line
    reason, or OSError for an ordinary failure (permissions, disk full).
    """
    if root is None:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        return _open_file(path, path, None)
    relative = path.relative_to(root)
    parent_fd = os.open(root, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
    try:
        for depth, part in enumerate(relative.parts[:-1], start=1):
            try:
                os.mkdir(part, 0o700, dir_fd=parent_fd)
            except FileExistsError:
                pass
            try:
                child_fd = os.open(part, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC, dir_fd=parent_fd)
            except OSError as exc:
                # A link there is an ELOOP (O_NOFOLLOW) or, with O_DIRECTORY on some systems, an ENOTDIR.
                walked = root.joinpath(*relative.parts[:depth])
                if exc.errno in (errno.ELOOP, errno.ENOTDIR) and walked.is_symlink():
                    raise _link_refused(path, walked) from None
                raise
            os.close(parent_fd)
            parent_fd = child_fd
        return _open_file(path, relative.parts[-1], parent_fd)
    finally:
        os.close(parent_fd)


def _open_file(path: Path, name: str | Path, dir_fd: int | None) -> IO[str]:
    flags = os.O_WRONLY | os.O_CREAT | _O_NOFOLLOW | _O_NONBLOCK | _O_CLOEXEC
    try:
        # 0600: the trace holds the viewer's data and the block's messages.
        fd = os.open(name, flags, 0o600, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _link_refused(path, path) from None
        if exc.errno == errno.ENXIO:  # a FIFO with no reader
            raise _not_regular(path) from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _not_regular(path)
        if info.st_nlink > 1:
            raise DevError(
                f"refusing to write the trace to {path}: it has {info.st_nlink} hard links, "
                f"so truncating it would empty another file too; {_WAY_OUT}"
            )
        os.ftruncate(fd, 0)
        if info.st_uid == os.geteuid() and info.st_mode & 0o077:
            os.fchmod(fd, 0o600)  # a trace left by an older run
        return os.fdopen(fd, "w", encoding="utf-8")
    except BaseException:
        os.close(fd)
        raise


_WAY_OUT = "remove it, or name another trace file with --trace PATH"


def _not_regular(path: Path) -> DevError:
    return DevError(f"refusing to write the trace to {path}: it is not a regular file; {_WAY_OUT}")


def _link_refused(path: Path, link: Path) -> DevError:
    try:
        target = f" to {os.readlink(link)}"
    except OSError:
        target = ""
    which = "it is" if link == path else f"{link} is"
    return DevError(f"refusing to write the trace to {path}: {which} a symbolic link{target}; {_WAY_OUT}")


_JWT = re.compile(r"[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")


def jwt_claims(value: str) -> dict[str, Any] | None:
    """The payload of a JWT (read, not verified: the trace only describes it), or None."""
    if not _JWT.fullmatch(value):
        return None
    payload = value.split(".")[1]
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (ValueError, UnicodeDecodeError):
        return None
    return claims if isinstance(claims, dict) else None


def without_tokens(value: Any) -> Any:
    """``value`` with every JWT replaced by ``{"jwtClaims": ...}``: a replayable token stays out of the file."""
    if isinstance(value, dict):
        return {key: without_tokens(item) for key, item in value.items()}
    if isinstance(value, list):
        return [without_tokens(item) for item in value]
    if isinstance(value, str):
        claims = jwt_claims(value)
        if claims is not None:
            return {"jwtClaims": claims}
    return value


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def messages(events: list[dict[str, Any]], direction: str, type_: str | None = None) -> list[dict[str, Any]]:
    return [
        e
        for e in events
        if e.get("kind") == MESSAGE and e.get("dir") == direction and (type_ is None or e.get("type") == type_)
    ]


def lifecycle(events: list[dict[str, Any]], name: str | None = None) -> list[dict[str, Any]]:
    return [e for e in events if e.get("kind") == LIFECYCLE and (name is None or e.get("event") == name)]


def violations(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e.get("kind") == VIOLATION]

"""The protocol trace: every message and host event, in order, as JSONL.

Events come from the host page (which stamps ``t``, milliseconds on the page's
clock) and from the host server (violations it found). Each gets a ``seq`` in
arrival order and a wall-clock ``at``. The trace is kept in memory too, for
``--check`` and the tests.
"""

from __future__ import annotations

import json
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

MESSAGE = "message"
LIFECYCLE = "lifecycle"
VIOLATION = "violation"


class TraceLog:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._events: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._file: IO[str] | None = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            # A fresh trace per run: mixing runs would make the timings meaningless.
            self._file = path.open("w", encoding="utf-8")

    def append(self, event: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            stamped = {
                "seq": len(self._events) + 1,
                "at": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
                **event,
            }
            self._events.append(stamped)
            if self._file is not None:
                self._file.write(json.dumps(stamped, ensure_ascii=False, default=str) + "\n")
                self._file.flush()
            return stamped

    def events(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._events)

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


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

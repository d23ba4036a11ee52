"""``run(coroutine)``: ``asyncio.run`` on a thread of its own, for tests that drive a coroutine.

A test before them may hold the session's shared Playwright browser, whose sync API keeps an
event loop running on the main thread; there ``asyncio.run`` refuses to start another ("cannot be
called from a running event loop"), so such a test passes alone and fails in the whole suite.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Coroutine


def run(coroutine: Coroutine[Any, Any, Any]) -> Any:
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = asyncio.run(coroutine)
        except BaseException as exc:  # handed to the test's thread as it is
            outcome["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]

"""``blockkit dev --check``: drive headless Chromium through the handshake.

The result is data (:class:`CheckResult`); ``verdict`` turns it into words.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional
from urllib.parse import urlsplit

from blockkit.dev import failures, trace
from blockkit.dev.browser import launch_chromium, require_browser
from blockkit.dev.errors import DevError
from blockkit.dev.session import DevSession

# Loading the host page and the block's first bytes, on top of the host's own schedule.
LOAD_MARGIN_MS = 15_000

READY = "ready"
COLLAPSED = "collapsed"
FAILED = "failed"
TIMED_OUT = "timed-out"

# How often a long wait reports progress (the callback of run_check).
PROGRESS_INTERVAL_S = 1.0
# progress(phase, text): phase names the wait ("load", "ready", "settle", "replies"); text says
# what is awaited and for how long, e.g. "waiting for BLOCK_READY: 3 s of at most 52 s".
Progress = Callable[[str, str], None]


@dataclass
class ConsoleError:
    source: str  # "block" or "host"
    text: str
    url: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"source": self.source, "text": self.text, "url": self.url}


@dataclass
class CheckResult:
    block_id: str
    surface: str
    outcome: str
    handshake_ms: float | None
    attempts: int
    sent_types: list[str]
    violations: list[dict[str, Any]] = field(default_factory=list)
    console_errors: list[ConsoleError] = field(default_factory=list)
    trace_path: str | None = None
    # Brokered calls whose result was an error (failures.failed_calls); cancelled dialogs are not here.
    failed_calls: list[dict[str, Any]] = field(default_factory=list)

    @property
    def failing_calls(self) -> list[dict[str, Any]]:
        """The failed calls that fail the check: the block's request or the platform, not the viewer."""
        return [c for c in self.failed_calls if c["failsCheck"]]

    @property
    def ok(self) -> bool:
        return (self.outcome == READY and not self.violations and not self.console_errors
                and not self.failing_calls)


def run_check(session: DevSession, executable: Path | None = None,
              progress: Optional[Progress] = None) -> CheckResult:
    """Open the host page of a started session and watch the handshake to its end.

    ``executable`` is the Chromium to drive (default: :func:`require_browser`'s). ``progress``,
    when given, hears what the check waits for, and how long so far, at the start of each wait
    and then every PROGRESS_INTERVAL_S seconds.
    """
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    if executable is None:
        executable = require_browser()
    block_origin = _origin(session.block_url)
    errors: list[ConsoleError] = []

    def source_of(url: str | None) -> str:
        return "block" if url and _origin(url) == block_origin else "host"

    def on_console(message: Any) -> None:
        if message.type == "error":
            url = (message.location or {}).get("url") or None
            errors.append(ConsoleError(source_of(url), message.text, url))

    def on_page_error(error: Any) -> None:
        # Uncaught exceptions carry no frame; in a host page that throws nothing,
        # they are the block's.
        errors.append(ConsoleError("block", f"uncaught: {error}", None))

    timings = session.timings
    deadline_ms = timings.give_up_after_ms(session.surface.kind) + LOAD_MARGIN_MS
    with sync_playwright() as playwright:
        try:
            browser = launch_chromium(playwright, executable)
        except PlaywrightError as exc:
            raise DevError(f"Chromium at {executable} did not start: {_first_line(exc)}") from None
        try:
            page = browser.new_page()
            page.on("console", on_console)
            page.on("pageerror", on_page_error)
            say = progress or (lambda phase, text: None)
            say("load", f"loading the host page {session.host_url}")
            try:
                page.goto(session.page_url)
            except PlaywrightError as exc:
                raise DevError(f"the host page did not load: {_first_line(exc)}") from None

            def waiting_for_ready(attempt: int, elapsed_s: float) -> None:
                # Before the page starts its first attempt it reads 0: that wait is the first attempt's
                # (on a loaded machine the first report can come before the page's script has run).
                attempt = max(attempt, 1)
                tries = f" (attempt {attempt} of {1 + len(timings.page_retry_delays_ms)})" \
                    if session.surface.kind != "slot" else ""
                # Each attempt is a wait of its own: off a terminal, one line as each starts.
                say(f"ready:{attempt}", f"waiting for BLOCK_READY from {session.manifest.block_id}{tries}:"
                                        f" {elapsed_s:.0f} s of at most {deadline_ms / 1000:.0f} s")

            reached = _wait_for_ready(page, deadline_ms, waiting_for_ready)
            outcome = page.evaluate("() => window.__blockkit.outcome") if reached else TIMED_OUT
            if outcome == READY:
                settle_s = timings.check_settle_ms / 1000
                _wait(page, "() => false", timings.check_settle_ms,
                      lambda s: say("settle", f"BLOCK_READY received; watching the block {s:.0f} s of"
                                              f" {settle_s:.1f} s for violations and console errors"))
            _wait_for_pending_requests(page, timings.request_reply_timeout_ms + LOAD_MARGIN_MS, say)
            state = page.evaluate(
                "() => ({handshakeMs: window.__blockkit.handshakeMs, attempt: window.__blockkit.attempt})"
            )
        finally:
            browser.close()

    events = session.events()
    return CheckResult(
        block_id=session.manifest.block_id,
        surface=session.surface.label,
        outcome=outcome,
        handshake_ms=state.get("handshakeMs"),
        attempts=state.get("attempt") or 0,
        sent_types=_distinct(e.get("type") or f"({e.get('jsType')})" for e in trace.messages(events, "in")),
        violations=[
            {"kind": v["violation"], "type": v.get("type"), "explanation": v["explanation"]}
            for v in trace.violations(events)
        ],
        console_errors=errors,
        trace_path=str(session.trace_path),
        failed_calls=failures.failed_calls(events),
    )


def _wait(page: Any, condition: str, timeout_ms: float, report: Callable[[float], None]) -> bool:
    """Wait until ``condition`` (a JavaScript function) holds in ``page``, or ``timeout_ms`` pass;
    ``report(seconds so far)`` at the start and about every PROGRESS_INTERVAL_S. True if it held."""
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    start = time.monotonic()
    while True:
        elapsed_ms = (time.monotonic() - start) * 1000
        remaining_ms = timeout_ms - elapsed_ms
        if remaining_ms <= 0:
            return False
        try:
            report(elapsed_ms / 1000)
        except PlaywrightError:
            pass  # the page went away while we asked it how far it got: the wait below says so
        try:
            page.wait_for_function(condition, timeout=min(remaining_ms, PROGRESS_INTERVAL_S * 1000), polling=50)
            return True
        except PlaywrightTimeout:
            continue
        except PlaywrightError:
            return False


def _wait_for_ready(page: Any, timeout_ms: float, report: Callable[[int, float], None]) -> bool:
    """Wait until the handshake's outcome is known, or ``timeout_ms`` pass; ``report(attempt, seconds
    so far)`` at the start, when the page begins another attempt, and about every PROGRESS_INTERVAL_S.
    True if the outcome is known."""
    start = time.monotonic()
    while True:
        attempt = _attempt(page)
        remaining_ms = timeout_ms - (time.monotonic() - start) * 1000
        # Done, or the page moved on to another attempt (then report that one at once).
        condition = ("() => window.__blockkit && (window.__blockkit.outcome !== 'pending'"
                     f" || (window.__blockkit.attempt || 0) !== {attempt})")
        offset_s = time.monotonic() - start
        if not _wait(page, condition, remaining_ms, lambda s: report(attempt, offset_s + s)):
            return False
        try:
            if page.evaluate("() => window.__blockkit.outcome") != "pending":
                return True
        except Exception:
            return False


def _attempt(page: Any) -> int:
    try:
        return int(page.evaluate("() => (window.__blockkit && window.__blockkit.attempt) || 0"))
    except Exception:
        return 0


def _wait_for_pending_requests(page: Any, timeout_ms: float, say: Progress) -> None:
    """Let every request the block sent during the watch be answered or reported unanswered.

    A request sent late in the watch is still inside its reply timeout when the
    watch ends; without this wait it would be judged by no one.
    """
    # A request reaches the pending list only once the host server has judged it.
    page.evaluate("() => window.__blockkit.flush()")

    def waiting(elapsed_s: float) -> None:
        pending = int(page.evaluate("() => window.__blockkit.pendingRequests") or 0)
        if pending:
            say("replies", f"waiting for the replies to {pending} request(s) of the block:"
                           f" {elapsed_s:.0f} s of at most {timeout_ms / 1000:.0f} s")

    _wait(page, "() => window.__blockkit.pendingRequests === 0", timeout_ms, waiting)
    # (when they never come, the verdict reports what the trace holds)
    page.evaluate("() => window.__blockkit.flush()")


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _distinct(values: Any) -> list[str]:
    seen: list[str] = []
    for value in values:
        if value not in seen:
            seen.append(value)
    return seen

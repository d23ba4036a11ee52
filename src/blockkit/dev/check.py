"""``blockkit dev --check``: drive headless Chromium through the handshake.

The result is data (:class:`CheckResult`); ``verdict`` turns it into words.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
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


def run_check(session: DevSession, executable: Path | None = None) -> CheckResult:
    """Open the host page of a started session and watch the handshake to its end.

    ``executable`` is the Chromium to drive (default: :func:`require_browser`'s).
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
            try:
                page.goto(session.host_url)
            except PlaywrightError as exc:
                raise DevError(f"the host page did not load: {_first_line(exc)}") from None
            try:
                page.wait_for_function(
                    "() => window.__blockkit && window.__blockkit.outcome !== 'pending'",
                    timeout=deadline_ms,
                    polling=50,
                )
                outcome = page.evaluate("() => window.__blockkit.outcome")
            except PlaywrightError:
                outcome = TIMED_OUT
            if outcome == READY:
                page.wait_for_timeout(timings.check_settle_ms)
            _wait_for_pending_requests(page, timings.request_reply_timeout_ms + LOAD_MARGIN_MS)
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


def _wait_for_pending_requests(page: Any, timeout_ms: float) -> None:
    """Let every request the block sent during the watch be answered or reported unanswered.

    A request sent late in the watch is still inside its reply timeout when the
    watch ends; without this wait it would be judged by no one.
    """
    from playwright.sync_api import Error as PlaywrightError

    # A request reaches the pending list only once the host server has judged it.
    page.evaluate("() => window.__blockkit.flush()")
    try:
        page.wait_for_function(
            "() => window.__blockkit.pendingRequests === 0", timeout=timeout_ms, polling=50
        )
    except PlaywrightError:
        pass  # the verdict reports what the trace holds
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

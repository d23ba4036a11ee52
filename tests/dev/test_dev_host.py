"""The host page in real Chromium: handshake, sandbox, origins, resize, schedule, controls."""

from __future__ import annotations

import itertools
import json
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from blockkit.dev import trace
from blockkit.dev.timings import PLATFORM_TIMINGS

pytestmark = pytest.mark.browser

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dev"
# The page schedule at a fifth of its length: 2 s mounts, 400 ms and 1 s pauses, 80 ms re-posts.
FAST = PLATFORM_TIMINGS.scaled(0.2)
# A browser timer never fires before its delay (up to the page clock's rounding), but on a
# loaded machine it can fire well after it: timings are held to [delay - EARLY, delay + LATE].
TIMER_EARLY_MS = 5
TIMER_LATE_MS = 400


def on_time(waited: float, delay: float) -> bool:
    """Whether a timer that waited ``waited`` ms kept to its ``delay``: not early, not far late."""
    return delay - TIMER_EARLY_MS <= waited <= delay + TIMER_LATE_MS


def times(events: list[dict[str, Any]], name: str) -> list[float]:
    return [e["t"] for e in trace.lifecycle(events, name)]


def median_gap(values: list[float]) -> float:
    return statistics.median(b - a for a, b in itertools.pairwise(values))


def test_a_block_completes_the_handshake_on_a_page(host: Any) -> None:
    run = host(FIXTURES / "handshake")
    run.wait_outcome("ready")
    events = run.events()

    assert [e["type"] for e in trace.messages(events, "in")] == ["BLOCK_HELLO", "BLOCK_READY"]
    inits = trace.messages(events, "out", "BLOCK_INIT")
    assert inits, "the host never posted BLOCK_INIT"
    payload = inits[0]["data"]["payload"]
    manifest = json.loads((FIXTURES / "handshake" / "block.manifest.json").read_text())
    token = payload["token"]
    # The platform's page token: {raw, scopes, expiresAt}; a first visit holds no consent-gated scope yet
    # (user:read:self waits for the viewer's grant), so the scopes are the declared ones without it.
    assert set(token) == {"raw", "scopes", "expiresAt"} and token["raw"].count(".") == 2
    assert token["scopes"] == [s for s in manifest["scopes"] if s != "user:read:self"]
    assert datetime.fromisoformat(token["expiresAt"].replace("Z", "+00:00")) > datetime.now(timezone.utc)
    # The viewer is a seeded user of the local platform, in the platform's shape (PLATFORM.md §8).
    viewer = run.session.platform.viewer()
    assert viewer is not None and viewer["signedIn"] is True
    # The platform's page context (PageBlockHost.tsx): subPath "" at the root.
    assert payload["context"] == {"slotId": "app.page", "entityType": "none", "slug": "handshake-demo",
                                  "subPath": "", "viewerUserId": viewer["id"], "viewerUsername": viewer["username"],
                                  "theme": "dark"}
    # The maturity signal at the top level: no color domain locally, the token's ceiling.
    assert payload["domain"] is None and isinstance(payload["maxBrowsingLevel"], int)
    assert payload["blockInstanceId"] == "page_apb_dev_handshake-demo"
    assert payload["viewer"] == viewer
    assert payload["apiBaseUrl"] == run.session.platform.base_url
    assert (payload["blockId"], payload["theme"], payload["renderMode"]) == ("handshake-demo", "dark", "iframe")

    # The block saw that payload; the iframe URL is the bare one (the platform sends no fragment).
    assert run.frame.locator("#status").inner_text() == f"ready as {payload['blockInstanceId']}"
    assert run.page.get_attribute("#block-frame", "src") == run.session.block_url
    [ready] = trace.lifecycle(events, "ready")
    assert 0 < ready["handshakeMs"] < PLATFORM_TIMINGS.ready_timeout_ms
    assert run.page.locator("#status").inner_text().startswith("BLOCK_READY after")
    # The JSONL file holds exactly what the host recorded, each block token as its claims (E08).
    assert trace.read_jsonl(run.session.trace_path) == [trace.without_tokens(event) for event in events]


def test_the_theme_flag_reaches_the_payload(host: Any) -> None:
    run = host(FIXTURES / "handshake", theme="light")
    run.wait_outcome("ready")
    assert "#" not in run.page.get_attribute("#block-frame", "src")
    assert trace.messages(run.events(), "out", "BLOCK_INIT")[0]["data"]["payload"]["theme"] == "light"
    assert run.frame.evaluate("document.documentElement.dataset.theme") == "light"


@pytest.mark.parametrize(
    "sandbox, effective",
    [
        ("allow-scripts allow-forms", "allow-scripts allow-forms"),
        ("allow-scripts", "allow-scripts"),
        ("allow-forms  allow-scripts allow-popups", "allow-scripts allow-forms allow-popups"),
        (" allow-scripts\tallow-modals ", "allow-scripts allow-modals"),
        # The platform adds allow-scripts (the block runs), and never allow-same-origin (the spec).
        ("allow-forms", "allow-scripts allow-forms"),
        ("allow-scripts allow-same-origin", "allow-scripts"),
    ],
)
def test_the_iframe_sandbox_is_the_platforms_for_the_manifest(
    host: Any, make_block: Any, sandbox: str, effective: str
) -> None:
    # (Before the platform's rules: the manifest's string verbatim, and min/max heights on the page frame.)
    run = host(make_block(iframe={"sandbox": sandbox, "minHeight": 130, "maxHeight": 470}))
    run.wait_outcome("ready")
    attributes = run.page.evaluate(
        """() => { const f = document.querySelector('#block-frame');
                   return {sandbox: f.getAttribute('sandbox'), referrer: f.getAttribute('referrerpolicy'),
                           allow: f.getAttribute('allow'), csp: f.getAttribute('csp'),
                           loading: f.getAttribute('loading')}; }"""
    )
    assert attributes == {"sandbox": effective, "referrer": "no-referrer", "allow": None, "csp": None,
                          "loading": None}
    # And the browser applied it: without allow-same-origin the block's origin is opaque.
    assert run.frame.evaluate("self.origin") == "null"


def test_the_block_runs_on_another_origin_than_the_host(host: Any, make_block: Any) -> None:
    run = host(make_block())
    run.wait_outcome("ready")
    host_origin = run.page.evaluate("location.origin")
    block_origin = run.frame.evaluate("location.origin")
    assert host_origin.startswith("http://localhost:") and block_origin.startswith("http://127.0.0.1:")
    assert host_origin != block_origin
    assert block_origin + "/" == run.session.block_url
    # Cross-origin for real: the host cannot reach into the block's document.
    reach = run.page.evaluate(
        """() => { try { return document.querySelector('#block-frame').contentWindow.document.title; }
                   catch (e) { return e.name; } }"""
    )
    assert reach == "SecurityError"
    assert {e["origin"] for e in trace.messages(run.events(), "in")} == {"null"}
    assert {address for address, _ in run.session.addresses()} == {"127.0.0.1"}


def test_resize_is_clamped_on_a_resizable_slot(host: Any, make_block: Any) -> None:
    resizes = [5000, 10, 250]
    block = make_block(
        iframe={"minHeight": 120, "maxHeight": 480, "resizable": True},
        behaviour={"readyHeight": 300, "afterReady": [{"type": "RESIZE_IFRAME", "payload": {"height": h}} for h in resizes]},
    )
    run = host(block, surface="model.below_images")
    run.wait_outcome("ready")
    events = run.settle(300)
    [ready] = trace.lifecycle(events, "ready")
    assert ready["appliedHeight"] == 300
    applied = trace.lifecycle(events, "resize-applied")
    assert [(e["requestedHeight"], e["appliedHeight"]) for e in applied] == [(5000, 480), (10, 120), (250, 250)]
    assert run.iframe_height() == pytest.approx(250, abs=1)


def test_resize_is_ignored_on_a_page(host: Any, make_block: Any) -> None:
    block = make_block(
        iframe={"minHeight": 120, "maxHeight": 480, "resizable": True},
        behaviour={"afterReady": [{"type": "RESIZE_IFRAME", "payload": {"height": h}} for h in (5000, 130)]},
    )
    run = host(block, surface="page")
    run.wait_outcome("ready")
    before = run.iframe_height()
    events = run.settle(300)
    ignored = trace.lifecycle(events, "resize-ignored")
    assert [e["requestedHeight"] for e in ignored] == [5000, 130]
    assert all(e["reason"] == "the page host ignores RESIZE_IFRAME" for e in ignored)
    assert not trace.lifecycle(events, "resize-applied")
    assert run.iframe_height() == before


def test_resize_is_ignored_on_a_slot_that_is_not_resizable(host: Any, make_block: Any) -> None:
    block = make_block(
        iframe={"minHeight": 150, "maxHeight": 480, "resizable": False},
        behaviour={"readyHeight": 400, "afterReady": [{"type": "RESIZE_IFRAME", "payload": {"height": 300}}]},
    )
    run = host(block, surface="model.sidebar_top")
    run.wait_outcome("ready")
    events = run.settle(300)
    assert [e["reason"] for e in trace.lifecycle(events, "resize-ignored")] == ["iframe.resizable is false"]
    assert run.iframe_height() == pytest.approx(150, abs=1)


def test_a_silent_page_is_retried_on_schedule_then_shows_the_failure_card(host: Any, make_block: Any) -> None:
    run = host(make_block(behaviour={"ready": False}), timings=FAST)
    # During each backoff the card is up and the frame gone (the old frame used to stay up).
    run.page.wait_for_function(
        "() => document.querySelector('#failure-retrying').textContent.includes('attempt 1 of 2')", timeout=10_000)
    assert run.page.query_selector("#block-frame") is None
    assert "didn't load in time" in run.page.inner_text("#failure-card")
    run.wait_outcome("failed")
    events = run.events()
    mounts, give_ups = times(events, "mount"), times(events, "give-up")
    [card] = times(events, "failure-card")
    assert len(mounts) == len(give_ups) == 1 + len(FAST.page_retry_delays_ms) == 3

    for mounted, gave_up in zip(mounts, give_ups):
        assert on_time(gave_up - mounted, FAST.ready_timeout_ms), (mounted, gave_up)
    pauses = [mounts[1] - give_ups[0], mounts[2] - give_ups[1]]
    assert all(map(on_time, pauses, FAST.page_retry_delays_ms)), pauses
    assert [e["delayMs"] for e in trace.lifecycle(events, "retry-scheduled")] == pytest.approx([400, 1000])
    assert give_ups[2] <= card <= give_ups[2] + TIMER_LATE_MS

    for attempt in (1, 2, 3):
        posts = [e["t"] for e in trace.messages(events, "out", "BLOCK_INIT") if e["attempt"] == attempt]
        assert median_gap(posts) == pytest.approx(FAST.init_repost_ms, abs=25)
        # Nothing is posted to a mount the host has given up on.
        assert max(posts) <= give_ups[attempt - 1]

    assert run.page.is_visible("#failure-card")
    assert "never sent BLOCK_READY (3 attempts)" in run.page.inner_text("#failure-card")
    assert run.page.query_selector("#block-frame") is None


def test_a_silent_slot_collapses_after_ten_seconds_at_real_timing(host: Any, make_block: Any) -> None:
    run = host(make_block(behaviour={"ready": False, "hello": False}), surface="model.below_images")
    run.wait_outcome("collapsed", timeout_ms=25_000)
    events = run.events()
    [mounted], [gave_up] = times(events, "mount"), times(events, "give-up")
    assert on_time(gave_up - mounted, 10_000), (mounted, gave_up)
    assert times(events, "collapse") and not times(events, "retry-scheduled")
    posts = [e["t"] for e in trace.messages(events, "out", "BLOCK_INIT")]
    assert median_gap(posts) == pytest.approx(400, abs=25)
    # First on load, then every 400 ms until the 10 s are up.
    assert 22 <= len(posts) <= 26
    assert not run.page.is_visible(".slot")
    assert "collapsed" in run.page.inner_text("#collapsed-note")


def test_request_token_is_answered_with_the_same_request_id(host: Any, make_block: Any) -> None:
    block = make_block(behaviour={"afterReady": [{"type": "REQUEST_TOKEN", "payload": {"requestId": "r-1"}}]})
    run = host(block)
    run.wait_outcome("ready")
    events = run.settle(PLATFORM_TIMINGS.request_reply_timeout_ms + 300)
    [reply] = trace.messages(events, "out", "TOKEN_REFRESH_RESPONSE")
    assert reply["data"]["payload"]["requestId"] == "r-1"
    assert set(reply["data"]["payload"]["token"]) == {"raw", "scopes", "expiresAt"}  # the platform's page token
    received = run.frame.evaluate("window.__received.map(m => m.type)")
    assert "TOKEN_REFRESH_RESPONSE" in received
    assert trace.violations(events) == []


def test_the_controls_push_theme_change_and_token_refresh(host: Any) -> None:
    run = host(FIXTURES / "handshake")
    run.wait_outcome("ready")
    first_raw = trace.messages(run.events(), "out", "BLOCK_INIT")[0]["data"]["payload"]["token"]["raw"]
    run.page.click("#theme-toggle")
    run.page.click("#token-refresh")
    run.frame.locator("#reply").filter(has_text="TOKEN_REFRESH").wait_for()
    events = run.events()
    [theme] = trace.messages(events, "out", "THEME_CHANGE")
    assert theme["data"] == {"type": "THEME_CHANGE", "payload": {"theme": "light"}}
    [refresh] = trace.messages(events, "out", "TOKEN_REFRESH")
    assert refresh["data"]["payload"]["token"]["raw"] != first_raw
    assert run.frame.evaluate("document.documentElement.dataset.theme") == "light"
    assert run.page.evaluate("document.documentElement.dataset.theme") == "light"


def test_a_built_block_is_served_from_its_output_dir(host: Any, make_block: Any) -> None:
    run = host(make_block("built"))
    # The module script loads only if the block origin allows the opaque origin's CORS request.
    run.wait_outcome("ready")
    assert run.frame.locator("#where").inner_text() == "built output"


@pytest.fixture
def dev_server(make_block: Any) -> Iterator[str]:
    """A stand-in for a running Vite dev server: another process serving the block."""
    root = make_block(name="upstream")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(root)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                urllib.request.urlopen(url + "/index.html", timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        process.wait(5)


def test_a_block_runs_through_the_proxy_on_the_dev_origin(host: Any, make_block: Any, dev_server: str) -> None:
    run = host(make_block(), proxy=dev_server)
    run.wait_outcome("ready")
    assert run.frame.evaluate("location.origin") + "/" == run.session.block_url
    assert not run.session.block_url.startswith(dev_server)
    assert "scripted test block" in run.frame.locator("body").inner_text()
    assert int(run.frame.locator("#inits").inner_text()) >= 1


def test_a_block_that_reloads_itself_after_ready_gets_no_new_handshake(host: Any, make_block: Any) -> None:
    # The platform's host has no load handler: the new document never gets a BLOCK_INIT (it used
    # to get a fresh handshake here).
    run = host(make_block(behaviour={"reloadAfterReady": True}))
    run.page.wait_for_function(
        "() => document.querySelector('#trace-list').textContent.includes('frame-navigated')", timeout=10_000
    )
    events = run.settle(3 * PLATFORM_TIMINGS.init_repost_ms)
    [navigated] = trace.lifecycle(events, "frame-navigated")
    assert navigated["afterReady"] is True and "no BLOCK_INIT" in navigated["note"]
    assert not [e for e in trace.messages(events, "out", "BLOCK_INIT") if e["t"] > navigated["t"]]
    assert "reloaded=1" in run.frame.url
    # The new document saw nothing; the host stays ready on its one mount.
    assert run.frame.evaluate("window.__received.length") == 0
    assert run.page.evaluate("() => window.__blockkit.outcome") == "ready"
    assert len(times(events, "mount")) == 1 and len(times(events, "ready")) == 1


def test_the_trace_panel_stays_readable_while_the_host_re_posts(host: Any, make_block: Any) -> None:
    run = host(make_block(behaviour={"ready": False}), surface="model.below_images", timings=FAST)
    run.wait_outcome("collapsed")
    rows = run.page.locator("#trace-list li", has_text="BLOCK_INIT")
    summaries = rows.locator(".summary").all_inner_texts()
    reposts = run.page.locator("#trace-list li.repost .summary").all_inner_texts()
    # One row stands for a whole run of re-posts, with their count; the trace file has each one.
    posted = len(trace.messages(run.events(), "out", "BLOCK_INIT"))
    # The first post goes at mount, before the frame's load and the block's HELLO (as on the
    # platform): a run of re-posts is cut by those rows, so a few runs, one of them long.
    assert posted >= 10 and 1 <= len(reposts) <= 3
    others = len(summaries) - len(reposts)  # the first post, and one after the block's HELLO
    counts = [int(text.split("×")[1].split(" ")[0]) if "×" in text else 1 for text in reposts]
    # How the rows cut the re-posts depends on when the frame loads (later on a loaded machine);
    # one run still holds most of them.
    assert others <= 2 and sum(counts) == posted - others and max(counts) > (posted - others) // 2
    # The first posts show the payload; each re-post says what it is in one short line
    # instead of repeating the whole payload, which would bury the rest of the trace.
    assert "blockInstanceId" in summaries[0]
    assert all("blockInstanceId" not in text and len(text) < 80 for text in reposts)
    # A time past 10 s still fits its column on one line.
    one_line, long_time = run.page.evaluate(
        """() => { const cell = document.querySelector('#trace-list .time');
                   const before = cell.getBoundingClientRect().height;
                   cell.textContent = '+123456 ms';
                   return [before, cell.getBoundingClientRect().height]; }"""
    )
    assert long_time == one_line


@pytest.fixture
def slow_image_url() -> Iterator[str]:
    """A loopback server that answers each request only after a second."""
    import http.server
    import threading

    gif = bytes.fromhex("47494638396101000100800000000000ffffff21f90401000000002c00000000010001000002024401003b")

    class Slow(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            time.sleep(1)
            self.send_response(200)
            self.send_header("content-type", "image/gif")
            self.send_header("content-length", str(len(gif)))
            self.end_headers()
            self.wfile.write(gif)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/slow.gif"
    finally:
        server.shutdown()
        server.server_close()


def test_a_block_ready_before_its_load_event_is_not_taken_for_a_reload(
    host: Any, make_block: Any, slow_image_url: str
) -> None:
    # The block answers the BLOCK_INIT its BLOCK_HELLO brought at once; its frame's
    # load event comes a second later, when the image arrives. That is the same
    # document, and it already has what it needs.
    run = host(make_block(behaviour={"slowImage": slow_image_url}), timings=FAST)
    run.wait_outcome("ready")
    # Past the image and past one whole give-up delay after it.
    events = run.settle(1_000 + FAST.ready_timeout_ms + 500)
    assert trace.lifecycle(events, "iframe-load"), "the frame never finished loading"
    assert not trace.lifecycle(events, "block-reloaded")
    assert len(times(events, "mount")) == 1 and not times(events, "give-up")
    assert [e["type"] for e in trace.messages(events, "in")] == ["BLOCK_HELLO", "BLOCK_READY"]
    assert run.page.evaluate("() => window.__blockkit.outcome") == "ready"

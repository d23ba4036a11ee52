"""The platform host's transport and lifecycle rules, seen from inside a real cross-origin block
frame in Chromium: what the block posts (``window.parent.postMessage`` from the frame) and what
it gets back (the scripted block records every message in ``window.__received``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from blockkit.dev import trace, transport
from blockkit.dev.timings import PLATFORM_TIMINGS

pytestmark = pytest.mark.browser

FAST = PLATFORM_TIMINGS.scaled(0.2)
WAIT_MS = 10_000


def post(run: Any, *messages: Any) -> None:
    """Post each message from the block's frame to the host, in one go."""
    run.frame.evaluate("ms => ms.forEach(m => window.parent.postMessage(m, '*'))", list(messages))


def received(run: Any, type_: str) -> list[dict[str, Any]]:
    got = run.frame.evaluate("t => window.__received.filter(m => m && m.type === t)", type_)
    return list(got)


def wait_received(run: Any, type_: str, count: int = 1, timeout: float = WAIT_MS) -> list[dict[str, Any]]:
    run.frame.wait_for_function(
        "([t, n]) => (window.__received || []).filter(m => m && m.type === t).length >= n", arg=[type_, count],
        timeout=timeout, polling=20,
    )
    return received(run, type_)


def wait_events(
    run: Any, condition: Callable[[list[dict[str, Any]]], bool], timeout_s: float = 15
) -> list[dict[str, Any]]:
    """The trace, once ``condition`` holds of it (bounded)."""
    deadline = time.monotonic() + timeout_s
    while True:
        events = run.events()
        if condition(events) or time.monotonic() > deadline:
            return events
        time.sleep(0.1)


def dropped(events: list[dict[str, Any]], reason: str) -> list[dict[str, Any]]:
    return [e for e in trace.messages(events, "in") if e.get("dropped") == reason]


def kinds(events: list[dict[str, Any]]) -> list[str]:
    return [v["violation"] for v in trace.violations(events)]


def frame_style(run: Any) -> dict[str, str]:
    return run.page.evaluate(
        """() => { const s = getComputedStyle(document.querySelector('#block-frame'));
                   const o = document.querySelector('#boot-overlay');
                   return {opacity: s.opacity, pointer: s.pointerEvents,
                           overlay: o && !o.hidden ? o.textContent : null}; }"""
    )


def balance(request_id: str) -> dict[str, Any]:
    return {"type": "GET_BUZZ_BALANCE", "payload": {"requestId": request_id}}


# ---- rate limit, dedup, requests without an id (rows 37-40, 36) ---------------------------

def test_a_burst_of_100_gets_at_most_30_replies_in_its_second(host: Any, make_block: Any) -> None:
    run = host(make_block())
    run.wait_outcome("ready")
    run.page.wait_for_timeout(transport.RATE_LIMIT_WINDOW_MS + 100)  # HELLO and READY out of the window
    post(run, *[balance(f"b{i}") for i in range(100)])
    events = wait_events(run, lambda ev: len(trace.messages(ev, "in", "GET_BUZZ_BALANCE")) == 100
                         and len(trace.messages(ev, "out", "BUZZ_BALANCE_RESULT")) >= 30)
    passed = [e for e in trace.messages(events, "in", "GET_BUZZ_BALANCE") if "dropped" not in e]
    assert len(passed) == transport.RATE_LIMIT_MAX_MESSAGES
    assert len(dropped(events, transport.RATE_LIMITED)) == 70
    wait_received(run, "BUZZ_BALANCE_RESULT", 30)
    run.page.wait_for_timeout(300)
    replies = received(run, "BUZZ_BALANCE_RESULT")
    # The first 30 are answered, the other 70 never.
    assert sorted(r["payload"]["requestId"] for r in replies) == sorted(f"b{i}" for i in range(30))
    assert kinds(events).count(transport.RATE_LIMITED) == 70
    # A second later the window has room again.
    run.page.wait_for_timeout(transport.RATE_LIMIT_WINDOW_MS + 100)
    post(run, balance("later"))
    assert any(r["payload"]["requestId"] == "later" for r in wait_received(run, "BUZZ_BALANCE_RESULT", 31))


def test_ready_and_resize_count_toward_the_rate_on_a_slot(host: Any, make_block: Any) -> None:
    run = host(make_block(behaviour={"ready": False}), surface="model.below_images")
    # The block's own BLOCK_HELLO first: on a loaded machine the frame's script can run late, and a
    # HELLO sent inside the window below would be one message more than the 31 this test counts.
    run.page.wait_for_function("() => !!window.__blockkit", timeout=WAIT_MS)
    wait_events(run, lambda ev: bool(trace.messages(ev, "in", "BLOCK_HELLO")))
    run.page.wait_for_timeout(transport.RATE_LIMIT_WINDOW_MS + 100)
    post(run, {"type": "BLOCK_READY", "payload": {"height": 200}},
         *[{"type": "RESIZE_IFRAME", "payload": {"height": 200 + i}} for i in range(29)], balance("over"))
    events = wait_events(run, lambda ev: len(dropped(ev, transport.RATE_LIMITED)) == 1)
    [over] = dropped(events, transport.RATE_LIMITED)
    assert over["type"] == "GET_BUZZ_BALANCE"
    run.page.wait_for_timeout(500)
    assert received(run, "BUZZ_BALANCE_RESULT") == []


def test_a_repeated_request_id_is_answered_once(host: Any, make_block: Any) -> None:
    run = host(make_block())
    run.wait_outcome("ready")
    post(run, balance("same"), balance("same"))
    # The dedup key falls back to a top-level requestId: a repeat there is dropped too.
    post(run, {"type": "GET_BUZZ_BALANCE", "requestId": "top", "payload": {}},
         {"type": "GET_BUZZ_BALANCE", "requestId": "top", "payload": {}})
    wait_received(run, "BUZZ_BALANCE_RESULT")
    events = wait_events(run, lambda ev: len(dropped(ev, transport.DUPLICATE_REQUEST_ID)) == 2)
    run.page.wait_for_timeout(500)
    assert [r["payload"]["requestId"] for r in received(run, "BUZZ_BALANCE_RESULT")] == ["same"]
    assert [e["detail"]["requestId"] for e in dropped(events, transport.DUPLICATE_REQUEST_ID)] == ["same", "top"]
    [duplicate, _] = [v for v in trace.violations(events) if v["violation"] == transport.DUPLICATE_REQUEST_ID]
    assert "'same'" in duplicate["explanation"]


def test_a_request_without_a_usable_id_gets_no_reply(host: Any, make_block: Any) -> None:
    run = host(make_block())
    run.wait_outcome("ready")
    post(run,
         {"type": "GET_BUZZ_BALANCE", "payload": {}},
         {"type": "GET_BUZZ_BALANCE"},
         {"type": "GET_BUZZ_BALANCE", "payload": [1]},
         {"type": "GET_BUZZ_BALANCE", "requestId": "top-only", "payload": {}},
         # Pickers need a non-empty id: no dialog opens.
         {"type": "OPEN_CHECKPOINT_PICKER", "payload": {"requestId": ""}},
         balance("fine"))
    wait_received(run, "BUZZ_BALANCE_RESULT")
    events = wait_events(run, lambda ev: len(dropped(ev, transport.NO_REQUEST_ID)) == 5)
    run.page.wait_for_timeout(500)
    assert [r["payload"]["requestId"] for r in received(run, "BUZZ_BALANCE_RESULT")] == ["fine"]
    assert received(run, "CHECKPOINT_PICKER_RESULT") == []
    assert run.page.is_hidden("#host-dialog")
    assert kinds(events).count(transport.NO_REQUEST_ID) == 5
    # Said once, by the drop: not also as a payload lacking its requestId.
    assert not [v for v in trace.violations(events) if v["violation"] == "payload"]


def test_unknown_types_are_dropped_before_any_request_to_the_host_server(host: Any, make_block: Any) -> None:
    run = host(make_block())
    run.wait_outcome("ready")
    run.events()
    paths: list[str] = []
    run.page.on("request", lambda request: paths.append(request.url.split("/", 3)[-1]))
    post(run, *[{"type": "FETCH_SECRETS", "payload": {"n": i}} for i in range(60)])
    events = wait_events(run, lambda ev: len(dropped(ev, transport.NOT_HANDLED)) == 60)
    assert len(dropped(events, transport.NOT_HANDLED)) == 60
    assert "api/inbound" not in paths and 1 <= paths.count("api/events") <= 3
    assert kinds(events).count("unknown-type") == 60
    # They took no rate budget (HELLO and READY may still hold two of the 30).
    post(run, *[balance(f"after{i}") for i in range(28)])
    assert len(wait_received(run, "BUZZ_BALANCE_RESULT", 28, timeout=20_000)) == 28
    assert not dropped(run.events(), transport.RATE_LIMITED)


# ---- before BLOCK_READY (rows 8, 43, 30) ---------------------------------------------------

def test_before_ready_the_frame_is_invisible_inert_and_dialogs_are_refused(host: Any, make_block: Any) -> None:
    run = host(make_block(behaviour={"ready": False}))
    wait_received(run, "BLOCK_INIT")
    assert frame_style(run) == {"opacity": "0", "pointer": "none", "overlay": "Starting Scripted Block…"}
    start_url = run.page.url
    post(run,
         {"type": "OPEN_BUZZ_PURCHASE", "payload": {"requestId": "p1", "suggestedAmount": 500}},
         {"type": "OPEN_IMAGE_UPLOAD", "payload": {"requestId": "u1"}},
         {"type": "NAVIGATE", "payload": {"path": "elsewhere"}},
         {"type": "REQUEST_SIGN_IN", "payload": {}},
         {"type": "REQUEST_CONSENT", "payload": {}},
         balance("b1"))
    [purchase] = wait_received(run, "BUZZ_PURCHASE_RESULT")
    assert purchase["payload"] == {"requestId": "p1", "purchased": False}
    [upload] = wait_received(run, "IMAGE_UPLOAD_RESULT")
    assert upload["payload"] == {"requestId": "u1"}
    # Storage, workflows and the balance are answered before ready, as on the platform.
    wait_received(run, "BUZZ_BALANCE_RESULT")
    # No visibility pushes before ready.
    hide_and_show(run)
    events = wait_events(run, lambda ev: len(dropped(ev, transport.BEFORE_READY)) == 5)
    assert [e["type"] for e in dropped(events, transport.BEFORE_READY)] == [
        "OPEN_BUZZ_PURCHASE", "OPEN_IMAGE_UPLOAD", "NAVIGATE", "REQUEST_SIGN_IN", "REQUEST_CONSENT"]
    assert kinds(events).count(transport.BEFORE_READY) == 5
    assert run.page.is_hidden("#host-dialog") and run.page.url == start_url
    assert received(run, "SUSPEND") == received(run, "RESUME") == []

    post(run, {"type": "BLOCK_READY", "payload": {}})
    run.page.wait_for_function("() => window.__blockkit?.outcome === 'ready'", timeout=WAIT_MS)
    assert frame_style(run) == {"opacity": "1", "pointer": "auto", "overlay": None}
    # Once ready, the same request opens the host's dialog.
    post(run, {"type": "OPEN_BUZZ_PURCHASE", "payload": {"requestId": "p2"}})
    run.page.wait_for_selector("#host-dialog .dialog-card", timeout=WAIT_MS)
    hide_and_show(run)
    assert [m["type"] for m in wait_received(run, "RESUME")] == ["RESUME"]
    assert len(received(run, "SUSPEND")) == 1
    assert run.frame.evaluate("window.__received.map(m => m.type).slice(-2)") == ["SUSPEND", "RESUME"]


def hide_and_show(run: Any) -> None:
    run.page.evaluate(
        """() => { for (const state of ['hidden', 'visible']) {
                     Object.defineProperty(document, 'visibilityState', {value: state, configurable: true});
                     document.dispatchEvent(new Event('visibilitychange')); } }"""
    )


def test_boot_skeleton_shows_the_page_frame_from_mount_still_inert(host: Any, make_block: Any) -> None:
    run = host(make_block(manifest={"bootSkeleton": True}, behaviour={"ready": False}))
    wait_received(run, "BLOCK_INIT")
    assert frame_style(run) == {"opacity": "1", "pointer": "none", "overlay": None}


def test_a_slot_frame_is_hidden_until_ready_and_ignores_resize_before(host: Any, make_block: Any) -> None:
    block = make_block(iframe={"minHeight": 120, "maxHeight": None, "resizable": True}, behaviour={"ready": False})
    run = host(block, surface="model.below_images")
    wait_received(run, "BLOCK_INIT")
    assert frame_style(run)["opacity"] == "0" and frame_style(run)["pointer"] == "none"
    post(run, {"type": "RESIZE_IFRAME", "payload": {"height": 400}})
    events = wait_events(run, lambda ev: bool(trace.lifecycle(ev, "resize-ignored")))
    [early] = trace.lifecycle(events, "resize-ignored")
    assert "before BLOCK_READY" in early["reason"]
    assert run.iframe_height() == pytest.approx(120, abs=1)
    post(run, {"type": "BLOCK_READY", "payload": {"height": 300}})
    run.page.wait_for_function("() => window.__blockkit?.outcome === 'ready'", timeout=WAIT_MS)
    assert frame_style(run)["opacity"] == "1" and frame_style(run)["pointer"] == "auto"
    # The platform's clamps: 0 and less ignored, at most 8,000 px when maxHeight is null.
    post(run, *[{"type": "RESIZE_IFRAME", "payload": {"height": h}} for h in (0, -5, 9000)])
    events = wait_events(run, lambda ev: len(trace.lifecycle(ev, "resize-applied")) == 1)
    assert [e["reason"] for e in trace.lifecycle(events, "resize-ignored")][1:] == ["payload.height is 0 or less"] * 2
    [applied] = trace.lifecycle(events, "resize-applied")
    assert applied["appliedHeight"] == 8000
    assert run.iframe_height() == pytest.approx(8000, abs=1)
    # NAVIGATE has no handler on a slot: dropped, nothing moves.
    post(run, {"type": "NAVIGATE", "payload": {"path": "x"}})
    events = wait_events(run, lambda ev: bool(trace.messages(ev, "in", "NAVIGATE")))
    [navigate] = trace.messages(events, "in", "NAVIGATE")
    assert navigate["dropped"] == transport.NOT_HANDLED and "/apps/run" not in run.page.url


# ---- the handshake (rows 9, 11, 16) ----------------------------------------------------------

def test_the_first_init_goes_at_mount_and_only_the_first_hello_speeds_one_up(host: Any, make_block: Any) -> None:
    run = host(make_block(behaviour={"ready": False}), timings=FAST)
    wait_received(run, "BLOCK_INIT")
    post(run, {"type": "BLOCK_HELLO"}, {"type": "BLOCK_HELLO"})
    events = wait_events(run, lambda ev: len(trace.lifecycle(ev, "hello-ignored")) == 2)
    inits = trace.messages(events, "out", "BLOCK_INIT")
    [load] = trace.lifecycle(events, "iframe-load")
    assert inits[0]["why"] == "mount" and inits[0]["t"] < load["t"]
    assert [e["why"] for e in inits].count("hello") == 1
    assert len(trace.lifecycle(events, "hello-ignored")) == 2


def test_a_repeated_block_ready_is_ignored_and_the_trace_says_why(host: Any, make_block: Any) -> None:
    # Issue 37 row 5: "ready-again" was an orange line that no page explained. The platform's host
    # leaves 'ready' alone on a repeat (IframeHost.tsx: BLOCK_READY only moves on from 'loading').
    run = host(make_block(behaviour={"ready": False}), timings=FAST)
    wait_received(run, "BLOCK_INIT")
    post(run, {"type": "BLOCK_READY", "payload": {"height": 200}})
    run.page.wait_for_function("() => window.__blockkit?.outcome === 'ready'", timeout=WAIT_MS)
    height = run.iframe_height()
    post(run, {"type": "BLOCK_READY", "payload": {"height": 500}}, {"type": "BLOCK_READY", "payload": {}})
    events = wait_events(run, lambda ev: len(trace.lifecycle(ev, "ready-again")) == 2)
    again = trace.lifecycle(events, "ready-again")
    assert all("ignored, as the platform's host ignores it" in e["reason"] and "harmless" in e["reason"] for e in again)
    assert run.page.evaluate("() => window.__blockkit.outcome") == "ready"
    assert run.iframe_height() == pytest.approx(height, abs=1)  # nor is the repeat's height


# ---- BLOCK_ERROR fatal (rows 13, 15) -------------------------------------------------------

def test_a_fatal_error_on_a_page_shows_the_card_and_remounts_twice(host: Any, make_block: Any) -> None:
    fatal = {"type": "BLOCK_ERROR", "payload": {"message": "no WebGL", "fatal": True}}
    run = host(make_block(behaviour={"afterReady": [fatal]}), timings=FAST)
    # During the first backoff: the card is up, the frame is gone.
    run.page.wait_for_function(
        "() => document.querySelector('#failure-retrying').textContent.includes('attempt 1 of 2')", timeout=WAIT_MS)
    assert run.page.query_selector("#block-frame") is None
    assert "failed to load" in run.page.inner_text("#failure-card")
    assert "no WebGL" in run.page.inner_text("#failure-card")
    run.wait_outcome("failed", timeout_ms=WAIT_MS)
    events = run.events()
    assert len(trace.lifecycle(events, "mount")) == 3
    assert len(trace.lifecycle(events, "fatal-error")) == 3
    assert [(e["delayMs"], e["reason"]) for e in trace.lifecycle(events, "retry-scheduled")] == [
        (pytest.approx(400), "fatal"), (pytest.approx(1000), "fatal")]
    # Each retry was a fresh frame: the block went through its handshake on each.
    assert len(trace.messages(events, "in", "BLOCK_READY")) == 3
    assert "retried 2 times" in run.page.inner_text("#failure-card")
    [card] = trace.lifecycle(events, "failure-card")
    assert card["reason"] == "fatal" and card["attempts"] == 3


def test_a_fatal_error_before_ready_ends_the_mount_at_once(host: Any, make_block: Any) -> None:
    run = host(make_block(behaviour={"ready": False}))
    wait_received(run, "BLOCK_INIT")
    post(run, {"type": "BLOCK_ERROR", "payload": {"message": "boot failed", "fatal": True}})
    run.page.wait_for_selector("#failure-card", state="visible", timeout=3000)
    events = run.events()
    [retry] = trace.lifecycle(events, "retry-scheduled")
    assert retry["reason"] == "fatal" and not trace.lifecycle(events, "give-up")


def test_a_non_fatal_error_changes_nothing(host: Any, make_block: Any) -> None:
    run = host(make_block(behaviour={"afterReady": [{"type": "BLOCK_ERROR", "payload": {"message": "meh"}}]}))
    run.wait_outcome("ready")
    events = wait_events(run, lambda ev: bool(trace.messages(ev, "in", "BLOCK_ERROR")))
    assert run.page.evaluate("() => window.__blockkit.outcome") == "ready"
    assert not trace.lifecycle(events, "fatal-error")


def test_a_fatal_error_collapses_a_slot(host: Any, make_block: Any) -> None:
    fatal = {"type": "BLOCK_ERROR", "payload": {"message": "x", "fatal": True}}
    run = host(make_block(behaviour={"afterReady": [fatal]}), surface="model.below_images")
    run.page.wait_for_function("() => window.__blockkit?.outcome === 'collapsed'", timeout=WAIT_MS)
    assert not run.page.is_visible(".slot")
    assert "BLOCK_ERROR {fatal: true}" in run.page.inner_text("#collapsed-note")
    assert [e["reason"] for e in trace.lifecycle(run.events(), "collapse")] == ["fatal"]


# ---- navigation (rows 29, 60, 22) ------------------------------------------------------------

def test_navigate_moves_the_host_url_and_the_block_hears_route_changed(host: Any, make_block: Any) -> None:
    run = host(make_block())
    run.wait_outcome("ready")
    # The route is told at ready too.
    assert [m["payload"] for m in wait_received(run, "ROUTE_CHANGED")] == [{"subPath": ""}]
    post(run, {"type": "NAVIGATE", "payload": {"path": "/gallery/item 1"}})
    routes = wait_received(run, "ROUTE_CHANGED", 2)
    assert routes[-1]["payload"] == {"subPath": "gallery/item 1"}
    assert run.page.evaluate("location.pathname") == "/apps/run/scripted-block/gallery/item%201"
    assert run.page.inner_text("#page-path") == "/apps/run/scripted-block/gallery/item 1"
    # Sanitized: no way out of the app's page.
    post(run, {"type": "NAVIGATE", "payload": {"path": "../admin"}},
         {"type": "NAVIGATE", "payload": {"path": "https://evil.example/"}},
         {"type": "NAVIGATE", "payload": {"path": 5}})
    events = wait_events(run, lambda ev: len(trace.lifecycle(ev, "navigate-ignored")) == 3)
    assert len(trace.lifecycle(events, "navigate-ignored")) == 3
    assert run.page.evaluate("location.pathname") == "/apps/run/scripted-block/gallery/item%201"
    # Back: the block hears the root again.
    run.page.go_back()
    assert wait_received(run, "ROUTE_CHANGED", 3)[-1]["payload"] == {"subPath": ""}
    run.page.go_forward()
    wait_received(run, "ROUTE_CHANGED", 4)
    # A reload lands on the sub-path, and the block's BLOCK_INIT says so.
    run.page.reload()
    run.page.wait_for_function("() => window.__blockkit && window.__blockkit.outcome === 'ready'", timeout=WAIT_MS)
    # The host posts BLOCK_INIT again while it has no BLOCK_READY (a loaded machine can cross them): every
    # copy the block got says the sub-path.
    inits = wait_received(run, "BLOCK_INIT")
    assert [init["payload"]["context"]["subPath"] for init in inits] == ["gallery/item 1"] * len(inits)
    assert wait_received(run, "ROUTE_CHANGED")[0]["payload"] == {"subPath": "gallery/item 1"}


def test_reload_block_suspends_the_old_frame(host: Any, make_block: Any) -> None:
    run = host(make_block())
    run.wait_outcome("ready")
    run.page.click("#reload")
    run.page.wait_for_function("() => window.__blockkit?.attempt === 1 && window.__blockkit?.outcome === 'ready'",
                               timeout=WAIT_MS)
    events = run.events()
    [suspend] = trace.messages(events, "out", "SUSPEND")
    mounts = trace.lifecycle(events, "mount")
    assert suspend["why"] == "unmount" and mounts[0]["t"] < suspend["t"] <= mounts[1]["t"]


# ---- the frame and BLOCK_INIT (rows 3, 7, 18, 19, 23) -----------------------------------------

def test_the_page_frame_fills_the_stage_and_sends_no_referrer(host: Any, make_block: Any) -> None:
    run = host(make_block(iframe={"minHeight": 130, "maxHeight": 470}))
    run.wait_outcome("ready")
    sizes = run.page.evaluate(
        """() => { const f = document.querySelector('#block-frame');
                   return {frame: f.getBoundingClientRect().height,
                           host: document.querySelector('#frame-host').getBoundingClientRect().height,
                           min: f.style.minHeight, max: f.style.maxHeight}; }"""
    )
    assert sizes["min"] == sizes["max"] == ""
    assert sizes["frame"] == pytest.approx(sizes["host"], abs=2) and sizes["frame"] > 470
    assert run.frame.evaluate("document.referrer") == ""


def test_a_slot_init_has_the_platforms_context(host: Any, make_block: Any) -> None:
    run = host(make_block(), surface="model.below_images")
    run.wait_outcome("ready")
    [init] = wait_received(run, "BLOCK_INIT")
    payload = init["payload"]
    assert payload["blockInstanceId"] == "mbi_dev_scripted-block"
    assert payload["domain"] is None and isinstance(payload["maxBrowsingLevel"], int)
    context = payload["context"]
    assert (context["theme"], context["showcaseImages"]) == ("dark", [])
    assert context["checkpoint"]["versionId"] == context["modelVersionId"]
    assert "viewerUserId" not in context

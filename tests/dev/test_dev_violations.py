"""Each kind of contract violation, caught in real Chromium from a real block."""

from __future__ import annotations

import json
from typing import Any

import pytest

from blockkit.dev import trace
from blockkit.dev.timings import PLATFORM_TIMINGS

pytestmark = pytest.mark.browser

# Half-length timings: an unanswered request is declared so after 500 ms.
TIMINGS = PLATFORM_TIMINGS.scaled(0.5)
SETTLE_MS = TIMINGS.request_reply_timeout_ms + 400

CASES = {
    "envelope": (["BLOCK_READY"], {"envelope"}),
    "json-string": (['{"type":"RESIZE_IFRAME","payload":{"height":10}}'], {"envelope"}),
    "unknown-type": ([{"type": "FETCH_SECRETS", "payload": {}}], {"unknown-type"}),
    "payload": ([{"type": "RESIZE_IFRAME", "payload": {"height": "tall"}}], {"payload"}),
    "undeclared-scope": (
        [{"type": "APP_STORAGE_SET", "payload": {"requestId": "s1", "key": "k", "value": 1}}],
        {"undeclared-scope"},
    ),
    "unanswered-request": ([{"type": "FETCH_SECRETS", "payload": {"requestId": "q1"}}], {"unknown-type", "unanswered-request"}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_violation_kind_is_detected_and_explained(host: Any, make_block: Any, case: str) -> None:
    messages, expected = CASES[case]
    run = host(make_block(manifest={"scopes": []}, behaviour={"afterReady": messages}), timings=TIMINGS)
    run.wait_outcome("ready")
    events = run.settle(SETTLE_MS)
    found = trace.violations(events)
    assert {v["violation"] for v in found} == expected
    assert all(v["explanation"] for v in found)
    # The live panel lists the same violations.
    assert run.page.locator("#violation-list li").count() == len(found)
    assert run.page.locator("#violation-count").inner_text() == str(len(found))


def test_an_undeclared_scope_still_gets_an_error_reply_so_the_block_does_not_hang(host: Any, make_block: Any) -> None:
    save = {"type": "APP_STORAGE_SET", "payload": {"requestId": "s1", "key": "k", "value": 1}}
    run = host(make_block(manifest={"scopes": ["apps:storage:read"]}, behaviour={"afterReady": [save]}), timings=TIMINGS)
    run.wait_outcome("ready")
    events = run.settle(SETTLE_MS)
    assert [v["violation"] for v in trace.violations(events)] == ["undeclared-scope"]
    [reply] = trace.messages(events, "out", "APP_STORAGE_SET_RESULT")
    # The platform's sentence (was {ok: false, error: "SCOPE_NOT_DECLARED: ..."}).
    assert reply["data"]["payload"] == {"requestId": "s1", "ok": False, "error": "block lacks apps:storage:write scope"}


def test_a_well_behaved_block_using_storage_has_no_violations(host: Any, make_block: Any) -> None:
    calls = [
        {"type": "APP_STORAGE_SET", "payload": {"requestId": "s1", "key": "k", "value": {"n": 1}}},
        {"type": "APP_STORAGE_GET", "payload": {"requestId": "s2", "key": "k"}},
        {"type": "REQUEST_TOKEN", "payload": {"requestId": "t1"}},
    ]
    run = host(make_block(manifest={"scopes": ["apps:storage:read", "apps:storage:write"]}, behaviour={"afterReady": calls}), timings=TIMINGS)
    run.wait_outcome("ready")
    events = run.settle(SETTLE_MS)
    assert trace.violations(events) == []
    [got] = trace.messages(events, "out", "APP_STORAGE_GET_RESULT")
    assert got["data"]["payload"] == {"requestId": "s2", "value": {"n": 1}}
    assert run.page.is_hidden("#violations")


def test_a_message_over_the_host_apis_limit_is_shown_not_traced_and_not_awaited(host: Any, make_block: Any) -> None:
    from blockkit.dev.host_app import API_BODY_LIMIT

    huge = {"type": "FETCH_SECRETS", "payload": {"requestId": "big", "blob": "a" * API_BODY_LIMIT}}
    run = host(make_block(behaviour={"afterReady": [huge, {"type": "FETCH_SECRETS", "payload": {}}]}), timings=TIMINGS)
    run.wait_outcome("ready")
    events = run.settle(SETTLE_MS)
    # The small message after it is still judged; the huge one is neither judged nor awaited.
    assert [(v["violation"], v["type"]) for v in trace.violations(events)] == [("unknown-type", "FETCH_SECRETS")]
    assert not any("blob" in json.dumps(e) for e in events)
    assert run.page.locator("#trace-list li", has_text="message-not-traced").count() == 1

"""Failed brokered calls: which are listed, and which fail ``blockkit dev --check``."""

from __future__ import annotations

from typing import Any

import pytest

from blockkit.dev.failures import PLATFORM, REQUEST, VIEWER, cause_of, failed_calls, failure_words
from blockkit.dev.platform import http_call


def call(type_: str, ok: bool, **result: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"kind": "call", "type": type_, "ok": ok, "seq": 7,
                             "result": {"requestId": "r1", **result}}
    if not ok:
        event["error"] = result.get("error")
    return event


def test_only_failed_calls_are_listed_and_a_cancelled_dialog_is_none() -> None:
    events = [
        call("GET_VIEWER", True, viewer=None),
        call("PURCHASE_GOOD", False, error="CANCELED"),
        call("PURCHASE_GOOD", False, error="UNKNOWN_GOOD", message="no good 'x'"),
        {"kind": "message", "type": "BLOCK_READY"},
    ]
    [listed] = failed_calls(events)
    assert listed == {"type": "PURCHASE_GOOD", "via": "bridge", "error": "UNKNOWN_GOOD", "status": None,
                      "message": "no good 'x'", "requestId": "r1", "cause": REQUEST, "failsCheck": True, "seq": 7}


@pytest.mark.parametrize("error, status, cause", [
    ("SIGN_IN_REQUIRED", None, VIEWER),
    ("insufficient_buzz", 402, VIEWER),
    ("daily_ceiling", 429, VIEWER),
    ("already_finished", 409, VIEWER),
    ("budget_exceeded", 403, REQUEST),
    ("SCOPE_NOT_DECLARED: GET_BUZZ_BALANCE needs buzz:read:self", None, REQUEST),
    ("bad_image", 400, REQUEST),
    ("PLATFORM_ERROR", 500, PLATFORM),
    ("workflow_failed", None, PLATFORM),
    ("HTTP 503", 503, PLATFORM),
    ("HTTP 401", 401, REQUEST),
])
def test_each_failure_has_a_cause(error: str, status: int | None, cause: str) -> None:
    assert cause_of(error, status) == cause
    [listed] = failed_calls([call("X", False, error=error, status=status)])
    assert listed["cause"] == cause and listed["failsCheck"] is (cause != VIEWER)


def test_a_workflow_that_failed_is_a_platform_failure_though_the_reply_went_through() -> None:
    event = {"kind": "call", "type": "POLL_WORKFLOW", "ok": False, "error": "workflow_failed",
             "message": "workflow w1 is failed", "result": {"requestId": "p", "ok": True, "workflow": {"id": "w1"}}}
    [listed] = failed_calls([event])
    assert listed["cause"] == PLATFORM and listed["message"] == "workflow w1 is failed"


def test_a_catalogue_call_of_the_frame_becomes_a_call_event() -> None:
    scope = {"method": "GET", "path": "/api/v1/blocks/models", "query_string": b"limit=x"}
    assert http_call(scope, 200, b"") == {"via": "http", "type": "GET /api/v1/blocks/models", "ok": True,
                                          "status": 200, "query": "limit=x"}
    failed = http_call(scope, 400, b'{"error": "limit must be a number"}')
    assert failed["ok"] is False and failed["error"] == "HTTP 400" and failed["message"] == "limit must be a number"
    assert http_call(scope, 403, b'"a plain JSON string"')["message"] == "a plain JSON string"
    assert http_call(scope, None, b"")["status"] == 500
    [listed] = failed_calls([{"kind": "call", **failed}])
    assert listed["via"] == "http" and listed["status"] == 400 and listed["cause"] == REQUEST


def test_a_call_refused_for_want_of_consent_fails_the_check_unless_the_block_asked() -> None:
    refused = {"kind": "call", "type": "GET_VIEWER", "ok": False, "error": "consent_required", "seq": 3,
               "consentScopes": ["user:read:self"], "message": "block lacks user:read:self scope: not granted",
               "result": {"requestId": "r1", "error": "block lacks user:read:self scope"}}
    [never_asked] = failed_calls([refused])
    assert never_asked["cause"] == "consent" and never_asked["failsCheck"] is True
    assert never_asked["consentScopes"] == ["user:read:self"]
    asked = {"kind": "message", "dir": "in", "type": "REQUEST_CONSENT", "data": {"type": "REQUEST_CONSENT"}}
    [coped] = failed_calls([refused, asked])
    assert coped["cause"] == VIEWER and coped["failsCheck"] is False


@pytest.mark.parametrize("call, words", [
    # The block's own HTTP call: its error already reads "HTTP 409", so the status is not said again.
    ({"error": "HTTP 409", "status": 409, "message": "already_owned"}, "HTTP 409: already_owned"),
    ({"error": "HTTP 503", "status": 503, "message": None}, "HTTP 503"),
    # A bridge call's code says nothing of the status: it is added once.
    ({"error": "UNKNOWN_GOOD", "status": 404, "message": "no good 'x'"}, "UNKNOWN_GOOD (HTTP 404): no good 'x'"),
    ({"error": "UNKNOWN_GOOD", "status": None, "message": "no good 'x'"}, "UNKNOWN_GOOD: no good 'x'"),
    # A message that only repeats what was said is left out.
    ({"error": "HTTP 500", "status": 500, "message": "HTTP 500"}, "HTTP 500"),
    ({"error": "already_owned", "status": 409, "message": "Already_Owned"}, "already_owned (HTTP 409)"),
    ({"error": None, "status": 409, "message": "you own it"}, "HTTP 409: you own it"),
])
def test_a_failure_says_each_fact_once(call: dict[str, Any], words: str) -> None:
    assert failure_words(call) == words


def test_an_http_call_that_failed_is_said_once_in_the_verdict_line() -> None:
    scope = {"method": "POST", "path": "/api/v1/blocks/goods/purchase", "query_string": b""}
    [listed] = failed_calls([{"kind": "call", "seq": 3,
                              **http_call(scope, 409, b'{"error": "already_owned", "message": "you own it"}')}])
    assert failure_words(listed) == "HTTP 409: you own it"


def test_a_purchase_over_http_is_told_once_and_marked_on_each_row(tmp_path: Any) -> None:
    """Security review 2, S17: a block's token alone buys a good over REST, with no dialog. blockkit dev
    says so once in the terminal and on each such row of the trace; a failed purchase, another route and
    a purchase through the bridge (which never reaches this hook) say nothing."""
    import json

    from blockkit.dev.manifest import load_dev_manifest
    from blockkit.dev.platform import PURCHASE_WITHOUT_DIALOG, DevPlatform
    from blockkit.dev.surface import choose_surface

    block = tmp_path / "b"
    block.mkdir()
    (block / "block.manifest.json").write_text(json.dumps({
        "blockId": "b", "version": "1.0.0", "name": "b", "contentRating": "g", "scopes": [],
        "iframe": {"minHeight": 120, "maxHeight": 480, "resizable": True, "sandbox": "allow-scripts"},
        "page": {"path": "/", "title": "b", "buzzBudgetPerGen": 50}}))
    (block / "index.html").write_text("<!doctype html>")
    manifest = load_dev_manifest(block)
    surface, _ = choose_surface(manifest, None)
    calls: list[dict[str, Any]] = []
    notes: list[str] = []
    platform = DevPlatform(manifest, surface, on_call=calls.append, on_note=notes.append)
    purchase = {"method": "POST", "path": "/api/v1/blocks/goods/purchase", "query_string": b""}
    other = {"method": "POST", "path": "/api/v1/blocks/app-storage/set", "query_string": b""}
    for scope, status in ((purchase, 200), (purchase, 200), (purchase, 402), (other, 200)):
        platform._http_call(http_call(scope, status, b'{"error": "short"}' if status >= 400 else b"{}"))
    assert notes == [PURCHASE_WITHOUT_DIALOG]
    assert [call.get("note") for call in calls] == [PURCHASE_WITHOUT_DIALOG, PURCHASE_WITHOUT_DIALOG, None, None]
    assert "no confirmation dialog" in PURCHASE_WITHOUT_DIALOG and "PURCHASE_GOOD" in PURCHASE_WITHOUT_DIALOG

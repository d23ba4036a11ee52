from __future__ import annotations

import json

import pytest

from blockkit.dev.check import (
    COLLAPSED,
    FAILED,
    READY,
    TIMED_OUT,
    CheckResult,
    ConsoleError,
)
from blockkit.dev.verdict import exit_code, render_json, render_text, verdict_code


def result(outcome: str = READY, **changes: object) -> CheckResult:
    base = CheckResult(
        block_id="b",
        surface="page",
        outcome=outcome,
        handshake_ms=12.3 if outcome == READY else None,
        attempts=1 if outcome != FAILED else 3,
        sent_types=["BLOCK_HELLO", "BLOCK_READY"] if outcome == READY else [],
        trace_path="/tmp/t.jsonl",
    )
    for name, value in changes.items():
        setattr(base, name, value)
    return base


VIOLATION = {"kind": "envelope", "type": None, "explanation": "the message is a string"}
CONSOLE = ConsoleError("block", "boom", "http://127.0.0.1:1/x.js")


@pytest.mark.parametrize(
    "outcome, changes, code, first",
    [
        (READY, {}, "handshake-completed", "ok: handshake completed in 12 ms (b on page)"),
        (FAILED, {}, "never-sent-block-ready", "fail: never sent BLOCK_READY (b on page): the page host gave up after 3 attempts"),
        (COLLAPSED, {"sent_types": ["BLOCK_HELLO"]}, "never-sent-block-ready", "fail: never sent BLOCK_READY (b on page): the slot gave up"),
        (TIMED_OUT, {}, "never-sent-block-ready", "fail: never sent BLOCK_READY (b on page): the host page never reached"),
        (READY, {"violations": [VIOLATION]}, "contract-violations", "fail: contract violations (1) (b on page); handshake completed in 12 ms"),
        (READY, {"console_errors": [CONSOLE]}, "console-errors", "fail: console errors (1) (b on page); handshake completed in 12 ms"),
    ],
)
def test_one_verdict_line_for_every_outcome(outcome: str, changes: dict[str, object], code: str, first: str) -> None:
    checked = result(outcome, **changes)
    assert verdict_code(checked) == code
    assert exit_code(checked) == (0 if code == "handshake-completed" else 1)
    text = render_text(checked)
    assert text.splitlines()[0].startswith(first)
    document = json.loads(render_json(checked))
    assert document["verdict"] == code and document["ok"] is (code == "handshake-completed")


def test_never_ready_wins_and_the_rest_is_still_listed() -> None:
    checked = result(FAILED, violations=[VIOLATION], console_errors=[CONSOLE])
    text = render_text(checked)
    assert verdict_code(checked) == "never-sent-block-ready"
    assert "  - envelope: the message is a string" in text and "  - block: boom" in text
    assert "the block sent no message at all" in text.splitlines()[0]


def test_a_handshake_that_needed_a_page_retry_says_so() -> None:
    checked = result(READY, attempts=2, handshake_ms=12400.0)
    first = render_text(checked).splitlines()[0]
    assert first.startswith("ok: handshake completed in 12400 ms, on attempt 2: the first attempt got no BLOCK_READY")
    assert "on attempt" not in render_text(result(READY)).splitlines()[0]


FAILED_REQUEST = {"type": "PURCHASE_GOOD", "via": "bridge", "error": "UNKNOWN_GOOD", "status": None,
                  "message": "no good 'x'", "requestId": "r1", "cause": "request", "failsCheck": True, "seq": 9}
REFUSED_VIEWER = {"type": "GET_BUZZ_BALANCE", "via": "bridge", "error": "SIGN_IN_REQUIRED", "status": None,
                  "message": "this needs a signed-in viewer", "requestId": "r2", "cause": "viewer",
                  "failsCheck": False, "seq": 10}


def test_a_failed_brokered_call_fails_the_check_and_is_listed() -> None:
    checked = result(READY, failed_calls=[FAILED_REQUEST, REFUSED_VIEWER])
    assert verdict_code(checked) == "failed-calls" and exit_code(checked) == 1
    lines = render_text(checked).splitlines()
    assert lines[0].startswith("fail: failed brokered calls (1) (b on page); handshake completed in 12 ms")
    assert "  - PURCHASE_GOOD: UNKNOWN_GOOD: no good 'x' [the block's request]" in lines
    assert any(line.startswith("  - GET_BUZZ_BALANCE: SIGN_IN_REQUIRED") and "does not fail the check" in line
               for line in lines)
    document = json.loads(render_json(checked))
    assert document["ok"] is False and document["verdict"] == "failed-calls"
    assert document["failedCalls"] == [FAILED_REQUEST, REFUSED_VIEWER]


def test_a_refusal_for_the_viewers_state_is_reported_but_passes() -> None:
    checked = result(READY, failed_calls=[REFUSED_VIEWER])
    assert verdict_code(checked) == "handshake-completed" and exit_code(checked) == 0
    text = render_text(checked)
    assert text.startswith("ok: handshake completed") and "failed brokered calls (1):" in text
    document = json.loads(render_json(checked))
    assert document["ok"] is True and [c["error"] for c in document["failedCalls"]] == ["SIGN_IN_REQUIRED"]


def test_the_json_keeps_every_version_1_field() -> None:
    document = json.loads(render_json(result(READY)))
    assert list(document)[:13] == ["version", "ok", "verdict", "blockId", "surface", "outcome", "handshakeMs",
                                   "attempts", "sentTypes", "violations", "consoleErrors", "trace", "failedCalls"]
    assert document["version"] == 1 and document["failedCalls"] == []


def test_console_errors_outrank_failed_calls() -> None:
    checked = result(READY, console_errors=[CONSOLE], failed_calls=[FAILED_REQUEST])
    assert verdict_code(checked) == "console-errors"
    assert "failed brokered calls (1):" in render_text(checked)


def test_a_repeated_error_is_listed_once_with_its_count() -> None:
    # Issue 21: a page that throws the same error on each of its three attempts listed it three times.
    uncaught = ConsoleError("block", "uncaught: Error: no config", None)
    other = ConsoleError("host", "boom", None)
    checked = result(FAILED, console_errors=[uncaught, other, uncaught, uncaught],
                     violations=[VIOLATION, VIOLATION])
    lines = render_text(checked).splitlines()
    assert "console errors (4):" in lines
    assert lines.count("  - block: uncaught: Error: no config (3 times)") == 1
    assert "  - host: boom" in lines
    assert sum("uncaught" in line for line in lines) == 1
    assert "  - envelope: the message is a string (2 times)" in lines
    # JSON keeps every error, as its contract promises.
    assert len(json.loads(render_json(checked))["consoleErrors"]) == 4


def test_a_block_that_needs_consent_and_never_asks_gets_a_verdict_that_says_so() -> None:
    consent_call = {"type": "GET_VIEWER", "via": "bridge", "error": "consent_required", "status": None,
                    "message": "block lacks user:read:self scope: the viewer has not granted user:read:self",
                    "requestId": "r1", "cause": "consent", "failsCheck": True, "seq": 4,
                    "consentScopes": ["user:read:self"]}
    failed = result(failed_calls=[consent_call])
    assert verdict_code(failed) == "needs-consent" and exit_code(failed) == 1
    text = render_text(failed)
    first, advice = text.splitlines()[:2]
    assert first == ("fail: the block needs the viewer's consent to user:read:self and never asks for it"
                     " (b on page); handshake completed in 12 ms")
    assert "REQUEST_CONSENT" in advice and "TOKEN_REFRESH" in advice
    assert "[a scope the viewer has not granted; the block never sent REQUEST_CONSENT]" in text
    assert json.loads(render_json(failed))["verdict"] == "needs-consent"
    # Another failing call beside it: the general verdict.
    other = {**consent_call, "cause": "request", "error": "BAD_REQUEST", "type": "SAVE_IMAGE"}
    assert verdict_code(result(failed_calls=[consent_call, other])) == "failed-calls"


def test_a_failed_http_call_names_its_status_once() -> None:
    http = {"type": "POST /api/v1/blocks/goods/purchase", "via": "http", "error": "HTTP 409", "status": 409,
            "message": "you own it", "requestId": None, "cause": "request", "failsCheck": True, "seq": 4}
    lines = render_text(result(READY, failed_calls=[http])).splitlines()
    assert "  - POST /api/v1/blocks/goods/purchase: HTTP 409: you own it [the block's request]" in lines
    assert not any("(HTTP 409)" in line for line in lines)

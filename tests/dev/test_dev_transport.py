"""The platform host's transport rules as data, and how a drop becomes a violation, a trace row
and a line of the ``dev --check`` verdict (no browser: the host API and the verdict directly)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blockkit.dev import contract, trace, transport
from blockkit.dev.check import CheckResult
from blockkit.dev.session import DevOptions, DevSession
from blockkit.dev.verdict import render_text


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dev"


def fetch(url: str, body: Any, key: str) -> tuple[int, dict[str, str], bytes]:
    """POST ``body`` as JSON the way the host page does: from its own origin, with the run's key."""
    import urllib.error
    import urllib.parse
    import urllib.request

    parts = urllib.parse.urlsplit(url)
    headers = {"content-type": "application/json", "origin": f"{parts.scheme}://{parts.netloc}",
               "x-blockkit-dev-key": key}
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


@pytest.mark.parametrize(
    "declared, effective",
    [
        ("allow-scripts allow-forms", "allow-scripts allow-forms"),
        ("allow-forms", "allow-scripts allow-forms"),
        ("", "allow-scripts"),
        ("allow-forms  allow-scripts allow-popups", "allow-scripts allow-forms allow-popups"),
        (" allow-scripts\tallow-modals ", "allow-scripts allow-modals"),
        # The platform's allowlist never holds allow-same-origin (the spec: never beside allow-scripts).
        ("allow-scripts allow-same-origin", "allow-scripts"),
        ("allow-top-navigation allow-downloads allow-downloads", "allow-scripts allow-downloads"),
    ],
)
def test_the_sandbox_is_the_manifests_tokens_the_platform_allows(declared: str, effective: str) -> None:
    assert transport.effective_sandbox(declared) == effective


def test_the_surfaces_handle_what_the_platforms_hosts_handle() -> None:
    page, slot = set(transport.handled_types("page")), set(transport.handled_types("slot"))
    assert {"BLOCK_READY", "BLOCK_HELLO", "BLOCK_ERROR", "NAVIGATE", "GET_VIEWER"} <= page
    assert not {"RESIZE_IFRAME", "TRACK_EVENT"} & page
    assert "RESIZE_IFRAME" in slot and not {"NAVIGATE", "GET_VIEWER", "TRACK_EVENT"} & slot
    requests = transport.request_rules()
    assert "REQUEST_TOKEN" not in requests  # answered with a TOKEN_REFRESH push without an id
    assert requests["OPEN_CHECKPOINT_PICKER"] == {"nonEmptyId": True}
    assert requests["APP_STORAGE_GET"] == {"nonEmptyId": False}
    before = transport.before_ready_rules("page")
    assert before["OPEN_BUZZ_PURCHASE"]["payload"] == {"purchased": False}
    assert before["OPEN_IMAGE_UPLOAD"]["payload"] == {}
    assert {before[t]["action"] for t in ("NAVIGATE", "REQUEST_CONSENT", "REQUEST_SIGN_IN")} == {"drop"}
    assert "APP_STORAGE_GET" not in before and "GET_BUZZ_BALANCE" not in before


@pytest.mark.parametrize(
    "reason, data, detail, words",
    [
        (transport.RATE_LIMITED, {"type": "GET_BUZZ_BALANCE", "payload": {"requestId": "b"}}, None,
         ["30 messages a second", "BLOCK_READY and RESIZE_IFRAME included"]),
        (transport.DUPLICATE_REQUEST_ID, {"type": "APP_STORAGE_GET", "payload": {"requestId": "r1"}},
         {"requestId": "r1"}, ["'r1'", "within 5 s", "fresh id"]),
        (transport.NO_REQUEST_ID, {"type": "APP_STORAGE_GET", "payload": {"key": "k"}}, None,
         ["no string `payload.requestId`", "no reply"]),
        (transport.NO_REQUEST_ID, {"type": "APP_STORAGE_GET", "requestId": "r", "payload": {}}, None,
         ["at the top level"]),
        (transport.NO_REQUEST_ID, {"type": "APP_STORAGE_GET", "payload": [1]}, None, ["not an object"]),
        (transport.NO_REQUEST_ID, {"type": "OPEN_CHECKPOINT_PICKER", "payload": {"requestId": ""}}, None,
         ["empty"]),
        (transport.BEFORE_READY, {"type": "NAVIGATE", "payload": {"path": "a"}}, None,
         ["before BLOCK_READY", "drops it"]),
        (transport.BEFORE_READY, {"type": "OPEN_BUZZ_PURCHASE", "payload": {"requestId": "p"}},
         {"reply": "BUZZ_PURCHASE_RESULT", "payload": {"purchased": False}},
         ['BUZZ_PURCHASE_RESULT {"purchased": false}', "opens nothing"]),
    ],
)
def test_each_drop_reason_is_a_violation_that_says_why(
    reason: str, data: dict[str, Any], detail: dict[str, Any] | None, words: list[str]
) -> None:
    violation = contract.dropped_message(reason, data["type"], data, detail)
    assert (violation.kind, violation.message_type) == (reason, data["type"])
    for word in words:
        assert word in violation.explanation, (word, violation.explanation)


def test_a_drop_reason_the_host_does_not_know_is_refused() -> None:
    with pytest.raises(ValueError):
        contract.dropped_message("tired", "X", {})


def test_a_no_request_id_drop_is_not_also_a_missing_field() -> None:
    data = {"type": "APP_STORAGE_GET", "payload": {"key": "k"}}
    assert [v.kind for v in contract.check_inbound("object", data, ["apps:storage:read"])] == [contract.PAYLOAD]
    assert contract.check_inbound("object", data, ["apps:storage:read"], skip_fields=("requestId",)) == []


@pytest.fixture
def session(tmp_path: Path) -> Iterator[DevSession]:
    with DevSession(DevOptions(block_dir=FIXTURES / "handshake", trace_path=tmp_path / "t.jsonl")) as running:
        yield running


def dropped_event(reason: str, data: Any, t: float, **extra: Any) -> dict[str, Any]:
    return {"kind": "message", "dir": "in", "type": data.get("type"), "jsType": "object", "data": data,
            "origin": "null", "dropped": reason, "t": t, "attempt": 1, **extra}


def test_the_host_api_traces_each_drop_and_explains_it(session: DevSession) -> None:
    events = [
        dropped_event(transport.RATE_LIMITED, {"type": "GET_BUZZ_BALANCE", "payload": {"requestId": "b9"}}, 1),
        dropped_event(transport.DUPLICATE_REQUEST_ID, {"type": "GET_BUZZ_BALANCE", "payload": {"requestId": "b1"}},
                      2, detail={"requestId": "b1"}),
        dropped_event(transport.NO_REQUEST_ID, {"type": "GET_BUZZ_BALANCE", "payload": {}}, 3),
        dropped_event(transport.BEFORE_READY, {"type": "REQUEST_SIGN_IN", "payload": {}}, 4),
        # No handler: only what the contract says of it (an unknown type), no drop violation.
        dropped_event(transport.NOT_HANDLED, {"type": "FETCH_SECRETS", "payload": {}}, 5),
        dropped_event(transport.NOT_HANDLED, {"type": "TRACK_EVENT", "payload": {"eventName": "x"}}, 6),
    ]
    status, _, body = fetch(session.host_url + "api/events", key=session.dev_key, body={"events": events})
    assert status == 200
    kinds = [v["kind"] for v in json.loads(body)["violations"]]
    assert kinds == [transport.RATE_LIMITED, transport.DUPLICATE_REQUEST_ID, transport.NO_REQUEST_ID,
                     transport.BEFORE_READY, contract.UNKNOWN_TYPE]
    recorded = trace.read_jsonl(session.trace_path)
    inbound = trace.messages(recorded, "in")
    assert [e["dropped"] for e in inbound] == [e["dropped"] for e in events]
    # Each violation names the message it is about.
    seqs = {e["seq"]: e for e in inbound}
    assert all(seqs[v["causeSeq"]]["type"] == v["type"] for v in trace.violations(recorded))


def test_a_drop_with_an_unknown_reason_is_a_bad_request_and_traces_nothing(session: DevSession) -> None:
    event = dropped_event("bored", {"type": "GET_BUZZ_BALANCE", "payload": {"requestId": "b"}}, 1)
    status, _, body = fetch(session.host_url + "api/events", key=session.dev_key, body={"events": [event]})
    assert status == 400 and b"dropped must be one of" in body
    assert trace.messages(trace.read_jsonl(session.trace_path), "in") == []


def test_drops_fail_the_check_and_a_flood_reads_as_one_line() -> None:
    rate = contract.dropped_message(transport.RATE_LIMITED, "APP_STORAGE_GET", {}).as_json()
    duplicate = contract.dropped_message(transport.DUPLICATE_REQUEST_ID, "APP_STORAGE_GET", {},
                                         {"requestId": "r1"}).as_json()
    violations = [{"kind": v["kind"], "type": v["message_type"], "explanation": v["explanation"]}
                  for v in [rate] * 70 + [duplicate]]
    result = CheckResult(block_id="b", surface="page", outcome="ready", handshake_ms=12.0, attempts=1,
                         sent_types=["BLOCK_READY", "APP_STORAGE_GET"], violations=violations)
    assert not result.ok
    lines = render_text(result).splitlines()
    assert lines[0].startswith("fail: contract violations (71)")
    [flood] = [line for line in lines if line.startswith(f"  - {transport.RATE_LIMITED} APP_STORAGE_GET:")]
    assert "70" in flood.rsplit("(", 1)[-1]
    assert any(line.startswith(f"  - {transport.DUPLICATE_REQUEST_ID} APP_STORAGE_GET:") and "'r1'" in line
               for line in lines)


def _get(url: str) -> tuple[int, dict[str, str], str]:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()


def _config(session: DevSession, html: str) -> dict[str, Any]:
    """What host.js does with a page: read its sub-path, then ask POST /api/page (with the key)."""
    start = html.index('id="blockkit-boot">') + len('id="blockkit-boot">')
    boot = json.loads(html[start : html.index("</script>", start)])
    status, _, body = fetch(session.host_url + "api/page", {"subPath": boot["subPath"]}, key=session.dev_key)
    assert status == 200, body
    return json.loads(body)  # type: ignore[no-any-return]


def test_the_host_page_serves_the_apps_run_urls_a_navigate_leaves(session: DevSession) -> None:
    status, headers, html = _get(session.host_url)
    assert status == 200 and headers["x-frame-options"] == "DENY"
    root = _config(session, html)
    assert root["initPayload"]["context"]["subPath"] == ""
    assert "fragment" not in root and root["iframe"]["sandbox"] == "allow-scripts allow-forms"
    status, _, html = _get(session.host_url + "apps/run/handshake-demo/gallery/item%201/")
    assert status == 200 and _config(session, html)["initPayload"]["context"]["subPath"] == "gallery/item 1"
    status, _, html = _get(session.host_url + "apps/run/handshake-demo")
    assert status == 200 and _config(session, html)["initPayload"]["context"]["subPath"] == ""
    status, _, text = _get(session.host_url + "apps/run/another-app/x")
    assert status == 404 and "/apps/run/handshake-demo" in text

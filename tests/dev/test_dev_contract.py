from __future__ import annotations

import pytest

from blockkit.dev.contract import (
    ENVELOPE,
    PAYLOAD,
    UNANSWERED_REQUEST,
    UNDECLARED_SCOPE,
    UNKNOWN_TYPE,
    check_inbound,
    unanswered_request,
)
from blockkit.dev.protocol import BLOCK_TO_HOST, HOST_TO_BLOCK, BlockMessage
from blockkit.platform import SCOPES

_SAMPLE = {"string": "x", "number": 1, "boolean": False}


def _valid_payload(spec: BlockMessage) -> dict[str, object]:
    return {name: _SAMPLE[js] for name, js in spec.fields.items()}


def kinds(js_type: str, data: object, scopes: tuple[str, ...] = ()) -> list[str]:
    return [v.kind for v in check_inbound(js_type, data, scopes)]


@pytest.mark.parametrize("type_", sorted(BLOCK_TO_HOST))
def test_every_known_message_passes_when_well_formed_and_scoped(type_: str) -> None:
    spec = BLOCK_TO_HOST[type_]
    message = {"type": type_, "payload": _valid_payload(spec)}
    assert check_inbound("object", message, spec.scopes) == []


@pytest.mark.parametrize("type_", sorted(t for t, s in BLOCK_TO_HOST.items() if s.scopes))
def test_every_scoped_message_fails_without_its_scope(type_: str) -> None:
    spec = BLOCK_TO_HOST[type_]
    found = check_inbound("object", {"type": type_, "payload": _valid_payload(spec)}, ["user:read:self"])
    assert [v.kind for v in found] == [UNDECLARED_SCOPE]
    assert all(scope in found[0].explanation for scope in spec.scopes)


def test_storage_without_any_storage_scope_is_the_platform_example() -> None:
    message = {"type": "APP_STORAGE_SET", "payload": {"requestId": "r", "key": "k", "value": 1}}
    [violation] = check_inbound("object", message, [])
    assert violation.kind == UNDECLARED_SCOPE
    assert "apps:storage:write" in violation.explanation
    # The panel and the terminal show the type beside the explanation: it is said once.
    assert violation.one_line().count("APP_STORAGE_SET") == 1
    # A read scope lets the block read but not write.
    read = {"type": "APP_STORAGE_GET", "payload": {"requestId": "r", "key": "k"}}
    assert check_inbound("object", read, ["apps:storage:read"]) == []
    assert kinds("object", message, ("apps:storage:read",)) == [UNDECLARED_SCOPE]


@pytest.mark.parametrize(
    "js_type, data",
    [("string", "BLOCK_READY"), ("array", ["BLOCK_READY", {}]), ("null", None), ("number", 3), ("undefined", None)],
)
def test_a_message_that_is_not_an_object_breaks_the_envelope(js_type: str, data: object) -> None:
    [violation] = check_inbound(js_type, data, [])
    assert violation.kind == ENVELOPE
    assert "{type, payload}" in violation.explanation


def test_a_json_string_message_gets_a_hint() -> None:
    [violation] = check_inbound("string", '{"type": "BLOCK_READY", "payload": {"height": 1}}', [])
    assert "JSON.stringify" in violation.explanation


@pytest.mark.parametrize("data", [{"payload": {}}, {"type": 7, "payload": {}}, {"type": ""}])
def test_a_message_without_a_string_type_breaks_the_envelope(data: dict[str, object]) -> None:
    assert kinds("object", data) == [ENVELOPE]


def test_keys_outside_payload_break_the_envelope() -> None:
    found = check_inbound("object", {"type": "REQUEST_TOKEN", "requestId": "r1", "payload": {}}, [])
    assert [v.kind for v in found] == [ENVELOPE, PAYLOAD]
    assert "requestId" in found[0].explanation and "outside `payload`" in found[0].explanation


def test_a_payload_that_is_not_an_object_breaks_the_envelope() -> None:
    assert kinds("object", {"type": "BLOCK_READY", "payload": [300]}) == [ENVELOPE, PAYLOAD]


def test_a_message_without_payload_is_fine_when_nothing_is_needed() -> None:
    assert kinds("object", {"type": "BLOCK_HELLO"}) == []


def test_unknown_types_are_reported() -> None:
    [violation] = check_inbound("object", {"type": "FETCH_SECRETS", "payload": {}}, [])
    assert violation.kind == UNKNOWN_TYPE and violation.message_type == "FETCH_SECRETS"


def test_a_host_message_sent_by_the_block_is_explained() -> None:
    [violation] = check_inbound("object", {"type": "BLOCK_INIT", "payload": {}}, [])
    assert violation.kind == UNKNOWN_TYPE
    assert "host -> block" in violation.explanation


def test_a_misspelt_type_gets_a_suggestion() -> None:
    [violation] = check_inbound("object", {"type": "block_ready", "payload": {"height": 1}}, [])
    assert "did you mean BLOCK_READY" in violation.explanation


def test_a_request_without_request_id_cannot_be_matched() -> None:
    [violation] = check_inbound("object", {"type": "REQUEST_TOKEN", "payload": {}}, [])
    assert violation.kind == PAYLOAD
    assert "requestId" in violation.explanation and "cannot be matched" in violation.explanation


def test_a_wrongly_typed_height_is_a_payload_violation() -> None:
    assert kinds("object", {"type": "BLOCK_READY", "payload": {"height": "300px"}}) == [PAYLOAD]
    assert kinds("object", {"type": "RESIZE_IFRAME", "payload": {"height": True}}) == [PAYLOAD]


def test_unanswered_requests_are_explained() -> None:
    known = unanswered_request("APP_STORAGE_GET", "r9", 1000)
    assert known.kind == UNANSWERED_REQUEST
    assert "APP_STORAGE_GET_RESULT" in known.explanation and "'r9'" in known.explanation
    unknown = unanswered_request("FETCH_SECRETS", "q1", 1000)
    assert "no handler" in unknown.explanation


@pytest.mark.parametrize("type_", ["TRACK_EVENT", "BLOCK_READY", "NAVIGATE"])
def test_a_request_id_on_a_message_that_is_not_a_request_is_explained(type_: str) -> None:
    # The host page reports any message with a requestId that no reply echoed.
    violation = unanswered_request(type_, "t-1", 1000)
    assert "None" not in violation.explanation
    assert f"{type_} is not a request" in violation.explanation
    assert "no reply" in violation.explanation


def test_the_tables_agree_with_each_other_and_with_the_platform() -> None:
    for type_, spec in BLOCK_TO_HOST.items():
        assert type_ == type_.upper()
        assert type_ not in HOST_TO_BLOCK
        if spec.reply is not None:
            assert spec.reply in HOST_TO_BLOCK
            assert spec.fields.get("requestId") == "string", type_
        assert spec.scopes <= set(SCOPES), f"{type_} names a scope the platform does not know"

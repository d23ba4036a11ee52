from __future__ import annotations

from typing import Any

from blockkit.dev.bridge import (
    NOT_SIMULATED_ERROR,
    SCOPE_ERROR,
    STORAGE_VALUE_LIMIT_BYTES,
    Bridge,
)

TOKEN = {"raw": "x.y.z", "scopes": [], "expiresAt": "2030-01-01T00:00:00.000Z", "kind": "block"}


def bridge(*scopes: str) -> Bridge:
    return Bridge(declared_scopes=frozenset(scopes), mint_token=lambda: dict(TOKEN))


def ask(b: Bridge, type_: str, **payload: Any) -> dict[str, Any]:
    reply = b.reply_to({"type": type_, "payload": payload})
    assert reply is not None
    return reply


def test_request_token_is_answered_with_the_same_request_id() -> None:
    reply = ask(bridge(), "REQUEST_TOKEN", requestId="abc")
    assert reply == {"type": "TOKEN_REFRESH_RESPONSE", "payload": {"requestId": "abc", "token": TOKEN}}


def test_storage_round_trip_when_the_scopes_are_declared() -> None:
    b = bridge("apps:storage:read", "apps:storage:write")
    assert ask(b, "APP_STORAGE_GET", requestId="1", key="k")["payload"] == {"requestId": "1", "value": None}
    set_reply = ask(b, "APP_STORAGE_SET", requestId="2", key="k", value={"n": 1})
    assert set_reply["type"] == "APP_STORAGE_SET_RESULT"
    assert set_reply["payload"] == {"requestId": "2", "ok": True, "sizeBytes": len('{"n":1}')}
    assert ask(b, "APP_STORAGE_GET", requestId="3", key="k")["payload"]["value"] == {"n": 1}
    listed = ask(b, "APP_STORAGE_LIST", requestId="4")["payload"]["keys"]
    assert [row["key"] for row in listed] == ["k"]
    assert ask(b, "APP_STORAGE_QUOTA", requestId="5")["payload"]["rowCount"] == 1
    assert ask(b, "APP_STORAGE_DELETE", requestId="6", key="k")["payload"]["deleted"] is True
    assert ask(b, "APP_STORAGE_DELETE", requestId="7", key="k")["payload"]["deleted"] is False


def test_storage_lists_in_pages() -> None:
    b = bridge("apps:storage:write")
    for n in range(5):
        ask(b, "APP_STORAGE_SET", requestId=str(n), key=f"k{n}", value=n)
    first = ask(b, "APP_STORAGE_LIST", requestId="a", limit=2)["payload"]
    assert [r["key"] for r in first["keys"]] == ["k0", "k1"] and first["nextCursor"] == "k1"
    second = ask(b, "APP_STORAGE_LIST", requestId="b", limit=2, cursor="k1")["payload"]
    assert [r["key"] for r in second["keys"]] == ["k2", "k3"]


def test_a_value_over_the_cap_is_refused() -> None:
    b = bridge("apps:storage:write")
    reply = ask(b, "APP_STORAGE_SET", requestId="1", key="k", value="x" * STORAGE_VALUE_LIMIT_BYTES)
    assert reply["payload"] == {"requestId": "1", "ok": False, "error": "PAYLOAD_TOO_LARGE"}


def test_a_request_without_its_scope_gets_an_error_not_silence() -> None:
    reply = ask(bridge("apps:storage:read"), "APP_STORAGE_SET", requestId="1", key="k", value=1)
    assert reply["type"] == "APP_STORAGE_SET_RESULT"
    assert reply["payload"]["requestId"] == "1"
    assert reply["payload"]["error"].startswith(SCOPE_ERROR)


def test_requests_the_dev_host_cannot_simulate_are_still_answered() -> None:
    reply = ask(bridge(), "OPEN_RESOURCE_PICKER", requestId="p", resourceType="LORA")
    assert reply["type"] == "RESOURCE_PICKER_RESULT"
    assert reply["payload"]["error"].startswith(NOT_SIMULATED_ERROR)


def test_no_reply_to_unknown_types_notices_or_broken_envelopes() -> None:
    b = bridge()
    assert b.reply_to({"type": "FETCH_SECRETS", "payload": {"requestId": "q"}}) is None
    assert b.reply_to({"type": "BLOCK_READY", "payload": {"height": 10}}) is None
    assert b.reply_to("REQUEST_TOKEN") is None
    assert b.reply_to({"payload": {"requestId": "q"}}) is None


def test_a_request_without_request_id_is_answered_without_one() -> None:
    reply = bridge().reply_to({"type": "REQUEST_TOKEN"})
    assert reply == {"type": "TOKEN_REFRESH_RESPONSE", "payload": {"token": TOKEN}}

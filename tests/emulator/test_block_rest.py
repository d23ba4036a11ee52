"""The REST twins of the bridge procedures (blockrest): each answers what its bridge procedure answers for the
same state, behind the block-token checks of BlockScopeMiddleware (scope, audience, expiry, revoked instance),
and refuses bad bodies, other scopes and other blocks' data in the platform's words and statuses."""

from __future__ import annotations

import json

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from inproc import URLS
from joserfc import jwt
from orch_env import FREE, MEMBER, OWNER, make

from blockkit.dev import bridge
from blockkit.emulator.services import appstorage, blocktokens, buzz, consent, goods
from blockkit.emulator.store.clock import Clock
from blockkit.emulator.options import EmulatorOptions
from blockkit.emulator.state import EmulatorState
from blockkit.emulator.store import Store

READ, WRITE = "apps:storage:read", "apps:storage:write"
BUDGET, BUZZ = "ai:write:budgeted", "buzz:read:self"
SHARED_READ, SHARED_WRITE = "apps:storage:shared:read", "apps:storage:shared:write"
ALL = [READ, WRITE, BUDGET, BUZZ, SHARED_READ, SHARED_WRITE]
T2I = {"kind": "textToImage", "modelId": 1, "modelVersionId": 1, "params": {"prompt": "a lighthouse at dusk", "width": 512, "height": 512, "seed": 7}}
OVER_BUDGET = {"kind": "textToImage", "modelId": 1, "modelVersionId": 1, "params": {"prompt": "big", "width": 2048, "height": 2048, "quantity": 4}}


@pytest.fixture
def o(tmp_path: Path):
    return make(tmp_path)


class Block:
    """One installed block instance and a viewer's token for it, with the bridge beside the REST routes."""

    def __init__(self, o: Any, scopes: list[str], user_id: int | None, *, block: str = "blk", app: str = "app1",
                 instance: str | None = None, budget: int | None = None) -> None:
        self.o = o
        self.state = EmulatorState(o.store, o.clock, EmulatorOptions(), URLS)
        self.instance = instance or f"i-{block}-{app}-{user_id}-{'-'.join(s.split(':')[-1] for s in scopes)}"
        blocktokens.register_block_instance(o.store, o.clock.iso(), instance_id=self.instance, block_id=block,
                                            app_id=app, scopes=scopes, buzz_budget_per_gen=budget)
        if user_id is not None:  # the viewer consented (as an install does): every declared scope is minted
            consent.grant_declared(o.store, o.clock, user_id, self.instance)
        minted = blocktokens.mint_block_token(self.state, instance_id=self.instance, user_id=user_id)
        self.token, self.claims = minted.token, minted.claims
        self.headers = {"Authorization": f"Bearer {self.token}"}
        self.host = SimpleNamespace(platform=SimpleNamespace(store=o.store, clock=o.clock, urls=URLS))

    def post(self, path: str, body: Any = None, **kwargs: Any) -> httpx.Response:
        if body is None:
            return self.o.api.post("/api/v1/blocks/" + path, headers=self.headers, **kwargs)
        return self.o.api.post("/api/v1/blocks/" + path, headers=self.headers, json=body, **kwargs)

    def get(self, path: str) -> httpx.Response:
        return self.o.api.get("/api/v1/blocks/" + path, headers=self.headers)

    def bridge(self, message: str, payload: dict[str, Any] | None = None) -> dict[str, Any]:
        answer = bridge._HANDLERS[message](self.host, self.claims, payload or {})  # type: ignore[arg-type]
        return {k: v for k, v in answer.items() if not k.startswith("__trace")}


def ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    assert "private" in response.headers["cache-control"]
    return response.json()


def refused(response: httpx.Response, status: int) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def invalid_body(response: httpx.Response) -> dict[str, Any]:
    body = refused(response, 400)
    assert body["error"] == "Invalid request body" and set(body["details"]) == {"formErrors", "fieldErrors"}
    return body


# --- app-storage ------------------------------------------------------------------------------------

def test_app_storage_answers_as_the_bridge(o) -> None:
    b = Block(o, ALL, MEMBER)
    value = {"draft": "hello", "n": [1, 2, 3], "nested": {"ok": True}}
    assert ok(b.post("app-storage/set", {"key": "notes:a", "value": value})) == \
        b.bridge("APP_STORAGE_SET", {"key": "notes:b", "value": value}) == {"ok": True, "sizeBytes": 50}
    assert ok(b.post("app-storage/get", {"key": "notes:a"})) == b.bridge("APP_STORAGE_GET", {"key": "notes:a"}) \
        == {"value": value}
    assert ok(b.post("app-storage/get", {"key": "absent"})) == {"value": None}  # 200, not 404
    for n in range(3):
        b.bridge("APP_STORAGE_SET", {"key": f"other:{n}", "value": n})
    for query in ({}, {"prefix": "notes:"}, {"limit": 2}, {"limit": 2, "cursor": appstorage._encode_cursor("notes:b")}):
        assert ok(b.post("app-storage/list", query)) == b.bridge("APP_STORAGE_LIST", query), query
    page = ok(b.post("app-storage/list", {"limit": 2}))
    assert [k["key"] for k in page["keys"]] == ["notes:a", "notes:b"] and "nextCursor" in page
    assert ok(b.post("app-storage/quota")) == ok(b.post("app-storage/quota", {"stray": 1})) == \
        b.bridge("APP_STORAGE_QUOTA") == {"usedBytes": 103, "rowCount": 5, "limitBytes": appstorage.QUOTA_BYTES,
                                          "limitRows": appstorage.QUOTA_ROWS}
    assert ok(b.post("app-storage/delete", {"key": "notes:a"})) == \
        b.bridge("APP_STORAGE_DELETE", {"key": "notes:b"}) == {"ok": True, "deleted": True}
    assert ok(b.post("app-storage/delete", {"key": "notes:a"})) == \
        b.bridge("APP_STORAGE_DELETE", {"key": "notes:b"}) == {"ok": True, "deleted": False}  # idempotent: 200


def test_app_storage_is_the_blocks_and_the_viewers_own(o) -> None:
    mine = Block(o, ALL, MEMBER)
    ok(mine.post("app-storage/set", {"key": "secret", "value": "mine"}))
    other_block = Block(o, ALL, MEMBER, block="other-block")
    other_viewer = Block(o, ALL, FREE)
    for b in (other_block, other_viewer):
        assert ok(b.post("app-storage/get", {"key": "secret"})) == {"value": None}
        assert ok(b.post("app-storage/list", {})) == {"keys": []}
        assert ok(b.post("app-storage/delete", {"key": "secret"})) == {"ok": True, "deleted": False}
    assert ok(other_block.post("app-storage/quota"))["rowCount"] == 0
    assert ok(mine.post("app-storage/get", {"key": "secret"})) == {"value": "mine"}  # untouched


@pytest.mark.parametrize(("path", "body"), [
    ("app-storage/get", {}), ("app-storage/get", {"key": ""}), ("app-storage/get", {"key": "k" * 201}),
    ("app-storage/get", {"key": 5}), ("app-storage/get", [1]), ("app-storage/set", {"value": 1}),
    ("app-storage/delete", {"key": None}), ("app-storage/list", {"limit": 0}), ("app-storage/list", {"limit": 201}),
    ("app-storage/list", {"limit": 1.5}), ("app-storage/list", {"prefix": "p" * 201}),
    ("app-storage/list", {"cursor": 7}),
])
def test_app_storage_bad_bodies_are_400(o, path: str, body: Any) -> None:
    invalid_body(Block(o, ALL, MEMBER).post(path, body))


def test_app_storage_refusals(o) -> None:
    b = Block(o, ALL, MEMBER)
    assert invalid_body(b.post("app-storage/get", content=b"{not json"))
    too_big = refused(b.post("app-storage/set", {"key": "k", "value": "x" * (64 * 1024)}), 413)
    assert too_big == {"message": "value exceeds 64KB cap"}
    assert refused(b.post("app-storage/set", content=b"[" + b"1," * 140_000 + b"1]"), 413)  # over 256 KB
    assert refused(b.post("app-storage/get", content=b" " * 5000), 413)  # over 4 KB
    assert ok(b.post("app-storage/get", {"key": "k"})) == {"value": None}  # nothing was written
    assert refused(b.get("app-storage/get"), 405) == {"error": "Method not allowed"}


def test_app_storage_quota_refusal_is_413(o, monkeypatch: pytest.MonkeyPatch) -> None:
    b = Block(o, ALL, MEMBER)
    monkeypatch.setattr(appstorage, "QUOTA_BYTES", 10)
    assert refused(b.post("app-storage/set", {"key": "k", "value": "x" * 20}), 413) == {"message": "app quota exceeded"}
    assert b.bridge("APP_STORAGE_SET", {"key": "k", "value": "x" * 20}) == {"ok": False, "error": "app quota exceeded"}


# --- the block-token checks (BlockScopeMiddleware) ----------------------------------------------------

def _forged(b: Block, **changes: Any) -> dict[str, str]:
    key = blocktokens.signing_key(b.o.store, b.o.clock.iso())
    token = jwt.encode({"alg": "RS256", "kid": key.kid, "typ": "JWT"}, {**b.claims, **changes}, key.key,
                       algorithms=["RS256"])
    return {"Authorization": f"Bearer {token}"}


@pytest.mark.parametrize(("path", "scope", "method"), [
    ("app-storage/get", READ, "post"), ("app-storage/list", READ, "post"), ("app-storage/quota", READ, "post"),
    ("app-storage/set", WRITE, "post"), ("app-storage/delete", WRITE, "post"),
    ("workflows/submit", BUDGET, "post"), ("workflows/estimate", BUDGET, "post"), ("workflows/poll", BUDGET, "post"),
    ("workflows/cancel", BUDGET, "post"), ("workflows/query", BUDGET, "post"),
    ("buzz", BUZZ, "get"), ("buzz/accounts", BUZZ, "get"), ("buzz/transactions", BUZZ, "get"),
    ("buzz/daily-compensation?date=2026-11-01", BUZZ, "get"),
    ("shared-storage/list", SHARED_READ, "get"), ("shared-storage/item?key=k", SHARED_READ, "get"),
    ("shared-storage/counts?keys=k", SHARED_READ, "get"), ("shared-storage/append", SHARED_WRITE, "post"),
    ("shared-storage/update", SHARED_WRITE, "post"), ("shared-storage/vote", SHARED_WRITE, "post"),
    ("shared-storage/unvote", SHARED_WRITE, "post"), ("shared-storage/withdraw", SHARED_WRITE, "post"),
    ("shared-storage/report", SHARED_WRITE, "post"),
])
def test_every_twin_checks_the_block_token(o, path: str, scope: str, method: str) -> None:
    url = "/api/v1/blocks/" + path
    call = getattr(o.api, method)
    assert refused(call(url), 401) == {"error": "Block token required"}
    assert refused(call(url, headers={"Authorization": "Bearer a.b.c"}), 401) == {"error": "invalid block token"}
    others = [s for s in ALL if s != scope]
    wrong = Block(o, others, MEMBER)
    assert refused(call(url, headers=wrong.headers), 403) == {"error": f"missing required scope: {scope}"}
    if scope != SHARED_READ:  # shared storage is read signed out (below)
        anon = Block(o, ALL, None)  # a signed-out viewer's token holds none of these scopes
        assert refused(call(url, headers=anon.headers), 403) == {"error": f"missing required scope: {scope}"}
    right = Block(o, [scope], MEMBER)
    assert refused(call(url, headers=_forged(right, aud="someone-else")), 401) == {"error": "invalid block token"}
    assert refused(call(url, headers=_forged(right, exp=int(o.clock.timestamp()) - 120)), 401)
    assert refused(call(url, headers=_forged(right, scopes=[scope, "not:a:scope"])), 403) == \
        {"error": "unknown scope: not:a:scope"}
    blocktokens.revoke_block_instance(o.store, o.clock.iso(), right.instance)
    assert refused(call(url, headers=right.headers), 403) == {"error": "block instance revoked"}


def test_the_instance_binding_is_the_tokens_not_the_body(o) -> None:
    b = Block(o, ALL, MEMBER)
    ok(b.post("app-storage/set", {"key": "k", "value": 1, "blockId": "other-block", "userId": FREE}))
    assert Block(o, ALL, MEMBER, block="other-block").bridge("APP_STORAGE_GET", {"key": "k"}) == {"value": None}
    assert Block(o, ALL, FREE).bridge("APP_STORAGE_GET", {"key": "k"}) == {"value": None}
    assert b.bridge("APP_STORAGE_GET", {"key": "k"}) == {"value": 1}


# --- workflows ------------------------------------------------------------------------------------------

def test_workflows_answer_as_the_bridge(o) -> None:
    b = Block(o, ALL, MEMBER, budget=100)
    assert ok(b.post("workflows/estimate", {"body": T2I})) == b.bridge("ESTIMATE_WORKFLOW", {"body": T2I})
    rest = ok(b.post("workflows/submit", {"body": T2I, "idempotencyKey": "gen-1"}))["snapshot"]
    via_bridge = b.bridge("SUBMIT_WORKFLOW", {"body": T2I})["snapshot"]
    assert rest["workflowId"] != via_bridge["workflowId"]
    assert {**rest, "workflowId": None} == {**via_bridge, "workflowId": None}
    assert rest["status"] == "pending" and rest["cost"]["total"] > 0
    o.advance(10)
    polled = ok(b.post("workflows/poll", {"workflowId": rest["workflowId"], "waitSeconds": 5}))
    assert polled == b.bridge("POLL_WORKFLOW", {"workflowId": rest["workflowId"]})
    assert polled["snapshot"]["status"] == "succeeded" and len(polled["snapshot"]["imageUrls"]) == 1
    assert ok(b.post("workflows/query")) == ok(b.post("workflows/query", {"limit": 20, "cursor": None})) == \
        b.bridge("QUERY_APP_WORKFLOWS")["result"]
    assert len(ok(b.post("workflows/query", {"limit": 1}))["workflows"]) == 1
    assert ok(b.post("workflows/query", content=b""))["cursor"] is None  # a bodiless POST is the primary shape


def test_workflow_cancel_refunds_and_a_finished_one_answers_its_state(o) -> None:
    b = Block(o, ALL, MEMBER, budget=100)
    before = buzz.balance(o.store, o.clock, MEMBER)
    first = ok(b.post("workflows/submit", {"body": T2I}))["snapshot"]["workflowId"]
    canceled = ok(b.post("workflows/cancel", {"workflowId": first}))
    assert canceled["snapshot"]["status"] == "canceled"
    assert canceled == b.bridge("POLL_WORKFLOW", {"workflowId": first})
    assert buzz.balance(o.store, o.clock, MEMBER) == before
    second = ok(b.post("workflows/submit", {"body": T2I}))["snapshot"]["workflowId"]
    o.advance(10)
    # The platform's cancel of a finished workflow resolves with its terminal state (200).
    assert ok(b.post("workflows/cancel", {"workflowId": second}))["snapshot"]["status"] == "succeeded"


def test_a_budget_refusal_is_a_200_snapshot_quoting_the_cost(o) -> None:
    b = Block(o, ALL, MEMBER)  # the default budget: 10 Buzz a generation
    before = buzz.balance(o.store, o.clock, MEMBER)
    for path, message in (("workflows/submit", "SUBMIT_WORKFLOW"), ("workflows/estimate", "ESTIMATE_WORKFLOW")):
        answer = ok(b.post(path, {"body": OVER_BUDGET}))
        assert answer == b.bridge(message, {"body": OVER_BUDGET})
        assert answer["snapshot"]["status"] == "failed" and answer["snapshot"]["cost"]["total"] > 10
        assert answer["snapshot"]["error"].startswith("insufficient buzz budget")
    assert buzz.balance(o.store, o.clock, MEMBER) == before


def test_workflows_of_another_viewer_or_app_are_403(o) -> None:
    owner = Block(o, ALL, MEMBER, budget=100)
    workflow_id = ok(owner.post("workflows/submit", {"body": T2I}))["snapshot"]["workflowId"]
    for stranger in (Block(o, ALL, FREE, budget=100), Block(o, ALL, MEMBER, app="app2", budget=100)):
        for path in ("workflows/poll", "workflows/cancel"):
            assert "message" in refused(stranger.post(path, {"workflowId": workflow_id}), 403)
        assert ok(stranger.post("workflows/query"))["workflows"] == []
    # fidelity-2 §3 row 12: an id that does not name the viewer is 403 before any lookup; one that does
    # but exists nowhere is the orchestrator's 404.
    assert refused(owner.post("workflows/poll", {"workflowId": "wf-nope"}), 403) == {
        "message": "workflow does not belong to this viewer"}
    assert refused(owner.post("workflows/poll", {"workflowId": f"{MEMBER}-20260101000000000000000"}), 404) == {
        "message": "workflow not found"}
    assert ok(owner.post("workflows/poll", {"workflowId": workflow_id}))["snapshot"]["status"] == "pending"  # not canceled


@pytest.mark.parametrize(("path", "body"), [
    ("workflows/submit", {}), ("workflows/submit", {"body": "text"}), ("workflows/submit", [T2I]),
    ("workflows/submit", {"body": T2I, "idempotencyKey": "has space"}),
    ("workflows/submit", {"body": T2I, "idempotencyKey": "dotted.key"}),  # the platform's charset: A-Z a-z 0-9 _ -
    ("workflows/submit", {"body": T2I, "idempotencyKey": "k" * 65}),       # and at most 64
    ("workflows/submit", {"body": {"kind": "textToImage", "params": {"prompt": ""}}}),
    ("workflows/submit", {"body": {"kind": "textToImage", "params": {"prompt": "x", "width": 9999}}}),
    ("workflows/estimate", {"body": {"kind": "customComfy", "params": {}}}),
    ("workflows/poll", {}), ("workflows/poll", {"workflowId": ""}), ("workflows/poll", {"workflowId": "x" * 65}),
    ("workflows/poll", {"workflowId": "wf", "waitSeconds": 61}), ("workflows/cancel", {"workflowId": 3}),
    ("workflows/query", {"tags": ["app-block:other"]}), ("workflows/query", {"limit": 51}),
    ("workflows/query", {"cursor": ""}),
])
def test_workflow_bad_bodies_are_400(o, path: str, body: Any) -> None:
    b = Block(o, ALL, MEMBER, budget=100)
    before = buzz.balance(o.store, o.clock, MEMBER)
    invalid_body(b.post(path, body))
    assert buzz.balance(o.store, o.clock, MEMBER) == before


def test_a_submission_retried_with_its_idempotency_key_is_one_workflow_charged_once(o) -> None:
    # Found by tests/emulator/test_concurrency_mixed.py: the route checked the key's shape, then dropped it, so
    # every retry was a second workflow and a second charge. The platform threads the key into the
    # orchestrator's externalId per viewer and app block (blocks.router.ts, composeBlockExternalId).
    b = Block(o, ALL, MEMBER, budget=100)
    before = sum(buzz.balance(o.store, o.clock, MEMBER).values())
    first = ok(b.post("workflows/submit", {"body": T2I, "idempotencyKey": "gen-1"}))["snapshot"]
    again = ok(b.post("workflows/submit", {"body": T2I, "idempotencyKey": "gen-1"}))["snapshot"]
    bridged = b.bridge("SUBMIT_WORKFLOW", {"requestId": "r1", "body": T2I, "idempotencyKey": "gen-1"})["snapshot"]
    assert first["workflowId"] == again["workflowId"] == bridged["workflowId"]
    cost = first["cost"]["total"]
    assert sum(buzz.balance(o.store, o.clock, MEMBER).values()) == before - cost
    # Another key, no key, another app or another viewer: each its own workflow.
    other_key = ok(b.post("workflows/submit", {"body": T2I, "idempotencyKey": "gen-2"}))["snapshot"]
    no_key = ok(b.post("workflows/submit", {"body": T2I}))["snapshot"]
    other_app = Block(o, ALL, MEMBER, app="app2", budget=100)
    elsewhere = ok(other_app.post("workflows/submit", {"body": T2I, "idempotencyKey": "gen-1"}))["snapshot"]
    owner = Block(o, ALL, OWNER, budget=100)
    someone_else = ok(owner.post("workflows/submit", {"body": T2I, "idempotencyKey": "gen-1"}))["snapshot"]
    ids = [first["workflowId"], other_key["workflowId"], no_key["workflowId"], elsewhere["workflowId"],
           someone_else["workflowId"]]
    assert len(set(ids)) == 5
    assert sum(buzz.balance(o.store, o.clock, MEMBER).values()) == before - 4 * cost


def test_short_of_buzz_is_a_thrown_refusal(o) -> None:
    from orch_env import POOR

    with o.store.write() as db:
        buzz.open_accounts(db, POOR, o.clock.iso())
        db.execute("UPDATE buzz_accounts SET balance = 0 WHERE user_id = ?", (POOR,))
    b = Block(o, ALL, POOR, budget=100)
    answer = refused(b.post("workflows/submit", {"body": T2I}), 403)
    assert set(answer) == {"message"}
    assert b.bridge("SUBMIT_WORKFLOW", {"body": T2I})["snapshot"]["error"] == answer["message"]


# --- buzz -----------------------------------------------------------------------------------------------

def test_buzz_answers_as_the_bridge(o) -> None:
    b = Block(o, ALL, MEMBER)
    buzz.purchase(o.store, o.clock, MEMBER, 500)
    buzz.purchase(o.store, o.clock, MEMBER, 5, pool="green")
    assert ok(b.get("buzz")) == b.bridge("GET_BUZZ_BALANCE")["balance"]
    assert set(ok(b.get("buzz"))) == {"blue", "green", "yellow"}
    assert ok(b.get("buzz/accounts")) == b.bridge("GET_BUZZ_ACCOUNTS")["result"]
    assert ok(b.get("buzz/transactions")) == b.bridge("GET_BUZZ_TRANSACTIONS")["result"]
    page = ok(b.get("buzz/transactions?limit=1"))
    assert page == b.bridge("GET_BUZZ_TRANSACTIONS", {"params": {"limit": 1}})["result"]
    assert ok(b.get(f"buzz/transactions?limit=1&cursor={page['cursor']}")) == \
        b.bridge("GET_BUZZ_TRANSACTIONS", {"params": {"limit": 1, "cursor": page["cursor"]}})["result"]
    green = ok(b.get("buzz/transactions?accountType=green"))["transactions"]
    assert green and {t["accountType"] for t in green} == {"green"}
    assert ok(b.get("buzz/daily-compensation?date=2026-11-01")) == b.bridge("GET_DAILY_COMPENSATION")["result"]


def test_daily_compensation_counts_goods_sales(o) -> None:
    from orch_env import OWNER

    catalogue = [{"id": "gem", "title": "Gem", "priceBuzz": 100}]
    goods.purchase_good(o.store, o.clock, goods.GoodsCaller(MEMBER, "app1", "blk"), catalogue, "gem",
                        owner_user_id=OWNER)
    b = Block(o, ALL, OWNER)
    answer = ok(b.get("buzz/daily-compensation?date=2026-11-01T00:00:00Z&source=licenseFee"))
    assert answer == b.bridge("GET_DAILY_COMPENSATION")["result"]
    assert answer["goodsSales"]["amount"] == 70 and answer["goodsSales"]["sales"] == 1


@pytest.mark.parametrize("path", [
    "buzz/transactions?accountType=red", "buzz/transactions?limit=0", "buzz/transactions?limit=201",
    "buzz/transactions?limit=x", "buzz/transactions?start=yesterday", "buzz/transactions?limit=1&limit=2",
    "buzz/daily-compensation", "buzz/daily-compensation?date=soon",
    "buzz/daily-compensation?date=2026-11-01&source=tips",
])
def test_buzz_bad_queries_are_400_zod_errors(o, path: str) -> None:
    body = refused(Block(o, ALL, MEMBER).get(path), 400)
    assert body["error"]["name"] == "ZodError" and json.loads(body["error"]["message"])


def test_buzz_routes_are_get(o) -> None:
    assert refused(Block(o, ALL, MEMBER).post("buzz", {}), 405) == {"error": "Method not allowed"}


# --- shared-storage ---------------------------------------------------------------------------------

def test_shared_storage_answers_as_the_bridge(o) -> None:
    author = Block(o, ALL, MEMBER)
    voter = Block(o, ALL, FREE)
    first = ok(author.post("shared-storage/append", {"value": {"title": "First", "body": "b", "data": {"n": 1},
                                                               "dropped": True}}))["key"]
    second = author.bridge("SHARED_APPEND", {"value": {"title": "Second"}})["key"]
    assert first < second and len(first) == 26
    assert ok(voter.post("shared-storage/vote", {"key": first})) == {"count": 1}
    assert voter.bridge("SHARED_VOTE", {"key": second}) == {"count": 1}
    assert ok(voter.post("shared-storage/vote", {"key": first})) == {"count": 1}  # one vote per viewer
    for viewer in (author, voter):
        assert ok(viewer.get("shared-storage/list")) == {"items": viewer.bridge("SHARED_LIST")["items"],
                                                         "metadata": {}}
        assert ok(viewer.get(f"shared-storage/item?key={first}")) == viewer.bridge("SHARED_GET", {"key": first})
        assert ok(viewer.get(f"shared-storage/counts?keys={first}&keys={second}&keys=nope")) == \
            viewer.bridge("SHARED_GET_COUNTS", {"keys": [first, second, "nope"]})
    item = ok(voter.get(f"shared-storage/item?key={first}"))["item"]
    assert item["value"] == {"title": "First", "body": "b", "data": {"n": 1}} and item["viewerVoted"] is True
    page = ok(author.get("shared-storage/list?limit=1"))
    bridge_page = author.bridge("SHARED_LIST", {"limit": 1})
    assert page["items"] == bridge_page["items"] and page["metadata"]["nextCursor"] == bridge_page["nextCursor"]
    assert page["metadata"]["nextPage"].endswith("/api/v1/blocks/shared-storage/list?limit=1&cursor="
                                                 + bridge_page["nextCursor"].replace("=", "%3D"))
    rest = ok(author.get(f"shared-storage/list?limit=1&cursor={page['metadata']['nextCursor']}"))
    assert [i["key"] for i in rest["items"]] == [first]
    assert ok(voter.get("shared-storage/list?mine=true"))["items"] == []
    assert [i["key"] for i in ok(author.get("shared-storage/list?mine=true"))["items"]] == [second, first]
    assert ok(voter.post("shared-storage/unvote", {"key": first})) == voter.bridge("SHARED_UNVOTE", {"key": second}) \
        == {"count": 0}
    assert ok(author.post("shared-storage/update", {"key": first, "value": {"title": "Edited"}})) == \
        author.bridge("SHARED_UPDATE", {"key": second, "value": {"title": "Edited too"}}) == {"ok": True}
    assert ok(voter.post("shared-storage/report", {"key": first, "reason": "spam"})) == \
        voter.bridge("SHARED_REPORT", {"key": second}) == {"ok": True}
    assert [(r["key"], r["reason"]) for r in appstorage.reports(o.store, "blk")] == [(first, "spam"), (second, None)]
    assert ok(voter.post("shared-storage/withdraw", {"key": first})) == {"ok": True, "deleted": False}  # not theirs
    assert ok(author.post("shared-storage/withdraw", {"key": first})) == \
        author.bridge("SHARED_WITHDRAW", {"key": second}) == {"ok": True, "deleted": True}
    assert ok(author.get("shared-storage/list")) == {"items": [], "metadata": {}}


def test_shared_storage_reads_signed_out_and_refuses_writes_to_others(o) -> None:
    author = Block(o, ALL, MEMBER)
    key = ok(author.post("shared-storage/append", {"value": {"title": "Mine"}}))["key"]
    anon = Block(o, ALL, None)
    assert [i["key"] for i in ok(anon.get("shared-storage/list"))["items"]] == [key]
    assert ok(anon.get(f"shared-storage/item?key={key}"))["item"]["viewerVoted"] is False
    assert refused(anon.post("shared-storage/vote", {"key": key}), 403) == \
        {"error": f"missing required scope: {SHARED_WRITE}"}
    stranger = Block(o, ALL, FREE)
    assert refused(stranger.post("shared-storage/update", {"key": key, "value": {"title": "Hijack"}}), 403) == \
        {"message": appstorage.NOT_AUTHOR}
    missing = "0" * 26
    for path in ("vote", "unvote", "report"):
        assert refused(stranger.post(f"shared-storage/{path}", {"key": missing}), 404) == {"message": "request not found"}
    assert refused(author.post("shared-storage/update", {"key": missing, "value": {"title": "x"}}), 404)
    other_block = Block(o, ALL, MEMBER, block="other-block")
    assert ok(other_block.get(f"shared-storage/item?key={key}")) == {"item": None}
    assert ok(other_block.get("shared-storage/list")) == {"items": [], "metadata": {}}
    assert refused(other_block.post("shared-storage/vote", {"key": key}), 404)
    assert ok(author.get(f"shared-storage/item?key={key}"))["item"]["value"] == {"title": "Mine"}


def test_shared_storage_limits(o, monkeypatch: pytest.MonkeyPatch) -> None:
    b = Block(o, ALL, MEMBER)
    big = {"title": "t", "data": "x" * (64 * 1024)}
    assert refused(b.post("shared-storage/append", {"value": big}), 413) == {"message": appstorage.SHARED_TOO_LARGE}
    assert refused(b.post("shared-storage/append", content=b'{"value": {"title": "' + b"x" * 140_000 + b'"}}'), 413)
    monkeypatch.setattr(appstorage, "ENTRIES_PER_VIEWER", 1)
    ok(b.post("shared-storage/append", {"value": {"title": "one"}}))
    assert refused(b.post("shared-storage/append", {"value": {"title": "two"}}), 403) == \
        {"message": appstorage.TOO_MANY_ENTRIES}


@pytest.mark.parametrize(("path", "body"), [
    ("shared-storage/append", {}), ("shared-storage/append", {"value": {"title": ""}}),
    ("shared-storage/append", {"value": {"title": "t" * 201}}), ("shared-storage/append", {"value": "text"}),
    ("shared-storage/append", {"value": {"title": "t", "body": "b" * 4097}}),
    ("shared-storage/update", {"value": {"title": "t"}}), ("shared-storage/update", {"key": "k"}),
    ("shared-storage/vote", {}), ("shared-storage/vote", {"key": "k" * 65}), ("shared-storage/unvote", {"key": 1}),
    ("shared-storage/withdraw", {"key": ""}), ("shared-storage/report", {"key": "k", "reason": "r" * 501}),
    ("shared-storage/report", [1]),
])
def test_shared_storage_bad_bodies_are_400(o, path: str, body: Any) -> None:
    invalid_body(Block(o, ALL, MEMBER).post(path, body))


@pytest.mark.parametrize("path", [
    "shared-storage/list?limit=0", "shared-storage/list?limit=101", "shared-storage/list?limit=two",
    "shared-storage/list?mine=yes", "shared-storage/list?prefix=" + "p" * 65, "shared-storage/item",
    "shared-storage/item?key=", "shared-storage/item?key=a&key=b", "shared-storage/counts",
    "shared-storage/counts?" + "&".join(f"keys=k{n}" for n in range(101)), "shared-storage/counts?keys=",
])
def test_shared_storage_bad_queries_are_400(o, path: str) -> None:
    body = refused(Block(o, ALL, MEMBER).get(path), 400)
    assert body["error"] == "Invalid query" and set(body["details"]) == {"formErrors", "fieldErrors"}


# --- user-checkpoint/set ----------------------------------------------------------------------------------

def test_user_checkpoint_set_records_what_the_bridge_records(o) -> None:
    from blockkit.emulator.services import usersettings

    data = o.store.path.parent
    b = Block(o, [READ], MEMBER)  # the route needs no scope: any valid block token
    assert ok(b.post("user-checkpoint/set", {"versionId": 42})) == {"ok": True}
    assert usersettings.checkpoint(data, "blk", MEMBER) == 42
    host = SimpleNamespace(platform=SimpleNamespace(store=o.store, clock=o.clock, urls=URLS, data_dir=data))
    # The model slot's message takes the platform's `versionId` and answers {ok: true} (dev-host row 57).
    assert bridge._HANDLERS["SET_USER_CHECKPOINT"](host, b.claims, {"versionId": 43}) == \
        {"ok": True}  # type: ignore[arg-type]
    assert usersettings.checkpoint(data, "blk", MEMBER) == 43
    assert usersettings.checkpoint(data, "blk", FREE) is None and usersettings.checkpoint(data, "other", MEMBER) is None
    assert ok(b.post("user-checkpoint/set", {"versionId": None})) == {"ok": True}  # null clears the choice
    assert usersettings.checkpoint(data, "blk", MEMBER) is None


def test_user_checkpoint_set_refusals(o) -> None:
    b = Block(o, [READ], MEMBER)
    for body in ({}, {"versionId": "5"}, {"versionId": 0}, {"versionId": True}, [5]):
        invalid_body(b.post("user-checkpoint/set", body))
    assert refused(Block(o, [SHARED_READ], None).post("user-checkpoint/set", {"versionId": 5}), 401) == \
        {"message": "anon viewers cannot persist block settings"}
    assert refused(o.api.post("/api/v1/blocks/user-checkpoint/set", json={"versionId": 5}), 401)
    assert refused(o.api.post("/api/v1/blocks/user-checkpoint/set", json={"versionId": 5},
                              headers=_forged(b, aud="elsewhere")), 401)
    blocktokens.revoke_block_instance(o.store, o.clock.iso(), b.instance)
    assert refused(b.post("user-checkpoint/set", {"versionId": 5}), 403) == {"error": "block instance revoked"}


# --- over real HTTP, on a started emulator process ----------------------------------------------------

def test_the_twins_over_http_on_a_running_emulator(start_emulator: Any, tmp_path: Path) -> None:
    started = start_emulator("--data", str(tmp_path / "data"))
    info = started.info
    store = Store.open(Path(info["data"]))
    clock = Clock(store)
    with store.read() as db:
        user_id = int(db.execute("SELECT id FROM users WHERE id > 0 AND status = 'active' AND deleted_at IS NULL"
                                 " ORDER BY id LIMIT 1").fetchone()[0])
    blocktokens.register_block_instance(store, clock.iso(), instance_id="live-1", block_id="live-block",
                                        app_id="live-app", scopes=ALL, buzz_budget_per_gen=100)
    consent.grant_declared(store, clock, user_id, "live-1")
    state = SimpleNamespace(store=store, clock=clock)
    token = blocktokens.mint_block_token(state, instance_id="live-1", user_id=user_id).token  # type: ignore[arg-type]
    base = info["base_url"] + "/api/v1/blocks/"
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
        assert http.post("app-storage/set", json={"key": "greeting", "value": {"hi": 1}}).json() == \
            {"ok": True, "sizeBytes": 8}
        got = http.post("app-storage/get", json={"key": "greeting"})
        assert got.status_code == 200 and got.json() == {"value": {"hi": 1}}
        assert "private" in got.headers["cache-control"]
        assert http.post("app-storage/list", json={}).json()["keys"][0]["key"] == "greeting"
        assert http.post("app-storage/get", json={"key": ""}).status_code == 400
        balance = http.get("buzz").json()
        assert balance == buzz.balance(store, clock, user_id)
        submitted = http.post("workflows/submit", json={"body": T2I}).json()["snapshot"]
        assert submitted["status"] == "pending"
        assert http.post("workflows/poll", json={"workflowId": submitted["workflowId"]}).json()["snapshot"][
            "workflowId"] == submitted["workflowId"]
        assert http.get("buzz").json()["blue"] + http.get("buzz").json()["green"] + http.get("buzz").json()[
            "yellow"] == sum(balance.values()) - submitted["cost"]["total"]
        appended = http.post("shared-storage/append", json={"value": {"title": "Over HTTP"}}).json()["key"]
        listed = http.get("shared-storage/list", params={"limit": 5}).json()
        assert [i["key"] for i in listed["items"]] == [appended] and listed["metadata"] == {}
    assert httpx.post(base + "app-storage/get", json={"key": "greeting"}).status_code == 401
    store.close()


def test_e20_a_malformed_cursor_is_400_not_500(o) -> None:
    # Security review E20 (P1): a non-ASCII cursor raised ValueError in b64decode: 500.
    block = Block(o, ALL, MEMBER)
    listed = block.post("app-storage/list", {"cursor": "\u202e"})
    assert listed.status_code == 400 and listed.json() == {"message": appstorage.BAD_CURSOR}
    shared = block.get("shared-storage/list?cursor=%E2%80%AE")
    assert shared.status_code == 400 and shared.json() == {"message": appstorage.BAD_CURSOR}


def test_a_blocks_workflow_names_no_callbacks_or_external_id(o) -> None:
    # Security review 2, S03: a block's submission with callbacks made the emulator POST JSON to any
    # loopback or LAN address the block named; S13: a raw externalId answered another app's workflow.
    b = Block(o, ALL, MEMBER, budget=100)
    template = {"steps": [{"$type": "textToImage", "name": "0", "input": {"prompt": "x", "width": 64, "height": 64}}]}
    hostile = {**template, "callbacks": [{"url": "http://127.0.0.1:9/internal?from=block", "type": ["workflow:*"]}]}
    for path in ("workflows/submit", "workflows/estimate"):
        body = refused(b.post(path, {"body": hostile}), 400)
        assert "callbacks" in json.dumps(body)
        body = refused(b.post(path, {"body": {**template, "externalId": "blk0123456789abcdefgen-1"}}), 400)
        assert "externalId" in json.dumps(body)
    assert o.store is not None
    with o.store.read() as db:
        assert db.execute("SELECT count(*) FROM workflow_events").fetchone()[0] == 0
    answer = b.bridge("SUBMIT_WORKFLOW", {"body": hostile})  # the bridge (blockkit dev) takes none either
    assert answer["snapshot"]["status"] == "failed" and "callbacks" in answer["snapshot"]["error"], answer
    with o.store.read() as db:
        assert db.execute("SELECT count(*) FROM workflow_events").fetchone()[0] == 0
    assert ok(b.post("workflows/submit", {"body": template}))["snapshot"]["status"] == "pending"

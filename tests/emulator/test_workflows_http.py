"""The orchestration origin's workflow operations (@civitai/client: Submit/Get/Update/QueryWorkflows).

A block's own backend holds an API key; the key's owner pays, without a block's per-generation
budget, and reaches only their own workflows.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from orch_env import FREE, MEMBER, POOR, make, problem

from blockkit.emulator.services import buzz
from blockkit.emulator.services.orchestration import workflows

URL = "/v2/consumer/workflows"
BIG = {"steps": [{"$type": "textToImage", "input": {"prompt": "a heron", "width": 2048, "height": 2048}}]}


def t2i(**extra: object) -> dict:
    return {"steps": [{"$type": "textToImage", "name": "gen", "input": {"prompt": "a red fox", "seed": 7}}], **extra}


@pytest.fixture
def o(tmp_path: Path):
    return make(tmp_path)


def test_submit_poll_and_finish_with_an_api_key(o) -> None:
    before = buzz.balance(o.store, o.clock, FREE)
    submitted = o.orch.post(URL, headers=o.auth(), json=t2i(tags=["mine"]))
    assert submitted.status_code == 200, submitted.text
    wf = submitted.json()
    assert wf["id"].startswith(f"{FREE}-") and wf["status"] == "unassigned" and wf["tags"] == ["mine"]
    assert sum(buzz.balance(o.store, o.clock, FREE).values()) == sum(before.values()) - wf["cost"]["total"]
    o.advance(10)
    polled = o.orch.get(f"{URL}/{wf['id']}", headers=o.auth())
    assert polled.status_code == 200 and polled.json()["status"] == "succeeded"
    assert polled.json()["steps"][0]["output"]["images"][0]["url"].startswith("http://")
    listed = o.orch.get(URL, headers=o.auth(), params={"take": 5}).json()
    assert [w["id"] for w in listed["items"]] == [wf["id"]] and isinstance(listed["next"], str)


def test_an_api_key_has_no_per_generation_budget(o) -> None:
    # 2048 x 2048 costs more than a block token's default budget of 10 Buzz.
    urls = o.orch.app.state.emulator.urls
    with pytest.raises(workflows.ServiceError) as err:
        workflows.estimate(o.store, o.clock, urls, workflows.WorkflowCaller(MEMBER), BIG)
    assert err.value.code == "budget_exceeded"
    answer = o.orch.post(URL, headers=o.auth(MEMBER), json=BIG)
    assert answer.status_code == 200 and answer.json()["cost"]["total"] > workflows.DEFAULT_BUDGET


def test_whatif_quotes_and_charges_nothing(o) -> None:
    before = buzz.balance(o.store, o.clock, FREE)
    answer = o.orch.post(URL, headers=o.auth(), params={"whatif": "true"}, json=t2i())
    assert answer.status_code == 200 and answer.json()["cost"]["total"] == 2 and "id" not in answer.json()
    assert buzz.balance(o.store, o.clock, FREE) == before
    assert o.orch.get(URL, headers=o.auth()).json()["items"] == []


def test_cancel_is_a_put_and_refunds(o) -> None:
    before = buzz.balance(o.store, o.clock, FREE)
    wf = o.orch.post(URL, headers=o.auth(), json=t2i()).json()
    answer = o.orch.put(f"{URL}/{wf['id']}", headers=o.auth(), json={"status": "canceled"})
    assert answer.status_code == 204 and answer.content == b""
    assert o.orch.get(f"{URL}/{wf['id']}", headers=o.auth()).json()["status"] == "canceled"
    assert buzz.balance(o.store, o.clock, FREE) == before
    problem(o.orch.put(f"{URL}/{wf['id']}", headers=o.auth(), json={"status": "canceled"}), 400)  # finished
    problem(o.orch.put(f"{URL}/{wf['id']}", headers=o.auth(), json={"status": "processing"}), 400)


def test_workflows_are_private_to_the_key_owner(o) -> None:
    wf = o.orch.post(URL, headers=o.auth(), json=t2i()).json()
    problem(o.orch.get(f"{URL}/{wf['id']}", headers=o.auth(MEMBER)), 404)
    problem(o.orch.put(f"{URL}/{wf['id']}", headers=o.auth(MEMBER), json={"status": "canceled"}), 404)
    assert o.orch.get(URL, headers=o.auth(MEMBER)).json()["items"] == []


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer nope"}])
def test_workflow_routes_need_an_api_key(o, headers: dict[str, str]) -> None:
    problem(o.orch.post(URL, headers=headers, json=t2i()), 401)
    problem(o.orch.get(f"{URL}/wf-x", headers=headers), 401)
    problem(o.orch.get(URL, headers=headers), 401)


def test_bad_bodies_and_short_of_buzz(o) -> None:
    problem(o.orch.post(URL, headers=o.auth(), json={"steps": []}), 400)
    problem(o.orch.post(URL, headers=o.auth(), json={"steps": [{"$type": "comfy", "input": {}}]}), 400)
    problem(o.orch.post(URL, headers=o.auth(), params={"wait": "soon"}, json=t2i()), 400)
    with o.store.write() as db:
        buzz.open_accounts(db, POOR, o.clock.iso())
        db.execute("UPDATE buzz_accounts SET balance = 0 WHERE user_id = ?", (POOR,))
    short = o.orch.post(URL, headers=o.auth(POOR), json=t2i())
    assert short.status_code == 403 and isinstance(short.json(), str)  # SubmitWorkflow's 403 is a string


# --- QueryWorkflows: cursor, tags, query, dates, order ----------------------------------------

def submit_at(o, **extra: object) -> dict:
    wf = o.orch.post(URL, headers=o.auth(), json=t2i(**extra)).json()
    o.advance(60)  # each workflow a minute after the one before
    return wf


def ids(page: dict) -> list[str]:
    return [w["id"] for w in page["items"]]


def test_query_pages_by_cursor_both_ways(o) -> None:
    made = [submit_at(o)["id"] for _ in range(5)]
    seen, cursor, pages = [], "", 0
    while True:
        page = o.orch.get(URL, headers=o.auth(), params={"take": 2, **({"cursor": cursor} if cursor else {})}).json()
        seen += ids(page)
        pages += 1
        cursor = page["next"]
        if not cursor:
            break
    assert seen == made[::-1] and pages == 3
    first = o.orch.get(URL, headers=o.auth(), params={"take": 3, "ascending": "true"}).json()
    assert ids(first) == made[:3] and first["next"]
    rest = o.orch.get(URL, headers=o.auth(), params={"take": 3, "ascending": "true", "cursor": first["next"]}).json()
    assert ids(rest) == made[3:] and rest["next"] == ""
    exact = o.orch.get(URL, headers=o.auth(), params={"take": 5}).json()
    assert len(exact["items"]) == 5 and exact["next"] == ""  # no empty page after the last


def test_query_cursor_survives_a_delete(o) -> None:
    made = [submit_at(o)["id"] for _ in range(4)]
    page = o.orch.get(URL, headers=o.auth(), params={"take": 2}).json()
    assert o.orch.delete(f"{URL}/{page['items'][-1]['id']}", headers=o.auth()).status_code == 204
    rest = o.orch.get(URL, headers=o.auth(), params={"take": 2, "cursor": page["next"]}).json()
    assert ids(rest) == [made[1], made[0]]


def test_query_by_tags_text_and_status(o) -> None:
    red = submit_at(o, tags=["fox", "red"], metadata={"title": "Red Fox", "n": 3})
    grey = submit_at(o, tags=["fox"], metadata={"title": "Grey wolf", "nested": {"owner": "Ada"}})
    other = o.orch.post(URL, headers=o.auth(), json=t2i(tags=["heron"])).json()
    assert o.orch.put(f"{URL}/{other['id']}", headers=o.auth(), json={"status": "canceled"}).status_code == 204

    def q(**params: object) -> list[str]:
        answer = o.orch.get(URL, headers=o.auth(), params=params)
        assert answer.status_code == 200, answer.text
        return ids(answer.json())

    assert q(tags="fox") == [grey["id"], red["id"]]
    assert q(tags=["fox", "red"]) == [red["id"]]  # every tag asked for
    assert q(tags="nothing") == []
    assert q(query="red fox") == [red["id"]] and q(query="ADA") == [grey["id"]] and q(query="3") == [red["id"]]
    assert q(query="fox", tags="heron") == []
    assert q(excludeFailed="true") == [grey["id"], red["id"]]
    assert len(q(excludeFailed="false")) == 3 and len(q(hideMatureContent="true")) == 3


def test_query_by_dates(o) -> None:
    first = submit_at(o)
    second = submit_at(o)
    third = submit_at(o)
    assert ids(o.orch.get(URL, headers=o.auth(), params={"fromDate": second["createdAt"]}).json()) == [
        third["id"], second["id"]]
    assert ids(o.orch.get(URL, headers=o.auth(), params={"toDate": second["createdAt"]}).json()) == [
        second["id"], first["id"]]
    both = {"fromDate": second["createdAt"], "toDate": second["createdAt"]}
    assert ids(o.orch.get(URL, headers=o.auth(), params=both).json()) == [second["id"]]
    day = first["createdAt"][:10]
    assert len(o.orch.get(URL, headers=o.auth(), params={"fromDate": day, "toDate": day}).json()["items"]) == 3
    naive = second["createdAt"].rstrip("Z")  # no offset: UTC
    assert ids(o.orch.get(URL, headers=o.auth(), params={"fromDate": naive}).json()) == [third["id"], second["id"]]


@pytest.mark.parametrize("params", [
    {"cursor": "garbage!"}, {"cursor": "WzEsMiwzXQ"},   # not ours; [1,2,3]
    {"fromDate": "yesterday"}, {"toDate": "2026-13-01"}, {"fromDate": ["2026-01-01", "2026-01-02"]},
    {"ascending": "maybe"}, {"excludeFailed": "2"}, {"hideMatureContent": "no"},
    {"tags": ""}, {"tags": "x" * 201}, {"take": "0"}, {"take": "101"},
])
def test_query_refusals(o, params: dict) -> None:
    submit_at(o)
    problem(o.orch.get(URL, headers=o.auth(), params=params), 400)


def test_a_cursor_of_the_other_order_is_refused(o) -> None:
    for _ in range(3):
        submit_at(o)
    page = o.orch.get(URL, headers=o.auth(), params={"take": 1}).json()
    problem(o.orch.get(URL, headers=o.auth(), params={"take": 1, "ascending": "true", "cursor": page["next"]}), 400)
    assert o.orch.get(URL, headers=o.auth(), params={"take": 1, "cursor": page["next"]}).status_code == 200

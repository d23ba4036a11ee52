"""The orchestration origin's workflow operations (@civitai/client: Submit/Get/Update/QueryWorkflows).

A block's own backend holds an API key; the key's owner pays, without a block's per-generation
budget, and reaches only their own workflows.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from orch_env import FREE, MEMBER, POOR, make, problem

from blockkit.emulator import buzz, workflows

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
    assert wf["id"].startswith("wf-") and wf["status"] == "unassigned" and wf["tags"] == ["mine"]
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

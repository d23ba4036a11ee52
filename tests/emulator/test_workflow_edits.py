"""Changing a workflow over the orchestration origin: DELETE, PUT/PATCH, tags, steps (@civitai/client's operations)."""

from __future__ import annotations

from pathlib import Path

import pytest
from orch_env import FREE, MEMBER, make, problem

from blockkit.emulator.services import buzz

URL = "/v2/consumer/workflows"
PATCH = {"Content-Type": "application/json-patch+json"}


def t2i(**extra: object) -> dict:
    return {"steps": [{"$type": "textToImage", "name": "gen", "input": {"prompt": "a red fox", "seed": 7},
                       "metadata": {"pass": 1}}], **extra}


@pytest.fixture
def o(tmp_path: Path):
    return make(tmp_path)


def submit(o, user: int = FREE, **extra: object) -> dict:
    answer = o.orch.post(URL, headers=o.auth(user), json=t2i(**extra))
    assert answer.status_code == 200, answer.text
    return answer.json()


def get(o, wf: dict, user: int = FREE) -> dict:
    answer = o.orch.get(f"{URL}/{wf['id']}", headers=o.auth(user))
    assert answer.status_code == 200, answer.text
    return answer.json()


def patch(o, wf: dict, operations: object, user: int = FREE):
    return o.orch.patch(f"{URL}/{wf['id']}", headers={**o.auth(user), **PATCH}, json=operations)


def spent(o, user: int = FREE) -> int:
    return sum(buzz.balance(o.store, o.clock, user).values())


# --- DELETE ----------------------------------------------------------------------------------

def test_delete_a_running_workflow_refunds_and_removes_it(o) -> None:
    before = spent(o)
    wf = submit(o)
    o.advance(3)  # processing
    assert get(o, wf)["status"] == "processing" and spent(o) == before - wf["cost"]["total"]
    answer = o.orch.delete(f"{URL}/{wf['id']}", headers=o.auth())
    assert answer.status_code == 204 and answer.content == b""
    assert spent(o) == before
    problem(o.orch.get(f"{URL}/{wf['id']}", headers=o.auth()), 404)
    problem(o.orch.delete(f"{URL}/{wf['id']}", headers=o.auth()), 404)  # gone, not deleted twice
    assert o.orch.get(URL, headers=o.auth()).json()["items"] == []
    with o.store.read() as db:
        kinds = [r[0] for r in db.execute("SELECT description FROM buzz_transactions WHERE reference = ?"
                                          " AND kind = 'refund'", (wf["id"],))]
    assert kinds == ["workflow deleted"]


def test_delete_a_finished_workflow_keeps_the_charge(o) -> None:
    before = spent(o)
    wf = submit(o)
    o.advance(30)
    assert o.orch.delete(f"{URL}/{wf['id']}", headers=o.auth()).status_code == 204
    assert spent(o) == before - wf["cost"]["total"]


def test_delete_a_canceled_workflow_refunds_once(o) -> None:
    before = spent(o)
    wf = submit(o)
    assert o.orch.put(f"{URL}/{wf['id']}", headers=o.auth(), json={"status": "canceled"}).status_code == 204
    assert o.orch.delete(f"{URL}/{wf['id']}", headers=o.auth()).status_code == 204
    assert spent(o) == before


def test_delete_refusals(o) -> None:
    wf = submit(o)
    problem(o.orch.delete(f"{URL}/{wf['id']}", headers=o.auth(MEMBER)), 404)  # another owner's
    problem(o.orch.delete(f"{URL}/wf-nope", headers=o.auth()), 404)
    problem(o.orch.delete(f"{URL}/{wf['id']}"), 401)
    problem(o.orch.delete(f"{URL}/{wf['id']}", headers={"Authorization": "Bearer nope"}), 401)
    assert get(o, wf)["id"] == wf["id"]  # still there


# --- tags ------------------------------------------------------------------------------------

def test_add_remove_and_clear_tags(o) -> None:
    wf = submit(o, tags=["a"])
    tags_url = f"{URL}/{wf['id']}/tags"
    assert o.orch.post(tags_url, headers=o.auth(), json="b").status_code == 204
    assert o.orch.post(tags_url, headers=o.auth(), json="b").status_code == 204  # already there: no change
    assert get(o, wf)["tags"] == ["a", "b"]
    assert o.orch.delete(f"{tags_url}/a", headers=o.auth()).status_code == 204
    assert o.orch.delete(f"{tags_url}/never", headers=o.auth()).status_code == 204  # idempotent
    assert get(o, wf)["tags"] == ["b"]
    assert o.orch.post(tags_url, headers=o.auth(), json="with space/and slash").status_code == 204
    assert get(o, wf)["tags"] == ["b", "with space/and slash"]
    assert o.orch.delete(f"{tags_url}/with%20space%2Fand%20slash", headers=o.auth()).status_code == 204
    assert get(o, wf)["tags"] == ["b"]
    assert o.orch.post(tags_url, headers=o.auth(), json="c").status_code == 204
    assert o.orch.delete(tags_url, headers=o.auth()).status_code == 204
    assert get(o, wf)["tags"] == []


def test_tag_refusals(o) -> None:
    wf = submit(o, tags=[f"t{i}" for i in range(10)])
    tags_url = f"{URL}/{wf['id']}/tags"
    full = problem(o.orch.post(tags_url, headers=o.auth(), json="eleventh"), 400)
    assert "tag" in full["errors"]  # ValidationProblemDetails
    for bad in ("", "x" * 201, 7, {"tag": "x"}, None):
        assert problem(o.orch.post(tags_url, headers=o.auth(), json=bad), 400)["errors"]["tag"]
    unreadable = o.orch.post(tags_url, headers={**o.auth(), "Content-Type": "application/json"}, content=b"nope")
    assert problem(unreadable, 400)["errors"]["tag"]
    problem(o.orch.post(tags_url, headers=o.auth(MEMBER), json="x"), 404)
    problem(o.orch.delete(f"{tags_url}/t1", headers=o.auth(MEMBER)), 404)
    problem(o.orch.delete(tags_url, headers=o.auth(MEMBER)), 404)
    problem(o.orch.delete(f"{URL}/wf-nope/tags", headers=o.auth()), 404)
    problem(o.orch.post(tags_url, json="x"), 401)
    assert len(get(o, wf)["tags"]) == 10
    problem(o.orch.post(URL, headers=o.auth(), json=t2i(tags=[f"t{i}" for i in range(11)])), 400)
    problem(o.orch.post(URL, headers=o.auth(), json=t2i(tags=["ok", 3])), 400)
    problem(o.orch.post(URL, headers=o.auth(), json=t2i(metadata=[1])), 400)


# --- PUT and PATCH ---------------------------------------------------------------------------

def test_put_overrides_metadata_and_tags(o) -> None:
    wf = submit(o, tags=["a"], metadata={"k": 1})
    answer = o.orch.put(f"{URL}/{wf['id']}", headers=o.auth(), json={"metadata": {"j": 2}, "tags": ["z"]})
    assert answer.status_code == 204, answer.text
    now = get(o, wf)
    assert now["metadata"] == {"j": 2} and now["tags"] == ["z"] and now["status"] == "unassigned"
    assert o.orch.put(f"{URL}/{wf['id']}", headers=o.auth(), json={"tags": None}).status_code == 204
    assert get(o, wf)["tags"] == ["z"]  # null: left as it is
    problem(o.orch.put(f"{URL}/{wf['id']}", headers=o.auth(), json={"metadata": "x"}), 400)
    problem(o.orch.put(f"{URL}/{wf['id']}", headers=o.auth(), json={"colour": "red"}), 400)


def test_patch_metadata_tags_and_mature_flag(o) -> None:
    wf = submit(o, tags=["a"], metadata={"k": 1, "nested": {"x": 1}})
    answer = patch(o, wf, [
        {"op": "test", "path": "/metadata/k", "value": 1},
        {"op": "replace", "path": "/metadata/k", "value": "two"},
        {"op": "add", "path": "/metadata/nested/y", "value": [1, 2]},
        {"op": "remove", "path": "/metadata/nested/x"},
        {"op": "add", "path": "/tags/-", "value": "b"},
        {"op": "copy", "from": "/tags/0", "path": "/tags/-"},
        {"op": "replace", "path": "/allowMatureContent", "value": True},
    ])
    assert answer.status_code == 204, answer.text
    now = get(o, wf)
    assert now["metadata"] == {"k": "two", "nested": {"y": [1, 2]}}
    assert now["tags"] == ["a", "b"]  # the copied duplicate collapses: a tag is on a workflow once
    assert now["allowMatureContent"] is True and now["status"] == "unassigned"


def test_patch_can_cancel_and_refunds(o) -> None:
    before = spent(o)
    wf = submit(o)
    assert patch(o, wf, [{"op": "replace", "path": "/status", "value": "canceled"}]).status_code == 204
    assert get(o, wf)["status"] == "canceled" and spent(o) == before
    problem(patch(o, wf, [{"op": "replace", "path": "/status", "value": "canceled"}]), 400)  # finished


@pytest.mark.parametrize("operations", [
    {"op": "add", "path": "/tags/-", "value": "x"},                    # not a list
    [],                                                                 # no operation
    [{"op": "frobnicate", "path": "/metadata/a", "value": 1}],         # unknown op
    [{"op": "add", "path": "/metadata/a"}],                             # add without value
    [{"path": "/metadata/a", "value": 1}],                              # no op
    [{"op": "replace", "path": "/cost", "value": {"total": 0}}],        # not patchable
    [{"op": "replace", "path": "/steps/0/input/prompt", "value": "x"}], # not patchable
    [{"op": "replace", "path": "", "value": {}}],                       # the whole document
    [{"op": "move", "from": "/cost", "path": "/metadata/c"}],           # from outside
    [{"op": "remove", "path": "/metadata/missing"}],                    # nothing there
    [{"op": "replace", "path": "/tags/5", "value": "x"}],               # no such index
    [{"op": "test", "path": "/metadata/k", "value": 2}],                # a failed test
    [{"op": "remove", "path": "/metadata"}],                            # removing a member
    [{"op": "replace", "path": "/metadata", "value": [1]}],             # metadata not an object
    [{"op": "replace", "path": "/status", "value": "succeeded"}],       # only canceled
    [{"op": "add", "path": "/tags/-", "value": ""}],                    # an empty tag
    [{"op": "replace", "path": "/tags", "value": [str(i) for i in range(11)]}],  # 11 tags
    [{"op": "replace", "path": "/allowMatureContent", "value": "yes"}],
    [{"op": "replace", "path": "/metadata/k", "value": 2}, {"op": "test", "path": "/metadata/k", "value": 3}],
])
def test_bad_patches_are_400_and_change_nothing(o, operations: object) -> None:
    wf = submit(o, tags=["a"], metadata={"k": 1})
    before = get(o, wf)
    body = problem(patch(o, wf, operations), 400)
    assert body["type"].endswith("/400")
    after = get(o, wf)
    assert (after["metadata"], after["tags"], after["allowMatureContent"], after["status"]) == (
        before["metadata"], before["tags"], before["allowMatureContent"], before["status"])


def test_patch_refusals_other_than_the_document(o) -> None:
    wf = submit(o)
    ops = [{"op": "add", "path": "/tags/-", "value": "x"}]
    problem(patch(o, wf, ops, MEMBER), 404)
    problem(o.orch.patch(f"{URL}/wf-nope", headers={**o.auth(), **PATCH}, json=ops), 404)
    problem(o.orch.patch(f"{URL}/{wf['id']}", headers=PATCH, json=ops), 401)
    problem(o.orch.patch(f"{URL}/{wf['id']}", headers={**o.auth(), **PATCH}, content=b"[{"), 400)
    problem(o.orch.patch(f"{URL}/{wf['id']}", headers={**o.auth(), "Content-Type": "text/plain"},
                         content=b"[]"), 400)
    assert get(o, wf)["tags"] == []


# --- steps -----------------------------------------------------------------------------------

def test_get_step_follows_the_clock(o) -> None:
    wf = submit(o)
    url = f"{URL}/{wf['id']}/steps/gen"
    step = o.orch.get(url, headers=o.auth())
    assert step.status_code == 200, step.text
    body = step.json()
    assert body["name"] == "gen" and body["$type"] == "textToImage" and body["status"] == "unassigned"
    assert body["metadata"] == {"pass": 1} and body["priority"] == "normal"
    o.advance(30)
    body = o.orch.get(url, headers=o.auth()).json()
    assert body["status"] == "succeeded" and body["output"]["images"][0]["url"]
    assert body == get(o, wf)["steps"][0]


def test_put_and_patch_step_metadata(o) -> None:
    wf = submit(o)
    url = f"{URL}/{wf['id']}/steps/gen"
    assert o.orch.put(url, headers=o.auth(), json={"metadata": {"a": 1}}).status_code == 204
    assert o.orch.get(url, headers=o.auth()).json()["metadata"] == {"a": 1}
    answer = o.orch.patch(url, headers={**o.auth(), **PATCH}, json=[{"op": "add", "path": "/metadata/b", "value": 2}])
    assert answer.status_code == 204, answer.text
    assert get(o, wf)["steps"][0]["metadata"] == {"a": 1, "b": 2}


def test_step_refusals(o) -> None:
    wf = submit(o)
    url = f"{URL}/{wf['id']}/steps/gen"
    problem(o.orch.get(f"{URL}/{wf['id']}/steps/nope", headers=o.auth()), 404)
    problem(o.orch.put(f"{URL}/{wf['id']}/steps/nope", headers=o.auth(), json={"metadata": {}}), 404)
    problem(o.orch.get(url, headers=o.auth(MEMBER)), 404)
    problem(o.orch.put(url, headers=o.auth(MEMBER), json={"metadata": {}}), 404)
    problem(o.orch.get(url), 401)
    for body in ({}, {"metadata": [1]}, {"metadata": {}, "input": {}}, "x"):
        problem(o.orch.put(url, headers=o.auth(), json=body), 400)
    for ops in ([{"op": "replace", "path": "/input/prompt", "value": "x"}], [{"op": "remove", "path": "/metadata"}],
                [{"op": "replace", "path": "/metadata", "value": 3}], "x"):
        problem(o.orch.patch(url, headers={**o.auth(), **PATCH}, json=ops), 400)
    assert get(o, wf)["steps"][0]["metadata"] == {"pass": 1}
    dup = {"steps": [{"$type": "textToImage", "name": "a", "input": {"prompt": "x"}},
                     {"$type": "textToImage", "name": "a", "input": {"prompt": "y"}}]}
    problem(o.orch.post(URL, headers=o.auth(), json=dup), 400)  # step names are unique

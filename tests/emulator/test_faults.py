"""The failure switches (services/faults.py): the real services take their failure path, once."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from inproc import URLS
from orch_env import FREE, MEMBER, make

from blockkit.emulator.services import appstorage, buzz, faults
from blockkit.emulator.services.orchestration import workflows
from blockkit.emulator.store import orchestration as orch_store

WC = workflows.WorkflowCaller


@pytest.fixture
def o(tmp_path: Path):
    return make(tmp_path)


def t2i(prompt: str = "a red fox") -> dict:
    return {"steps": [{"$type": "textToImage", "name": "gen", "input": {"prompt": prompt, "seed": 7,
                                                                         "width": 512, "height": 512}}],
            "callbacks": [{"url": "http://127.0.0.1:9/cb", "type": ["workflow:*"]}]}


def test_the_next_storage_write_fails_once_and_writes_nothing(o) -> None:
    faults.arm(o.store, "storage-write-fails")
    refused = appstorage.storage_set(o.store, o.clock, "blk", FREE, "k", {"v": 1})
    assert refused == {"ok": False, "error": faults.STORAGE_FAILED}
    assert appstorage.storage_get(o.store, o.clock, "blk", FREE, "k")["value"] is None
    assert faults.armed(o.store) == []  # used up, though the write itself committed nothing
    assert appstorage.storage_set(o.store, o.clock, "blk", FREE, "k", {"v": 2})["ok"] is True
    assert appstorage.storage_get(o.store, o.clock, "blk", FREE, "k")["value"] == {"v": 2}


def test_a_switch_for_one_viewer_leaves_the_others_alone(o) -> None:
    faults.arm(o.store, "storage-write-fails", times=2, user_id=MEMBER)
    assert appstorage.storage_set(o.store, o.clock, "blk", FREE, "k", 1)["ok"] is True
    assert appstorage.storage_delete(o.store, o.clock, "blk", MEMBER, "k")["ok"] is False
    assert faults.armed(o.store) == [{"kind": "storage-write-fails", "userId": MEMBER, "times": 1}]
    assert appstorage.storage_set(o.store, o.clock, "blk", MEMBER, "k", 1)["ok"] is False
    assert appstorage.storage_set(o.store, o.clock, "blk", MEMBER, "k", 1)["ok"] is True


def test_the_next_workflow_fails_in_its_first_step_and_is_refunded(o) -> None:
    caller = WC(FREE, app_id="app1", block_id="blk")
    before = buzz.balance(o.store, o.clock, FREE)
    faults.arm(o.store, "workflow-fails")
    wf = workflows.submit(o.store, o.clock, URLS, caller, t2i())
    assert wf["status"] == "unassigned"
    assert buzz.balance(o.store, o.clock, FREE) != before  # charged as usual
    o.advance(2.5)
    assert workflows.poll(o.store, o.clock, URLS, caller, wf["id"])["status"] == "processing"
    o.advance(1)
    failed = workflows.poll(o.store, o.clock, URLS, caller, wf["id"])
    assert failed["status"] == "failed" and failed["completedAt"]
    step = failed["steps"][0]
    assert step["status"] == "failed" and "output" not in step and step["jobs"][0]["status"] == "failed"
    assert workflows.settle_due(o.store, o.clock) <= 1
    assert buzz.balance(o.store, o.clock, FREE) == before  # the refund
    assert workflows.poll(o.store, o.clock, URLS, caller, wf["id"])["forceRefunded"] is True
    with o.store.read() as db:
        events = [r[0] for r in db.execute("SELECT event_type FROM workflow_events WHERE workflow_id = ?", (wf["id"],))]
    assert "workflow:failed" in events and "workflow:succeeded" not in events
    # Used up: the next workflow succeeds.
    again = workflows.submit(o.store, o.clock, URLS, caller, t2i("an owl"))
    o.advance(10)
    assert workflows.poll(o.store, o.clock, URLS, caller, again["id"])["status"] == "succeeded"


def test_a_failed_workflows_outputs_are_never_stored(o) -> None:
    caller = WC(FREE)
    with o.store.read() as db:
        blobs_before = db.execute("SELECT count(*) FROM blobs").fetchone()[0]
    faults.arm(o.store, "workflow-fails")
    wf = workflows.submit(o.store, o.clock, URLS, caller, t2i())
    with o.store.read() as db:
        assert db.execute("SELECT count(*) FROM blobs").fetchone()[0] == blobs_before
        assert orch_store.find_workflow(db, wf["id"]) is not None


def test_unknown_kinds_and_bad_counts_are_refused(o) -> None:
    with pytest.raises(faults.FaultError, match="unknown fault"):
        faults.arm(o.store, "everything-fails")
    with pytest.raises(faults.FaultError, match="whole number"):
        faults.arm(o.store, "workflow-fails", times=-1)
    faults.arm(o.store, "workflow-fails", times=3)
    faults.arm(o.store, "workflow-fails", times=0)
    assert faults.armed(o.store) == []


def test_the_control_route_arms_lists_and_disarms(start_emulator) -> None:
    started = start_emulator()
    base = started.info["base_url"] + "/__emulator/faults"
    key = started.info.get("access_key")
    headers = {"X-Blockkit-Access-Key": key} if key else {}
    with httpx.Client(headers=headers, timeout=10) as client:
        assert client.get(base).json() == {"faults": []}
        armed = client.post(base, json={"kind": "workflow-fails", "times": 2})
        assert armed.status_code == 200
        assert armed.json() == {"faults": [{"kind": "workflow-fails", "userId": None, "times": 2}]}
        bad = client.post(base, json={"kind": "nope"})
        assert bad.status_code == 400 and "unknown fault" in bad.json()["error"]
        assert client.post(base, json={"kind": "workflow-fails", "userId": "x"}).status_code == 400
        # a control write is JSON (the browser-origin guard: a form cannot send it)
        assert client.delete(base, headers={"Content-Type": "application/json"}).json() == {"faults": []}
        assert client.get(base).json() == {"faults": []}

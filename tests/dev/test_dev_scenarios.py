"""``blockkit dev --scenario``: each switch drives the real local platform, for the run only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from blockkit.dev.errors import DevError
from blockkit.dev.scenarios import SCENARIOS, parse_scenarios
from blockkit.dev.session import DevOptions, DevSession
from blockkit.emulator.services import appstorage, buzz, faults
from blockkit.emulator.services.errors import ServiceError
from blockkit.emulator.services.orchestration import workflows


def _block(root: Path) -> Path:
    block = root / "blk"
    block.mkdir()
    (block / "block.manifest.json").write_text(json.dumps({
        "blockId": "blk", "version": "1.0.0", "name": "blk", "contentRating": "g",
        "scopes": ["apps:storage:read", "apps:storage:write", "ai:write:budgeted", "buzz:read:self"],
        "iframe": {"minHeight": 120, "maxHeight": 480, "resizable": True, "sandbox": "allow-scripts"},
        "page": {"path": "/", "title": "blk", "buzzBudgetPerGen": 50}}))
    (block / "index.html").write_text("<!doctype html>")
    return block


@pytest.fixture
def block(tmp_path: Path) -> Path:
    return _block(tmp_path)


def _session(block: Path, tmp_path: Path, *names: str) -> DevSession:
    return DevSession(DevOptions(block_dir=block, scenarios=names, platform_dir=tmp_path / "platform",
                                 trace_path=tmp_path / "trace.jsonl"))


def test_an_unknown_scenario_is_one_clear_line() -> None:
    with pytest.raises(DevError, match="no such scenario.*insufficient-buzz"):
        parse_scenarios(["insufficent-buzz"])
    assert parse_scenarios(["Workflow-Fails", "workflow-fails"]) == ("workflow-fails",)
    assert set(SCENARIOS) >= {"anonymous", "insufficient-buzz", "workflow-fails", "storage-write-fails"}


def test_insufficient_buzz_empties_the_viewer_for_the_run_and_gives_it_back(block: Path, tmp_path: Path) -> None:
    with _session(block, tmp_path) as plain:
        viewer = plain.platform.viewer_id
        before = buzz.balance(plain.platform.store, plain.platform.clock, viewer)
    assert sum(before.values()) > 0
    with _session(block, tmp_path, "insufficient-buzz") as run:
        platform = run.platform
        assert platform.viewer_id == viewer
        assert buzz.balance(platform.store, platform.clock, viewer) == {"blue": 0, "green": 0, "yellow": 0}
        caller = workflows.WorkflowCaller(viewer, app_id=platform.app_id, block_id="blk",
                                          scopes=frozenset({"ai:write:budgeted"}), buzz_budget=50)
        payload = {"steps": [{"$type": "textToImage", "input": {"prompt": "a fox", "width": 512, "height": 512}}]}
        with pytest.raises(ServiceError) as refused:
            workflows.submit(platform.store, platform.clock, platform.urls, caller, payload)
        assert refused.value.status == 403 and refused.value.code == "insufficient_buzz"
        assert any("insufficient-buzz" in note for note in run.notes)
    with _session(block, tmp_path) as after:
        assert buzz.balance(after.platform.store, after.platform.clock, viewer) == before


def test_what_a_killed_run_set_aside_comes_back_at_the_next_start(block: Path, tmp_path: Path) -> None:
    with _session(block, tmp_path) as first:
        viewer = first.platform.viewer_id
        before = buzz.balance(first.platform.store, first.platform.clock, viewer)
        buzz.set_aside(first.platform.store, first.platform.clock, viewer)  # as a run killed mid-way leaves it
        faults.arm(first.platform.store, "workflow-fails", times=5)
        first.platform.stop()  # no clear: the store keeps both
        first.platform = None
    with _session(block, tmp_path) as second:
        assert buzz.balance(second.platform.store, second.platform.clock, viewer) == before
        assert faults.armed(second.platform.store) == []


def test_the_failure_switches_are_armed_for_the_run(block: Path, tmp_path: Path) -> None:
    with _session(block, tmp_path, "workflow-fails", "storage-write-fails") as run:
        store = run.platform.store
        kinds = sorted(f["kind"] for f in faults.armed(store))
        assert kinds == ["storage-write-fails", "workflow-fails"]
        viewer = run.platform.viewer_id
        refused = appstorage.storage_set(store, run.platform.clock, "blk", viewer, "k", 1)
        assert refused == {"ok": False, "error": faults.STORAGE_FAILED}
        assert appstorage.storage_set(store, run.platform.clock, "blk", viewer, "k", 1)["ok"] is True
    with _session(block, tmp_path) as after:
        assert faults.armed(after.platform.store) == []


def test_anonymous_is_a_signed_out_viewer(block: Path, tmp_path: Path) -> None:
    with _session(block, tmp_path, "anonymous") as run:
        assert run.platform.viewer_id is None and run.platform.viewer() is None

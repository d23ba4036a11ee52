"""App storage and shared boards, store-backed: caps, paging, persistence, board operations."""

from __future__ import annotations

from pathlib import Path

import pytest
from inproc import add_user, new_store

from blockkit.emulator import appstorage as s
from blockkit.emulator.clock import Clock


@pytest.fixture
def env(tmp_path: Path):
    store = new_store(tmp_path)
    for uid in (1, 2, 3, 4):
        add_user(store, uid, f"user{uid}")
    return store, Clock(store)


def test_set_get_delete_and_isolation(env) -> None:
    store, clock = env
    assert s.storage_set(store, clock, "blk", 1, "k", {"a": [1, "é"]}) == {"ok": True, "sizeBytes": 14}
    assert s.storage_get(store, clock, "blk", 1, "k") == {"value": {"a": [1, "é"]}}
    assert s.storage_get(store, clock, "blk", 2, "k") == {"value": None}       # per viewer
    assert s.storage_get(store, clock, "other", 1, "k") == {"value": None}     # per block
    assert s.storage_delete(store, clock, "blk", 1, "k") == {"ok": True, "deleted": True}
    assert s.storage_delete(store, clock, "blk", 1, "k") == {"ok": True, "deleted": False}


def test_persists_across_reopen(tmp_path: Path) -> None:
    from blockkit.emulator.store import Store
    store = new_store(tmp_path)
    add_user(store, 1, "u")
    s.storage_set(store, Clock(store), "blk", 1, "k", 5)
    store.close()
    with Store.open(tmp_path) as again:
        assert s.storage_get(again, Clock(again), "blk", 1, "k") == {"value": 5}


def test_value_cap_and_quota(env, monkeypatch: pytest.MonkeyPatch) -> None:
    store, clock = env
    assert s.storage_set(store, clock, "blk", 1, "big", "x" * (64 * 1024 - 2))["ok"] is True
    assert s.storage_set(store, clock, "blk", 1, "big", "x" * (64 * 1024 - 1)) == {"ok": False,
                                                                                  "error": "PAYLOAD_TOO_LARGE"}
    monkeypatch.setattr(s, "QUOTA_ROWS", 2)
    s.storage_set(store, clock, "blk", 1, "b", 1)
    assert s.storage_set(store, clock, "blk", 1, "c", 1)["error"] == "PAYLOAD_TOO_LARGE"
    assert s.storage_set(store, clock, "blk", 1, "b", 2)["ok"] is True        # overwriting is not a new row
    monkeypatch.setattr(s, "QUOTA_BYTES", 70_000)
    assert s.storage_set(store, clock, "blk", 1, "b", "y" * 10_000)["error"] == "PAYLOAD_TOO_LARGE"
    q = s.storage_quota(store, clock, "blk", 1)
    assert q["rowCount"] == 2 and q["usedBytes"] == 64 * 1024 + 1 and q["limitRows"] == 2


def test_list_prefix_and_paging(env) -> None:
    store, clock = env
    for key in ("a_1", "a_2", "a%3", "ab", "b"):
        s.storage_set(store, clock, "blk", 1, key, 0)
    page = s.storage_list(store, clock, "blk", 1, prefix="a_", limit=1)
    assert [k["key"] for k in page["keys"]] == ["a_1"] and page["nextCursor"] == "a_1"
    rest = s.storage_list(store, clock, "blk", 1, prefix="a_", cursor=page["nextCursor"], limit=1)
    assert [k["key"] for k in rest["keys"]] == ["a_2"] and "nextCursor" not in rest
    assert [k["key"] for k in s.storage_list(store, clock, "blk", 1, prefix="a%")["keys"]] == ["a%3"]
    assert len(s.storage_list(store, clock, "blk", 1, limit=500)["keys"]) == 5


def test_shared_board_lifecycle(env) -> None:
    store, clock = env
    e1 = s.shared_append(store, clock, "blk", 1, "scores", {"score": 10})["item"]
    e2 = s.shared_append(store, clock, "blk", 2, "scores", {"score": 20})["item"]
    s.shared_append(store, clock, "blk", 2, "other", 1)
    assert s.shared_count(store, clock, "blk", 3, "scores") == {"count": 2}
    assert s.shared_counts(store, clock, "blk", 3, ["scores", "other", "none"]) == {
        "counts": {"scores": 2, "other": 1, "none": 0}}
    assert [i["id"] for i in s.shared_list(store, clock, "blk", 3, "scores")["items"]] == [e2["id"], e1["id"]]
    assert s.shared_vote(store, clock, "blk", 3, e1["id"]) == {"ok": True, "votes": 1, "voted": True}
    assert s.shared_vote(store, clock, "blk", 3, e1["id"])["votes"] == 1            # one vote per viewer
    top = s.shared_list(store, clock, "blk", 3, "scores", sort="top")["items"]
    assert top[0]["id"] == e1["id"] and top[0]["votedByViewer"] is True
    assert s.shared_unvote(store, clock, "blk", 3, e1["id"])["votes"] == 0
    assert s.shared_update(store, clock, "blk", 2, e1["id"], 0) == {"ok": False, "error": "FORBIDDEN"}
    assert s.shared_update(store, clock, "blk", 1, e1["id"], {"score": 11})["item"]["value"] == {"score": 11}
    assert s.shared_get(store, clock, "blk", 2, "scores", e1["id"])["item"]["value"] == {"score": 11}
    assert s.shared_withdraw(store, clock, "blk", 2, e1["id"])["error"] == "FORBIDDEN"
    assert s.shared_withdraw(store, clock, "blk", 1, e1["id"]) == {"ok": True}
    assert s.shared_get(store, clock, "blk", 2, "scores", e1["id"]) == {"item": None}
    assert s.shared_vote(store, clock, "blk", 2, e1["id"])["error"] == "NOT_FOUND"


def test_shared_reports_hide_and_paging(env) -> None:
    store, clock = env
    ids = [s.shared_append(store, clock, "blk", 1, "b", n)["item"]["id"] for n in range(3)]
    page = s.shared_list(store, clock, "blk", 2, "b", limit=2)
    assert len(page["items"]) == 2 and page["nextCursor"] == 2
    assert len(s.shared_list(store, clock, "blk", 2, "b", cursor=2, limit=2)["items"]) == 1
    for reporter in (2, 3):
        s.shared_report(store, clock, "blk", reporter, ids[0], "spam")
    s.shared_report(store, clock, "blk", 3, ids[0])                                 # same reporter: counted once
    assert s.shared_count(store, clock, "blk", 2, "b") == {"count": 3}
    s.shared_report(store, clock, "blk", 4, ids[0])
    assert s.shared_count(store, clock, "blk", 2, "b") == {"count": 2}


def test_shared_refusals(env, monkeypatch: pytest.MonkeyPatch) -> None:
    store, clock = env
    assert s.shared_append(store, clock, "blk", 1, "", 1)["error"] == "BAD_REQUEST"
    assert s.shared_append(store, clock, "blk", 1, "b", "x" * 70_000)["error"] == "PAYLOAD_TOO_LARGE"
    assert s.shared_list(store, clock, "blk", 1, "b", sort="hot")["error"] == "BAD_REQUEST"
    monkeypatch.setattr(s, "ENTRIES_PER_VIEWER", 1)
    s.shared_append(store, clock, "blk", 1, "b", 1)
    assert s.shared_append(store, clock, "blk", 1, "b", 2)["error"] == "LIMIT_REACHED"
    assert s.shared_append(store, clock, "other", 1, "b", 2)["ok"] is True

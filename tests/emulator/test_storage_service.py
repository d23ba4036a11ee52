"""App storage and shared boards, store-backed: caps, paging, persistence, board operations."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from inproc import add_user, new_store

from blockkit.emulator.services import appstorage as s
from blockkit.emulator.store.clock import Clock


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
                                                                                  "error": "value exceeds 64KB cap"}
    # The quota is the block's, across its viewers (the platform's per-app quota).
    monkeypatch.setattr(s, "QUOTA_ROWS", 2)
    s.storage_set(store, clock, "blk", 2, "b", 1)
    assert s.storage_set(store, clock, "blk", 3, "c", 1) == {"ok": False, "error": "app row limit exceeded"}
    assert s.storage_set(store, clock, "blk", 2, "b", 2)["ok"] is True        # overwriting is not a new row
    monkeypatch.setattr(s, "QUOTA_BYTES", 70_000)
    assert s.storage_set(store, clock, "blk", 2, "b", "y" * 10_000) == {"ok": False, "error": "app quota exceeded"}
    q = s.storage_quota(store, clock, "blk", 4)
    assert q == {"usedBytes": 64 * 1024 + 1, "rowCount": 2, "limitBytes": 70_000, "limitRows": 2}
    assert s.storage_quota(store, clock, "other", 1)["rowCount"] == 0


def test_keys_are_1_to_200_characters(env) -> None:
    store, clock = env
    assert s.storage_set(store, clock, "blk", 1, "k" * 200, 1)["ok"] is True
    assert "200" in s.storage_set(store, clock, "blk", 1, "k" * 201, 1)["error"]
    assert s.storage_get(store, clock, "blk", 1, "")["value"] is None and s.storage_get(store, clock, "blk", 1, "")["error"]


def test_a_signed_out_viewer_reads_nothing_and_may_not_write(env) -> None:
    store, clock = env
    s.storage_set(store, clock, "blk", 1, "k", 1)
    assert s.storage_get(store, clock, "blk", None, "k") == {"value": None}
    assert s.storage_list(store, clock, "blk", None) == {"keys": []}
    assert s.storage_set(store, clock, "blk", None, "k", 2) == {"ok": False, "error": "storage requires an authenticated viewer"}
    assert s.storage_delete(store, clock, "blk", None, "k")["error"] == "storage requires an authenticated viewer"


def test_list_prefix_and_paging(env) -> None:
    store, clock = env
    for key in ("a_1", "a_2", "a%3", "ab", "b"):
        s.storage_set(store, clock, "blk", 1, key, 0)
    page = s.storage_list(store, clock, "blk", 1, prefix="a_", limit=1)
    assert [k["key"] for k in page["keys"]] == ["a_1"]
    assert base64.b64decode(page["nextCursor"]) == b"a_1"                         # the platform's cursor form
    rest = s.storage_list(store, clock, "blk", 1, prefix="a_", cursor=page["nextCursor"], limit=1)
    assert [k["key"] for k in rest["keys"]] == ["a_2"] and "nextCursor" in rest   # a full page always has one
    end = s.storage_list(store, clock, "blk", 1, prefix="a_", cursor=rest["nextCursor"], limit=1)
    assert end == {"keys": []}
    assert [k["key"] for k in s.storage_list(store, clock, "blk", 1, prefix="a%")["keys"]] == ["a%3"]
    assert len(s.storage_list(store, clock, "blk", 1, limit=500)["keys"]) == 5    # clamped to 200, not refused
    for n in range(60):
        s.storage_set(store, clock, "blk", 2, f"k{n:02d}", n)
    first = s.storage_list(store, clock, "blk", 2)
    assert len(first["keys"]) == 50 and set(first["keys"][0]) == {"key", "updatedAt"} and first["keys"][0]["key"] == "k00"


def post(store, clock, uid: int, title: str, **more: object) -> str:
    answer = s.shared_append(store, clock, "blk", uid, {"title": title, **more})
    assert set(answer) == {"key"}, answer
    return answer["key"]


def test_shared_lifecycle_in_the_platforms_shapes(env) -> None:
    store, clock = env
    k1 = post(store, clock, 1, "first", body="hello", data={"score": 10}, extra="dropped")
    clock.advance(1)
    k2 = post(store, clock, 2, "second")
    assert len(k1) == 26 and k1 < k2                                              # ULID-like, in creation order
    items = s.shared_list(store, clock, "blk", 3)["items"]
    assert [i["key"] for i in items] == [k2, k1]                                  # newest first
    assert items[1] == {"key": k1, "authorUserId": 1, "value": {"title": "first", "body": "hello", "data": {"score": 10}},
                        "count": 0, "createdAt": items[1]["createdAt"], "updatedAt": items[1]["createdAt"],
                        "viewerVoted": False}
    assert s.shared_vote(store, clock, "blk", 3, k1) == {"count": 1}
    assert s.shared_vote(store, clock, "blk", 3, k1) == {"count": 1}              # one vote per viewer
    assert s.shared_vote(store, clock, "blk", 2, k1) == {"count": 2}
    assert s.shared_get(store, clock, "blk", 3, k1)["item"]["viewerVoted"] is True
    assert s.shared_count(store, clock, "blk", None, k1) == {"count": 2}
    assert s.shared_counts(store, clock, "blk", None, [k1, k2, "nope"]) == {"counts": {k1: 2, k2: 0, "nope": 0}}
    assert s.shared_unvote(store, clock, "blk", 3, k1) == {"count": 1}
    assert s.shared_update(store, clock, "blk", 2, k1, {"title": "x"}) == {
        "ok": False, "error": "you can only edit your own submissions"}
    assert s.shared_update(store, clock, "blk", 1, k1, {"title": "edited"}) == {"ok": True}
    assert s.shared_get(store, clock, "blk", None, k1)["item"]["value"] == {"title": "edited"}
    assert s.shared_withdraw(store, clock, "blk", 2, k1) == {"ok": True, "deleted": False}   # not the author's
    assert s.shared_withdraw(store, clock, "blk", 1, k1) == {"ok": True, "deleted": True}
    assert s.shared_get(store, clock, "blk", 2, k1) == {"item": None}
    assert s.shared_vote(store, clock, "blk", 2, k1) == {"error": "request not found"}
    assert s.shared_list(store, clock, "other", 1) == {"items": []}             # one space per block


def test_shared_paging_prefix_and_reports(env) -> None:
    store, clock = env
    keys = []
    for n in range(3):
        keys.append(post(store, clock, 1, f"t{n}"))
        clock.advance(1)
    page = s.shared_list(store, clock, "blk", 2, limit=2)
    assert [i["key"] for i in page["items"]] == keys[:0:-1] and base64.b64decode(page["nextCursor"]).decode() == keys[1]
    assert [i["key"] for i in s.shared_list(store, clock, "blk", 2, cursor=page["nextCursor"], limit=2)["items"]] == [keys[0]]
    assert [i["key"] for i in s.shared_list(store, clock, "blk", 2, prefix=keys[0][:24])["items"]] == [
        k for k in reversed(keys) if k.startswith(keys[0][:24])]
    for reporter in (2, 3, 4):
        assert s.shared_report(store, clock, "blk", reporter, keys[0], "spam") == {"ok": True}
    assert s.shared_get(store, clock, "blk", 2, keys[0])["item"] is not None   # a report hides nothing
    assert [r["reporterUserId"] for r in s.reports(store, "blk")] == [2, 3, 4]


def test_shared_refusals(env, monkeypatch: pytest.MonkeyPatch) -> None:
    store, clock = env
    assert s.shared_append(store, clock, "blk", None, {"title": "t"}) == {
        "error": "shared storage writes require an authenticated viewer"}
    assert "title" in s.shared_append(store, clock, "blk", 1, {"body": "no title"})["error"]
    assert "title" in s.shared_append(store, clock, "blk", 1, {"title": "x" * 201})["error"]
    assert s.shared_append(store, clock, "blk", 1, {"title": "t", "data": "x" * 70_000}) == {"error": "value exceeds size cap"}
    assert s.shared_get(store, clock, "blk", 1, "")["error"]
    assert s.shared_get(store, clock, "blk", 1, "0" * 26) == {"item": None}
    monkeypatch.setattr(s, "ENTRIES_PER_VIEWER", 1)
    post(store, clock, 1, "one")
    assert s.shared_append(store, clock, "blk", 1, {"title": "two"}) == {
        "error": "you have reached the maximum number of submissions for this app"}
    assert set(s.shared_append(store, clock, "other", 1, {"title": "two"})) == {"key"}


def test_a_key_names_one_entry_only(env) -> None:
    store, clock = env
    key = post(store, clock, 1, "t")
    forged = "0" * 10 + key[10:]                                                  # right row id, wrong time
    assert s.shared_get(store, clock, "blk", 1, forged) == {"item": None}
    assert s.shared_get(store, clock, "other", 1, key) == {"item": None}

"""Workflows: submit/estimate/poll/cancel, clock-driven statuses, budgets, pools, refunds."""

from __future__ import annotations

from pathlib import Path

import pytest
from inproc import URLS
from orch_env import FREE, MEMBER, b64, image_of, make, png

from blockkit.emulator.services import buzz
from blockkit.emulator.services.orchestration import workflows
from blockkit.emulator.services.errors import ServiceError
from blockkit.emulator.services.orchestration.media import read_blob

WC = workflows.WorkflowCaller


@pytest.fixture
def o(tmp_path: Path):
    return make(tmp_path)


def upscale_payload(side: int = 64, **extra: object) -> dict:
    return {"steps": [{"$type": "imageUpscaler", "input": {"image": b64(png(side, side, split=True))}}], **extra}


def t2i(**extra: object) -> dict:
    return {"steps": [{"$type": "textToImage", "name": "gen", "input": {"prompt": "a red fox", "seed": 7,
                                                                         "width": 512, "height": 512}}], **extra}


def call(o, fn, caller, *args):
    return fn(o.store, o.clock, URLS, caller, *args)


def test_statuses_move_on_the_clock_and_upscale_is_real(o) -> None:
    caller = WC(FREE, app_id="app1", block_id="blk")
    wf = call(o, workflows.submit, caller, upscale_payload())
    assert wf["status"] == "unassigned" and wf["steps"][0]["status"] == "unassigned" and "output" not in wf["steps"][0]
    o.advance(2.5)
    wf = call(o, workflows.poll, caller, wf["id"])
    assert wf["status"] == "processing" and 0 < wf["steps"][0]["estimatedProgressRate"] < 1
    o.advance(3)
    wf = call(o, workflows.poll, caller, wf["id"])
    assert wf["status"] == "succeeded" and wf["completedAt"]
    blob = wf["steps"][0]["output"]["blob"]
    data, _ctype = read_blob(o.store, blob["url"].rsplit("/", 1)[1])
    image = image_of(data).convert("RGB")
    assert image.size == (128, 128) and image.getpixel((1, 64)) == (200, 30, 60) and image.getpixel((126, 64)) == (0, 0, 255)


def test_text_to_image_is_a_labelled_placeholder_and_deterministic(o) -> None:
    caller = WC(FREE)
    first = call(o, workflows.submit, caller, t2i())
    second = call(o, workflows.submit, caller, t2i())
    o.advance(10)
    outs = [call(o, workflows.poll, caller, wf["id"])["steps"][0]["output"] for wf in (first, second)]
    assert "does not run models" in outs[0]["note"]
    blobs = [read_blob(o.store, out["images"][0]["url"].rsplit("/", 1)[1])[0] for out in outs]
    assert blobs[0] == blobs[1] and image_of(blobs[0]).size == (512, 512)


def test_cost_charged_and_cancel_refunds(o) -> None:
    caller = WC(FREE)
    before = buzz.balance(o.store, o.clock, FREE)
    wf = call(o, workflows.submit, caller, t2i())
    assert wf["cost"]["total"] == 2 and wf["spentAccountType"] == "green"
    assert buzz.balance(o.store, o.clock, FREE)["green"] == before["green"] - 2
    done = call(o, workflows.cancel, caller, wf["id"])
    assert done["status"] == "canceled" and done["forceRefunded"] is True
    assert buzz.balance(o.store, o.clock, FREE) == before
    o.advance(60)
    assert call(o, workflows.poll, caller, wf["id"])["status"] == "canceled"
    with pytest.raises(ServiceError) as err:
        call(o, workflows.cancel, caller, wf["id"])
    assert err.value.status == 409


def test_cancel_after_success_is_refused(o) -> None:
    wf = call(o, workflows.submit, WC(FREE), t2i())
    o.advance(30)
    with pytest.raises(ServiceError) as err:
        call(o, workflows.cancel, WC(FREE), wf["id"])
    assert err.value.code == "already_finished"


@pytest.mark.parametrize("account_type, mature, spent", [
    ("blue", False, "blue"), ("green", False, "green"), (None, False, "green"),
    ("yellow", False, "green"),          # a SFW block cannot widen to the mature currency
    ("yellow", True, "yellow"), (None, True, "yellow"), ("blue", True, "blue"),
    ("green", True, "yellow"),           # green cannot pay mature work
])
def test_account_type_preference_and_clamp(o, account_type: str | None, mature: bool, spent: str) -> None:
    caller = WC(MEMBER, mature=mature)
    payload = t2i(accountType=account_type, allowMatureContent=True) if account_type else t2i(allowMatureContent=True)
    wf = call(o, workflows.submit, caller, payload)
    assert wf["spentAccountType"] == spent and wf["allowMatureContent"] is mature


def test_spent_account_is_largest_debit(o) -> None:
    with o.store.write() as db:
        buzz.open_accounts(db, FREE, o.clock.iso())
        db.execute("UPDATE buzz_accounts SET balance = 1 WHERE user_id = ? AND pool = 'green'", (FREE,))
    wf = call(o, workflows.submit, WC(FREE, buzz_budget=20), {"steps": [
        {"$type": "textToImage", "input": {"prompt": "x", "width": 1024, "height": 1024}}]})
    assert {t["accountType"]: t["amount"] for t in wf["transactions"]["list"]} == {"green": 1, "blue": 4}
    assert wf["spentAccountType"] == "blue"


@pytest.mark.parametrize("caller, payload, status, code", [
    (WC(FREE, scopes=frozenset()), None, 403, "missing_scope"),
    (WC(FREE), {"steps": [{"$type": "textToImage", "input": {"prompt": "x", "quantity": 4,
                                                            "width": 1024, "height": 1024}}]}, 403, "budget_exceeded"),
    (WC(FREE), {"steps": []}, 400, "bad_steps"),
    (WC(FREE), {"steps": [{"$type": "videoGen", "input": {}}]}, 400, "unsupported_step"),
    (WC(FREE), {"steps": [{"$type": "textToImage", "input": {"prompt": ""}}]}, 400, "bad_step"),
    (WC(FREE), {"steps": [{"$type": "textToImage", "input": {"prompt": "x", "quantity": 5}}]}, 400, "bad_step"),
    (WC(FREE), t2i(accountType="red"), 400, "bad_account_type"),
    (WC(FREE), "nope", 400, "bad_body"),
])
def test_refusals(o, caller: WC, payload: object, status: int, code: str) -> None:
    with pytest.raises(ServiceError) as err:
        call(o, workflows.submit, caller, t2i() if payload is None else payload)
    assert (err.value.status, err.value.code) == (status, code)


def test_default_budget_10_and_claim(o) -> None:
    assert WC(FREE).budget() == 10 and WC(FREE, buzz_budget=99999).budget() == 1000
    caller = WC.from_claims({"sub": "user:2", "appId": "a", "blockId": "b", "scopes": ["ai:write:budgeted"],
                             "buzzBudget": 50, "maxBrowsingLevel": 31})
    assert caller.user_id == 2 and caller.budget() == 50 and caller.mature
    assert not WC.from_claims({"sub": "user:2", "maxBrowsingLevel": 3}).mature
    with pytest.raises(ServiceError):
        WC.from_claims({"sub": "anon"})


def test_insufficient_buzz_403_and_estimate(o) -> None:
    with o.store.write() as db:
        buzz.open_accounts(db, FREE, o.clock.iso())
        db.execute("UPDATE buzz_accounts SET balance = 0 WHERE user_id = ?", (FREE,))
    est = call(o, workflows.estimate, WC(FREE), t2i())
    assert est["cost"]["total"] == 2 and est["transactions"]["insufficientBuzz"] is True
    with pytest.raises(ServiceError) as err:
        call(o, workflows.submit, WC(FREE), t2i())
    assert (err.value.status, err.value.code) == (403, "insufficient_buzz")
    with o.store.read() as db:
        assert db.execute("SELECT count(*) FROM workflows").fetchone()[0] == 0


def test_estimate_charges_nothing(o) -> None:
    before = buzz.balance(o.store, o.clock, FREE)
    est = call(o, workflows.estimate, WC(FREE), upscale_payload(512))
    assert est["cost"]["total"] == 5 and est["spentAccountType"] == "green"
    assert est["transactions"]["insufficientBuzz"] is False
    assert buzz.balance(o.store, o.clock, FREE) == before


def test_poll_is_private_to_viewer_and_app(o) -> None:
    wf = call(o, workflows.submit, WC(FREE, app_id="a"), t2i())
    # The platform's two gates: the id must name the viewer, the record must carry the app's tag (403 each).
    for other, detail in ((WC(MEMBER, app_id="a"), "workflow does not belong to this viewer"),
                          (WC(FREE, app_id="b"), "workflow is not tagged for this app")):
        with pytest.raises(ServiceError) as err:
            call(o, workflows.poll, other, wf["id"])
        assert err.value.status == 403 and err.value.detail == detail
    assert [w["id"] for w in call(o, workflows.query, WC(FREE, app_id="a"))["items"]] == [wf["id"]]
    assert call(o, workflows.query, WC(FREE, app_id="b"))["items"] == []

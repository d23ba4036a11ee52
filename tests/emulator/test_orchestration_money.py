"""Money safety of the orchestration service, and the fidelity rows of the 2026-11-27 reviews it owns.

Every money movement of a workflow or a recipe is one transaction with what it pays for; a failure
between the charge and the record (here: an injected one) leaves no charge behind. A recipe job a
crash cut short is refunded at start. The crash test over a real process is
``test_crash_money.py`` (and ``benchmarks/crash_money.py``).

Review rows and their tests (platform-fidelity-2 = P2, reliability = R):

=====================================================================  =========================================
Row                                                                    Test
=====================================================================  =========================================
R 1.6 workflow debit without a workflow                                test_a_workflow_charge_commits_with_its_row,
                                                                       test_crash_money.py
R 1.7 imageUpscaler charge without a blob                              test_an_upscale_charge_names_its_job_and_fails_whole,
                                                                       test_a_job_cut_short_is_refunded_at_start,
                                                                       test_crash_money.py
P2 §2 currencies                                                       test_civitai_client_js (money), test_currencies_*,
                                                                       test_block_currencies_*, test_block_account_type_*
P2 §2 externalId                                                       test_civitai_client_js (money), test_external_id_*
P2 §2 callbacks                                                        test_civitai_client_js (money), test_cancel_*,
                                                                       test_events_written_before_a_restart_*
P2 §2 tips; step priority/timeout/retries                              test_civitai_client_js (money), test_timeout_*
P2 §2 ?whatif=true a Workflow; ?wait= 202                              test_civitai_client_js (money)
P2 §2 errors.messages in a 400                                         test_civitai_client_js (money), test_bad_template_*,
                                                                       test_every_submission_400_carries_messages
P2 §2 workflow id <userId>-<timestamp>                                 test_ids_name_their_owner
P2 §2/§3 #13 provenance tags on block workflows                        test_block_workflows_carry_provenance_tags
P2 §3 #9 textToImage needs modelId and modelVersionId                  test_block_text_to_image_body_is_checked_as_the_platform
P2 §3 #10 prompt at most 1500                                          test_block_text_to_image_body_is_checked_as_the_platform
P2 §3 #12 id not naming the viewer: 403                                test_block_rest.py::test_workflows_of_another_viewer_or_app_are_403
P2 §3 #13 another viewer's workflow: text                              test_workflows.py::test_poll_is_private_to_viewer_and_app
P2 "also found": block tokens lack appBlockId                          test_block_tokens_carry_app_block_id
=====================================================================  =========================================
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from inproc import URLS
from orch_env import FREE, MEMBER, b64, make, png
from test_block_rest import ALL, Block, T2I, ok, refused

from blockkit.emulator.services import blocktokens, buzz
from blockkit.emulator.services.orchestration import workflows
from blockkit.emulator.services.orchestration import imaging, upscaler
from blockkit.emulator.services.errors import ServiceError
from blockkit.emulator.store import orchestration as orch_store

WC = workflows.WorkflowCaller
URL = "/v2/consumer/workflows"


@pytest.fixture
def o(tmp_path: Path):
    return make(tmp_path)


def t2i(**extra: object) -> dict[str, Any]:
    return {"steps": [{"$type": "textToImage", "name": "gen", "input": {"prompt": "a red fox", "seed": 7}}], **extra}


def books(o: Any) -> dict[str, Any]:
    """Each pool's balance against its ledger, and the ledger rows of workflows and recipe jobs."""
    with o.store.read() as db:
        balances = dict(db.execute("SELECT user_id || '/' || pool, balance FROM buzz_accounts").fetchall())
        ledger = dict(db.execute("SELECT user_id || '/' || pool, sum(amount) FROM buzz_transactions"
                                 " GROUP BY user_id, pool").fetchall())
        orphans = db.execute("SELECT count(*) FROM buzz_transactions t WHERE kind = 'workflow'"
                             " AND NOT EXISTS (SELECT 1 FROM workflows w WHERE w.id = t.reference)").fetchone()[0]
        unnamed = db.execute("SELECT count(*) FROM buzz_transactions WHERE kind = 'recipe'"
                             " AND reference NOT IN (SELECT id FROM recipe_jobs)").fetchone()[0]
    return {"balanced": all(balances[k] == ledger.get(k, 0) for k in balances), "orphans": orphans,
            "unnamed_recipe_charges": unnamed}


# --- R 1.6 / 1.7: one transaction per money movement ---------------------------------------------

def test_a_workflow_charge_commits_with_its_row(o, monkeypatch: pytest.MonkeyPatch) -> None:
    before = buzz.balance(o.store, o.clock, FREE)

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("the process died between the charge and the row")

    monkeypatch.setattr(orch_store, "insert_workflow", broken)
    with pytest.raises(RuntimeError):
        workflows.submit(o.store, o.clock, URLS, WC.api_key(FREE), t2i())
    assert buzz.balance(o.store, o.clock, FREE) == before  # no charge without its workflow
    with o.store.read() as db:
        assert db.execute("SELECT count(*) FROM blobs").fetchone()[0] == 0
    assert not list((o.store.path.parent / "blobs").glob("*"))  # the drawn files went too
    assert books(o) == {"balanced": True, "orphans": 0, "unnamed_recipe_charges": 0}


def test_an_upscale_charge_names_its_job_and_fails_whole(o, monkeypatch: pytest.MonkeyPatch) -> None:
    payload = {"image": b64(png(64, 64))}
    answer = upscaler.invoke(o.store, o.clock, URLS, FREE, payload)
    with o.store.read() as db:
        job = dict(db.execute("SELECT id, status, blob_id, cost FROM recipe_jobs").fetchone())
        charge = db.execute("SELECT reference, description FROM buzz_transactions WHERE kind = 'recipe'").fetchone()
    assert job["status"] == "succeeded" and job["blob_id"] == answer["blob"]["id"]
    assert charge[0] == job["id"] and job["id"] in charge[1]  # the ledger names its job

    before = buzz.balance(o.store, o.clock, FREE)

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("resampler crashed")

    monkeypatch.setattr(imaging, "upscale", broken)
    with pytest.raises(RuntimeError):
        upscaler.invoke(o.store, o.clock, URLS, FREE, payload)
    assert buzz.balance(o.store, o.clock, FREE) == before
    with o.store.read() as db:
        failed = db.execute("SELECT id, status FROM recipe_jobs WHERE status != 'succeeded'").fetchall()
        refunds = db.execute("SELECT reference FROM buzz_transactions WHERE kind = 'refund'").fetchall()
    assert [tuple(r) for r in failed] == [(failed[0][0], "refunded")] and [r[0] for r in refunds] == [failed[0][0]]
    assert books(o)["balanced"]


def test_a_job_cut_short_is_refunded_at_start(o) -> None:
    # What a kill -9 between the charge and the result leaves: a 'running' job and its debit.
    now = o.clock.iso()
    with o.store.write() as db:
        debits = buzz.charge(db, now, FREE, 3, ("green", "blue"), kind="recipe", reference="job-1",
                             description="imageUpscaler job job-1")
        orch_store.insert_job(db, "job-1", FREE, "imageUpscaler", 3, orjson.dumps(debits).decode(), now)
    spent = buzz.balance(o.store, o.clock, FREE)
    assert upscaler.recover(o.store, o.clock) == ["job-1"]
    assert upscaler.recover(o.store, o.clock) == []  # once
    after = buzz.balance(o.store, o.clock, FREE)
    assert sum(after.values()) == sum(spent.values()) + 3
    with o.store.read() as db:
        row = db.execute("SELECT amount, description FROM buzz_transactions WHERE kind = 'refund'"
                         " AND reference = 'job-1'").fetchone()
        assert db.execute("SELECT status FROM recipe_jobs WHERE id = 'job-1'").fetchone()[0] == "refunded"
    assert row[0] == 3 and "job-1" in row[1] and "restart" in row[1]


# --- currencies, externalId, timeouts, callbacks -------------------------------------------------

def test_currencies_are_drained_in_their_order_and_limit_the_pools(o) -> None:
    buzz.purchase(o.store, o.clock, FREE, 1, pool="yellow")
    wf = workflows.submit(o.store, o.clock, URLS, WC.api_key(FREE), t2i(currencies=["yellow", "blue"]))
    assert wf["currencies"] == ["yellow", "blue"]
    assert {t["accountType"]: t["amount"] for t in wf["transactions"]["list"]} == {"yellow": 1, "blue": 1}
    # green never pays a mature workflow; a list of only that is refused
    with pytest.raises(ServiceError) as err:
        workflows.submit(o.store, o.clock, URLS, WC.api_key(FREE), t2i(currencies=["green"], allowMatureContent=True))
    assert err.value.status == 400 and err.value.code == "bad_currencies"


def test_currencies_short_of_buzz_are_403_even_when_other_pools_hold_plenty(o) -> None:
    with pytest.raises(ServiceError) as err:  # FREE holds no yellow, and plenty of green and blue
        workflows.submit(o.store, o.clock, URLS, WC.api_key(FREE), t2i(currencies=["yellow"]))
    assert err.value.status == 403 and "(yellow)" in err.value.detail


def test_external_id_is_per_owner(o) -> None:
    first = workflows.submit(o.store, o.clock, URLS, WC.api_key(FREE), t2i(externalId="k-1"))
    again = workflows.submit(o.store, o.clock, URLS, WC.api_key(FREE), t2i(externalId="k-1"))
    other = workflows.submit(o.store, o.clock, URLS, WC.api_key(MEMBER), t2i(externalId="k-1"))
    assert again["id"] == first["id"] and other["id"] != first["id"]
    with o.store.read() as db:
        assert db.execute("SELECT count(*) FROM buzz_transactions WHERE kind = 'workflow'").fetchone()[0] == 2


def test_bad_template_members_are_400_with_messages(o) -> None:
    for bad in ({"currencies": "yellow"}, {"externalId": "x" * 129}, {"tips": {"civitai": 2}},
                {"callbacks": [{"url": "ftp://x", "type": ["workflow:*"]}]},
                {"callbacks": [{"url": "http://127.0.0.1:9/", "type": ["workflow:done"]}]}):
        answer = o.orch.post(URL, headers=o.auth(), json=t2i(**bad))
        assert answer.status_code == 400, bad
        assert answer.json()["errors"]["messages"] == [answer.json()["detail"]]
    step = t2i()
    step["steps"][0].update(timeout="soon")
    assert o.orch.post(URL, headers=o.auth(), json=step).status_code == 400
    step["steps"][0].update(timeout="00:00:10", priority="urgent")
    assert o.orch.post(URL, headers=o.auth(), json=step).status_code == 400


def test_timeout_expires_on_the_clock_and_refunds_once(o) -> None:
    payload = t2i()
    payload["steps"][0].update(timeout="00:00:01", retries=1)
    before = buzz.balance(o.store, o.clock, FREE)
    wf = workflows.submit(o.store, o.clock, URLS, WC.api_key(FREE), payload)
    o.advance(2.5)  # the first attempt is running
    running = workflows.poll(o.store, o.clock, URLS, WC.api_key(FREE), wf["id"])
    assert running["status"] == "processing" and running["steps"][0]["jobs"][0]["status"] == "processing"
    o.advance(10)
    assert workflows.settle_due(o.store, o.clock) == 1  # the worker's sweep refunds it
    assert workflows.settle_due(o.store, o.clock) == 0
    done = workflows.poll(o.store, o.clock, URLS, WC.api_key(FREE), wf["id"])
    assert done["status"] == "expired" and [j["status"] for j in done["steps"][0]["jobs"]] == ["expired"] * 2
    assert done["forceRefunded"] is True and buzz.balance(o.store, o.clock, FREE) == before
    assert books(o)["balanced"]


def test_cancel_drops_the_events_not_yet_due_and_raises_canceled(o) -> None:
    hooks = [{"url": "http://127.0.0.1:9/hook", "type": ["workflow:*", "step:*"]}]
    wf = workflows.submit(o.store, o.clock, URLS, WC.api_key(FREE), t2i(callbacks=hooks))
    o.advance(3)
    workflows.cancel(o.store, o.clock, URLS, WC.api_key(FREE), wf["id"])
    with o.store.read() as db:
        rows = db.execute("SELECT event_type, state FROM workflow_events ORDER BY id").fetchall()
    pending = [r[0] for r in rows if r[1] == "pending"]
    dropped = [r[0] for r in rows if r[1] == "dropped"]
    assert pending == ["workflow:unassigned", "workflow:processing", "step:processing", "step:canceled",
                       "workflow:canceled"]
    assert dropped == ["step:succeeded", "workflow:succeeded"]


# --- ids, tags, block bodies, tokens -------------------------------------------------------------

def test_ids_name_their_owner(o) -> None:
    wf = workflows.submit(o.store, o.clock, URLS, WC.api_key(MEMBER), t2i())
    owner, stamp = wf["id"].split("-", 1)
    assert owner == str(MEMBER) and stamp.isdigit() and workflows.owner_of(wf["id"]) == MEMBER


def test_block_workflows_carry_provenance_tags(o) -> None:
    block = Block(o, ALL, MEMBER, block="blk", app="app1", instance="inst-1", budget=100)
    workflow_id = ok(block.post("workflows/submit", {"body": T2I}))["snapshot"]["workflowId"]
    seen = o.orch.get(f"{URL}/{workflow_id}", headers=o.auth(MEMBER)).json()
    with o.store.read() as db:
        base = db.execute("SELECT base_model FROM model_versions WHERE id = 1").fetchone()
    assert seen["tags"] == ["civitai", "generation", "image", "txt2img", *([base[0]] if base else []), "app-block",
                            "app-block:app1", "app-block:block:blk", "app-block:instance:inst-1"]


@pytest.mark.parametrize(("body", "message"), [
    ({"kind": "textToImage", "params": {"prompt": "a lighthouse"}},
     "modelId: Invalid input: expected number, received undefined"),
    ({"kind": "textToImage", "modelId": 1, "params": {"prompt": "a lighthouse"}},
     "modelVersionId: Invalid input: expected number, received undefined"),
    ({"kind": "textToImage", "modelId": 0, "modelVersionId": 1, "params": {"prompt": "x"}},
     "modelId: Too small: expected number to be >0"),
    ({"kind": "textToImage", "modelId": 1, "modelVersionId": 1, "params": {"prompt": "x" * 1501}},
     "params.prompt: Too big: expected string to have <=1500 characters"),
    ({"kind": "textToImage", "modelId": 1, "modelVersionId": 1, "params": {"prompt": "x", "negativePrompt": "n" * 1501}},
     "params.negativePrompt: Too big: expected string to have <=1500 characters"),
    ({"kind": "textToImage", "modelId": 1, "modelVersionId": 1, "params": {"prompt": "x", "steps": 51}},
     "params.steps: Too big: expected number to be <=50"),
])
def test_block_text_to_image_body_is_checked_as_the_platform(o, body: dict[str, Any], message: str) -> None:
    block = Block(o, ALL, MEMBER, budget=100)
    before = buzz.balance(o.store, o.clock, MEMBER)
    answer = refused(block.post("workflows/submit", {"body": body}), 400)
    assert answer == {"error": "Invalid request body", "details": {"formErrors": [], "fieldErrors": {"body": [message]}}}
    assert block.bridge("SUBMIT_WORKFLOW", {"body": body})["snapshot"]["error"] == message
    assert buzz.balance(o.store, o.clock, MEMBER) == before
    # 1500 characters is still fine
    fine = {**T2I, "params": {**T2I["params"], "prompt": "y" * 1500}}
    assert ok(block.post("workflows/submit", {"body": fine}))["snapshot"]["status"] == "pending"


def test_block_tokens_carry_app_block_id(o) -> None:
    block = Block(o, ALL, MEMBER, block="blk", app="app1")
    assert block.claims["appBlockId"] == blocktokens.app_block_id("app1", "blk") == "app1/blk"
    forged = {k: v for k, v in block.claims.items() if k != "appBlockId"}
    key = blocktokens.signing_key(o.store, o.clock.iso())
    from joserfc import jwt

    token = jwt.encode({"alg": "RS256", "kid": key.kid, "typ": "JWT"}, forged, key.key, algorithms=["RS256"])
    assert blocktokens.verify(token, block.state) is None  # the platform's verifier refuses it too
    assert blocktokens.verify(block.token, block.state) is not None


@pytest.mark.parametrize(("mature", "account_type", "drained"), [
    (False, None, ["blue"]), (False, "green", ["green"]), (True, None, ["blue"]), (True, "yellow", ["yellow"]),
])
def test_block_currencies_are_blue_first_with_the_domain_currency(o, mature: bool, account_type: str | None,
                                                                  drained: list[str]) -> None:
    caller = WC(MEMBER, app_id="app1", block_id="blk", mature=mature, buzz_budget=100)
    payload = t2i(**({"accountType": account_type} if account_type else {}))
    wf = workflows.submit(o.store, o.clock, URLS, caller, payload)
    assert wf["currencies"] == ([account_type] if account_type else []) + [
        c for c in ("blue", "yellow" if mature else "green") if c != account_type]
    assert [t["accountType"] for t in wf["transactions"]["list"]] == drained


def test_block_account_type_outside_its_domain_is_refused(o) -> None:
    block = Block(o, ALL, MEMBER, budget=100)  # a safe-for-work ceiling: blue and green
    before = buzz.balance(o.store, o.clock, MEMBER)
    answer = refused(block.post("workflows/submit", {"body": {**T2I, "accountType": "yellow"}}), 400)
    assert answer["details"]["fieldErrors"]["body"] == ["buzz account 'yellow' is not spendable for this app's"
                                                        " content rating"]
    assert buzz.balance(o.store, o.clock, MEMBER) == before


def test_every_submission_400_carries_messages(o) -> None:
    """A step's own input checks (shared with the recipe route) and the Buzz pool checks answer with
    ``errors.messages`` too, where the platform reads an orchestrator 400's reasons."""
    for bad in ({"steps": [{"$type": "imageUpscaler", "input": {"image": "x", "numberOfRepeats": 9}}]},
                t2i(accountType="red")):
        answer = o.orch.post(URL, headers=o.auth(), json=bad)
        assert answer.status_code == 400 and answer.json()["errors"]["messages"] == [answer.json()["detail"]]


def test_events_written_before_a_restart_are_delivered_by_the_next_worker(o) -> None:
    """The outbox outlives the process: events of a workflow submitted with no worker running (as
    if the emulator died right after answering) are POSTed by the worker of the next start."""
    import time

    from test_civitai_client_js import Receiver

    from blockkit.emulator.services.orchestration.callbacks import Background

    receiver = Receiver()
    try:
        hooks = [{"url": receiver.url, "type": ["workflow:succeeded"]}]
        wf = workflows.submit(o.store, o.clock, URLS, WC.api_key(FREE), t2i(callbacks=hooks))
        o.advance(30)
        worker = Background(o.store, o.clock, interval=0.05).start()
        try:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and not receiver.bodies:
                time.sleep(0.05)
        finally:
            worker.stop()
    finally:
        receiver.close()
    assert receiver.refused == 1  # the first attempt got a 500 and was tried again
    assert [(b["$type"], b["workflowId"], b["status"]) for b in receiver.bodies] == [("workflow", wf["id"], "succeeded")]
    with o.store.read() as db:
        assert [tuple(r) for r in db.execute("SELECT state, attempts FROM workflow_events")] == [("delivered", 2)]


def test_deleting_an_expired_workflow_before_the_sweep_still_refunds_it(o) -> None:
    payload = t2i()
    payload["steps"][0].update(timeout="00:00:01")
    before = buzz.balance(o.store, o.clock, FREE)
    wf = workflows.submit(o.store, o.clock, URLS, WC.api_key(FREE), payload)
    o.advance(10)  # expired, and no worker has swept it
    assert o.orch.delete(f"{URL}/{wf['id']}", headers=o.auth()).status_code == 204
    assert buzz.balance(o.store, o.clock, FREE) == before
    assert books(o)["balanced"]


# --- security review 2 S02, reliability review 2 R04 and R05: the callback worker ----------------------

class Trickler:
    """A receiver that answers ``HTTP/1.1 200 OK`` and then one header byte every 0.2 s, for ever:
    each socket read gets a byte in time, so only a deadline on the whole delivery ends it."""

    def __init__(self) -> None:
        import socket
        import threading

        self.sock = socket.create_server(("127.0.0.1", 0))
        self.connections = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/slow"

    def _serve(self) -> None:
        import threading

        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            threading.Thread(target=self._trickle, args=(conn,), daemon=True).start()

    def _trickle(self, conn: Any) -> None:
        try:
            conn.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
            while not self.stop.wait(0.2):
                conn.sendall(b"a")
        except OSError:
            pass
        finally:
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=5)
        self.sock.close()


def _wait_until(check: Any, guard: float = 60) -> bool:
    """Poll ``check`` until true; ``guard`` only stops a broken run from waiting for ever."""
    import time

    deadline = time.monotonic() + guard
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False


def test_a_slow_receiver_holds_up_no_other_callback_and_no_refund(o) -> None:
    from test_civitai_client_js import Receiver

    from blockkit.emulator.services.orchestration.callbacks import Background

    slow, good = Trickler(), Receiver()
    good.refused = 1  # answer 200 from the first POST
    worker = None
    try:
        every = ["workflow:*", "step:*", "job:*"]
        workflows.submit(o.store, o.clock, URLS, WC.api_key(FREE), t2i(callbacks=[{"url": slow.url, "type": every}]))
        workflows.submit(o.store, o.clock, URLS, WC.api_key(FREE), t2i(callbacks=[{"url": slow.url, "type": every}]))
        wanted = workflows.submit(o.store, o.clock, URLS, WC.api_key(FREE),
                                  t2i(callbacks=[{"url": good.url, "type": ["workflow:succeeded"]}]))
        expiring = t2i()
        expiring["steps"][0].update(timeout="00:00:01")
        before = buzz.balance(o.store, o.clock, FREE)
        expired = workflows.submit(o.store, o.clock, URLS, WC.api_key(FREE), expiring)
        o.advance(30)
        worker = Background(o.store, o.clock, interval=0.05).start()
        assert _wait_until(lambda: slow.connections >= 1)
        assert _wait_until(lambda: any(b["workflowId"] == wanted["id"] for b in good.bodies)), \
            "the good receiver's event waited behind the slow receiver"

        def refunded() -> bool:
            with o.store.read() as db:
                return db.execute("SELECT count(*) FROM buzz_transactions WHERE reference = ? AND amount > 0",
                                  (expired["id"],)).fetchone()[0] > 0

        assert _wait_until(refunded), "the expired workflow's refund waited behind the slow receiver"
        assert buzz.balance(o.store, o.clock, FREE) == before  # the expired one cost nothing in the end
    finally:
        if worker is not None:
            worker.stop()
        slow.close()
        good.close()


def test_a_delivery_has_a_deadline_for_the_whole_of_it() -> None:
    from blockkit.emulator.services.orchestration.callbacks import DeadlineExceeded, post_json

    slow = Trickler()
    try:
        with pytest.raises(DeadlineExceeded):
            post_json(slow.url, b"{}", deadline=1.0)
    finally:
        slow.close()


def test_a_receiver_down_longer_than_the_first_retries_still_gets_its_event_and_a_drop_is_told(o) -> None:
    import socket

    from test_civitai_client_js import Receiver

    from blockkit.emulator.services.orchestration import callbacks

    # The first retries (0.5, 1, 2, 4, 8 s) add up to 16 s; the retries go on for far longer.
    assert sum(callbacks.retry_delay(n) for n in range(1, callbacks.MAX_ATTEMPTS)) > 30 * 60
    closed = socket.create_server(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there now: connections are refused

    def event_of(workflow_id: str) -> dict[str, Any]:
        with o.store.read() as db:
            return dict(db.execute("SELECT id, workflow_id, url, event_type, body, due_at, attempts, state"
                                   " FROM workflow_events WHERE workflow_id = ?", (workflow_id,)).fetchone())

    hooks = [{"url": f"http://127.0.0.1:{port}/hooks", "type": ["workflow:succeeded"]}]
    later = workflows.submit(o.store, o.clock, URLS, WC.api_key(FREE), t2i(callbacks=hooks))
    dropped = workflows.submit(o.store, o.clock, URLS, WC.api_key(FREE), t2i(callbacks=hooks))
    o.advance(30)
    for _ in range(6):  # the six attempts that used to be all
        assert not callbacks.deliver_one(o.store, o.clock, event_of(later["id"]))
    assert event_of(later["id"])["state"] == "pending"
    receiver = Receiver()  # the receiver is back, on the same port
    receiver.server.server_close()
    import http.server

    receiver.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), receiver.server.RequestHandlerClass)
    import threading

    threading.Thread(target=receiver.server.serve_forever, daemon=True).start()
    receiver.refused = 1
    try:
        assert callbacks.deliver_one(o.store, o.clock, event_of(later["id"]))
        assert [b["workflowId"] for b in receiver.bodies] == [later["id"]]
    finally:
        receiver.close()
    told: list[str] = []
    for _ in range(callbacks.MAX_ATTEMPTS):
        callbacks.deliver_one(o.store, o.clock, event_of(dropped["id"]), note=told.append)
    assert event_of(dropped["id"])["state"] == "failed"
    assert len(told) == 1 and dropped["id"] in told[0] and "dropped after" in told[0]
    with o.store.read() as db:
        listed = orch_store.events_in(db, ("failed",), 10)
    assert [e["workflow_id"] for e in listed] == [dropped["id"]] and listed[0]["last_error"]

"""More refusals' reasons in the request journal: shared storage and workflows.

Each refusal is made the way a block or an orchestration client makes it (HTTP to a live in-process
emulator), its wire answer checked to be the platform's as before, and its journal entry's reason
checked word for word: the limit beside the count, the entry's author beside the caller, the budget's
source beside the price, the workflow's state beside what the request asked. A refusal the platform
answers 200 (a budget refusal's failed snapshot, a second vote, a withdraw of another's entry) shows
its reason too; an answer that refuses nothing shows none.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import httpx
from test_journal import _block_token, entries_since, mark, only

from blockkit.emulator import journal
from blockkit.emulator.services import appstorage

SHARED_READ, SHARED_WRITE = "apps:storage:shared:read", "apps:storage:shared:write"
BUDGET = "ai:write:budgeted"
BLOCKS = "/api/v1/blocks/"
WORKFLOWS = "/v2/consumer/workflows"


def _people(emu: Any) -> tuple[int, int]:
    from blockkit.emulator.seed import landmarks

    marks = landmarks(emu.store)
    return marks["member"]["id"], marks["free_user"]["id"]


def _author_and_other(emu: Any, name: str) -> tuple[int, int, _Block, _Block]:
    """The member's and the free user's ids, and a shared-storage block token for each (the member authors)."""
    member, free = _people(emu)
    return (member, free, _Block(emu, f"inst-{name}-author", [SHARED_READ, SHARED_WRITE], member),
            _Block(emu, f"inst-{name}-other", [SHARED_READ, SHARED_WRITE], free))


class _Block:
    """A viewer's block token for block ``blk`` of app ``app1``, and its REST calls."""

    def __init__(self, emu: Any, instance: str, scopes: list[str], user: int | None) -> None:
        self.emu = emu
        self.minted = _block_token(emu, instance, scopes, user, consent_to=[] if user is None else None)
        self.headers = {"Authorization": f"Bearer {self.minted.token}"}

    def post(self, path: str, body: Any) -> httpx.Response:
        return httpx.post(self.emu.urls.base_url + BLOCKS + path, json=body, headers=self.headers, timeout=30)

    def get(self, path: str, params: Any = None) -> httpx.Response:
        return httpx.get(self.emu.urls.base_url + BLOCKS + path, params=params, headers=self.headers, timeout=30)


def _reason(emu: Any, since: int, path: str) -> Any:
    return only(entries_since(emu.urls.base_url, since), path)["reason"]


# --- shared storage ------------------------------------------------------------------------------

def test_the_shared_entry_limit_names_the_author_s_count(live_emulator: Any) -> None:
    emu = live_emulator
    member, _ = _people(emu)
    author = _Block(emu, "inst-shared-limit", [SHARED_READ, SHARED_WRITE], member)
    now = emu.clock.iso()
    with emu.store.write() as db:  # 48 live entries, 2 hidden, 1 withdrawn (not counted)
        for status in ["active"] * 48 + ["hidden"] * 2 + ["withdrawn"]:
            db.execute("INSERT INTO shared_entries (block_id, board, user_id, value, size, status, created_at,"
                       " updated_at) VALUES ('blk', '', ?, '{\"title\":\"t\"}', 13, ?, ?, ?)",
                       (member, status, now, now))
    since = mark(emu.urls.base_url)
    answer = author.post("shared-storage/append", {"value": {"title": "one more"}})
    assert answer.status_code == 403 and answer.json() == {"message": appstorage.TOO_MANY_ENTRIES}
    assert _reason(emu, since, BLOCKS + "shared-storage/append") == (
        f"shared storage entry limit: user {member} holds 50 entries (2 of them hidden) in block"
        " blk's shared space, and an author may hold 50 (withdrawn entries do not count); withdraw one to append"
        " another")


def test_only_the_author_updates_or_withdraws_and_the_reason_names_both(live_emulator: Any) -> None:
    emu = live_emulator
    member, free, author, stranger = _author_and_other(emu, "shared")
    first = author.post("shared-storage/append", {"value": {"title": "Mine"}})
    assert first.status_code == 200, first.text
    key = first.json()["key"]
    base = emu.urls.base_url

    since = mark(base)
    answer = stranger.post("shared-storage/update", {"key": key, "value": {"title": "Hijack"}})
    assert answer.status_code == 403 and answer.json() == {"message": "you can only edit your own submissions"}
    assert _reason(emu, since, BLOCKS + "shared-storage/update") == (
        f"shared storage update: entry {key} in block blk's shared space is user {member}'s, and this viewer is"
        f" user {free}; only an entry's author updates it")

    # The platform leaves another's entry alone and answers 200; the journal says why nothing was withdrawn.
    since = mark(base)
    answer = stranger.post("shared-storage/withdraw", {"key": key})
    assert answer.status_code == 200 and answer.json() == {"ok": True, "deleted": False}
    entry = only(entries_since(base, since), BLOCKS + "shared-storage/withdraw")
    assert entry["status"] == 200 and entry["reason"] == (
        f"shared storage withdraw: entry {key} in block blk's shared space is user {member}'s, and this viewer is"
        f" user {free}; only an entry's author withdraws it, so it was left alone (deleted: false)")

    # The author's own withdraw is no refusal; an update after it names when the entry went.
    since = mark(base)
    assert author.post("shared-storage/withdraw", {"key": key}).json() == {"ok": True, "deleted": True}
    answer = author.post("shared-storage/update", {"key": key, "value": {"title": "Back"}})
    assert answer.status_code == 404 and answer.json() == {"message": "request not found"}
    with emu.store.read() as db:
        withdrawn_at = db.execute("SELECT updated_at FROM shared_entries WHERE status = 'withdrawn'").fetchone()[0]
    entries = entries_since(base, since)
    assert only(entries, BLOCKS + "shared-storage/withdraw")["reason"] is None
    assert only(entries, BLOCKS + "shared-storage/update")["reason"] == (
        f"shared storage update: entry {key} in block blk's shared space was withdrawn by its author at"
        f" {withdrawn_at}")

    since = mark(base)
    answer = author.post("shared-storage/vote", {"key": "0" * 26})
    assert answer.status_code == 404 and answer.json() == {"message": "request not found"}
    answer = author.post("shared-storage/report", {"key": "not-a-key"})
    assert answer.status_code == 404 and answer.json() == {"message": "request not found"}
    entries = entries_since(base, since)
    assert only(entries, BLOCKS + "shared-storage/vote")["reason"] == (
        f"shared storage vote: block blk's shared space holds no entry {'0' * 26}")
    assert only(entries, BLOCKS + "shared-storage/report")["reason"] == (
        "shared storage report: 'not-a-key' is not a shared entry key (the 26 characters, 0-9 and A-Z without I,"
        " L, O and U, that shared_append answered)")


def test_a_second_vote_names_the_entry_already_voted(live_emulator: Any) -> None:
    emu = live_emulator
    member, free, author, voter = _author_and_other(emu, "vote")
    key = author.post("shared-storage/append", {"value": {"title": "Vote me"}}).json()["key"]
    base = emu.urls.base_url
    since = mark(base)
    assert voter.post("shared-storage/vote", {"key": key}).json() == {"count": 1}
    assert only(entries_since(base, since), BLOCKS + "shared-storage/vote")["reason"] is None
    since = mark(base)
    again = voter.post("shared-storage/vote", {"key": key})
    assert again.status_code == 200 and again.json() == {"count": 1}  # one vote per viewer: the count stays
    assert _reason(emu, since, BLOCKS + "shared-storage/vote") == (
        f"shared storage vote: user {free} had voted for entry {key} in block blk's shared space already, and a"
        " viewer votes once; the count stays 1")
    assert voter.post("shared-storage/unvote", {"key": key}).json() == {"count": 0}
    since = mark(base)
    again = voter.post("shared-storage/unvote", {"key": key})
    assert again.status_code == 200 and again.json() == {"count": 0}
    assert _reason(emu, since, BLOCKS + "shared-storage/unvote") == (
        f"shared storage unvote: user {free} has no vote on entry {key} in block blk's shared space to take back;"
        " the count stays 0")


def test_shared_counts_names_how_many_keys_were_sent(live_emulator: Any) -> None:
    emu = live_emulator
    member, _ = _people(emu)
    reader = _Block(emu, "inst-counts", [SHARED_READ], member)
    since = mark(emu.urls.base_url)
    answer = reader.get("shared-storage/counts", [("keys", f"k{i}") for i in range(101)])
    assert answer.status_code == 400 and answer.json() == {
        "error": "Invalid query",
        "details": {"formErrors": [], "fieldErrors": {"keys": ["Array must contain at most 100 element(s)"]}}}
    assert _reason(emu, since, BLOCKS + "shared-storage/counts") == "shared_counts takes 1-100 keys; this request sent 101"
    assert reader.get("shared-storage/counts", [("keys", f"k{i}") for i in range(100)]).status_code == 200


def test_a_signed_out_shared_write_says_the_viewer_is_signed_out(live_emulator: Any) -> None:
    from blockkit.dev import bridge

    emu = live_emulator
    anon = _Block(emu, "inst-anon", [SHARED_READ, SHARED_WRITE], None)
    since = mark(emu.urls.base_url)
    answer = anon.post("shared-storage/append", {"value": {"title": "anon"}})
    assert answer.status_code == 403 and answer.json() == {"error": f"missing required scope: {SHARED_WRITE}"}
    assert _reason(emu, since, BLOCKS + "shared-storage/append") == (
        f"this route needs the block scope {SHARED_WRITE}, which block app1/blk declares but a signed-out viewer's"
        f" token never holds; the block token holds {SHARED_READ}")
    # The host bridge (blockkit dev) hands the signed-out write to the service, which says why in its words.
    host = SimpleNamespace(platform=SimpleNamespace(store=emu.store, clock=emu.clock, urls=emu.urls))
    holder, token = journal.begin()
    try:
        reply = bridge._HANDLERS["SHARED_APPEND"](host, anon.minted.claims, {"value": {"title": "anon"}})
    finally:
        journal.end(token)
    assert reply == {"error": appstorage.SHARED_SIGNED_OUT}
    assert holder.reason == (
        "shared storage append: the block token for block blk names no viewer (signed out); every viewer reads the"
        " shared space, and only a signed-in viewer appends, updates, votes, unvotes, withdraws or reports")


# --- workflows -----------------------------------------------------------------------------------

def _t2i(width: int = 512, height: int = 512, quantity: int = 1, **extra: Any) -> dict[str, Any]:
    return {"steps": [{"$type": "textToImage", "name": "gen", "input": {"prompt": "a red fox", "seed": 7,
                                                                        "width": width, "height": height,
                                                                        "quantity": quantity}}], **extra}


def test_a_workflow_over_its_budget_names_the_price_and_the_budget_s_source(live_emulator: Any) -> None:
    from blockkit.emulator.services.orchestration import imaging

    emu = live_emulator
    member, _ = _people(emu)
    block = _Block(emu, "inst-budget", [BUDGET], member)  # the install sets no budget: the token carries 10
    assert block.minted.claims["buzzBudget"] == 10
    each = imaging.price(2048, 2048)
    since = mark(emu.urls.base_url)
    answer = block.post("workflows/submit", {"body": _t2i(2048, 2048, 4)})
    # The platform's answer: a 200 failed snapshot quoting the cost.
    assert answer.status_code == 200 and answer.json() == {"snapshot": {
        "workflowId": "failed", "status": "failed", "cost": {"total": 4 * each},
        "error": f"insufficient buzz budget: estimate {4 * each} exceeds budget 10"}}
    entry = only(entries_since(emu.urls.base_url, since), BLOCKS + "workflows/submit")
    assert entry["status"] == 200 and entry["reason"] == (
        f"budget per generation: this workflow costs {4 * each} Buzz ({4 * each} for 4 images of 2048x2048 at"
        f" {each} Buzz) and the budget is 10 (the block token's buzzBudget claim: the install's budget per"
        f" generation, 10 when the install sets none); over by {4 * each - 10}")
    # An answer that refuses nothing carries no reason.
    since = mark(emu.urls.base_url)
    assert block.post("workflows/estimate", {"body": _t2i(64, 64)}).status_code == 200
    assert only(entries_since(emu.urls.base_url, since), BLOCKS + "workflows/estimate")["reason"] is None


def test_a_block_s_workflow_not_found_or_not_the_viewer_s(live_emulator: Any) -> None:
    emu = live_emulator
    member, _ = _people(emu)
    block = _Block(emu, "inst-poll", [BUDGET], member)
    base = emu.urls.base_url
    missing = f"{member}-20260101000000000000000"
    since = mark(base)
    answer = block.post("workflows/poll", {"workflowId": missing})
    assert answer.status_code == 404 and answer.json() == {"message": "workflow not found"}
    answer = block.post("workflows/cancel", {"workflowId": "wf-nope"})
    assert answer.status_code == 403 and answer.json() == {"message": "workflow does not belong to this viewer"}
    entries = entries_since(base, since)
    assert only(entries, BLOCKS + "workflows/poll")["reason"] == (
        f"this run holds no workflow '{missing}': it was never submitted here, or it was deleted")
    assert only(entries, BLOCKS + "workflows/cancel")["reason"] == (
        f"'wf-nope' is not a workflow id (ids are <userId>-<timestamp>, the owner first); the block token's viewer"
        f" is user {member}")


def _api_key(emu: Any, user: int, username: str) -> dict[str, str]:
    from blockkit.emulator.services import buzz
    from blockkit.emulator.services.orchestration.funds import create_api_key

    with emu.store.write() as db:
        buzz.open_accounts(db, user, emu.clock.iso())
        db.execute("UPDATE buzz_accounts SET balance = 1000 WHERE user_id = ? AND pool = 'yellow'", (user,))
    return {"Authorization": f"Bearer {create_api_key(emu.store, emu.clock, username)['api_key']}"}


def _problem(status: int, title: str, detail: str, **extra: Any) -> dict[str, Any]:
    return {"type": f"https://httpstatuses.io/{status}", "title": title, "status": status, "detail": detail, **extra}


def test_workflow_edits_refused_for_the_workflow_s_state_and_caps(live_emulator: Any) -> None:
    from blockkit.emulator.seed import landmarks

    emu = live_emulator
    member = landmarks(emu.store)["member"]
    free = landmarks(emu.store)["free_user"]
    auth = _api_key(emu, member["id"], member["username"])
    orch = emu.urls.orchestration_url
    submitted = httpx.post(orch + WORKFLOWS, json=_t2i(tags=[f"t{i}" for i in range(10)]), headers=auth, timeout=30)
    assert submitted.status_code == 200, submitted.text
    workflow_id = submitted.json()["id"]
    emu.clock.advance(30)
    finished = httpx.get(f"{orch}{WORKFLOWS}/{workflow_id}", headers=auth, timeout=30).json()
    assert finished["status"] == "succeeded"
    url = f"{orch}{WORKFLOWS}/{workflow_id}"

    since = mark(emu.urls.base_url)
    answer = httpx.put(url, json={"status": "canceled"}, headers=auth, timeout=30)
    assert answer.status_code == 400
    assert answer.json() == _problem(400, "Bad Request", "the workflow is already succeeded")
    reason = only(entries_since(emu.urls.base_url, since, origin="orchestration"), f"{WORKFLOWS}/{workflow_id}")["reason"]
    assert reason == (f"workflow {workflow_id} finished (succeeded) at {finished['completedAt']}; the emulator's clock"
                      f" reads {reason.split('clock reads ')[1].split(',')[0]}, and only an unassigned or processing"
                      " workflow can be canceled")
    assert finished["completedAt"] < reason.split("clock reads ")[1].split(",")[0] <= emu.clock.iso()

    cases = [
        (httpx.patch, url, [{"op": "replace", "path": "/status", "value": "processing"}], 400,
         _problem(400, "Bad Request", "status can only be changed to \"canceled\""),
         f"workflow {workflow_id} is succeeded, and the request sets status 'processing'; the status changes only"
         " to \"canceled\" (or stays as it is)"),
        (httpx.put, url, {"status": "succeeded"}, 400,
         _problem(400, "Bad Request", "status can only be set to \"canceled\""),
         f"the request sets status 'succeeded' on workflow {workflow_id}; an update sets only \"canceled\" (or"
         " leaves status out)"),
        (httpx.post, url + "/tags", "one-more", 400,
         _problem(400, "Bad Request", "a workflow carries at most 10 tags",
                  errors={"tag": ["a workflow carries at most 10 tags"]}),
         f"workflow {workflow_id} carries 10 tags (t0, t1, t2, t3, t4, t5, t6, t7, t8 and t9), the most a workflow"
         " carries (10); tag 'one-more' would be one more"),
        (httpx.put, url + "/steps/nope", {"metadata": {}}, 404,
         _problem(404, "Not Found", "the workflow has no step named 'nope'"),
         "the workflow's steps are named 'gen'; none is 'nope'"),
    ]
    for send, target, body, status, wire, said in cases:
        since = mark(emu.urls.base_url)
        answer = send(target, json=body, headers=auth, timeout=30)
        assert (answer.status_code, answer.json()) == (status, wire), target
        path = target[len(orch):]
        assert only(entries_since(emu.urls.base_url, since, origin="orchestration"), path)["reason"] == said

    # Another user's workflow is 404 to this key; the journal names its owner.
    other = _api_key(emu, free["id"], free["username"])
    since = mark(emu.urls.base_url)
    answer = httpx.get(url, headers=other, timeout=30)
    assert answer.status_code == 404
    assert answer.json() == _problem(404, "Not Found", "no such workflow for this viewer and app")
    assert only(entries_since(emu.urls.base_url, since, origin="orchestration"), f"{WORKFLOWS}/{workflow_id}")[
        "reason"] == (f"workflow {workflow_id} is user {member['id']}'s, and the API key's owner is user {free['id']};"
                      " a key reaches its owner's workflows only")


def test_a_workflow_s_step_and_quantity_caps_name_the_value_sent(live_emulator: Any) -> None:
    from blockkit.emulator.seed import landmarks

    emu = live_emulator
    member = landmarks(emu.store)["member"]
    auth = _api_key(emu, member["id"], member["username"])
    orch = emu.urls.orchestration_url
    many = {"steps": [{**_t2i()["steps"][0], "name": f"s{i}"} for i in range(11)]}
    for body, detail, said in (
            (_t2i(quantity=5), "quantity must be an integer from 1 to 4",
             "steps[0].input.quantity is 5; it must be an integer from 1 to 4"),
            (many, "steps must be a list of 1 to 10 step templates", "a workflow holds 1 to 10 steps; this one sends 11"),
            (_t2i(width=4096), "width must be an integer from 64 to 2048",
             "steps[0].input.width is 4096; it must be an integer from 64 to 2048")):
        since = mark(emu.urls.base_url)
        answer = httpx.post(orch + WORKFLOWS, json=body, headers=auth, timeout=30)
        assert answer.status_code == 400
        assert answer.json() == _problem(400, "Bad Request", detail, errors={"messages": [detail]})
        assert only(entries_since(emu.urls.base_url, since, origin="orchestration"), WORKFLOWS)["reason"] == said


def test_a_fund_gone_or_a_deposit_out_of_range_says_which(live_emulator: Any) -> None:
    from blockkit.emulator.seed import landmarks

    emu = live_emulator
    member = landmarks(emu.store)["member"]
    auth = _api_key(emu, member["id"], member["username"])
    orch = emu.urls.orchestration_url
    fund = httpx.post(orch + "/v2/consumer/funds", json={"ttl": "01:00:00"}, headers=auth, timeout=30)
    assert fund.status_code == 201, fund.text
    fund_id, expires = fund.json()["id"], fund.json()["expiresAt"]
    deposits = f"/__emulator/funds/{fund_id}/deposits"
    since = mark(emu.urls.base_url)
    answer = httpx.post(orch + deposits, json={"accountType": "yellow", "amount": 0}, headers=auth, timeout=30)
    assert answer.status_code == 400
    assert answer.json() == _problem(400, "Bad Request", "amount must be a whole number of Buzz, 1 or more")
    assert only(entries_since(emu.urls.base_url, since, origin="orchestration"), deposits)["reason"] == (
        "a deposit's amount is a whole number of Buzz from 1 to 1000000; this one is 0")
    emu.clock.advance(2 * 3600)
    since = mark(emu.urls.base_url)
    answer = httpx.post(orch + deposits, json={"accountType": "yellow", "amount": 5}, headers=auth, timeout=30)
    assert answer.status_code == 404
    assert answer.json() == _problem(404, "Not Found", "no such fund (a fund is gone once its expiresAt has passed)")
    reason = only(entries_since(emu.urls.base_url, since, origin="orchestration"), deposits)["reason"]
    assert reason.startswith(f"fund {fund_id} expired at {expires}; the emulator's clock reads ")
    assert expires < reason.rsplit(" ", 1)[1] <= emu.clock.iso()
    since = mark(emu.urls.base_url)
    assert httpx.get(orch + "/__emulator/funds/no-such-fund", headers=auth, timeout=30).status_code == 404
    assert only(entries_since(emu.urls.base_url, since, origin="orchestration"), "/__emulator/funds/no-such-fund")[
        "reason"] == "this run holds no fund 'no-such-fund'"

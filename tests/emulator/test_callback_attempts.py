"""Each callback delivery attempt is a row (migration 0013): when, how long, the status or the error,
the receiver. An export carries the rows; an export made before the table existed still imports."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from inproc import URLS
from orch_env import FREE, make
from test_civitai_client_js import Receiver

from blockkit.emulator.services.orchestration import callbacks, workflows
from blockkit.emulator.store import Store
from blockkit.emulator.store import orchestration as orch_store
from blockkit.emulator.transfer import MANIFEST, export, import_export

WC = workflows.WorkflowCaller


def _submit(o: Any, url: str) -> str:
    payload = {"steps": [{"$type": "textToImage", "name": "gen", "input": {"prompt": "a red fox", "seed": 7}}],
               "callbacks": [{"url": url, "type": ["workflow:succeeded"]}]}
    wf = workflows.submit(o.store, o.clock, URLS, WC.api_key(FREE), payload)
    o.advance(30)
    return str(wf["id"])


def _event_and_attempts(o: Any, workflow_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    with o.store.read() as db:
        event = dict(db.execute("SELECT id, state, attempts, last_error FROM workflow_events WHERE workflow_id = ?",
                                (workflow_id,)).fetchone())
        return event, orch_store.attempts_of(db, [event["id"]])[event["id"]]


def _retry_now(o: Any) -> None:
    with o.store.write() as db:  # skip the back-off's wall-clock wait
        db.execute("UPDATE workflow_events SET next_try = 0")


def test_a_failed_then_delivered_event_has_two_attempts_in_order(tmp_path: Path) -> None:
    o = make(tmp_path)
    receiver = Receiver()  # answers 500 first, then 200
    try:
        workflow_id = _submit(o, receiver.url)
        assert callbacks.deliver_due(o.store, o.clock) == 0
        _retry_now(o)
        assert callbacks.deliver_due(o.store, o.clock) == 1
    finally:
        receiver.close()
    event, attempts = _event_and_attempts(o, workflow_id)
    assert (event["state"], event["attempts"]) == ("delivered", 2)
    assert [(a["attempt"], a["http_status"], a["error"], a["url"]) for a in attempts] == [
        (1, 500, "HTTP 500", receiver.url), (2, 200, None, receiver.url)]
    assert attempts[0]["started_at"] <= attempts[1]["started_at"]
    assert all(isinstance(a["duration_ms"], int) and a["duration_ms"] >= 0 for a in attempts)


def test_an_unreachable_receiver_is_an_attempt_with_no_status_and_the_error(tmp_path: Path) -> None:
    import socket

    o = make(tmp_path)
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/hook"
    workflow_id = _submit(o, url)
    assert callbacks.deliver_due(o.store, o.clock) == 0
    event, attempts = _event_and_attempts(o, workflow_id)
    assert (event["state"], event["attempts"]) == ("pending", 1)
    assert len(attempts) == 1
    assert attempts[0]["http_status"] is None and attempts[0]["url"] == url
    assert attempts[0]["error"] == event["last_error"] and attempts[0]["error"].startswith("ConnectionRefusedError")


def test_an_export_carries_the_attempts_and_an_older_export_without_them_imports(tmp_path: Path) -> None:
    o = make(tmp_path / "a")
    receiver = Receiver()
    try:
        workflow_id = _submit(o, receiver.url)
        callbacks.deliver_due(o.store, o.clock)
        _retry_now(o)
        callbacks.deliver_due(o.store, o.clock)
    finally:
        receiver.close()
    _, before = _event_and_attempts(o, workflow_id)
    assert len(before) == 2
    export(o.store, tmp_path / "export")
    assert (tmp_path / "export" / "callback_attempts.jsonl").is_file()

    with Store.open(tmp_path / "b") as fresh:
        import_export(fresh, tmp_path / "export", replace=True)
        with fresh.read() as db:
            event_id = db.execute("SELECT id FROM workflow_events WHERE workflow_id = ?", (workflow_id,)).fetchone()[0]
            assert orch_store.attempts_of(db, [event_id])[event_id] == before

    # An export from before migration 0013: no callback_attempts table in it, nor its file.
    older = tmp_path / "older"
    shutil.copytree(tmp_path / "export", older)
    manifest = json.loads((older / MANIFEST).read_text())
    del manifest["tables"]["callback_attempts"]
    manifest["schema_version"] = 12
    (older / MANIFEST).write_text(json.dumps(manifest))
    (older / "callback_attempts.jsonl").unlink()
    with Store.open(tmp_path / "c") as fresh:
        import_export(fresh, older, replace=True)
        with fresh.read() as db:
            assert db.execute("SELECT state, attempts FROM workflow_events WHERE workflow_id = ?",
                              (workflow_id,)).fetchone()[:] == ("delivered", 2)
            assert db.execute("SELECT count(*) FROM callback_attempts").fetchone()[0] == 0


def test_the_control_route_lists_each_event_s_attempts(tmp_path: Path) -> None:
    """``GET /__emulator/callbacks``: every event carries its ``attemptLog`` as the table holds it."""
    o = make(tmp_path)
    receiver = Receiver()  # answers 500 first, then 200
    try:
        workflow_id = _submit(o, receiver.url)
        callbacks.deliver_due(o.store, o.clock)
        pending = o.api.get("/__emulator/callbacks", params={"state": "pending"})
        _retry_now(o)
        callbacks.deliver_due(o.store, o.clock)
        delivered = o.api.get("/__emulator/callbacks", params={"state": "delivered"})
    finally:
        receiver.close()
    event, attempts = _event_and_attempts(o, workflow_id)
    assert pending.status_code == 200, pending.text
    [waiting] = pending.json()["events"]
    assert (waiting["id"], waiting["state"], waiting["attempts"], waiting["lastError"]) == (
        event["id"], "pending", 1, "HTTP 500")
    assert waiting["attemptLog"] == [{"attempt": 1, "startedAt": attempts[0]["started_at"],
                                      "durationMs": attempts[0]["duration_ms"], "httpStatus": 500,
                                      "error": "HTTP 500", "url": receiver.url}]
    [done] = delivered.json()["events"]
    assert done["attempts"] == 2
    assert [(a["attempt"], a["httpStatus"], a["error"]) for a in done["attemptLog"]] == [
        (1, 500, "HTTP 500"), (2, 200, None)]
    assert o.api.get("/__emulator/callbacks", params={"state": "failed"}).json() == {"events": []}

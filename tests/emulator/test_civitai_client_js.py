"""The published @civitai/client (npm), run by node against a live emulator's orchestration origin.

``js/civitai_client_workflows.mjs`` calls submitWorkflow, getWorkflow, queryWorkflows (tags, cursor),
addWorkflowTag, removeWorkflowTag, patchWorkflow, getWorkflowStep and deleteWorkflow with the real
client and prints what it got back; this test asserts on it. The client is installed once per
machine into a cache directory (``npm install``, the npm registry), as CI can.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from blockkit.emulator.services import buzz
from blockkit.emulator.services.orchestration.funds import create_api_key

pytestmark = pytest.mark.slow  # a real `npm install` (cached after the first run)

CLIENT = "@civitai/client"
VERSION = "0.2.0-beta.86"
SCRIPT = Path(__file__).parent / "js" / "civitai_client_workflows.mjs"
# The package's ES modules import folders and extensionless paths, as bundlers resolve them; node needs
# a resolve hook that does the same (js/bundler_resolution.mjs; the client itself is untouched).
REGISTER = SCRIPT.parent / "register_resolution.mjs"
CACHE = Path(os.environ.get("BLOCKKIT_NPM_CACHE", Path(tempfile.gettempdir()) / "blockkit-test-npm"))


def installed_client() -> Path:
    """A directory whose node_modules holds @civitai/client at VERSION (installed on first use)."""
    target = CACHE / f"civitai-client-{VERSION}"
    manifest = target / "node_modules" / "@civitai" / "client" / "package.json"
    if manifest.is_file() and json.loads(manifest.read_text())["version"] == VERSION:
        return target
    # Neither node nor npm is optional here: CI installs them (scripts/test.sh), and a client test
    # that skips proves nothing.
    assert shutil.which("node") and shutil.which("npm"), "node and npm are needed (apt-get install nodejs npm)"
    CACHE.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix="civitai-client-", dir=CACHE))
    (staging / "package.json").write_text('{"private": true}')
    done = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", f"{CLIENT}@{VERSION}"],
                          cwd=staging, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    try:
        staging.rename(target)  # atomic: a concurrent run either wins or finds the finished copy
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def run_script(client_dir: Path, work: Path, env: dict[str, str], script: Path = SCRIPT) -> dict[str, Any]:
    # ESM resolves bare imports from the script's own folder, so the script runs beside node_modules.
    (work / "node_modules").symlink_to(client_dir / "node_modules", target_is_directory=True)
    for name in (script.name, REGISTER.name, "bundler_resolution.mjs"):
        shutil.copyfile(script.parent / name, work / name)
    done = subprocess.run(["node", "--import", f"./{REGISTER.name}", str(work / script.name)], cwd=work,
                          capture_output=True, text=True, timeout=120, env={**os.environ, **env}, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_the_real_client_drives_the_workflow_operations(live_emulator: Any, tmp_path: Path) -> None:
    client_dir = installed_client()
    with live_emulator.store.read() as db:
        username, user_id = db.execute("SELECT username, id FROM users WHERE status = 'active' AND deleted_at IS NULL"
                                       " ORDER BY id LIMIT 1").fetchone()
    key = create_api_key(live_emulator.store, live_emulator.clock, username)["api_key"]
    before = sum(buzz.balance(live_emulator.store, live_emulator.clock, user_id).values())
    urls = live_emulator.urls
    out = run_script(client_dir, tmp_path, {"ORCH_URL": urls.orchestration_url, "BASE_URL": urls.base_url,
                                            "API_KEY": key})

    first, second = out["submit"]["data"], out["submitOther"]["data"]
    assert out["submit"]["status"] == 200 and first["id"].startswith(f"{user_id}-") and first["tags"] == ["fox"]
    assert out["get"]["status"] == 200 and out["get"]["data"]["status"] == "succeeded"  # a minute later
    assert [w["id"] for w in out["queryTags"]["data"]["items"]] == [first["id"]]
    page1, page2 = out["queryPage1"]["data"], out["queryPage2"]["data"]
    assert [w["id"] for w in page1["items"]] == [second["id"]] and page1["next"]
    assert [w["id"] for w in page2["items"]] == [first["id"]] and page2["next"] == ""

    for name in ("addTag", "addTag2", "removeTag", "patch", "delete"):
        assert out[name]["status"] == 204 and out[name]["error"] is None, (name, out[name])
    assert out["patchBad"]["status"] == 400 and out["patchBad"]["error"]["status"] == 400
    assert "/cost" in out["patchBad"]["error"]["detail"]
    edited = out["afterEdits"]["data"]
    assert edited["tags"] == ["fox", "kept/with slash", "patched"]
    assert edited["metadata"] == {"title": "a red fox", "rating": 5}
    assert [w["id"] for w in out["queryAfterEdits"]["data"]["items"]] == [first["id"]]

    step = out["step"]["data"]
    assert out["step"]["status"] == 200 and step["name"] == "gen" and step["status"] == "succeeded"
    assert step["metadata"] == {"pass": 1} and step["output"]["images"]
    assert out["stepMissing"]["status"] == 404

    assert out["getDeleted"]["status"] == 404 and out["deleteAgain"]["status"] == 404
    assert [w["id"] for w in out["queryAfterDelete"]["data"]["items"]] == [first["id"]]
    # The deleted workflow had not started: its Buzz came back; the finished one stays paid.
    after = sum(buzz.balance(live_emulator.store, live_emulator.clock, user_id).values())
    assert after == before - first["cost"]["total"]


MONEY_SCRIPT = SCRIPT.parent / "civitai_client_money.mjs"


class Receiver:
    """A loopback HTTP server that records every callback POST; its first answer is a 500 (the
    emulator must try that event again)."""

    def __init__(self) -> None:
        import http.server
        import threading

        self.bodies: list[dict[str, Any]] = []
        self.refused = 0
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
                raw = self.rfile.read(int(self.headers.get("content-length", "0")))
                if receiver.refused == 0:
                    receiver.refused += 1
                    self.send_response(500)
                else:
                    receiver.bodies.append(json.loads(raw))
                    self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/civitai?secret=s1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_the_real_client_gets_currencies_external_ids_tips_timeouts_wait_and_callbacks(live_emulator: Any,
                                                                                      tmp_path: Path) -> None:
    """fidelity-2 §2 rows currencies, externalId, callbacks, tips, priority/timeout/retries, whatif, wait."""
    import time

    client_dir = installed_client()
    with live_emulator.store.read() as db:
        username, user_id = db.execute("SELECT username, id FROM users WHERE status = 'active' AND deleted_at IS NULL"
                                       " ORDER BY id LIMIT 1").fetchone()
    key = create_api_key(live_emulator.store, live_emulator.clock, username)["api_key"]
    store, clock = live_emulator.store, live_emulator.clock
    buzz.purchase(store, clock, user_id, 500, pool="yellow")
    before = buzz.balance(store, clock, user_id)
    receiver = Receiver()
    try:
        out = run_script(client_dir, tmp_path, {"ORCH_URL": live_emulator.urls.orchestration_url,
                                                "BASE_URL": live_emulator.urls.base_url, "API_KEY": key,
                                                "CALLBACK_URL": receiver.url}, MONEY_SCRIPT)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not any(
                b.get("$type") == "workflow" and b.get("status") == "succeeded" for b in receiver.bodies):
            time.sleep(0.1)
    finally:
        receiver.close()

    # whatif: a whole Workflow (no id), priced with its tips, nothing charged
    whatif = out["whatif"]["data"]
    assert out["whatif"]["status"] == 200 and "id" not in whatif
    for member in ("steps", "arguments", "callbacks", "tips", "upgradeMode", "currencies", "forceRefunded"):
        assert member in whatif, member
    # 1024 x 1024 is 5 Buzz (4 a megapixel, rounded up); tips 50% and 25% of it, each rounded up
    assert whatif["cost"] == {"base": 5, "factors": None, "fixed": None, "tips": {"civitai": 3, "creators": 2},
                              "total": 10}
    assert whatif["currencies"] == ["yellow"] and whatif["tips"] == {"civitai": 0.5, "creators": 0.25}
    step = whatif["steps"][0]
    assert (step["priority"], step["timeout"], step["retries"]) == ("high", "00:01:00", 2)

    # currencies ["yellow"]: paid in yellow only; externalId: the same key answers the first workflow
    first = out["submit"]["data"]
    assert out["submit"]["status"] == 200 and first["id"].startswith(f"{user_id}-")
    assert first["transactions"]["list"] == [{"type": "debit", "amount": 10, "accountType": "yellow"}]
    assert first["callbacks"] == [{"url": receiver.url, "type": ["workflow:*", "step:succeeded", "job:*"],
                                   "detailed": True}]
    assert out["again"]["data"]["id"] == first["id"] and out["otherKey"]["data"]["id"] != first["id"]
    assert out["badCurrency"]["status"] == 400 and out["badCurrency"]["error"]["errors"]["messages"]
    assert out["badExternalId"]["status"] == 400
    with store.read() as db:
        charged = db.execute("SELECT count(*) FROM buzz_transactions WHERE reference = ? AND amount < 0",
                             (first["id"],)).fetchone()[0]
    assert charged == 1

    # timeout 1 s on a 4 s step, 2 retries: three jobs, the step and workflow expire, the Buzz comes back
    expired = out["timedOutLater"]["data"]
    assert expired["status"] == "expired" and expired["steps"][0]["status"] == "expired"
    assert [j["status"] for j in expired["steps"][0]["jobs"]] == ["expired"] * 3
    debit = [t for t in expired["transactions"]["list"] if t["type"] == "debit"]
    credit = [t for t in expired["transactions"]["list"] if t["type"] == "credit"]
    assert debit and sorted(map(str, debit)) == sorted(map(str, [{**c, "type": "debit"} for c in credit]))

    # wait: 202 while running, 200 once finished
    assert out["waitShort"]["status"] == 202 and out["waitShort"]["data"]["status"] in ("unassigned", "processing")
    assert out["waitDone"]["status"] == 200 and out["waitDone"]["data"]["status"] == "succeeded"

    # Buzz: yellow paid the two real lantern workflows (10 each) and nothing else moved from yellow
    after = buzz.balance(store, clock, user_id)
    assert after["yellow"] == before["yellow"] - 20

    # callbacks: the events of the first workflow, delivered after one refused attempt, in order
    mine = [b for b in receiver.bodies if b["workflowId"] == first["id"]]
    kinds = [f"{b['$type']}:{b['status']}" for b in mine]
    assert receiver.refused == 1
    assert kinds[-1] == "workflow:succeeded" and "step:succeeded" in kinds and "job:processing" in kinds
    assert set(kinds) <= {"workflow:unassigned", "workflow:processing", "workflow:succeeded", "step:succeeded",
                          "job:processing", "job:succeeded"}
    done = mine[-1]
    assert done["details"]["steps"][0]["status"] == "succeeded" and done["details"]["steps"][0]["output"]["images"]
    job = next(b for b in mine if b["$type"] == "job")
    assert job["stepName"] == "gen" and job["jobId"] == out["first"]["data"]["steps"][0]["jobs"][0]["id"]

"""Crash safety of the emulator's money: kill -9 during concurrent workflow submits and upscales.

Run: PYTHONPATH=src python3 benchmarks/crash_money.py [CYCLES] [--threads N] [--keep DIR]
(default 30 cycles, 4 client threads). Each cycle starts a real ``blockkit emulator start`` process on
one ``--data`` directory, drives it over HTTP with API-key clients (SubmitWorkflow, some with a reused
``externalId``, and the imageUpscaler recipe), sends SIGKILL at a random moment 1-4 s into the load,
and restarts it. After each restart it reads the database file and checks:

- every acknowledged write (a 2xx with a body) is present: the workflow row, the upscale's blob row
  and its job (succeeded, naming that blob);
- one workflow per (owner, externalId), and every acknowledged answer for a key names it;
- Buzz is conserved: each pool's balance equals the sum of its ledger; every workflow was charged its
  cost exactly once (refunded in full only when canceled or expired); every recipe charge names a job,
  a succeeded job is charged its cost, a job a crash cut short was refunded at start (none is left
  'running'); no workflow charge lacks its workflow;
- ``PRAGMA integrity_check`` is ok.

It prints one JSON line per cycle and a summary, and exits 1 on any violation.
``tests/emulator/test_crash_money.py`` runs a short version of the same ``run``.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import io
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
READY_TIMEOUT_S = 60


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH", "")) if p)
    return env


def start(data: Path, ready: Path) -> tuple[subprocess.Popen[bytes], dict[str, Any], float]:
    ready.unlink(missing_ok=True)
    began = time.monotonic()
    process = subprocess.Popen([sys.executable, "-m", "blockkit", "emulator", "start", "--port", "0", "--data",
                                str(data), "--ready-file", str(ready)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, env=_env())
    while time.monotonic() - began < READY_TIMEOUT_S:
        if ready.exists():
            try:
                return process, json.loads(ready.read_text()), time.monotonic() - began
            except ValueError:
                pass  # half written
        if process.poll() is not None:
            raise RuntimeError(f"the emulator exited ({process.returncode}): {process.stderr.read().decode()[-2000:]}")
        time.sleep(0.02)
    process.kill()
    raise RuntimeError("the emulator was not ready in time")


def api_key(data: Path, username: str) -> tuple[str, int]:
    done = subprocess.run([sys.executable, "-m", "blockkit", "emulator", "apikey", "add", "--user", username,
                           "--data", str(data)], capture_output=True, text=True, env=_env(), timeout=120, check=True)
    answer = json.loads(done.stdout)
    return answer["api_key"], int(answer["user_id"])


def _png(side: int, seed: int) -> str:
    from PIL import Image

    image = Image.effect_noise((side, side), 40 + seed % 50).convert("RGB")
    out = io.BytesIO()
    image.save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode("ascii")


class Client:
    """One loop of writes against the orchestration origin; what was acknowledged, what was in flight."""

    def __init__(self, url: str, key: str, user_id: int, seed: int, acked: dict[str, list[Any]],
                 lock: threading.Lock, stop: threading.Event, image: str) -> None:
        self.parts = urlsplit(url)
        self.key, self.user_id, self.random = key, user_id, random.Random(seed)
        self.acked, self.lock, self.stop, self.image = acked, lock, stop, image
        self.in_flight = 0

    def _post(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        conn = http.client.HTTPConnection(self.parts.hostname or "", self.parts.port, timeout=15)
        try:
            conn.request("POST", path, body=json.dumps(body).encode(),
                         headers={"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"})
            answer = conn.getresponse()
            return answer.status, json.loads(answer.read() or b"null")
        finally:
            conn.close()

    def run(self) -> None:
        while not self.stop.is_set():
            kind = self.random.choice(("workflow", "workflow", "external", "upscale"))
            try:
                if kind == "upscale":
                    status, body = self._post("/v2/consumer/recipes/imageUpscaler", {"image": self.image})
                    if status == 200:
                        with self.lock:
                            self.acked["upscale"].append((self.user_id, body["blob"]["id"]))
                    continue
                template: dict[str, Any] = {"steps": [{"$type": "textToImage",
                                                       "input": {"prompt": f"p{self.random.random()}"}}]}
                if kind == "external":
                    template["externalId"] = f"k{self.user_id}-{self.random.randrange(40)}"
                status, body = self._post("/v2/consumer/workflows", template)
                if status == 200:
                    with self.lock:
                        self.acked["workflow"].append((self.user_id, body["id"], template.get("externalId")))
            except (OSError, http.client.HTTPException, ValueError):
                self.in_flight += 1  # the kill: this write may or may not be in the store
                if self.stop.is_set():
                    return
                time.sleep(0.05)


def check(db_path: Path, acked: dict[str, list[Any]]) -> dict[str, Any]:
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        problems: dict[str, list[Any]] = {}

        def flag(name: str, item: Any) -> None:
            problems.setdefault(name, []).append(item)

        workflows = {r[0]: (r[1], r[2], r[3], json.loads(r[4])) for r in db.execute(
            "SELECT id, user_id, cost, external_id, document FROM workflows")}
        for user_id, workflow_id, external in acked["workflow"]:
            if workflow_id not in workflows:
                flag("acked_workflow_missing", workflow_id)
            elif external is not None and workflows[workflow_id][2] != external:
                flag("external_id_mismatch", (workflow_id, external))
        by_key: dict[tuple[int, str], set[str]] = {}
        for user_id, workflow_id, external in acked["workflow"]:
            if external is not None:
                by_key.setdefault((user_id, external), set()).add(workflow_id)
        for key, ids in by_key.items():
            if len(ids) > 1:
                flag("external_id_answered_twice", (key, sorted(ids)))
        blobs = {r[0] for r in db.execute("SELECT id FROM blobs")}
        jobs = {r[0]: (r[1], r[2], r[3], r[4]) for r in db.execute(
            "SELECT id, user_id, status, cost, blob_id FROM recipe_jobs")}
        job_of_blob = {v[3]: k for k, v in jobs.items() if v[3]}
        for user_id, blob_id in acked["upscale"]:
            if blob_id not in blobs or blob_id not in job_of_blob or jobs[job_of_blob[blob_id]][1] != "succeeded":
                flag("acked_upscale_missing", blob_id)
        for job_id, (_user, status, _cost, _blob) in jobs.items():
            if status == "running":
                flag("job_left_running", job_id)

        balances = {(r[0], r[1]): r[2] for r in db.execute("SELECT user_id, pool, balance FROM buzz_accounts")}
        ledger = {(r[0], r[1]): r[2] for r in db.execute(
            "SELECT user_id, pool, sum(amount) FROM buzz_transactions GROUP BY user_id, pool")}
        for key, balance in balances.items():
            if balance != ledger.get(key, 0):
                flag("balance_ne_ledger", (key, balance, ledger.get(key, 0)))
            if balance < 0:
                flag("negative_balance", key)
        moves: dict[str, dict[str, int]] = {}
        for kind, reference, amount in db.execute(
                "SELECT kind, reference, amount FROM buzz_transactions WHERE kind IN ('workflow', 'recipe', 'refund')"):
            moves.setdefault(reference or "", {}).setdefault(kind, 0)
            moves[reference or ""][kind] += amount
        for reference, kinds in moves.items():
            if "workflow" in kinds and reference not in workflows:
                flag("workflow_charge_without_workflow", reference)
            if "recipe" in kinds and reference not in jobs:
                flag("recipe_charge_without_job", reference)
        charged_total = 0
        for workflow_id, (_user, cost, _ext, document) in workflows.items():
            got = moves.get(workflow_id, {})
            if -got.get("workflow", 0) != cost:
                flag("workflow_charged_wrong", (workflow_id, cost, got))
            refunded = got.get("refund", 0)
            if refunded not in (0, cost) or bool(refunded) != bool(document.get("refunded")):
                flag("workflow_refund_wrong", (workflow_id, cost, got))
            charged_total += cost - refunded
        for job_id, (_user, status, cost, _blob) in jobs.items():
            got = moves.get(job_id, {})
            net = got.get("recipe", 0) + got.get("refund", 0)
            if (status == "succeeded" and net != -cost) or (status == "refunded" and net != 0):
                flag("job_net_wrong", (job_id, status, cost, got))
            if status == "succeeded":
                charged_total += cost
        spent = -sum(sum(k.values()) for k in moves.values())
        if spent != charged_total:
            flag("buzz_not_conserved", (spent, charged_total))
        integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
        if integrity != "ok":
            flag("integrity", integrity)
        return {"problems": problems, "workflows": len(workflows), "jobs": len(jobs),
                "refunded_jobs": sum(1 for v in jobs.values() if v[1] == "refunded"), "spent": spent}
    finally:
        db.close()


def run(cycles: int, data: Path, *, threads: int = 4, seed: int = 7, out: Any = None) -> dict[str, Any]:
    """``cycles`` kill/restart cycles on ``data``; the summary (``violations`` is the total count)."""
    rnd = random.Random(seed)
    ready = data.parent / f"{data.name}.ready.json"
    process, info, _ = start(data, ready)
    db_path = data / "emulator.sqlite3"
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    users = [r[0] for r in db.execute("SELECT username FROM users WHERE status = 'active' AND deleted_at IS NULL"
                                      " ORDER BY id LIMIT ?", (threads,))]
    db.close()
    keys = [api_key(data, name) for name in users]
    image = _png(256, seed)
    acked: dict[str, list[Any]] = {"workflow": [], "upscale": []}
    totals = {"cycles": 0, "acked_workflows": 0, "acked_upscales": 0, "in_flight_at_kill": 0, "violations": 0,
              "restart_s_max": 0.0, "refunded_jobs": 0}
    try:
        for cycle in range(cycles):
            lock, stop = threading.Lock(), threading.Event()
            clients = [Client(info["orchestration_url"], key, uid, rnd.randrange(1 << 30), acked, lock, stop, image)
                       for key, uid in keys]
            running = [threading.Thread(target=c.run, daemon=True) for c in clients]
            for thread in running:
                thread.start()
            time.sleep(rnd.uniform(1.0, 4.0))
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
            stop.set()
            for thread in running:
                thread.join(timeout=20)
            process, info, restart_s = start(data, ready)  # recovery runs before the ready file
            report = check(db_path, acked)
            violations = sum(len(v) for v in report["problems"].values())
            totals["cycles"] += 1
            totals["in_flight_at_kill"] += sum(c.in_flight for c in clients)
            totals["violations"] += violations
            totals["restart_s_max"] = max(totals["restart_s_max"], round(restart_s, 2))
            totals["refunded_jobs"] = report["refunded_jobs"]
            line = {"cycle": cycle + 1, "acked_workflows": len(acked["workflow"]),
                    "acked_upscales": len(acked["upscale"]), "restart_s": round(restart_s, 2),
                    "workflows": report["workflows"], "jobs": report["jobs"],
                    "refunded_jobs": report["refunded_jobs"], "spent": report["spent"],
                    "problems": {k: v[:3] for k, v in report["problems"].items()}}
            if out is not None:
                print(json.dumps(line), file=out, flush=True)
        totals["acked_workflows"], totals["acked_upscales"] = len(acked["workflow"]), len(acked["upscale"])
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        ready.unlink(missing_ok=True)
    return totals


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("cycles", type=int, nargs="?", default=30)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", type=Path, help="use (and keep) this data directory")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="blockkit-crash-money-") as tmp:
        data = args.keep or Path(tmp) / "data"
        began = time.monotonic()
        totals = run(args.cycles, data, threads=args.threads, seed=args.seed, out=sys.stdout)
        totals["seconds"] = round(time.monotonic() - began, 1)
    print(json.dumps({"summary": totals}))
    return 1 if totals["violations"] else 0


if __name__ == "__main__":
    sys.exit(main())

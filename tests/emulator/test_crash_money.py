"""kill -9 during concurrent workflow submits and upscales; after each restart every acknowledged write is
present and Buzz is conserved across the ledger, the workflows and the recipe jobs (reliability 1.6, 1.7).

A short run of ``benchmarks/crash_money.py`` (which runs 30 cycles and prints its figures): a real
``blockkit emulator start`` process, API-key clients over HTTP, SIGKILL at random moments, restarts on
the same data directory, and the checks of ``crash_money.check`` on the database file.
"""

from __future__ import annotations

import importlib.util
import io
import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # real processes, killed and restarted

HARNESS = Path(__file__).resolve().parents[2] / "benchmarks" / "crash_money.py"


def load_harness():
    spec = importlib.util.spec_from_file_location("crash_money", HARNESS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_kill_9_keeps_every_acknowledged_write_and_every_buzz(tmp_path: Path) -> None:
    harness = load_harness()
    lines = io.StringIO()
    totals = harness.run(3, tmp_path / "data", threads=3, seed=11, out=lines)
    cycles = [json.loads(line) for line in lines.getvalue().splitlines()]
    assert totals["cycles"] == 3 and len(cycles) == 3
    assert [c["problems"] for c in cycles] == [{}, {}, {}], cycles
    assert totals["violations"] == 0
    assert totals["acked_workflows"] + totals["acked_upscales"] > 0  # the load did write


def test_the_checks_see_a_lost_write_and_an_unbalanced_ledger(tmp_path: Path) -> None:
    """The checker itself can fail: an acknowledged id that is not stored, a pool off its ledger, a
    workflow charge without its workflow and a job left running are each reported."""
    import sqlite3

    from blockkit.emulator.store import Store

    harness = load_harness()
    store = Store.open(tmp_path)
    with store.write() as db:
        db.execute("INSERT INTO users (id, username, created_at) VALUES (1, 'u', '2025-01-01T00:00:00.000Z')")
        db.execute("INSERT INTO buzz_accounts (user_id, pool, balance) VALUES (1, 'blue', 10)")
        db.execute("INSERT INTO buzz_transactions (user_id, pool, amount, kind, reference, created_at)"
                   " VALUES (1, 'blue', -2, 'workflow', '1-2026', '2025-01-01T00:00:00.000Z')")
        db.execute("INSERT INTO recipe_jobs (id, user_id, recipe, status, cost, debits, created_at)"
                   " VALUES ('j', 1, 'imageUpscaler', 'running', 1, '{}', '2025-01-01T00:00:00.000Z')")
    store.close()
    report = harness.check(tmp_path / "emulator.sqlite3", {"workflow": [(1, "1-2025", None)], "upscale": []})
    assert set(report["problems"]) >= {"acked_workflow_missing", "balance_ne_ledger",
                                       "workflow_charge_without_workflow", "job_left_running"}
    sqlite3.connect(tmp_path / "emulator.sqlite3").close()

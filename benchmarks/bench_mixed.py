"""Issue 27's mixed workload timed: 1 and 16 clients of interleaved reads and writes against a real emulator.

    PYTHONPATH=src python benchmarks/bench_mixed.py [--scale small|large] [--ops 100] [--clients 1,16]

The workload and its check are ``tests/emulator/mixed_workload.py``, the same code
``tests/emulator/test_concurrency_mixed.py`` runs (that test asserts correctness, never time).
One ``blockkit emulator start`` (with an access key, its data in a temporary directory) serves
every run; each run gives every client ``--ops`` operations (a fixed number, not a fixed time)
and is checked afterwards, outside the timing, so a figure never comes from a run that lost or
doubled a write. Between runs the emulator clock moves on a minute (the provider's per-minute
token and authorization limits start afresh).

Printed per run and operation kind: the count, operations per second over the run's wall time,
p50 and p99 latency of one operation (a retried or doubled write counts as one operation of
two requests), and the 1-minute load average when the run ended. The machine is shared: read
the figures beside the load. Needs the test extra (httpx, authlib).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "emulator"))
from bench_emulator import _env, start  # noqa: E402
from mixed_workload import ACCESS_KEY_HEADER, acknowledged, figures, prepare, run, verify  # noqa: E402

ACCESS_KEY = "bench-mixed-access-key-27"


def load() -> float:
    return os.getloadavg()[0]


def next_minute(info: dict[str, object]) -> None:
    answer = httpx.post(f"{info['base_url']}/__emulator/clock", json={"advance": 61},
                        headers={ACCESS_KEY_HEADER: ACCESS_KEY}, timeout=30)
    answer.raise_for_status()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", choices=("small", "large"), default="small")
    parser.add_argument("--ops", type=int, default=100, help="operations per client in each run")
    parser.add_argument("--clients", default="1,16", help="comma-separated client counts, one run each")
    parser.add_argument("--seed", type=int, default=27, help="the plans' random seed")
    args = parser.parse_args()
    counts = [int(c) for c in args.clients.split(",")]
    work = Path(tempfile.mkdtemp(prefix="bench-mixed-"))
    emulator = start(work, "--scale", args.scale, "--access-key", ACCESS_KEY, "--data", str(work / "data"),
                     env=_env(), timeout=1800)
    info = emulator.info
    print(f"emulator ready in {emulator.seconds_to_ready:.2f} s (scale {args.scale}) [load {load():.2f}]")
    try:
        world = prepare(info, max(counts), args.ops, runs=len(counts))
        print(f"{max(counts)} clients set up [load {load():.2f}]")
        for number, clients in enumerate(counts):
            if number:
                next_minute(info)
            told, wall = run(world, clients, args.ops, seed=args.seed)
            at_end = load()
            problems = verify(world, told)
            print()
            verdict = "all held" if not problems else {check: len(found) for check, found in problems.items()}
            print(f"{clients} client(s) x {args.ops} operations: {wall:.2f} s wall; acknowledged"
                  f" {acknowledged(told)}; check: {verdict}")
            print(f"{'operation':28} {'count':>6} {'ops/s':>8} {'p50 ms':>8} {'p99 ms':>8}  load")
            for kind, count, rate, p50, p99 in figures(told, wall):
                print(f"{kind:28} {count:>6} {rate:>8.1f} {p50:>8.2f} {p99:>8.2f}  {at_end:.2f}")
    finally:
        emulator.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

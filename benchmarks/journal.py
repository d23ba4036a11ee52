"""What the request journal costs (issue 36): the catalogue's throughput with the journal on and off.

    python benchmarks/journal.py [--duration S] [--rounds N] [--size N] [--baseline-src DIR]

Two real ``blockkit emulator start`` processes in the same run, one with the journal on
(``--journal-size N``, default 2000) and one with it off (``--journal-size 0``), each measured by
wrk at 1 and 16 connections on two catalogue routes: a cached page (``/models?limit=20``, the
cheapest answer, where the journal's share is largest) and a 404 (``/models/{missing}``, a refusal,
whose entry gets a reason). The rounds alternate on and off, so drift on the shared machine falls on
both. It prints requests/s per case and the journal's cost in percent (target: within 10 %), the
memory (max RSS) of each process after the run (the ring is bounded: the on process holds at most
``--size`` entries however long it runs), and the load average.

``--baseline-src DIR`` (a copy of another version's ``src``, e.g. ``git archive main src | tar -x -C
/tmp/base``) adds a third process, that version with its journal on, measured in the same rounds:
the before and after of a change to the journal, on the same machine at the same time.

wrk comes from Debian (apt-get install wrk).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_emulator import _env, start, wrk  # noqa: E402

TARGET_PERCENT = 10.0
CASES = (("models?limit=20", "/api/v1/models?limit=20"), ("404 refusal", "/api/v1/models/987654321"))


def rss_kb(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=int, default=5, help="seconds per wrk run")
    parser.add_argument("--rounds", type=int, default=2, help="on/off alternations per case")
    parser.add_argument("--size", type=int, default=2000, help="the journal's size in the 'on' process")
    parser.add_argument("--baseline-src", type=Path, help="another version's src directory: measured too, journal on")
    args = parser.parse_args()
    env = _env()
    if args.baseline_src is not None and not (args.baseline_src / "blockkit" / "__init__.py").is_file():
        print(f"journal benchmark: {args.baseline_src} has no blockkit package (give a src directory)")
        return 2
    with tempfile.TemporaryDirectory(prefix="bk-bench-journal-") as tmp:
        work = Path(tmp)
        on = start(work, "--no-access-key", "--journal-size", str(args.size), env=env)
        off = start(work, "--no-access-key", "--journal-size", "0", env=env)
        runs = [("on", on), ("off", off)]
        if args.baseline_src is not None:
            base_env = {**env, "PYTHONPATH": os.pathsep.join(p for p in (str(args.baseline_src.resolve()),
                                                                          env.get("PYTHONPATH")) if p)}
            runs.append(("base on", start(work, "--no-access-key", "--journal-size", str(args.size), env=base_env)))
        try:
            print(f"journal benchmark: {args.rounds} rounds x {args.duration} s per case; load average"
                  f" {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
            print(f"{'case':<22} {'conns':>5} {'on req/s':>10} {'off req/s':>10} {'cost':>8}"
                  + (f" {'base on req/s':>14} {'base cost':>10}" if len(runs) > 2 else ""))
            worst = 0.0
            for name, path in CASES:
                for connections in (1, 16):
                    figures: dict[str, list[float]] = {label: [] for label, _run in runs}
                    for _ in range(args.rounds):
                        for label, run in runs:
                            result = wrk(run.info["base_url"] + path, connections=connections,
                                         duration=args.duration, threads=1 if connections == 1 else 2)
                            if "skipped" in result:
                                print(f"journal benchmark: {result['skipped']}")
                                return 1
                            figures[label].append(result.get("requests_per_s", 0.0))
                    rate_on, rate_off = statistics.median(figures["on"]), statistics.median(figures["off"])
                    cost = (rate_off - rate_on) / rate_off * 100 if rate_off else 0.0
                    worst = max(worst, cost)
                    line = f"{name:<22} {connections:>5} {rate_on:>10.0f} {rate_off:>10.0f} {cost:>7.1f}%"
                    if len(runs) > 2:
                        rate_base = statistics.median(figures["base on"])
                        line += f" {rate_base:>14.0f} {(rate_off - rate_base) / rate_off * 100 if rate_off else 0.0:>9.1f}%"
                    print(line)
            print(f"max RSS: on {rss_kb(on.process.pid)} kB, off {rss_kb(off.process.pid)} kB"
                  f" (the on process's ring holds at most {args.size} entries)")
            print(f"worst cost {worst:.1f}% (target <= {TARGET_PERCENT:g}%: {'ok' if worst <= TARGET_PERCENT else 'MISSED'});"
                  f" load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        finally:
            for _label, run in runs:
                run.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

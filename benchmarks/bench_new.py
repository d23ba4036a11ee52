"""Wall time of `blockkit new --defaults`, a whole process from start to exit.

    python benchmarks/bench_new.py [--runs N]

Target (issue 4): under 1 s on the project's machine. Each run is a fresh
process into a fresh directory, as a person or CI would run it; the figures
include interpreter start-up, imports, rendering, writing and the self-check.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_SECONDS = 1.0
TEMPLATES = ("static", "vite", "react")


def _env() -> dict[str, str]:
    spec = importlib.util.find_spec("blockkit")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("bench_new: blockkit is not importable; install it or set PYTHONPATH=src")
    parent = str(Path(next(iter(spec.submodule_search_locations))).parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (parent, env.get("PYTHONPATH")) if p)
    return env


def _time_once(workdir: Path, index: int, template: str, env: dict[str, str]) -> float:
    target = workdir / f"bench-{template}-{index}"
    command = [sys.executable, "-m", "blockkit.cli", "new", str(target), "--defaults", "--template", template]
    start = time.perf_counter()
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"bench_new: {' '.join(command)} failed:\n{result.stderr}")
    shutil.rmtree(target)
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="runs per template (default 10)")
    args = parser.parse_args()
    env = _env()
    worst_median = 0.0
    print(f"blockkit new --defaults: {args.runs} runs per template, one process each ({os.cpu_count()} cores)")
    print(f"{'template':<10}{'min':>9}{'median':>9}{'max':>9}")
    with tempfile.TemporaryDirectory(prefix="bench-new-") as tmp:
        workdir = Path(tmp)
        _time_once(workdir, -1, "static", env)  # warm the OS file cache and .pyc files
        for template in TEMPLATES:
            times = [_time_once(workdir, i, template, env) for i in range(args.runs)]
            median = statistics.median(times)
            worst_median = max(worst_median, median)
            print(f"{template:<10}{min(times):>8.3f}s{median:>8.3f}s{max(times):>8.3f}s")
    verdict = "meets" if worst_median < TARGET_SECONDS else "MISSES"
    print(f"slowest median {worst_median:.3f} s: {verdict} the {TARGET_SECONDS:.0f} s target")
    return 0


if __name__ == "__main__":
    sys.exit(main())

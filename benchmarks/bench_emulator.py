"""The emulator's start-up, seeding and (once the routes exist) load figures.

    python benchmarks/bench_emulator.py [--runs N] [--skip-large] [--load] [--duration S]

Targets (issue 10):
- cold start to ready with the small seed (a fresh process, a fresh data directory:
  migrate + seed + bind + serve, until the ready file appears): <= 1.5 s;
- seeding ``--scale large`` (>= 10,000 models, >= 100,000 images): <= 60 s;
- peak memory (max RSS of the emulator process) is reported for both.

``--load`` starts a large emulator and runs the load scenarios (``LOAD_SCENARIOS``):
wrk against /api/v1/models?limit=100 at 16 connections, an images cursor walk,
by-hash lookups, and a 64-connection, 30-second mix. Each scenario first checks its
route answers 200 and says "not implemented yet" otherwise: the route families
fill them in as they land. wrk comes from apt (``apt-get install wrk``).

Every run is a real ``blockkit emulator start`` subprocess, as a user or CI runs it.
The machine is shared: quote figures with the load average this prints.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

COLD_START_TARGET_S = 1.5
LARGE_SEED_TARGET_S = 60.0


def _env() -> dict[str, str]:
    spec = importlib.util.find_spec("blockkit")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("bench_emulator: blockkit is not importable; install it or set PYTHONPATH=src")
    parent = str(Path(next(iter(spec.submodule_search_locations))).parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (parent, env.get("PYTHONPATH")) if p)
    return env


@dataclass
class Run:
    seconds_to_ready: float
    info: dict[str, Any]
    process: subprocess.Popen[bytes]

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(60)


def start(workdir: Path, *args: str, env: dict[str, str], timeout: float = 300) -> Run:
    """Start the emulator; time from spawn to the ready file."""
    ready = workdir / f"ready-{time.monotonic_ns()}.json"
    command = [sys.executable, "-m", "blockkit", "emulator", "start", "--port", "0", "--ready-file", str(ready),
               *args]
    began = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    while not ready.exists():
        if process.poll() is not None:
            sys.exit(f"bench_emulator: {' '.join(command)} exited {process.returncode}:\n"
                     f"{process.stderr.read().decode() if process.stderr else ''}")
        if time.perf_counter() - began > timeout:
            process.kill()
            sys.exit(f"bench_emulator: not ready within {timeout} s")
        time.sleep(0.002)
    elapsed = time.perf_counter() - began
    return Run(elapsed, json.loads(ready.read_text()), process)


def get(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, None


def child_peak_rss_mb() -> float:
    """Largest max-RSS of any child waited for so far (Linux reports KB)."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def cold_start(runs: int, env: dict[str, str]) -> None:
    times: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-emulator-") as tmp:
        workdir = Path(tmp)
        warm = start(workdir, env=env)  # warm the OS file cache and .pyc files
        warm.stop()
        cpu: list[float] = []
        for _ in range(runs):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            run = start(workdir, env=env)
            status, body = get(f"{run.info['base_url']}/api/v1/enums")
            if status != 200 or "ModelType" not in body:
                sys.exit(f"bench_emulator: /api/v1/enums answered {status}")
            if run.stop() != 0:
                sys.exit("bench_emulator: the emulator did not exit 0 on SIGTERM")
            times.append(run.seconds_to_ready)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    median = statistics.median(times)
    print(f"cold start to ready, small seed ({runs} runs): min {min(times):.3f} s  median {median:.3f} s"
          f"  max {max(times):.3f} s  (target <= {COLD_START_TARGET_S} s: {'ok' if median <= COLD_START_TARGET_S else 'MISSED'})")
    # CPU time of the whole process (start, one request, stop) does not depend on the machine's load.
    print(f"  CPU time per run (whole process, start to exit): min {min(cpu):.3f} s  median"
          f" {statistics.median(cpu):.3f} s")
    print(f"peak RSS of a small emulator: {child_peak_rss_mb():.0f} MB")


def seed_large(env: dict[str, str], workdir: Path) -> Run:
    data = workdir / "large"
    run = start(workdir, "--scale", "large", "--data", str(data), env=env, timeout=600)
    status, _ = get(f"{run.info['base_url']}/api/v1/enums")
    import sqlite3

    conn = sqlite3.connect(f"file:{data / 'emulator.sqlite3'}?mode=ro", uri=True)
    models, images, versions = (conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                                for t in ("models", "images", "model_versions"))
    conn.close()
    size = sum(p.stat().st_size for p in data.iterdir()) / 1e6
    print(f"seed --scale large, start to ready: {run.seconds_to_ready:.1f} s (target <= {LARGE_SEED_TARGET_S:.0f} s:"
          f" {'ok' if run.seconds_to_ready <= LARGE_SEED_TARGET_S else 'MISSED'}); {models} models, {versions}"
          f" versions, {images} images, {size:.0f} MB on disk; enums {status}")
    return run


# --- load scenarios (hooks the route families fill in) -------------------------------------

def wrk(url: str, *, connections: int, duration: int, threads: int = 2, script: Path | None = None) -> dict[str, Any]:
    """Run wrk; return requests/s, latency percentiles and non-2xx count."""
    if shutil.which("wrk") is None:
        return {"skipped": "wrk is not installed (apt-get install wrk)"}
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{duration}s", "--latency"]
    if script is not None:
        command += ["-s", str(script)]
    out = subprocess.run([*command, url], capture_output=True, text=True).stdout
    result: dict[str, Any] = {}
    if match := re.search(r"Requests/sec:\s+([\d.]+)", out):
        result["requests_per_s"] = float(match.group(1))
    for pct in ("50", "90", "99"):
        if match := re.search(rf"\s{pct}(?:\.000)?%\s+([\d.]+)(us|ms|s)", out):
            value, unit = float(match.group(1)), match.group(2)
            result[f"p{pct}_ms"] = value / 1000 if unit == "us" else value * 1000 if unit == "s" else value
    if match := re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out):
        result["non_2xx"] = int(match.group(1))
    return result


def _needs(url: str) -> str | None:
    status, _ = get(url)
    return None if status == 200 else f"not implemented yet ({url.split('/api/v1', 1)[-1]} answers {status})"


# GET /models?limit=100 at 16 connections (issue 10). A repeated anonymous page is served from
# the emulator's cache, so this measures the server and the cache; load_models_cursor_walk
# measures pages built from the store (each seen once).
MODELS_P50_TARGET_MS = 15.0
MODELS_RPS_TARGET = 300.0


def load_models_list(info: dict[str, Any], marks: dict[str, Any], duration: int) -> dict[str, Any]:
    url = f"{info['base_url']}/api/v1/models?limit=100"
    if missing := _needs(url):
        return {"skipped": missing}
    result = wrk(url, connections=16, duration=duration)
    if "p50_ms" in result and "requests_per_s" in result:
        met = result["p50_ms"] <= MODELS_P50_TARGET_MS and result["requests_per_s"] >= MODELS_RPS_TARGET
        result["target"] = (f"p50 <= {MODELS_P50_TARGET_MS:g} ms and >= {MODELS_RPS_TARGET:g} req/s: "
                            f"{'ok' if met else 'MISSED'}")
    return result


def load_models_cursor_walk(info: dict[str, Any], marks: dict[str, Any], duration: int) -> dict[str, Any]:
    """Follow nextPage from the first page of each sort: every page after the first is built from the store."""
    out: dict[str, Any] = {}
    for sort in ("Highest Rated", "Newest"):
        url: str | None = f"{info['base_url']}/api/v1/models?limit=100&nsfw=true&sort={sort.replace(' ', '%20')}"
        if missing := _needs(str(url)):
            return {"skipped": missing}
        get(str(url))  # the first page may be cached already: start from the second
        status, body = get(str(url))
        url = body.get("metadata", {}).get("nextPage") if status == 200 else None
        times: list[float] = []
        began = time.perf_counter()
        while url and time.perf_counter() - began < duration:
            start_page = time.perf_counter()
            status, body = get(url)
            times.append((time.perf_counter() - start_page) * 1000)
            if status != 200:
                return {"error": f"{sort}: page {len(times) + 1} answered {status}"}
            url = body.get("metadata", {}).get("nextPage")
        times.sort()
        out[sort] = {"pages": len(times), "median_ms": round(statistics.median(times), 1) if times else None,
                     "p90_ms": round(times[int(len(times) * 0.9)], 1) if times else None}
    return out


def process_cpu_s(pid: Any) -> float | None:
    """User + system CPU seconds of a running process (Linux /proc), or None."""
    try:
        fields = Path(f"/proc/{int(pid)}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, TypeError, ValueError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load_images_cursor_walk(info: dict[str, Any], marks: dict[str, Any], duration: int) -> dict[str, Any]:
    """Walk /images?limit=200 by cursor (nextPage) from the first page to the last, one request at a
    time, timing each page; stops early after max(duration, 180) s. Anonymous: the public level."""
    url = f"{info['base_url']}/api/v1/images?limit=200"
    if missing := _needs(url):
        return {"skipped": missing}
    latencies: list[float] = []
    items = empty = 0
    cpu_before = process_cpu_s(info.get("pid"))
    began = time.perf_counter()
    while url and time.perf_counter() - began < max(duration, 180):
        sent = time.perf_counter()
        status, body = get(url)
        latencies.append(time.perf_counter() - sent)
        if status != 200:
            return {"error": f"page {len(latencies)} answered {status}"}
        items += len(body["items"])
        empty += not body["items"]
        url = body["metadata"].get("nextPage")
    elapsed = time.perf_counter() - began
    cpu_after = process_cpu_s(info.get("pid"))
    latencies.sort()
    # The server's CPU time per page does not depend on how loaded the machine is.
    cpu_per_page = (round((cpu_after - cpu_before) / len(latencies) * 1000, 1)
                    if cpu_before is not None and cpu_after is not None else None)
    return {"pages": len(latencies), "items": items, "empty_pages": empty, "complete": url is None,
            "server_cpu_ms_per_page": cpu_per_page,
            "p50_ms": round(statistics.median(latencies) * 1000, 1),
            "p99_ms": round(latencies[max(0, math.ceil(len(latencies) * 0.99) - 1)] * 1000, 1),
            "max_ms": round(latencies[-1] * 1000, 1), "pages_per_s": round(len(latencies) / elapsed, 1)}


def load_by_hash(info: dict[str, Any], marks: dict[str, Any], duration: int) -> dict[str, Any]:
    url = f"{info['base_url']}/api/v1/model-versions/by-hash/{marks['known_hashes']['SHA256']}"
    return {"skipped": missing} if (missing := _needs(url)) else wrk(url, connections=16, duration=duration)


def load_mixed_64(info: dict[str, Any], marks: dict[str, Any], duration: int) -> dict[str, Any]:
    url = f"{info['base_url']}/api/v1/models?limit=100"
    return {"skipped": missing} if (missing := _needs(url)) else wrk(url, connections=64, duration=30)


LOAD_SCENARIOS: tuple[tuple[str, Callable[[dict[str, Any], dict[str, Any], int], dict[str, Any]]], ...] = (
    ("models list, limit=100, 16 connections", load_models_list),
    ("models cursor walk, limit=100, pages built from the store", load_models_cursor_walk),
    ("images cursor walk, limit=200", load_images_cursor_walk),
    ("model version by SHA256, 16 connections", load_by_hash),
    ("models list, 64 connections x 30 s", load_mixed_64),
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="cold-start runs (default 7)")
    parser.add_argument("--skip-large", action="store_true", help="skip seeding --scale large")
    parser.add_argument("--load", action="store_true", help="run the load scenarios against the large data")
    parser.add_argument("--duration", type=int, default=10, help="seconds per wrk scenario (default 10)")
    args = parser.parse_args()
    env = _env()
    print(f"bench_emulator: {os.cpu_count()} cores, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    cold_start(args.runs, env)
    if args.skip_large:
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-emulator-large-") as tmp:
        large_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        run = seed_large(env, Path(tmp))
        try:
            if args.load:
                from blockkit.emulator.seed import landmarks
                from blockkit.emulator.store import Store

                with Store.open(Path(run.info["data"]), check=False) as store:
                    marks = landmarks(store)
                for name, scenario in LOAD_SCENARIOS:
                    print(f"  {name}: {json.dumps(scenario(run.info, marks, args.duration))}")
        finally:
            run.stop()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        print(f"  CPU time of the large emulator (seed, serve{', load' if args.load else ''}, stop):"
              f" {after.ru_utime - large_before.ru_utime + after.ru_stime - large_before.ru_stime:.1f} s")
        print(f"peak RSS of a large emulator: {child_peak_rss_mb():.0f} MB")
    print(f"load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

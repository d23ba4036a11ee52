"""What the request journal costs (issue 36): the catalogue's throughput with the journal on and off.

    python benchmarks/journal.py [--duration S] [--pairs N] [--size N] [--no-off-process] [--baseline-src DIR]
                                 [--profile]

The main figure compares like with like: ONE ``blockkit emulator start`` process with its journal
on (``--journal-size N``, default 2000), measured by wrk with the journal recording and paused
(``POST /__emulator/journal {"recording": false}``), in short slices that alternate (on, off, off,
on, ...), so the two conditions share the process, its heap, its ports and the machine's drift. A
paused journal still passes each request through its middleware (one attribute read), so this is
the journal's whole cost less that read.

Two processes differ by more than the journal does: on this 2-core machine two identical processes
with the journal off, measured alternately by the same wrk, differ by up to 20-30 % in a run
(docs/speed.md). So the second figure, a separate process started with ``--journal-size 0`` (no
middleware at all, ``--no-off-process`` to leave it out), is measured in the same slices and printed
beside, with its process-to-process noise in mind; it is not the target's figure.

For each slice it reads requests/s from wrk and the server's CPU time per request from /proc (user +
system time of the process over the slice, divided by the requests wrk counted): on a loaded machine
the CPU time per request moves less than the rate. The cost printed is the median, over the pairs, of
each pair's own cost ``(off - on) / off``, in both measures; the target is within 10 % at 1 and 16
connections. Two routes: a cached page (``/models?limit=20``, the cheapest answer, where the
journal's share is largest) and a 404 (``/models/{missing}``, a refusal, whose entry gets a reason).
The memory (max RSS) of each process is printed after the run (the ring is bounded: the on process
holds at most ``--size`` entries however long it runs), with the load average before and after.

``--profile`` adds a third measure, one that the machine's noise moves little: py-spy (``pip install
py-spy``) samples the on process while wrk loads it at 16 connections, recording, and the share of
its busy samples whose innermost frame is the journal's own code (``journal.py``, ``http/journal.py``:
the C calls they make, the ring's append and the tuple copies included) is printed per route.

The CPU time the host took from this machine during the run (``steal`` in /proc/stat, a virtual
machine's neighbours) is printed with the load: when it is high, every figure moves.

``--baseline-src DIR`` (a copy of another version's ``src``, e.g. ``git archive main src | tar -x -C
/tmp/base``) adds that version as a process of its own, journal on, measured in the same slices.

wrk comes from Debian (apt-get install wrk).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

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


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_ticks() -> tuple[int, int]:
    """(steal, all) ticks of the machine so far, from /proc/stat (0, 0 where there is none)."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return 0, 0
    return (fields[7] if len(fields) > 7 else 0), sum(fields[:8])


def stolen(before: tuple[int, int]) -> str:
    steal, total = cpu_ticks()
    if total <= before[1]:
        return "unknown"
    return f"{(steal - before[0]) / (total - before[1]) * 100:.1f}%"


_IDLE_LEAVES = ("selectors.py", "threading.py")  # a thread waiting: the event loop's select, a pool's wait
_JOURNAL_FILES = ("blockkit/emulator/journal.py", "blockkit/emulator/http/journal.py")


def sampled_share(run: Any, path: str, seconds: int, work: Path) -> str:
    """The share of the server's busy samples (py-spy) whose innermost frame is the journal's code, under
    wrk at 16 connections, or why it could not be measured."""
    import shutil
    import subprocess

    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(spy).is_file():
        return "py-spy is not installed (pip install py-spy)"
    out = work / f"spy-{os.getpid()}-{len(list(work.glob('spy-*')))}.txt"
    sampler = subprocess.Popen([spy, "record", "-p", str(run.process.pid), "-r", "250", "-d", str(seconds + 1),
                                "-f", "raw", "-o", str(out), "--nonblocking"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wrk(run.info["base_url"] + path, connections=16, duration=seconds)
    _, error = sampler.communicate(timeout=seconds + 60)
    if sampler.returncode != 0 or not out.is_file():
        return f"py-spy failed: {error.decode(errors='replace').strip()[-200:]}"
    busy = in_journal = 0
    for line in out.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        leaf = stack.rsplit(";", 1)[-1]
        if any(name in leaf for name in _IDLE_LEAVES):
            continue
        busy += int(count)
        if any(name in leaf for name in _JOURNAL_FILES):
            in_journal += int(count)
    return f"{in_journal / busy * 100:.1f}% of {busy} samples" if busy else "no samples"


def set_recording(base_url: str, recording: bool) -> None:
    request = urllib.request.Request(base_url + "/__emulator/journal", method="POST",
                                     data=json.dumps({"recording": recording}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310 - our own loopback server
        assert json.loads(answer.read())["recording"] is recording


def measure(run: Any, path: str, connections: int, duration: int) -> tuple[float, float] | str:
    """(requests/s, server CPU microseconds per request) of one wrk slice, or why it could not run."""
    before = cpu_seconds(run.process.pid)
    result = wrk(run.info["base_url"] + path, connections=connections, duration=duration,
                 threads=1 if connections == 1 else 2)
    if "skipped" in result:
        return str(result["skipped"])
    used = cpu_seconds(run.process.pid) - before
    rate = float(result.get("requests_per_s", 0.0))
    served = rate * duration
    return rate, (used / served * 1e6 if served else 0.0)


def cost(pairs: list[tuple[float, float]], higher_is_better: bool) -> float:
    """The median of each pair's own cost in percent: (off - on) / off, or (on - off) / off for a time."""
    each = [((off - on) if higher_is_better else (on - off)) / off * 100 for on, off in pairs if off]
    return statistics.median(each) if each else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=int, default=3, help="seconds per wrk slice")
    parser.add_argument("--pairs", type=int, default=6, help="on/off pairs per case")
    parser.add_argument("--size", type=int, default=2000, help="the journal's size in the 'on' process")
    parser.add_argument("--no-off-process", action="store_true", help="leave out the --journal-size 0 process")
    parser.add_argument("--baseline-src", type=Path, help="another version's src directory: measured too, journal on")
    parser.add_argument("--case", choices=[name for name, _ in CASES], action="append",
                        help="measure only this case (repeatable; default: all)")
    parser.add_argument("--conns", type=int, choices=(1, 16), action="append",
                        help="measure only at this many connections (repeatable; default: 1 and 16)")
    parser.add_argument("--profile", action="store_true",
                        help="also sample the on process with py-spy: the journal's share of its busy samples")
    args = parser.parse_args()
    env = _env()
    if args.baseline_src is not None and not (args.baseline_src / "blockkit" / "__init__.py").is_file():
        print(f"journal benchmark: {args.baseline_src} has no blockkit package (give a src directory)")
        return 2
    load_before = os.getloadavg()
    ticks_before = cpu_ticks()
    with tempfile.TemporaryDirectory(prefix="bk-bench-journal-") as tmp:
        work = Path(tmp)
        on = start(work, "--no-access-key", "--journal-size", str(args.size), env=env)
        others: list[tuple[str, Any]] = []
        if not args.no_off_process:
            others.append(("off process", start(work, "--no-access-key", "--journal-size", "0", env=env)))
        if args.baseline_src is not None:
            base_env = {**env, "PYTHONPATH": os.pathsep.join(p for p in (str(args.baseline_src.resolve()),
                                                                          env.get("PYTHONPATH")) if p)}
            others.append(("base on", start(work, "--no-access-key", "--journal-size", str(args.size), env=base_env)))
        base_url = on.info["base_url"]
        try:
            print(f"journal benchmark: {args.pairs} on/off pairs x {args.duration} s slices per case, one process"
                  f" (journal {args.size}, recording vs paused); load average"
                  f" {' '.join(f'{x:.2f}' for x in load_before)}")
            header = f"{'case':<16} {'conns':>5} {'on req/s':>9} {'off req/s':>9} {'cost':>6} {'on us':>7} {'off us':>7} {'cost':>6}"
            for label, _run in others:
                header += f" | {label + ' req/s':>17} {'vs on':>6}"
            print(header)
            worst = float("-inf")  # a cost can be negative: the journal-off slices drew the slower share
            cases = [(name, path) for name, path in CASES if not args.case or name in args.case]
            for name, path in cases:
                for connections in args.conns or (1, 16):
                    rates: list[tuple[float, float]] = []
                    times: list[tuple[float, float]] = []
                    extra: dict[str, list[float]] = {label: [] for label, _run in others}
                    for pair in range(args.pairs):
                        got: dict[bool, tuple[float, float]] = {}
                        for recording in ((True, False) if pair % 2 == 0 else (False, True)):
                            set_recording(base_url, recording)
                            figures = measure(on, path, connections, args.duration)
                            if isinstance(figures, str):
                                print(f"journal benchmark: {figures}")
                                return 1
                            got[recording] = figures
                        set_recording(base_url, True)
                        rates.append((got[True][0], got[False][0]))
                        times.append((got[True][1], got[False][1]))
                        for label, run in others:
                            figures = measure(run, path, connections, args.duration)
                            if isinstance(figures, str):
                                print(f"journal benchmark: {figures}")
                                return 1
                            extra[label].append(figures[0])
                    rate_on = statistics.median(r[0] for r in rates)
                    rate_off = statistics.median(r[1] for r in rates)
                    time_on = statistics.median(t[0] for t in times)
                    time_off = statistics.median(t[1] for t in times)
                    rate_cost, time_cost = cost(rates, True), cost(times, False)
                    worst = max(worst, rate_cost, time_cost)
                    line = (f"{name:<16} {connections:>5} {rate_on:>9.0f} {rate_off:>9.0f} {rate_cost:>5.1f}%"
                            f" {time_on:>7.1f} {time_off:>7.1f} {time_cost:>5.1f}%")
                    for label, _run in others:
                        rate = statistics.median(extra[label])
                        line += f" | {rate:>17.0f} {(rate - rate_on) / rate * 100 if rate else 0.0:>5.1f}%"
                    print(line)
                    print(f"{'':<16} each pair's cost, rate: "
                          + " ".join(f"{(off - on) / off * 100:.1f}%" for on, off in rates if off)
                          + "; CPU: " + " ".join(f"{(on - off) / off * 100:.1f}%" for on, off in times if off))
            if args.profile:
                set_recording(base_url, True)
                for name, path in cases:
                    print(f"sampled at 16 conns, recording, {name}: journal code "
                          f"{sampled_share(on, path, max(args.duration * 3, 8), work)}")
            print(f"max RSS: on {rss_kb(on.process.pid)} kB"
                  + "".join(f", {label} {rss_kb(run.process.pid)} kB" for label, run in others)
                  + f" (the on process's ring holds at most {args.size} entries)")
            print(f"worst cost {worst:.1f}% (target <= {TARGET_PERCENT:g}%: {'ok' if worst <= TARGET_PERCENT else 'MISSED'});"
                  f" load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; CPU stolen by the host during the"
                  f" run {stolen(ticks_before)}")
        finally:
            on.stop()
            for _label, run in others:
                run.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

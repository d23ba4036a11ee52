"""Time and peak memory of the hostile inputs of the security review (issue 14, rows 1-5 and 8).

Each case runs in a fresh subprocess: one for the ``blockkit`` command, or one Python
process that imports blockkit and makes the library call. Its input file is written
beforehand, outside the measurement. For every case this prints the wall time and the
CPU time (user + system) of that process, interpreter start included, the wall time of
the library call alone where there is one, the peak RSS of the process (both from
``getrusage(RUSAGE_CHILDREN)`` in a wrapper process that has no other child), the size
of the output, and the exit status. The verdict compares the CPU time with the target:
on a shared machine the wall time also counts the time other processes held the cores. A case that runs
past ``--timeout`` is killed and shown as "timeout"; one that exhausts the address space
limit (``--memory-limit``, 4 GB as in the review's ``ulimit -v``) shows its error.

The sizes are the review's (reviews/security-2026-11-22.md). Targets: every case under
1 s and 200 MB.

Usage: python benchmarks/bench_security.py [--timeout 60] [--only NAME] [--json FILE]
Run it against another checkout with ``PYTHONPATH=/path/to/src``; children inherit it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = json.loads((REPO / "examples" / "hello-block" / "block.manifest.json").read_text())

TARGET_SECONDS = 1.0
TARGET_MB = 200


def _with(key: str, value: object) -> str:
    """The example manifest with ``key`` set to ``value``, compact (so the most fits under 1 MiB)."""
    doc = dict(EXAMPLE)
    doc[key] = value
    return json.dumps(doc, separators=(",", ":"))


# --- inputs: name -> (row, what, writer(folder) -> the command's arguments) --------------


def _file(folder: Path, text: str, name: str = "block.manifest.json") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-c", "from blockkit.cli import main; main()", *args]


def _library(call: str, path: Path) -> list[str]:
    # The call alone is timed inside the child, after import.
    code = (
        "import json, sys, time, blockkit\n"
        f"path = {str(path)!r}\n"
        "start = time.perf_counter()\n"
        f"report = {call}\n"
        "seconds = time.perf_counter() - start\n"
        "codes = {}\n"
        "for f in report.findings: codes[f.code] = codes.get(f.code, 0) + 1\n"
        "print(json.dumps({'call_seconds': seconds, 'ok': report.ok, 'codes': codes}))\n"
    )
    return [sys.executable, "-c", code]


def sj_cli(n: int) -> Callable[[Path], list[str]]:
    def make(folder: Path) -> list[str]:
        path = _file(folder, _with("scopeJustifications", {f"user:read:sel{i}": "y" for i in range(n)}))
        return _cli("validate", str(path))
    return make


def sj_library(n: int) -> Callable[[Path], list[str]]:
    def make(folder: Path) -> list[str]:
        path = _file(folder, _with("scopeJustifications", {f"user:read:sel{i}": "y" for i in range(n)}))
        return _library("blockkit.validate_file(path)", path)
    return make


def long_key(key_length: int, items: int) -> Callable[[Path], list[str]]:
    def make(folder: Path) -> list[str]:
        text = '{"blockId":"abc","' + "k" * key_length + '":[' + ",".join(["0"] * items) + "]}"
        return _cli("validate", str(_file(folder, text)))
    return make


def duplicates_under_long_key(key_length: int, pairs: int) -> Callable[[Path], list[str]]:
    def make(folder: Path) -> list[str]:
        members = ",".join(f'"a{i}":0,"a{i}":0' for i in range(pairs))
        text = '{"blockId":"abc","' + "k" * key_length + '":{' + members + "}}"
        return _cli("validate", str(_file(folder, text)))
    return make


def many(key: str, value: object) -> Callable[[Path], list[str]]:
    def make(folder: Path) -> list[str]:
        return _cli("validate", "--format", "json", str(_file(folder, _with(key, value))))
    return make


def duplicate_objects(n: int) -> Callable[[Path], list[str]]:
    def make(folder: Path) -> list[str]:
        text = json.dumps(EXAMPLE)[:-1] + ', "x": [' + ",".join(['{"a":0,"a":0}'] * n) + "]}"
        return _cli("validate", "--format", "json", str(_file(folder, text)))
    return make


def toplevel_keys(n: int) -> Callable[[Path], list[str]]:
    def make(folder: Path) -> list[str]:
        doc = dict(EXAMPLE, **{f"nam{i}": 0 for i in range(n)})
        return _cli("lint", "--format", "json", str(_file(folder, json.dumps(doc, separators=(",", ":")))))
    return make


def text_input(build: str) -> Callable[[Path], list[str]]:
    """A manifest given to blockkit.validate as a str (no file): ``build`` makes ``s``."""

    def make(folder: Path) -> list[str]:
        code = (
            "import json, time, blockkit\n"
            f"d = json.loads({json.dumps(json.dumps(EXAMPLE))})\n"
            f"{build}\n"
            "start = time.perf_counter()\n"
            "report = blockkit.validate(s)\n"
            "seconds = time.perf_counter() - start\n"
            "codes = {}\n"
            "for f in report.findings: codes[f.code] = codes.get(f.code, 0) + 1\n"
            "print(json.dumps({'call_seconds': seconds, 'ok': report.ok, 'codes': codes}))\n"
        )
        return [sys.executable, "-c", code]
    return make


def lint_regex(repeats: int) -> Callable[[Path], list[str]]:
    def make(folder: Path) -> list[str]:
        project = folder / "lr"
        project.mkdir()
        (project / "block.manifest.json").write_text(json.dumps(EXAMPLE, indent=2), encoding="utf-8")
        (project / "a.js").write_text("useAppStorage<" * repeats, encoding="utf-8")
        return _cli("lint", str(project))
    return make


def example(folder: Path) -> list[str]:
    return _cli("validate", str(_file(folder, json.dumps(EXAMPLE, indent=2))))


CASES: list[tuple[str, str, str, Callable[[Path], list[str]]]] = [
    ("example", "-", "the example manifest (valid), validate: the fixed cost of one CLI run", example),
    ("sj-150-cli", "1", "150 unknown scopeJustifications keys (4 KB), validate", sj_cli(150)),
    ("sj-300-cli", "1", "300 unknown scopeJustifications keys (7.8 KB), validate", sj_cli(300)),
    ("sj-100-lib", "1", "100 unknown scopeJustifications keys, validate_file", sj_library(100)),
    ("sj-1000-lib", "1", "1000 unknown scopeJustifications keys (25 KB), validate_file", sj_library(1000)),
    ("longkey-120k", "2", "100 KB key over 10k array items (120 KB), validate", long_key(100_000, 10_000)),
    ("longkey-340k", "2", "300 KB key over 20k array items (340 KB), validate", long_key(300_000, 20_000)),
    ("dupkeys-258k", "3", "8000 duplicate keys under a 100 KB key (258 KB), validate", duplicates_under_long_key(100_000, 8000)),
    ("scopes-200k", "4", "200k invalid scopes (1.0 MB), validate --format json", many("scopes", ["x"] * 200_000)),
    ("iframe-85k", "4", "85k unknown iframe keys, validate --format json", many("iframe", {f"k{i}": 0 for i in range(85_000)})),
    ("page-60k", "4", "60k near-miss page keys, validate --format json", many("page", {f"title{i}": 0 for i in range(60_000)})),
    ("goods-16k", "4", "16k goods with a bad price, validate --format json",
     many("goods", [{"id": f"good-{i}", "title": "Good", "priceBuzz": -1} for i in range(16_000)])),
    ("dupobj-74k", "4", "74k objects each with a duplicate key, validate --format json", duplicate_objects(74_000)),
    # Not in the review: the other shapes of row 4 that hold the most findings per byte.
    ("goods-empty-300k", "4+", "300k empty goods (3 missing keys each), validate --format json", many("goods", [{}] * 300_000)),
    ("scopes-int-400k", "4+", "400k numbers as scopes, validate --format json", many("scopes", [0] * 400_000)),
    ("targets-60k", "4+", "60k targets naming an unknown slot, validate --format json",
     many("targets", [{"slotId": "x"}] * 60_000)),
    ("toplevel-70k-lint", "4+", "70k unknown top-level keys (each a near miss), lint --format json", toplevel_keys(70_000)),
    ("text-10mb", "5", "10 MB str (a 10 MB value), validate(str)", text_input("d['x'] = 'a' * (10 << 20); s = json.dumps(d)")),
    ("text-targets-300k", "5", "300k targets as an 8 MB str, validate(str)",
     text_input("d['targets'] = [{'slotId': 'x'}] * 300_000; s = json.dumps(d)")),
    ("text-unterminated-10mb", "5", "10 MB unterminated escaped string, validate(str)",
     text_input("s = '{\"a\": \"' + '\\\\n' * (5 << 20)")),
    ("text-escapes-10mb", "5", "10 MB of \\u0041 escapes, validate(str)",
     text_input("s = '{\"a\": \"' + '\\\\u0041' * ((10 << 20) // 6) + '\"}'")),
    ("lint-regex-280k", "8", "useAppStorage< repeated 280 KB in a.js, lint", lint_regex(20_000)),
]


def _limit_memory(limit: int) -> Callable[[], None]:
    def apply() -> None:
        if limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return apply


def run_child(argv: list[str], timeout: float, memory_limit: int) -> dict:
    """Run one case (inside a wrapper process that has no other child) and measure it."""
    start = time.perf_counter()
    try:
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                              preexec_fn=_limit_memory(memory_limit))
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "seconds": timeout}
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    result: dict = {"status": "ok", "seconds": seconds, "cpu_seconds": usage.ru_utime + usage.ru_stime,
                    "peak_mb": usage.ru_maxrss / 1024, "rc": done.returncode, "output_bytes": len(done.stdout)}
    tail = done.stderr.decode("utf-8", "replace").strip().splitlines()
    if done.returncode not in (0, 1):
        result["status"] = "error"
        result["error"] = tail[-1][:160] if tail else f"exit {done.returncode}"
    if argv[1] == "-c" and "call_seconds" in done.stdout.decode("utf-8", "replace"):
        try:
            result.update(json.loads(done.stdout.decode().strip().splitlines()[-1]))
        except ValueError:
            pass
    return result


def measure(name: str, timeout: float, memory_limit: int) -> dict:
    """Measure one case in a fresh wrapper process, so RUSAGE_CHILDREN covers that case alone."""
    wrapper = [sys.executable, __file__, "--child", name, "--timeout", str(timeout),
               "--memory-limit", str(memory_limit)]
    done = subprocess.run(wrapper, stdout=subprocess.PIPE, text=True, check=True)
    return json.loads(done.stdout)


def child(name: str, timeout: float, memory_limit: int) -> None:
    make = next(case[3] for case in CASES if case[0] == name)
    with tempfile.TemporaryDirectory(prefix="bench-security-") as tmp:
        argv = make(Path(tmp))
        print(json.dumps(run_child(argv, timeout, memory_limit)))


# Cases whose verdict must hold this code (the review's row 5: text over 1 MiB is BK006, as bytes are).
EXPECTED_CODE = {"text-10mb": "BK006", "text-targets-300k": "BK006", "text-unterminated-10mb": "BK006",
                 "text-escapes-10mb": "BK006"}


def _verdict(result: dict) -> str:
    if result["status"] == "timeout":
        return "timeout"
    expected = EXPECTED_CODE.get(result.get("name", ""))
    if expected and expected not in result.get("codes", {}):
        return f"WRONG VERDICT (no {expected})"
    seconds = result["cpu_seconds"]
    fine = seconds < TARGET_SECONDS and result.get("peak_mb", 0) < TARGET_MB and result["status"] == "ok"
    return "meets target" if fine else "MISSES target"


def main(argv: Optional[list[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per case (default 60)")
    parser.add_argument("--memory-limit", type=int, default=4_000_000 * 1024,
                        help="address space limit per case in bytes (default 4 GB, as the review's ulimit -v)")
    parser.add_argument("--only", action="append", help="run only this case (repeatable)")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.timeout, args.memory_limit)
        return
    import blockkit

    print(f"blockkit from {Path(blockkit.__file__).parent}; timeout {args.timeout:g} s per case")
    header = (f"{'row':>3}  {'case':<24} {'wall s':>8} {'cpu s':>8} {'call s':>8} {'peak MB':>8} {'out bytes':>11} "
              f"{'rc':>3}  verdict")
    print(header)
    results = {}
    for name, row, what, _ in CASES:
        if args.only and name not in args.only:
            continue
        result = measure(name, args.timeout, args.memory_limit)
        result.update(row=row, what=what, name=name)
        results[name] = result
        if result["status"] == "timeout":
            print(f"{row:>3}  {name:<24} {'timeout':>8} {'':>8} {'':>8} {'':>8} {'':>11} {'':>3}  "
                  f"timeout (>{args.timeout:g} s)", flush=True)
        else:
            call = f"{result['call_seconds']:.3f}" if "call_seconds" in result else "-"
            line = (f"{row:>3}  {name:<24} {result['seconds']:8.3f} {result['cpu_seconds']:8.3f} {call:>8} "
                    f"{result['peak_mb']:8.1f} "
                    f"{result['output_bytes']:>11,} {result['rc']:>3}  {_verdict(result)}")
            if result.get("error"):
                line += f"  [{result['error']}]"
            if "codes" in result:
                codes = ", ".join(f"{code}x{count}" for code, count in sorted(result["codes"].items()))
                line += f"  (ok={result['ok']}: {codes[:60] or 'no findings'})"
            print(line, flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")
    print("\n".join(f"  {name}: {result['what']}" for name, result in results.items()))


if __name__ == "__main__":
    main()

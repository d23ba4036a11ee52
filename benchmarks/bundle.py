"""check_bundle on a bundle at the platform's 50 MiB cap and on zip bombs: time and peak memory.

Prints, for each case, the wall time, the CPU time and the peak of memory allocated by Python
(tracemalloc; the zip's own bytes, built before the measurement, are not counted) of one
``blockkit.check_bundle`` call, with the findings it made:
  - a 50 MiB bundle: incompressible assets and ~1,500 text files scanned for credentials;
  - a zip bomb whose header lies: 256 MiB of zeros declared as 1,000 bytes;
  - a zip bomb with honest headers: 21 entries of 10 MiB of zeros (210 MiB declared);
  - a central directory declaring 50,000 entries.

Usage: python benchmarks/bundle.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from zip_helpers import RawEntry, honest_zip, manifest_entry, raw_zip  # noqa: E402

from blockkit.bundle import check_bundle  # noqa: E402
from blockkit.platform import BUNDLE_LIMITS  # noqa: E402

MiB = 1024 * 1024


def fifty_mib_bundle() -> bytes:
    files: dict[str, bytes] = {}
    line = b"export function f%d(a, b) { return a + b * %d; } // a line of source\n"
    for index in range(1500):
        files[f"src/module{index:04}.js"] = b"".join(line % (index, n) for n in range(60))
    rng = os.urandom
    index = 0
    data = honest_zip(files)
    while len(data) < BUNDLE_LIMITS.bundle_bytes_max - 2 * MiB:
        files[f"assets/noise{index:02}.bin"] = rng(2 * MiB)
        index += 1
        data = honest_zip(files)
    return data


def lying_bomb() -> bytes:
    return raw_zip([manifest_entry(), RawEntry("bomb.bin", b"\0" * (256 * MiB), declared_size=1000)])


def honest_bomb() -> bytes:
    zeros = b"\0" * BUNDLE_LIMITS.file_bytes_max
    return raw_zip([manifest_entry(), *(RawEntry(f"z{i}.bin", zeros) for i in range(21))])


def many_entries() -> bytes:
    return raw_zip([manifest_entry(), *(RawEntry(f"f{i}", b"", deflate=False) for i in range(50_000))])


def measure(data: bytes, rounds: int) -> tuple[float, float, int, list[str]]:
    best_wall, best_cpu, peak = float("inf"), float("inf"), 0
    codes: list[str] = []
    for _ in range(rounds):
        tracemalloc.start()
        wall, cpu = time.perf_counter(), time.process_time()
        report = check_bundle(data)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        _, round_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        best_wall, best_cpu, peak = min(best_wall, wall), min(best_cpu, cpu), max(peak, round_peak)
        codes = sorted({f.code for f in report.findings})
    return best_wall, best_cpu, peak, codes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    cases: list[tuple[str, Callable[[], bytes]]] = [
        ("50 MiB bundle", fifty_mib_bundle),
        ("zip bomb, lying header (256 MiB as 1000 B)", lying_bomb),
        ("zip bomb, honest headers (21 x 10 MiB)", honest_bomb),
        ("50,000 declared entries", many_entries),
    ]
    print(f"{'case':46} {'zip':>10} {'wall':>8} {'cpu':>8} {'peak':>10}  findings")
    for name, build in cases:
        data = build()
        wall, cpu, peak, codes = measure(data, args.rounds)
        print(f"{name:46} {len(data) / MiB:7.2f} MiB {wall:7.3f}s {cpu:7.3f}s {peak / MiB:7.2f} MiB  "
              f"{', '.join(codes) or '-'}")


if __name__ == "__main__":
    main()

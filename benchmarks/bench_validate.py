"""Validation speed, side by side with check-jsonschema on the same schema and files.

Prints, from one run on this machine:
  - library latency per manifest (p50, p99) for valid and invalid manifests, and
    manifests per second on one core;
  - cold single-file CLI wall time: blockkit vs check-jsonschema;
  - one CLI call over 1000 manifests: blockkit vs check-jsonschema.

Usage: python benchmarks/bench_validate.py [--files 1000] [--repeat 5]
Needs check-jsonschema on PATH (it is in the test extras).
"""

from __future__ import annotations

import argparse
import copy
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "schema" / "app-block.v1.json"
EXAMPLE = json.loads((REPO / "examples" / "hello-block" / "block.manifest.json").read_text())


def valid_manifest(i: int) -> dict:
    doc = copy.deepcopy(EXAMPLE)
    doc["blockId"] = f"bench-block-{i}"
    doc["version"] = f"1.{i % 50}.{i % 7}"
    doc["scopes"] = ["user:read:self", "ai:write:budgeted"]
    doc["scopeJustifications"] = {"ai:write:budgeted": "Generates images the viewer asks for."}
    doc["page"]["buzzBudgetPerGen"] = 50 + i % 100
    doc["repository"] = f"https://github.com/bench/block-{i}"
    return doc


def invalid_manifest(i: int) -> dict:
    doc = valid_manifest(i)
    doc["version"] = "1.0"
    doc["trustTier"] = "verified"
    doc["iframe"]["sandbox"] = "allow-scripts allow-same-origin allow-popups"
    doc["iframe"]["minHeight"] = 20
    doc["scopes"].append("buzz:read:self")
    doc["tagline"] = "😀" * 71
    return doc


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def library_latency(texts: list[str]) -> tuple[float, float, float]:
    import blockkit

    blockkit.validate(texts[0])  # build the validators once, as a long-lived pipeline would
    samples = []
    for text in texts:
        start = time.perf_counter()
        report = blockkit.validate(text)
        samples.append(time.perf_counter() - start)
        assert report.files[0].findings is not None
    total = sum(samples)
    return percentile(samples, 50) * 1e3, percentile(samples, 99) * 1e3, len(texts) / total


def wall_pair(ours: list[str], theirs: list[str], repeat: int) -> tuple[float, float]:
    """Median wall times of two commands, run alternately so that load on a noisy
    machine falls on both alike."""
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for cmd, bucket in ((ours, times[0]), (theirs, times[1])):
            start = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            bucket.append(time.perf_counter() - start)
    return statistics.median(times[0]), statistics.median(times[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    # The environment's own scripts, not a version manager's shim in front of them (pyenv's
    # adds tens of milliseconds to every start, which would blur both tools' figures alike).
    scripts = str(Path(sys.executable).parent)
    blockkit_cli = shutil.which("blockkit", path=scripts) or shutil.which("blockkit")
    cjs = shutil.which("check-jsonschema", path=scripts) or shutil.which("check-jsonschema")
    if not blockkit_cli or not cjs:
        print("needs both `blockkit` and `check-jsonschema` on PATH (pip install -e '.[test]')", file=sys.stderr)
        return 2

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        valid_texts = [json.dumps(valid_manifest(i), indent=2) for i in range(args.files)]
        invalid_texts = [json.dumps(invalid_manifest(i), indent=2) for i in range(args.files)]
        valid_paths, invalid_paths = [], []
        for i, text in enumerate(valid_texts):
            (root / f"v{i:05d}.json").write_text(text)
            valid_paths.append(str(root / f"v{i:05d}.json"))
        for i, text in enumerate(invalid_texts):
            (root / f"i{i:05d}.json").write_text(text)
            invalid_paths.append(str(root / f"i{i:05d}.json"))

        print(f"blockkit benchmark: {args.files} manifests per set, median of {args.repeat} alternated runs; Python {sys.version.split()[0]}")
        print(f"commands: {blockkit_cli} and {cjs}")
        print()
        print("library, one core (blockkit.validate on JSON text, validators already built)")
        for label, texts in (("valid", valid_texts), ("invalid", invalid_texts)):
            p50, p99, rate = library_latency(texts)
            print(f"  {label:8} p50 {p50:7.3f} ms   p99 {p99:7.3f} ms   {rate:8.0f} manifests/s")
        print()

        single = valid_paths[0]
        ours, theirs = wall_pair([blockkit_cli, "validate", single],
                                 [cjs, "--schemafile", str(SCHEMA), single], args.repeat * 2)
        print("cold CLI, one valid file (wall time)")
        print(f"  blockkit validate        {ours * 1e3:8.1f} ms")
        print(f"  check-jsonschema         {theirs * 1e3:8.1f} ms")
        print(f"  ratio blockkit/baseline  {ours / theirs:8.2f}x   (target <= 0.60x)")
        print()

        for label, paths in (("valid", valid_paths), ("invalid", invalid_paths)):
            ours, theirs = wall_pair([blockkit_cli, "validate", *paths],
                                     [cjs, "--schemafile", str(SCHEMA), *paths], args.repeat)
            print(f"one CLI call over {len(paths)} {label} files (wall time)")
            print(f"  blockkit validate        {ours * 1e3:8.1f} ms")
            print(f"  check-jsonschema         {theirs * 1e3:8.1f} ms")
            print(f"  speed-up over baseline   {theirs / ours:8.2f}x   (target >= 5x)")
            print()
        print("note: check-jsonschema checks the schema only; blockkit also runs every server rule")
        print("      and reports positions for every finding.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

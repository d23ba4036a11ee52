"""Validation speed on the real corpus and on synthetic manifests, against a reference and check-jsonschema.

Prints, from one run on this machine:
  - library latency per manifest (mean, p50, p99, manifests/s on one core) for the real
    corpus (/work/shared/corpus/real, or --corpus) and for synthetic valid and invalid
    manifests;
  - the reference on the same real manifests in the same run: ``json.loads`` plus a
    compiled ``jsonschema_rs`` validator's ``is_valid`` with our schema
    (schema/app-block.v1.json), and the ratio blockkit/reference (target <= 3x);
  - one CLI call over N files (the real manifests copied round-robin into a temp folder),
    blockkit vs check-jsonschema with our schema (target: >= 4x faster), and the same for
    synthetic valid and invalid files;
  - a cold single-file CLI run, blockkit vs check-jsonschema (target: <= 0.35x the time).

Library figures are medians over --repeat rounds of the CPU time per manifest (p50 and
p99 are wall times of single calls); in each round blockkit and the reference run back
to back on the same manifests, and the ratio is taken per round, so that load from
other processes falls on both alike. CLI figures are medians of alternated runs (wall
time). Before the CLI runs, blockkit's modules are compiled to bytecode as an
installed wheel's are (PYTHONDONTWRITEBYTECODE would otherwise make every run
compile them again, which check-jsonschema, installed, never does).

Usage: python benchmarks/bench_validate.py [--files 1000] [--repeat 7] [--corpus DIR]
Needs check-jsonschema and jsonschema_rs (both in the test extras).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "schema" / "app-block.v1.json"
EXAMPLE = json.loads((REPO / "examples" / "hello-block" / "block.manifest.json").read_text())
DEFAULT_CORPUS = Path("/work/shared/corpus/real")
if not DEFAULT_CORPUS.is_dir():  # beside the checkout, as in CI
    DEFAULT_CORPUS = REPO.parent / "shared" / "corpus" / "real"

# The targets of issue 13 item 4.
LIBRARY_RATIO_MAX = 3.0  # blockkit.validate / (json.loads + jsonschema_rs is_valid)
MANY_SPEEDUP_MIN = 4.0  # check-jsonschema time / blockkit time, one call over the files
COLD_RATIO_MAX = 0.35  # blockkit time / check-jsonschema time, one cold file


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


def timed_round(call: Callable[[str], object], texts: list[str], samples: list[float]) -> float:
    """CPU seconds per manifest for one pass over ``texts`` (time.process_time: on a loaded machine
    the time spent waiting for a core is not counted); each call's wall time goes to ``samples``."""
    clock = time.perf_counter
    cpu = time.process_time()
    for text in texts:
        start = clock()
        call(text)
        samples.append(clock() - start)
    return (time.process_time() - cpu) / len(texts)


def library(texts: list[str], repeat: int, reference: Callable[[str], object] | None) -> dict[str, float]:
    """blockkit.validate (and the reference, alternated round by round) over ``texts``."""
    import blockkit

    for text in texts:  # build the validators, load the rules: as a long-lived pipeline would
        blockkit.validate(text)
        if reference is not None:
            reference(text)
    # and read as many manifests as such a pipeline has read once it parses with orjson
    from blockkit import source

    for _ in range(getattr(source, "FAST_PARSE_AFTER", 0) // len(texts) + 1):
        for text in texts:
            source.read_text(text)
    ours: list[float] = []
    theirs: list[float] = []
    ratios: list[float] = []
    samples: list[float] = []
    ref_samples: list[float] = []
    for _ in range(repeat):
        mine = timed_round(blockkit.validate, texts, samples)
        ours.append(mine)
        if reference is not None:
            other = timed_round(reference, texts, ref_samples)
            theirs.append(other)
            ratios.append(mine / other)
    result = {"mean": statistics.median(ours), "p50": percentile(samples, 50), "p99": percentile(samples, 99)}
    if reference is not None:
        result.update(ref_mean=statistics.median(theirs), ref_p50=percentile(ref_samples, 50),
                      ref_p99=percentile(ref_samples, 99), ratio=statistics.median(ratios))
    return result


def make_reference() -> Callable[[str], object]:
    import jsonschema_rs

    validator = jsonschema_rs.validator_for(json.loads(SCHEMA.read_text()))
    is_valid = validator.is_valid
    loads = json.loads

    def reference(text: str) -> object:
        return is_valid(loads(text))

    return reference


def wall_pair(ours: list[str], theirs: list[str], repeat: int) -> tuple[float, float, float]:
    """Median wall times of two commands, run alternately so that load on a noisy machine
    falls on both alike, and the median of the per-pair ratios."""
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for cmd, bucket in ((ours, times[0]), (theirs, times[1])):
            start = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            bucket.append(time.perf_counter() - start)
    ratios = [a / b for a, b in zip(*times)]
    return statistics.median(times[0]), statistics.median(times[1]), statistics.median(ratios)


def verdict(met: bool) -> str:
    return "MET" if met else "NOT MET"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="folder of real manifests (*.json)")
    args = parser.parse_args()
    # The environment's own scripts, not a version manager's shim in front of them (pyenv's
    # adds tens of milliseconds to every start, which would blur both tools' figures alike).
    scripts = str(Path(sys.executable).parent)
    blockkit_cli = shutil.which("blockkit", path=scripts) or shutil.which("blockkit")
    cjs = shutil.which("check-jsonschema", path=scripts) or shutil.which("check-jsonschema")
    if not blockkit_cli or not cjs:
        print("needs both `blockkit` and `check-jsonschema` on PATH (pip install -e '.[test]')", file=sys.stderr)
        return 2
    real_paths = sorted(args.corpus.glob("*.json"))
    if not real_paths:
        print(f"no real manifests in {args.corpus} (pass --corpus DIR)", file=sys.stderr)
        return 2
    real_texts = [path.read_text(encoding="utf-8", errors="replace") for path in real_paths]

    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print(f"blockkit benchmark: {len(real_paths)} real manifests from {args.corpus}; {args.files} files per CLI set; "
          f"median of {args.repeat} rounds; Python {sys.version.split()[0]}; {os.cpu_count()} cores; "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"commands: {blockkit_cli} and {cjs}")
    print()
    met: dict[str, bool] = {}

    print("library, one core (blockkit.validate on JSON text, validators already built)")
    real = library(real_texts, args.repeat, make_reference())
    rate = 1 / real["mean"]
    print(f"  real corpus   mean {real['mean'] * 1e6:7.1f} us   p50 {real['p50'] * 1e6:7.1f} us   "
          f"p99 {real['p99'] * 1e6:7.1f} us   {rate:8.0f} manifests/s")
    print(f"  reference     mean {real['ref_mean'] * 1e6:7.1f} us   p50 {real['ref_p50'] * 1e6:7.1f} us   "
          f"p99 {real['ref_p99'] * 1e6:7.1f} us   {1 / real['ref_mean']:8.0f} manifests/s   "
          "(json.loads + jsonschema_rs is_valid, same manifests, same rounds)")
    met["library"] = real["ratio"] <= LIBRARY_RATIO_MAX
    print(f"  ratio blockkit/reference {real['ratio']:6.2f}x   (target <= {LIBRARY_RATIO_MAX:.0f}x: "
          f"{verdict(met['library'])})")
    n = len(real_texts)
    synthetic = {
        "valid": [json.dumps(valid_manifest(i), indent=2) for i in range(n)],
        "invalid": [json.dumps(invalid_manifest(i), indent=2) for i in range(n)],
    }
    for label, texts in synthetic.items():
        figures = library(texts, args.repeat, None)
        print(f"  synthetic {label:8}mean {figures['mean'] * 1e6:7.1f} us   p50 {figures['p50'] * 1e6:7.1f} us   "
              f"p99 {figures['p99'] * 1e6:7.1f} us   {1 / figures['mean']:8.0f} manifests/s")
    print()

    import compileall

    import blockkit

    compileall.compile_dir(str(Path(blockkit.__file__).parent), quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        sets: dict[str, list[str]] = {"real": [], "synthetic valid": [], "synthetic invalid": []}
        for i in range(args.files):
            target = root / f"r{i:05d}.json"
            shutil.copyfile(real_paths[i % len(real_paths)], target)
            sets["real"].append(str(target))
            for label, make in (("synthetic valid", valid_manifest), ("synthetic invalid", invalid_manifest)):
                target = root / f"{label.split()[1][0]}{i:05d}.json"
                target.write_text(json.dumps(make(i), indent=2), encoding="utf-8")
                sets[label].append(str(target))

        for label, paths in sets.items():
            ours, theirs, ratio = wall_pair([blockkit_cli, "validate", *paths],
                                            [cjs, "--schemafile", str(SCHEMA), *paths], args.repeat)
            speedup = 1 / ratio
            print(f"one CLI call over {len(paths)} {label} files (wall time)")
            print(f"  blockkit validate        {ours * 1e3:8.1f} ms")
            print(f"  check-jsonschema         {theirs * 1e3:8.1f} ms")
            if label == "real":
                met["many"] = speedup >= MANY_SPEEDUP_MIN
                print(f"  speed-up over baseline   {speedup:8.2f}x   (target >= {MANY_SPEEDUP_MIN:.0f}x: "
                      f"{verdict(met['many'])})")
            else:
                print(f"  speed-up over baseline   {speedup:8.2f}x")
            print()

        single = sets["real"][0]
        ours, theirs, ratio = wall_pair([blockkit_cli, "validate", single],
                                        [cjs, "--schemafile", str(SCHEMA), single], args.repeat * 2)
        met["cold"] = ratio <= COLD_RATIO_MAX
        print(f"cold CLI, one real corpus file ({real_paths[0].name}; wall time)")
        print(f"  blockkit validate        {ours * 1e3:8.1f} ms")
        print(f"  check-jsonschema         {theirs * 1e3:8.1f} ms")
        print(f"  ratio blockkit/baseline  {ratio:8.2f}x   (target <= {COLD_RATIO_MAX:.2f}x: {verdict(met['cold'])})")
        print()

    print("targets: " + ", ".join(f"{name} {verdict(ok)}" for name, ok in met.items()))
    print("note: check-jsonschema and the reference check the schema only; blockkit also runs every server")
    print("      rule and reports positions for every finding.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

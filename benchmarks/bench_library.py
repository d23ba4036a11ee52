"""Library time per real manifest, by phase, for one or more source trees in the same run.

Prints, per tree (each measured in its own subprocess, the trees alternated round by round
so that load from other processes falls on all alike), the CPU time per manifest of:
  - json.loads, and the reference (json.loads + a compiled jsonschema_rs validator's is_valid);
  - blockkit.source.read_text (parse, repeated names, depth check);
  - blockkit.validate on the text (everything), and its ratio to the reference; the same for the
    manifests without findings alone;
  - locating the findings of the manifests that have some (engine._finding on a fresh Source).
Figures are medians over rounds of the best of --inner passes over the corpus, taken after as
many reads as a long-lived process needs to switch to its fast parser (source.FAST_PARSE_AFTER).

Usage: python benchmarks/bench_library.py [--rounds 5] [--inner 5] [--corpus DIR] [SRC ...]
(SRC: a checkout's src directory; default: the blockkit this Python imports.)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = Path("/work/shared/corpus/real")
if not DEFAULT_CORPUS.is_dir():
    DEFAULT_CORPUS = REPO.parent / "shared" / "corpus" / "real"

# Runs in the subprocess: prints one JSON object of microseconds per manifest.
_PROBE = r"""
import json, sys
from pathlib import Path
import blockkit, jsonschema_rs
from blockkit import engine, source

corpus, inner, schema = Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
sys.path.insert(0, sys.argv[4])  # the benchmarks folder
from _timing import best as best_of
texts = [p.read_text(encoding="utf-8") for p in sorted(corpus.glob("*.json"))]
validator = jsonschema_rs.validator_for(json.loads(schema.read_text()))
for text in texts:
    blockkit.validate(text)
# A long-lived process: past the reads after which blockkit parses with orjson (source.FAST_PARSE_AFTER).
for _ in range(getattr(source, "FAST_PARSE_AFTER", 0) // len(texts) + 1):
    for text in texts:
        source.read_text(text)
cases = []  # (text, the (rule, hit) pairs its findings were built from)
real_finding = engine._finding
for text in texts:
    hits = []
    engine._finding = lambda s, rule, hit, hits=hits: (hits.append((rule, hit)), real_finding(s, rule, hit))[1]
    blockkit.validate(text)
    if hits:
        cases.append((text, hits))
engine._finding = real_finding


def locate(case):
    text, hits = case
    found = source.read_text(text)
    for rule, hit in hits:
        real_finding(found, rule, hit)


def best(fn, items):
    return best_of(fn, items, inner)


read = best(source.read_text, texts)
print(json.dumps({
    "json.loads": best(json.loads, texts),
    "reference": best(lambda t: validator.is_valid(json.loads(t)), texts),
    "read_text": read,
    "validate": best(blockkit.validate, texts),
    "validate (clean)": best(blockkit.validate, [t for t in texts if t not in {c[0] for c in cases}]),
    "read+locate": best(locate, cases),
    "read (those)": best(lambda case: source.read_text(case[0]), cases),
    "with findings": len(cases),
    "manifests": len(texts),
}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--inner", type=int, default=5)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("trees", nargs="*", help="src directories to compare (default: the importable blockkit)")
    args = parser.parse_args()
    trees = args.trees or [""]
    results: dict[str, list[dict[str, float]]] = {tree: [] for tree in trees}
    for _ in range(args.rounds):
        for tree in trees:
            env = dict(os.environ)
            if tree:
                env["PYTHONPATH"] = tree
            out = subprocess.run([sys.executable, "-c", _PROBE, str(args.corpus), str(args.inner),
                                  str(REPO / "schema" / "app-block.v1.json"), str(Path(__file__).resolve().parent)],
                                 env=env, check=True, capture_output=True, text=True).stdout
            results[tree].append(json.loads(out))
    print(f"CPU time per manifest, median of {args.rounds} rounds (best of {args.inner} passes each), "
          f"corpus {args.corpus}")
    for tree, rounds in results.items():
        median = {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
        ratio = statistics.median(r["validate"] / r["reference"] for r in rounds)
        locating = median["read+locate"] - median["read (those)"]
        print(f"  {tree or 'importable blockkit'}")
        print(f"    json.loads {median['json.loads']:6.1f} us   reference {median['reference']:6.1f} us   "
              f"read_text {median['read_text']:6.1f} us   validate {median['validate']:6.1f} us   "
              f"ratio {ratio:.2f}x")
        print(f"    validate, the {int(median['manifests'] - median['with findings'])} manifests without findings: "
              f"{median['validate (clean)']:6.1f} us")
        print(f"    locating the findings of the {int(median['with findings'])} manifests with findings: "
              f"{locating:6.1f} us per manifest")


if __name__ == "__main__":
    main()

"""blockkit.validate on the real manifests that fail the schema, beside the clean ones.

The schema layer's explanation path (prune, the fast engine's errors, messages, suggestions)
runs only for a manifest that fails the schema; on the real corpus these are few but cost
about twice a clean one. This prints, per manifest, the CPU time of ``blockkit.validate``
on JSON text for the failing ones, the clean ones and all, and of ``schema_hits`` alone on
the failing ones (medians over --rounds rounds; every round runs in a fresh process).

With ``--against DIR`` (another checkout's ``src`` folder, e.g. main's) the two source trees
are measured round by round, alternated, so that load from other processes falls on both.

Usage: python benchmarks/bench_schema_failures.py [--rounds 5] [--against /path/to/other/src]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = Path("/work/shared/corpus/real")
if not DEFAULT_CORPUS.is_dir():  # beside the checkout, as in CI
    DEFAULT_CORPUS = REPO.parent / "shared" / "corpus" / "real"
FIGURES = ("failing", "clean", "all", "schema_hits failing")


def _per_call(call: Callable[[Any], object], items: list[Any], passes: int) -> float:
    """CPU microseconds per call over ``passes`` passes of ``items``."""
    start = time.process_time()
    for _ in range(passes):
        for item in items:
            call(item)
    return (time.process_time() - start) / (passes * len(items)) * 1e6


def measure(corpus: Path) -> dict[str, Any]:
    """One round in this process: the figures of FIGURES, in µs per manifest."""
    import blockkit
    from blockkit.engine import warm_up
    from blockkit.schema import passes_fast, schema_hits

    warm_up()
    texts = [path.read_text(encoding="utf-8") for path in sorted(corpus.glob("*.json"))]
    documents = [json.loads(text) for text in texts]
    failing = [text for text, doc in zip(texts, documents) if isinstance(doc, dict) and not passes_fast(doc)]
    clean = [text for text in texts if text not in failing]
    failing_docs = [json.loads(text) for text in failing]
    for text in texts:  # first calls build caches and import lazily loaded modules
        blockkit.validate(text)
    return {
        "source": os.path.dirname(os.path.dirname(blockkit.__file__)),
        "counts": [len(failing), len(clean)],
        "failing": _per_call(blockkit.validate, failing, 40),
        "clean": _per_call(blockkit.validate, clean, 8),
        "all": _per_call(blockkit.validate, texts, 8),
        "schema_hits failing": _per_call(lambda doc: list(schema_hits(doc)), failing_docs, 200),
    }


def _round(src: Path, corpus: Path) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(src))
    out = subprocess.run([sys.executable, __file__, "--child", "--corpus", str(corpus)], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--against", type=Path, help="another source tree (a src folder) to measure alternately")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.corpus)))
        return
    trees = [REPO / "src"] + ([args.against.resolve()] if args.against else [])
    rounds: dict[Path, list[dict[str, Any]]] = {tree: [] for tree in trees}
    for _ in range(args.rounds):
        for tree in trees:
            rounds[tree].append(_round(tree, args.corpus))
    failing, clean = rounds[trees[0]][0]["counts"]
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{failing} real manifests fail the schema, {clean} pass it ({args.corpus}); "
          f"CPU µs per manifest, median of {args.rounds} rounds, alternated; load average {load}")
    print(f"  {'':22}" + "".join(f"{name:>22}" for name in FIGURES))
    for tree in trees:
        medians = [statistics.median(r[name] for r in rounds[tree]) for name in FIGURES]
        print(f"  {str(tree)[-22:]:>22}" + "".join(f"{value:22.1f}" for value in medians))


if __name__ == "__main__":
    main()

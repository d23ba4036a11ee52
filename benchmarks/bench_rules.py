"""The server rules' share of validation, with and without their guards, in one run.

Prints, for the real corpus (/work/shared/corpus/real, or --corpus), CPU microseconds per
manifest (median of --repeat rounds, the two variants alternated round by round so that
load from other processes falls on both alike):
  - blockkit.validate, the whole library call;
  - the server layer (engine._run_rules) as the engine runs it: the guards' validator first,
    then only the checks whose guards fail (blockkit.rules.guard);
  - the server layer calling every check, as without guards (a Plan with no guards);
and how many manifests pass every guard. Also the cold cost of loading the validation rules
(a fresh interpreter: import blockkit.engine, then load_validation()).

Usage: python benchmarks/bench_rules.py [--repeat 9] [--corpus DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

DEFAULT_CORPUS = Path("/work/shared/corpus/real")
if not DEFAULT_CORPUS.is_dir():
    DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "real"

_COLD = """
import time
start = time.perf_counter()
import blockkit.engine as engine
engine.load_validation()
print((time.perf_counter() - start) * 1e3)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    args = parser.parse_args()

    import blockkit
    from blockkit.context import Context
    from blockkit.engine import _checks, _run_rules
    from blockkit.rules import guard
    from blockkit.rules.base import RuleContext
    from blockkit.source import read_text

    texts = [p.read_bytes().decode("utf-8", errors="replace") for p in sorted(args.corpus.glob("*.json"))]
    if not texts:
        sys.exit(f"no manifests in {args.corpus}")
    context = Context()
    sources = [read_text(text, "m.json") for text in texts]
    documents = [(s, s.data) for s in sources if isinstance(s.data, dict)]
    guarded = guard.plan_for("server", context, _checks)
    guarded.compile()
    unguarded = guard.Plan(guarded.every, {})

    def server_layer(plan: guard.Plan) -> float:
        guard._last = ("server", context, plan)  # the plan _run_rules takes for this context
        cpu = time.process_time()
        for source, document in documents:
            _run_rules("server", document, RuleContext(context=context, text=source.text, locate=source.span),
                       context, set())
        return (time.process_time() - cpu) / len(documents) * 1e6

    def library() -> float:
        guard._last = ("server", context, guarded)
        cpu = time.process_time()
        for text in texts:
            blockkit.validate(text)
        return (time.process_time() - cpu) / len(texts) * 1e6

    for text in texts:
        blockkit.validate(text)
    rounds: dict[str, list[float]] = {"validate": [], "guarded": [], "every": []}
    for _ in range(args.repeat):
        rounds["validate"].append(library())
        rounds["guarded"].append(server_layer(guarded))
        rounds["every"].append(server_layer(unguarded))
    guard._last = (None, None, None)
    cleared = sum(guarded.rules_for(document) == guarded.always for _, document in documents)
    cold = [float(subprocess.run([sys.executable, "-c", _COLD], capture_output=True, text=True, check=True).stdout)
            for _ in range(5)]

    median = {name: statistics.median(values) for name, values in rounds.items()}
    print(f"real corpus: {len(texts)} manifests ({args.corpus}); CPU us per manifest, median of {args.repeat} rounds")
    print(f"  blockkit.validate                 {median['validate']:8.1f}")
    print(f"  server layer, guarded             {median['guarded']:8.1f}")
    print(f"  server layer, every check called  {median['every']:8.1f}")
    print(f"  manifests passing every guard     {cleared} of {len(documents)}")
    print(f"cold: import blockkit.engine + load_validation: {statistics.median(cold):.1f} ms (median of 5 runs)")
    print(json.dumps({k: round(v, 2) for k, v in median.items()}))


if __name__ == "__main__":
    main()

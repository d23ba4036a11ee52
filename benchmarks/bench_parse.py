"""The parse path, json against orjson (blockkit.fastparse), in one process, rounds alternated.

Prints the CPU time per real manifest of:
  - json.loads, orjson.loads, and the reference (json.loads + a compiled jsonschema_rs
    validator's is_valid);
  - source.read_text and source.read_bytes, and blockkit.validate on the text (all manifests,
    and those without findings), each with the json path alone and with fastparse;
  - the ratio of blockkit.validate to the reference, both ways.
Both ways run in the same process, one after the other in every round, so that load from
other processes falls on both alike (separate processes differed by up to 2x on this
machine). Figures are medians over --rounds of the best of --inner passes (and the fastest
round: other load only adds time); ratios are taken per round (and of the fastest rounds).

Usage: python benchmarks/bench_parse.py [--rounds 15] [--inner 5] [--corpus DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema_rs
import orjson
from _timing import best

import blockkit
from blockkit import fastparse, source

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = Path("/work/shared/corpus/real")
if not DEFAULT_CORPUS.is_dir():
    DEFAULT_CORPUS = REPO.parent / "shared" / "corpus" / "real"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--inner", type=int, default=5)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    args = parser.parse_args()
    paths = sorted(args.corpus.glob("*.json"))
    raws = [path.read_bytes() for path in paths]
    texts = [raw.decode("utf-8") for raw in raws]
    validator = jsonschema_rs.validator_for(json.loads((REPO / "schema" / "app-block.v1.json").read_text()))
    clean = [text for text in texts if not blockkit.validate(text).files[0].findings]
    answered = sum(fastparse.parse(raw) is not fastparse.NOT_PARSED for raw in raws)

    common: dict[str, tuple[Callable[[Any], object], list[Any]]] = {
        "json.loads": (json.loads, texts),
        "orjson.loads": (orjson.loads, raws),
        "reference": (lambda text: validator.is_valid(json.loads(text)), texts),
    }
    both: dict[str, tuple[Callable[[Any], object], list[Any]]] = {
        "read_text": (source.read_text, texts),
        "read_bytes": (source.read_bytes, raws),
        "validate": (blockkit.validate, texts),
        "validate (clean)": (blockkit.validate, clean),
    }
    figures: dict[str, list[float]] = {}
    ratios: dict[str, list[float]] = {"json": [], "orjson": []}
    saved = source._fast
    try:
        for _ in range(args.rounds):
            for name, (call, items) in common.items():
                figures.setdefault(name, []).append(best(call, items, args.inner))
            reference = figures["reference"][-1]
            for way, fast in (("json", False), ("orjson", fastparse)):
                source._fast = fast
                for name, (call, items) in both.items():
                    figures.setdefault(f"{name}, {way}", []).append(best(call, items, args.inner))
                ratios[way].append(figures[f"validate, {way}"][-1] / reference)
    finally:
        source._fast = saved

    print(f"CPU time per manifest, median of {args.rounds} rounds (best of {args.inner} passes each); "
          f"{len(texts)} manifests from {args.corpus}, {len(clean)} without findings; fastparse answers "
          f"for {answered}; orjson {orjson.__version__}")
    for name, values in figures.items():
        print(f"  {name:26} {statistics.median(values):7.2f} us   (fastest round {min(values):7.2f} us)")
    for way, values in ratios.items():
        print(f"  validate / reference, {way:7} {statistics.median(values):5.2f}x   "
              f"(fastest rounds: {min(figures[f'validate, {way}']) / min(figures['reference']):5.2f}x)")


if __name__ == "__main__":
    main()

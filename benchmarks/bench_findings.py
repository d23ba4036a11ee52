"""Library time per real manifest by group: clean, rules-only findings, schema-failing.

Splits the corpus in three: no findings; valid for the schema (the compiled jsonschema_rs
validator) but with rule findings; invalid for the schema. For each group prints the CPU
time (process_time) per manifest of blockkit.validate on the text and of the reference
(json.loads + the compiled jsonschema_rs validator's is_valid), measured alternately in
the same process, and the ratio. With --profile GROUP, prints a cProfile of validate over
that group instead.

With --no-positions, an experiment and not a mode of blockkit: every finding is built
with line and column 1 instead of being located (engine._finding replaced in this
process), which shows what the library would cost if it reported no positions at all.

Usage: python benchmarks/bench_findings.py [--rounds 7] [--inner 20] [--corpus DIR] [--profile rules]
       [--no-positions]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = Path("/work/shared/corpus/real")
if not DEFAULT_CORPUS.is_dir():
    DEFAULT_CORPUS = REPO.parent / "shared" / "corpus" / "real"


def groups(corpus: Path) -> tuple[dict[str, list[str]], object]:
    import blockkit
    import jsonschema_rs

    schema = json.loads((REPO / "schema" / "app-block.v1.json").read_text())
    validator = jsonschema_rs.validator_for(schema)
    out: dict[str, list[str]] = {"clean": [], "rules": [], "invalid": []}
    for path in sorted(corpus.glob("*.json")):
        text = path.read_text(encoding="utf-8")
        findings = blockkit.validate(text).findings
        if not findings:
            out["clean"].append(text)
        elif validator.is_valid(json.loads(text)):
            out["rules"].append(text)
        else:
            out["invalid"].append(text)
    return out, validator


def _drop_positions() -> None:
    """Replace the engine's finding builder with one that locates nothing (--no-positions)."""
    from blockkit import engine
    from blockkit.report import new_finding

    def unlocated(source, rule, hit):  # type: ignore[no-untyped-def]
        return new_finding(rule.code, rule.severity, rule.layer, hit.message, hit.pointer, 1, 1, 1, 1,
                           hit.hint, hit.fix)

    engine._finding = unlocated  # type: ignore[assignment]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--inner", type=int, default=20)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--profile", choices=("clean", "rules", "invalid"))
    parser.add_argument("--no-positions", action="store_true",
                        help="experiment: build every finding at line 1, column 1 without locating it")
    args = parser.parse_args()
    import blockkit

    if args.no_positions:
        _drop_positions()

    by_group, validator = groups(args.corpus)
    for texts in by_group.values():  # warm: guards compiled, caches filled
        for _ in range(3):
            for text in texts:
                blockkit.validate(text)

    def reference(text: str) -> None:
        validator.is_valid(json.loads(text))  # type: ignore[attr-defined]

    if args.profile:
        import cProfile
        import pstats

        texts = by_group[args.profile]
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(args.inner):
            for text in texts:
                blockkit.validate(text)
        profile.disable()
        pstats.Stats(profile).sort_stats("tottime").print_stats(30)
        return

    clock = time.process_time
    if args.no_positions:
        print("EXPERIMENT --no-positions: findings are not located (every one at 1:1)")
    print(f"corpus {args.corpus}; CPU us per manifest, {args.rounds} rounds x {args.inner} calls per manifest, "
          "the reference and validate timed in turn on each manifest (so that load from other processes "
          "falls on both alike)")
    all_ours = all_refs = 0.0
    for name, texts in by_group.items():
        if not texts:
            continue
        count = sum(len(blockkit.validate(t).findings) for t in texts) / len(texts)
        ours = refs = 0.0
        calls = range(args.inner)
        for _ in range(args.rounds):
            for text in texts:
                start = clock()
                for _ in calls:
                    reference(text)
                middle = clock()
                for _ in calls:
                    blockkit.validate(text)
                end = clock()
                refs += middle - start
                ours += end - middle
        all_ours += ours
        all_refs += refs
        scale = 1e6 / (args.rounds * args.inner * len(texts))
        print(f"  {name:8} n={len(texts):3}  findings/doc {count:4.2f}  validate {ours * scale:7.1f}  "
              f"reference {refs * scale:6.1f}  ratio {ours / refs:5.2f}x")
    print(f"  all      n={sum(map(len, by_group.values())):3}  ratio {all_ours / all_refs:5.2f}x")


if __name__ == "__main__":
    main()

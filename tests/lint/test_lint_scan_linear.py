"""The project scanners take linear time on any input (review row 29).

The real figures come from benchmarks/bench_lint_scan.py at 1 MiB; here the same
cases run at 64 KB against a bound about twenty times what a linear scan needs
there (the quadratic pattern of row 29 took about 5 s at that size), and the
patterns are checked for the property that keeps them linear.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest
from lint_helpers import READY_JS, clean

from blockkit.project.scan import SCAN_PATTERNS

if sys.version_info >= (3, 11):
    from re import _parser as sre_parse
else:  # pragma: no cover
    import sre_parse

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_lint_scan.py"
SIZE = 64 * 1024
CPU_SECONDS = 1.0
# The longest repetition a scan pattern may hold: each attempt then costs a constant.
MAX_REPEAT = 256


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_lint_scan", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _repeats(parsed: sre_parse.SubPattern) -> list[tuple[int, int]]:
    """(min, max) of every repetition in a parsed pattern, nested ones included."""
    found = []
    for op, value in parsed:
        if op in (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT, getattr(sre_parse, "POSSESSIVE_REPEAT", None)):
            low, high, sub = value
            found.append((low, high))
            found += _repeats(sub)
        elif op is sre_parse.SUBPATTERN:
            found += _repeats(value[-1])
        elif op is sre_parse.BRANCH:
            for alternative in value[1]:
                found += _repeats(alternative)
        elif op in (sre_parse.ASSERT, sre_parse.ASSERT_NOT):
            found += _repeats(value[1])
    return found


@pytest.mark.parametrize("name", sorted(SCAN_PATTERNS))
def test_every_repetition_in_a_scan_pattern_is_bounded(name: str) -> None:
    pattern = SCAN_PATTERNS[name]
    repeats = _repeats(sre_parse.parse(pattern.pattern, pattern.flags))
    unbounded = [(low, high) for low, high in repeats if high > MAX_REPEAT]
    assert not unbounded, f"{name}: {pattern.pattern} repeats without a bound of {MAX_REPEAT}"


@pytest.mark.parametrize("name", sorted(SCAN_PATTERNS))
def test_every_scan_pattern_starts_with_its_text(name: str) -> None:
    # A pattern that starts with \b or an alternation is tried at every position: ~0.1 s
    # per MB of any source. One that starts with a literal (or a quote class) is searched for.
    pattern = SCAN_PATTERNS[name]
    first_op = sre_parse.parse(pattern.pattern, pattern.flags)[0][0]
    assert first_op in (sre_parse.LITERAL, sre_parse.IN), pattern.pattern


def test_the_structural_check_sees_the_old_pattern() -> None:
    old = r"\buseAppStorage\s*(?:<[^>()]*>\s*)?\("
    assert any(high > MAX_REPEAT for _, high in _repeats(sre_parse.parse(old)))


def test_the_benchmark_has_a_matching_witness_for_every_pattern(bench: ModuleType) -> None:
    bench.check_witnesses()  # exits when a witness stopped matching or a pattern has none
    assert set(bench.WITNESSES) == set(SCAN_PATTERNS)


def test_every_scanner_is_fast_on_adversarial_input(bench: ModuleType) -> None:
    def stop_when_slow(case, wall: float, cpu: float) -> None:
        assert cpu <= CPU_SECONDS, f"{case.scanner} on {case.name} at {SIZE} characters: {cpu:.2f} s of CPU"

    results = bench.run(SIZE, stop_when_slow, quick=True)
    assert {case.scanner for case, _, _ in results} >= {
        *(f"pattern {name}" for name in SCAN_PATTERNS), "strip_comments .js", "find_root", "find_scripts",
        "source scan of a project", "entry graph of a project"}


# --- row 29 through lint itself -----------------------------------------------------------


def _cpu_lint(lint, files: dict[str, str]) -> tuple[list[str], float]:
    started = time.process_time()
    findings = lint(clean(scopes=["ai:write:budgeted"]), files)
    return [f.code for f in findings], time.process_time() - started


def test_repeated_hook_prefixes_no_longer_stall_lint(lint) -> None:
    # The review's reproduction: 140 KB of "useAppStorage<" took 18.8 s before.
    attack = "useAppStorage<" * 10_000
    found, cpu = _cpu_lint(lint, {"index.html": '<div id="root">x</div>', "app.js": READY_JS, "a.js": attack})
    assert "BK319" not in found  # no call in there
    assert cpu < 5, cpu
    # A real call after the junk is still found: the scan read the whole file.
    found, _ = _cpu_lint(lint, {"app.js": READY_JS, "a.js": attack + "\nuseAppStorage<Note>('notes');\n"})
    assert "BK319" in found


@pytest.mark.parametrize(("code", "called"), [
    ("useAppStorage<Record<string, Note[]>>('notes')", True),  # nested type arguments
    ("useAppStorage <{ text: string; at: number }> ('notes')", True),
    ("useAppStorage\n  (\n'notes')", True),
    ("useAppStorage<" + "T" * 300 + ">('notes')", False),  # past the bound of 256 characters
    ("import { useAppStorage } from '@civitai/blocks-react';", False),
    ("const f = useAppStorage<T>;", False),
])
def test_what_counts_as_a_hook_call(lint, code: str, called: bool) -> None:
    found, _ = _cpu_lint(lint, {"app.js": READY_JS, "store.ts": code + "\n"})
    assert ("BK319" in found) is called

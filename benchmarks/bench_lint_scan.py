"""Time of lint's project scanners on adversarial input: none may be worse than linear.

    python benchmarks/bench_lint_scan.py [--size BYTES] [--budget SECONDS] [--wall] [--slowest N]

Lint reads the files of projects it does not trust (a pull request run by the
pre-commit hook, say): source files of up to 2 MiB and index.html. A regex or a
tokenizer that goes back over the text can turn one such file into hours of CI
(review row 29: `useAppStorage<` repeated, 280 KB took 126 s). This script runs
every project-scan pattern (blockkit.project.scan.SCAN_PATTERNS), the comment
stripper, the #root finder, the <script> finder and the entry graph and the whole source scan of a project on inputs of
--size characters (default 1 MiB) built to hurt them:

- every prefix of a string each pattern matches, repeated (``u``, ``us``, ...,
  ``useAppStorage<``, ...), alone, with a space, and before a long run of
  filler, so that each attempt runs as far as it can before failing;
- unclosed constructs repeated (``/*``, ``'``, ``<!--``, ``<a b="``, ...),
  and dense tiny tokens (``//\\n``, ``<a>``, ``</a>`` inside #root, ...).

It prints the time of each case and the slowest per scanner, and exits 1 if any
case takes longer than --budget (default 1 s). The budget applies to CPU time,
as the development machine is shared and wall time there includes waiting for a
core; --wall applies it to wall time instead. Both are printed.
tests/lint/test_lint_scan_linear.py runs the same cases at 64 KB.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from blockkit.project.code import strip_comments
from blockkit.project.html import find_root, find_scripts
from blockkit.project.scan import SCAN_PATTERNS, Project
from blockkit.platform import MANIFEST_FILENAME

BUDGET_SECONDS = 1.0
SIZE = 1 << 20

# Strings each project-scan pattern matches (one per alternative): their prefixes are
# the inputs that make a pattern start an attempt at every turn and fail late.
WITNESSES: dict[str, tuple[str, ...]] = {
    "BLOCK_READY": ("BLOCK_READY",),
    "per-viewer app storage 1": ("useAppStorage <Record<string, T>> (",),
    "per-viewer app storage 2": ("'APP_STORAGE_GET'",),
    "per-viewer app storage 3": ("blocks/app-storage/",),
    "per-viewer app storage 4": ("storageDelete <T> (", "storageGet("),
    "shared app storage 1": ("useSharedStorage<T>(",),
    "shared app storage 2": ('"SHARED_GET_COUNTS"',),
    "shared app storage 3": ("blocks/shared-storage/",),
    "module reference: import from": ("from './bridge.js'",),
    "module reference: import for effect": ('import "./style.css"',),
    "module reference: import call": ("import ( './page.ts' )", "import(`./a.js`)", "import(name"),
    "module reference: require call": ("require('./a.js')", "require(`./a`)", "require(name"),
    "module reference: import glob": ("import.meta.glob",),
}
FILLERS = ("", " ", " " * 100, "x" * 300, ">" * 300)

# Units repeated to the size: unclosed constructs and dense tiny tokens.
SCRIPT_UNITS = ("/", "//\n", "x//\n", "/*", "/**/", "/*\n*/", "*/", "'", '"', "`", "''", "'\n", "`\\", "\\",
                "=/", "=/\n", "(/[", "=/[\\", "return/", "typeof/", "return\n", "1/2/", "a/", "= ", "=\t",
                "[", "r", "x", "<!--", "<!---->", "=/[/'\"`")
HTML_UNITS = ("<", "< ", "<a", "<a>", "<<a>", "</a>", "</", "<!", "<!>", "<?", "<!--", "<!---->", "&",
              "<div id=root", '<a b="', "<a b='x' c=\"y\" ", "<a =", "<a/", "<a id id=x ", "<a id=x>",
              "<a id=x root>", "<a id=&amp;>", "<script>", "<script></scrip", "<script></script>")
# index.html units for the entry graph: many references, most of them the same.
GRAPH_UNITS = ('<script src="a.js"></script>', "<script src=", '<script type="module">import "./a.js";</script>',
               "<script>import(", '<script src="https://cdn.example/x.js"></script>')
# Units after an open #root, so that the finder looks for content until the end.
ROOT_UNITS = ("</a>", " </a>", "<!---->", "&nbsp;", "&nbsp;<!---->", "&#32;</a>", " ")


@dataclass(frozen=True)
class Case:
    scanner: str
    name: str
    text: str


def prefixes(pattern: str) -> list[str]:
    """Every prefix of every witness of ``pattern``, the witnesses themselves included."""
    return sorted({witness[:end] for witness in WITNESSES[pattern] for end in range(1, len(witness) + 1)})


def _fill(unit: str, size: int, head: str = "") -> str:
    return head + unit * max(1, (size - len(head)) // len(unit))


def cases(size: int, quick: bool = False) -> Iterator[Case]:
    """Every case at ``size`` characters. ``quick`` (for the unit tests) keeps two fillers
    after a pattern's prefixes and leaves out the .html and whole-scan repeats of the units."""
    fillers = FILLERS[:1] + FILLERS[-2:] if quick else FILLERS
    for pattern in WITNESSES:
        for prefix in prefixes(pattern):
            for filler in fillers:
                yield Case(f"pattern {pattern}", repr(prefix + filler), _fill(prefix + filler, size))
    # The other scanners get the bare prefixes: fillers only lengthen what a pattern consumes.
    every_prefix = sorted({p for pattern in WITNESSES for p in prefixes(pattern)})
    script_units = (*SCRIPT_UNITS, *every_prefix)
    for unit in script_units:
        for suffix in (".js",) if quick else (".js", ".html"):
            yield Case(f"strip_comments {suffix}", repr(unit), _fill(unit, size))
    for unit in (*HTML_UNITS, *SCRIPT_UNITS):
        yield Case("find_root", repr(unit), _fill(unit, size))
    for unit in (*HTML_UNITS, *SCRIPT_UNITS[:4]) if quick else (*HTML_UNITS, *SCRIPT_UNITS):
        yield Case("find_scripts", repr(unit), _fill(unit, size))
    for unit in ROOT_UNITS:
        yield Case("find_root", f"#root then {unit!r}", _fill(unit, size, head='<div id="root">'))
    for unit in SCRIPT_UNITS[:4] if quick else script_units:
        yield Case("source scan of a project", repr(unit), _fill(unit, size))
    for unit in GRAPH_UNITS:
        yield Case("entry graph of a project", repr(unit), _fill(unit, size))


def scanner(name: str, workdir: Path) -> Callable[[str], object]:
    if name.startswith("pattern "):
        return SCAN_PATTERNS[name.removeprefix("pattern ")].search
    if name.startswith("strip_comments "):
        suffix = name.removeprefix("strip_comments ")
        return lambda text: strip_comments(text, suffix)
    if name == "find_root":
        return find_root
    if name == "find_scripts":
        return find_scripts
    if name == "source scan of a project":
        return lambda text: _scan_project(workdir, text)
    if name == "entry graph of a project":
        return lambda text: _entry_graph(workdir, text)
    raise ValueError(name)


def _scan_project(workdir: Path, text: str) -> object:
    """The whole read of a project's source: the file read, comments stripped, every pattern."""
    (workdir / "app.js").write_text(text, encoding="utf-8")
    return Project(workdir).scan()


def check_witnesses() -> None:
    """Each witness must match its pattern, or its prefixes would test nothing."""
    for pattern, witnesses in WITNESSES.items():
        for witness in witnesses:
            if not SCAN_PATTERNS[pattern].search(witness):
                sys.exit(f"bench_lint_scan: {witness!r} no longer matches the {pattern} pattern; update WITNESSES")
    missing = set(SCAN_PATTERNS) - set(WITNESSES)
    if missing:
        sys.exit(f"bench_lint_scan: no witnesses for {', '.join(sorted(missing))}; add them to WITNESSES")


def _entry_graph(workdir: Path, text: str) -> object:
    """What index.html loads: index.html read, its scripts found, every reference resolved."""
    (workdir / "index.html").write_text(text, encoding="utf-8")
    (workdir / "a.js").write_text("import './a.js';\nexport * from './a';\n", encoding="utf-8")
    try:
        return Project(workdir).entry_graph()
    finally:
        (workdir / "index.html").unlink()
        (workdir / "a.js").unlink()


def run(size: int, report: Callable[[Case, float, float], None],
        quick: bool = False) -> list[tuple[Case, float, float]]:
    """Time every case once: (case, wall seconds, CPU seconds)."""
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-lint-scan-") as tmp:
        workdir = Path(tmp)
        (workdir / MANIFEST_FILENAME).write_text("{}\n", encoding="utf-8")
        for case in cases(size, quick):
            scan = scanner(case.scanner, workdir)
            wall, cpu = time.perf_counter(), time.process_time()
            scan(case.text)
            result = (case, time.perf_counter() - wall, time.process_time() - cpu)
            report(*result)
            results.append(result)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=SIZE, help=f"characters per input (default {SIZE})")
    parser.add_argument("--budget", type=float, default=BUDGET_SECONDS,
                        help=f"seconds any one case may take (default {BUDGET_SECONDS})")
    parser.add_argument("--wall", action="store_true", help="apply the budget to wall time, not CPU time")
    parser.add_argument("--slowest", type=int, default=0, metavar="N",
                        help="print only the N slowest cases (default: every case as it runs)")
    args = parser.parse_args()
    check_witnesses()
    measure = "wall" if args.wall else "CPU"
    print(f"lint project scanners on {args.size:,}-character adversarial inputs; budget {args.budget} s "
          f"{measure} time per case ({os.cpu_count()} cores, timings vary with the machine's load)")
    header = f"{'wall s':>8}{'cpu s':>8}  {'scanner':<34}case"
    print(header)

    def line(case: Case, wall: float, cpu: float) -> str:
        name = case.name if len(case.name) <= 60 else case.name[:57] + "..."
        return f"{wall:8.3f}{cpu:8.3f}  {case.scanner:<34}{name}"

    def report(case: Case, wall: float, cpu: float) -> None:
        if not args.slowest:
            print(line(case, wall, cpu), flush=True)

    results = run(args.size, report)
    judged = 1 if args.wall else 2
    if args.slowest:
        for result in sorted(results, key=lambda r: r[judged], reverse=True)[:args.slowest]:
            print(line(*result))
    print(f"\n{len(results)} cases; slowest per scanner ({measure} time):")
    worst: dict[str, tuple[Case, float, float]] = {}
    for result in results:
        if result[0].scanner not in worst or result[judged] > worst[result[0].scanner][judged]:
            worst[result[0].scanner] = result
    for result in worst.values():
        print(line(*result))
    over = [r for r in results if r[judged] > args.budget]
    slowest = max(r[judged] for r in results)
    if over:
        print(f"FAIL: {len(over)} case(s) over the {args.budget} s budget; the slowest took {slowest:.3f} s")
        return 1
    print(f"OK: every case within {args.budget} s ({measure}); the slowest took {slowest:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

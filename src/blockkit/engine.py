"""The checking pipeline: source -> schema layer -> server rules -> lint rules -> FileReport."""

from __future__ import annotations

import os
import stat
import threading
from functools import cache
from itertools import islice
from pathlib import Path
from typing import Any, Collection, Iterator, Optional

from blockkit.context import Context
from blockkit.jsstr import quote
from blockkit.report import FileReport, Finding, new_finding
from blockkit.rules import load_all, load_validation
from blockkit.rules.base import REGISTRY, Hit, Rule, RuleContext
from blockkit.rules.guard import plan_for
from blockkit.source import Source, read_bytes, read_text, too_large, utf8_length
from blockkit.platform import LIMITS

VALIDATION_LAYERS: tuple[str, ...] = ("parse", "schema", "server")
ALL_LAYERS: tuple[str, ...] = ("parse", "schema", "server", "lint")

_rules_lock = threading.Lock()
_rules_by_layer: dict[str, list[Rule]] = {}


def _checks(layer: str) -> list[Rule]:
    table = _rules_by_layer.get(layer)
    if table is None:
        with _rules_lock:
            table = _rules_by_layer.get(layer)
            if table is None:
                registry = load_validation() if layer in VALIDATION_LAYERS else load_all()
                table = [rule for _, rule in sorted(registry.items())
                         if rule.layer == layer and rule.check is not None]
                _rules_by_layer[layer] = table
    return table


def warm_up(layers: Collection[str] = ALL_LAYERS) -> None:
    """Load the rules of ``layers`` and build the fast schema validator now (before forking workers)."""
    import blockkit.prune  # noqa: F401  (imported on the first invalid manifest otherwise, in every worker)
    from blockkit.schema import fast_validator

    for layer in layers:
        if layer != "parse":
            _checks(layer)
            plan_for(layer, _default_context(), _checks).compile()  # the guards' validators, usual context
    fast_validator()


@cache
def _default_context() -> Context:
    """One Context() for every call without one (it is frozen; building it checks its values each time)."""
    return Context()


class UnreadableFile(Exception):
    """The path could not be read at all (exit status 2, not a finding)."""


# Opening a FIFO for reading waits for a writer; O_NONBLOCK opens it at once, so that it
# can be refused (platforms without FIFOs have no O_NONBLOCK either).
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_NOT_FILES = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"))


def read_path(path: Path, display: Optional[str] = None) -> Source:
    """Read a manifest file (at most one byte past the size limit, enough to report BK006).

    A directory, FIFO or socket is refused (UnreadableFile), never waited on. A character
    device named explicitly (``/dev/stdin``, ``/dev/zero``) is read as before.
    """
    name = display if display is not None else str(path)
    try:
        descriptor = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise UnreadableFile(f"{name}: no such file") from None
    except IsADirectoryError:
        raise UnreadableFile(f"{name}: is a directory without a block.manifest.json") from None
    except PermissionError:
        raise UnreadableFile(f"{name}: permission denied") from None
    except OSError as exc:
        raise UnreadableFile(f"{name}: cannot read: {exc.strerror or exc}") from None
    try:
        status = os.fstat(descriptor)
        mode = status.st_mode
        if stat.S_ISDIR(mode):
            raise UnreadableFile(f"{name}: is a directory without a block.manifest.json")
        for test, kind in _NOT_FILES:
            if test(mode):
                raise UnreadableFile(f"{name}: is {kind}, not a file")
        regular = stat.S_ISREG(mode)
        if not regular and _OPEN_FLAGS & getattr(os, "O_NONBLOCK", 0):
            # A device reads as it would have without O_NONBLOCK (a terminal waits for its input).
            import fcntl

            fcntl.fcntl(descriptor, fcntl.F_SETFL, fcntl.fcntl(descriptor, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        want = LIMITS.file_bytes_max + 1
        if regular and status.st_size + 1 < want:
            # A buffer the size of the file, not of the limit (a megabyte per file cost more than
            # validating it). Reading on when the file has grown since fstat gives the same bytes
            # as one read of ``want``.
            first = status.st_size + 1
            raw = _read(descriptor, first)
            if len(raw) == first:
                raw += _read(descriptor, want - first)
        else:
            raw = _read(descriptor, want)
    except PermissionError:
        raise UnreadableFile(f"{name}: permission denied") from None
    except OSError as exc:
        raise UnreadableFile(f"{name}: cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(descriptor)
    return read_bytes(raw, name)


def _read(descriptor: int, size: int) -> bytes:
    """Up to ``size`` bytes: what ``read(size)`` of a file object opened on ``descriptor`` returns
    (reads until it has them or meets the end), without building the file object."""
    data = os.read(descriptor, size)
    if len(data) == size or not data:
        return data
    parts = [data]
    got = len(data)
    while got < size:
        data = os.read(descriptor, size - got)
        if not data:
            break
        parts.append(data)
        got += len(data)
    return b"".join(parts)


def source_for(document_or_text: Any, path: str = "<string>") -> Source:
    """A Source for a manifest given as bytes, text or a parsed document.

    The size limit (BK006) applies to all three, as it does to a file: text by its
    UTF-8 length, a parsed document by the length of its compact JSON, which is the
    smallest file that holds it.
    """
    if isinstance(document_or_text, bytes):
        return read_bytes(document_or_text, path)
    if isinstance(document_or_text, str):
        # A character is at most 4 bytes in UTF-8: only a longer text needs measuring.
        if len(document_or_text) * 4 > LIMITS.file_bytes_max:
            size = utf8_length(document_or_text)
            if size > LIMITS.file_bytes_max:
                return too_large(size, path, "the manifest text is", unit="bytes in UTF-8")
        return read_text(document_or_text, path)
    # An already-parsed document: positions come from its canonical JSON rendering.
    import json

    try:
        text = json.dumps(document_or_text, indent=2, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"cannot validate a {type(document_or_text).__name__}: {exc}") from None
    if utf8_length(text) > LIMITS.file_bytes_max:  # the indented text is never the shorter one
        size = utf8_length(json.dumps(document_or_text, ensure_ascii=False, separators=(",", ":")))
        if size > LIMITS.file_bytes_max:
            return too_large(size, path, "the manifest is", unit="bytes as JSON")
    return read_text(text, path)


# At most this many findings of one rule are listed per file; a finding of MORE_FINDINGS
# counts the rest. Real manifests stay far below it (goods and targets are capped at 32
# and 16), while a hostile file can hold hundreds of thousands of findings, each of which
# costs time and memory to locate, keep and print.
FINDINGS_PER_RULE_MAX = 100
MORE_FINDINGS = "BK010"
# A server or lint rule stops being asked for findings after this many (its checks cost
# per finding: a suggestion, a message); how many more it would have found is then unknown.
RULE_FINDINGS_MAX = 10 * FINDINGS_PER_RULE_MAX


def check(
    source: Source,
    context: Optional[Context] = None,
    *,
    layers: Collection[str] = VALIDATION_LAYERS,
    project_dir: Optional[Path] = None,
    rule_cache: Optional[dict[str, Any]] = None,
) -> FileReport:
    """``rule_cache``: what this check's rules start with in ``RuleContext.cache`` (a copy is used);
    a long-lived caller (blockkit lsp) hands in the project it keeps read between checks."""
    context = context or _default_context()
    hits: list[tuple[Rule, Hit]] = []
    # Findings counted but never built: code -> (how many, the first one's (start offset, pointer)).
    counted: dict[str, tuple[int, tuple[int, str]]] = {}
    stopped: set[str] = set()  # rules asked for no more findings after RULE_FINDINGS_MAX

    load_validation()
    for code, message, hint, start, end in source.problems:
        hits.append((REGISTRY[code], Hit("", message, hint=hint, span=(start, end))))
    if source.text is not None and (not source.problems or source.has_document):  # has_document, cheaper
        document = source.data
        if source.has_duplicates:
            hits.extend(_duplicate_hits(source, counted))
        if not isinstance(document, dict):
            kind = {list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(type(document), "a number")
            hits.append((REGISTRY["BK008"], Hit("", f"the manifest is {kind}; it must be a JSON object",
                                                hint="wrap the manifest's keys in { ... }")))
        else:
            if "schema" in layers:
                passes_fast, failing_hits = _schema_layer()
                if not passes_fast(document):  # (schema_hits, without a generator for a valid document)
                    for code, hit, stage in failing_hits(document, source.text):
                        if context.runs(stage):
                            hits.append((REGISTRY[code], hit))
            rule_context = RuleContext(context=context, text=source.text, project_dir=project_dir,
                                       locate=source.span, cache=dict(rule_cache) if rule_cache else None)
            for layer in ("server", "lint"):
                if layer in layers:
                    hits.extend(_run_rules(layer, document, rule_context, context, stopped))

    findings: list[Finding] = []
    report = FileReport(source.path, findings, source.text, source.data)
    if not hits and not stopped:
        return report  # nothing found: nothing to dedupe, cap, locate or sort
    unique = _unique(hits) if len(hits) > 1 else hits
    if len(unique) > FINDINGS_PER_RULE_MAX and source.text is not None:
        unique = _cap(source, unique, counted)
    findings.extend([_finding(source, rule, hit) for rule, hit in unique])
    if counted or stopped:
        for code, summary in _more_findings(source, unique, counted, stopped):
            findings.append(summary)
            report.more[code] = summary
    if len(findings) > 1:
        report.sort()
    return report


def _unique(hits: list[tuple[Rule, Hit]]) -> list[tuple[Rule, Hit]]:
    """``hits`` without repeats of one finding (the same code, pointer and message), in order."""
    if len({(rule.code, hit.pointer, hit.message) for rule, hit in hits}) == len(hits):
        return hits  # no repeats (the usual case): nothing to drop
    seen: set[tuple[str, str, str]] = set()
    unique: list[tuple[Rule, Hit]] = []
    for rule, hit in hits:
        key = (rule.code, hit.pointer, hit.message)
        if key in seen:
            continue
        seen.add(key)
        unique.append((rule, hit))
    return unique


@cache
def _schema_layer() -> tuple[Any, Any]:
    """blockkit.schema's passes_fast and failing_hits, imported on the first document to check."""
    from blockkit.schema import failing_hits, passes_fast

    return passes_fast, failing_hits


def _more_findings(source: Source, listed: list[tuple[Rule, Hit]], counted: dict[str, tuple[int, tuple[int, str]]],
                   stopped: set[str]) -> Iterator[tuple[str, Finding]]:
    """(code, its BK010 finding) for each rule with findings not listed, or that stopped looking."""
    for code in stopped - counted.keys():
        # Stopped, but what it found was mostly repeats: all listed; say that it stopped, at its last one.
        last = next(hit for rule, hit in reversed(listed) if rule.code == code)
        counted[code] = (0, (_start(source, last), last.pointer))
    for code, (count, (start, pointer)) in counted.items():
        rule = REGISTRY[code]
        if code in stopped and not count:
            message = (f"{code} ({rule.name}) stopped looking after {RULE_FINDINGS_MAX:,} findings, most of them "
                       "repeats: there may be more than are listed; this is where it stopped")
        elif code in stopped:
            message = (f"at least {count:,} more {code} ({rule.name}) findings not listed: at most "
                       f"{FINDINGS_PER_RULE_MAX} of one rule are listed per file, and a rule stops looking after "
                       f"{RULE_FINDINGS_MAX:,}; this is where the first of them is")
        else:
            message = (f"{count:,} more {code} ({rule.name}) finding{'s' if count != 1 else ''} not listed: at most "
                       f"{FINDINGS_PER_RULE_MAX} of one rule are listed per file; this is where the first of them is")
        yield code, _finding(source, REGISTRY[MORE_FINDINGS], Hit(pointer, message, span=(start, start + 1)))


def _cap(source: Source, hits: list[tuple[Rule, Hit]],
         counted: dict[str, tuple[int, tuple[int, str]]]) -> list[tuple[Rule, Hit]]:
    """``hits`` with at most FINDINGS_PER_RULE_MAX of each rule (the first ones in the file); the rest
    are added to ``counted``."""
    by_code: dict[str, list[int]] = {}
    for index, (rule, _) in enumerate(hits):
        by_code.setdefault(rule.code, []).append(index)
    dropped: set[int] = set()
    for code, indices in by_code.items():
        if len(indices) <= FINDINGS_PER_RULE_MAX or code == MORE_FINDINGS:
            continue
        starts = {i: _start(source, hits[i][1]) for i in indices}
        ordered = sorted(indices, key=lambda i: (starts[i], i))
        hidden = ordered[FINDINGS_PER_RULE_MAX:]
        dropped.update(hidden)
        first = (starts[hidden[0]], hits[hidden[0]][1].pointer)
        count, earlier = counted.get(code, (0, first))
        counted[code] = (count + len(hidden), min(first, earlier))
    return [hit for index, hit in enumerate(hits) if index not in dropped]


def _start(source: Source, hit: Hit) -> int:
    return hit.span[0] if hit.span is not None else source.span(hit.pointer, hit.at)[0]


def _duplicate_hits(source: Source, counted: dict[str, tuple[int, tuple[int, str]]]) -> Iterator[tuple[Rule, Hit]]:
    """BK009 for each repeated member name, one per pointer; only the first FINDINGS_PER_RULE_MAX are built.

    Pointers are built only for those: under a long key every pointer repeats it, so
    building them all would cost the key's length times the number of repeats. When
    the parser counted the repeats (``Source.repeated_names``), the text is read only
    as far as the first one not listed.
    """
    from blockkit.schema import human_path

    known = source.repeated_names
    rule = REGISTRY["BK009"]
    ambiguous: dict[int, bool] = {-1: False}
    path_ids: dict[int, int] = {0: 0}
    table: dict[tuple[int, str], int] = {}
    seen: set[tuple[Any, ...]] = set()
    parents: dict[int, tuple[str, str]] = {}
    listed = hidden = 0
    first_hidden: Optional[tuple[int, str]] = None
    if known is None:
        # The containers under a repeated name: the objects below them can share pointers.
        spans = source.spans
        ambiguous.update((node, True) for node in (*spans.duplicates, *spans.shadowed) if node in spans.children)
    index = 0
    while True:
        spans = source.spans_so_far(index + 1) if known is not None else source.spans
        if index == len(spans.duplicates):
            break
        node = spans.duplicates[index]
        index += 1
        parent = spans.parent[node]
        start, end, name = spans.member(node)
        # Two repeats have the same pointer when they repeat one name in one object, or in two objects
        # that have the same pointer themselves: those lie under a repeated name (``_is_ambiguous``).
        if known is None and _is_ambiguous(spans, parent, ambiguous):
            identity: tuple[Any, ...] = (True, _path_id(spans, parent, path_ids, table), name)
        else:
            identity = (False, parent, name)
        if identity in seen:  # the same pointer, repeated in a repeated parent: reported once
            continue
        seen.add(identity)
        if listed == FINDINGS_PER_RULE_MAX:
            hidden += 1
            if first_hidden is None:
                first_hidden = (start, spans.pointer(node))
                if known is not None:
                    hidden = known - listed  # counted by the parser: no need to read on
                    break
            continue
        listed += 1
        if parent not in parents:  # the pointer and the name in messages of each parent, once
            pointer = spans.pointer(parent)
            parents[parent] = (pointer, human_path(pointer))
        pointer, where = parents[parent]
        message = f"duplicate key {quote(name)} in {where}; the platform keeps the last value"
        yield rule, Hit(spans.child_pointer(pointer, node), message, at="key", span=(start, end),
                        hint="delete the copy you do not mean")
    if hidden and first_hidden is not None:
        counted["BK009"] = (hidden, first_hidden)


def _path_id(spans: Any, node: int, path_ids: dict[int, int], table: dict[tuple[int, str], int]) -> int:
    """A number per distinct JSON Pointer: two nodes get the same one exactly when their pointers are equal."""
    chain = []
    while node not in path_ids:
        chain.append(node)
        node = spans.parent[node]
    path = path_ids[node]
    for step in reversed(chain):
        path = table.setdefault((path, spans.token(step)), len(table) + 1)
        path_ids[step] = path
    return path


def _is_ambiguous(spans: Any, node: int, memo: dict[int, bool]) -> bool:
    """Whether ``node`` or an ancestor is a container whose name its object repeats (``memo`` starts
    with those, and -1: False)."""
    chain = []
    while node not in memo:
        chain.append(node)
        node = spans.parent[node]
    answer = memo[node]
    for step in reversed(chain):
        memo[step] = answer
    return answer


def _run_rules(layer: str, document: dict[str, Any], rule_context: RuleContext,
               context: Context, stopped: set[str]) -> list[tuple[Rule, Hit]]:
    plan = plan_for(layer, context, _checks)
    found: list[tuple[Rule, Hit]] = []
    present = document.keys()
    # The checks whose guards the document fails (blockkit.rules.guard): none for a clean manifest.
    for rule in plan.rules_for(document):
        keys = rule.keys
        if keys is not None and present.isdisjoint(keys):
            continue  # none of the keys it reads: nothing to find (Rule.keys)
        try:
            produced = [(rule, hit) for hit in islice(rule.check(document, rule_context),  # type: ignore[misc]
                                                      RULE_FINDINGS_MAX)]
        except Exception as exc:  # a bug in a rule must not hide the rest of the verdict
            message = f"rule {rule.code} ({rule.name}) failed: {type(exc).__name__}: {exc}"
            found.append((REGISTRY["BK000"], Hit("", message)))
            continue
        if len(produced) == RULE_FINDINGS_MAX:
            stopped.add(rule.code)
        found.extend(produced)
    return found


def _finding(source: Source, rule: Rule, hit: Hit) -> Finding:
    if source.text is None:
        line, column, end_line, end_column = 1, 1, 1, 1
    elif hit.span is not None:
        line, column, end_line, end_column = source.positions(*hit.span)
    else:  # Source.locate, one call less
        line, column, end_line, end_column = source.positions(*source.span(hit.pointer, hit.at))
    return new_finding(rule.code, rule.severity, rule.layer, hit.message, hit.pointer,
                       line, column, end_line, end_column, hit.hint, hit.fix)

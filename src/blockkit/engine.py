"""The checking pipeline: source -> schema layer -> server rules -> lint rules -> FileReport."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Collection, Iterable, Optional

from blockkit.context import Context
from blockkit.jsstr import quote
from blockkit.report import FileReport, Finding
from blockkit.rules import load_all, load_validation
from blockkit.rules.base import REGISTRY, Hit, Rule, RuleContext
from blockkit.source import Source, read_bytes, read_text
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
    from blockkit.schema import fast_validator

    for layer in layers:
        if layer != "parse":
            _checks(layer)
    fast_validator()


class UnreadableFile(Exception):
    """The path could not be read at all (exit status 2, not a finding)."""


def read_path(path: Path, display: Optional[str] = None) -> Source:
    name = display if display is not None else str(path)
    try:
        with path.open("rb") as handle:
            raw = handle.read(LIMITS.file_bytes_max + 1)
    except FileNotFoundError:
        raise UnreadableFile(f"{name}: no such file") from None
    except IsADirectoryError:
        raise UnreadableFile(f"{name}: is a directory without a block.manifest.json") from None
    except PermissionError:
        raise UnreadableFile(f"{name}: permission denied") from None
    except OSError as exc:
        raise UnreadableFile(f"{name}: cannot read: {exc.strerror or exc}") from None
    return read_bytes(raw, name)


def source_for(document_or_text: Any, path: str = "<string>") -> Source:
    if isinstance(document_or_text, bytes):
        return read_bytes(document_or_text, path)
    if isinstance(document_or_text, str):
        return read_text(document_or_text, path)
    # An already-parsed document: positions come from its canonical JSON rendering.
    import json

    try:
        text = json.dumps(document_or_text, indent=2, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"cannot validate a {type(document_or_text).__name__}: {exc}") from None
    return read_text(text, path)


def check(
    source: Source,
    context: Optional[Context] = None,
    *,
    layers: Collection[str] = VALIDATION_LAYERS,
    project_dir: Optional[Path] = None,
) -> FileReport:
    context = context or Context()
    report = FileReport(path=source.path, text=source.text, data=source.data)
    hits: list[tuple[Rule, Hit]] = []

    load_validation()
    for code, message, hint, start, end in source.problems:
        hits.append((REGISTRY[code], Hit("", message, hint=hint, span=(start, end))))
    if source.has_document:
        document = source.data
        if source.has_duplicates:
            for pointer, start, end in source.spans.duplicates:
                parent, _, token = pointer.rpartition("/")
                key = token.replace("~1", "/").replace("~0", "~")
                message = f"duplicate key {quote(key)} in {parent or 'the manifest'}; the platform keeps the last value"
                hits.append((REGISTRY["BK009"], Hit(pointer, message, at="key", span=(start, end),
                                                    hint="delete the copy you do not mean")))
        if not isinstance(document, dict):
            kind = {list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(type(document), "a number")
            hits.append((REGISTRY["BK008"], Hit("", f"the manifest is {kind}; it must be a JSON object",
                                                hint="wrap the manifest's keys in { ... }")))
        else:
            if "schema" in layers:
                from blockkit.schema import schema_hits

                for code, hit, stage in schema_hits(document):
                    if context.runs(stage):
                        hits.append((REGISTRY[code], hit))
            rule_context = RuleContext(context=context, text=source.text, project_dir=project_dir,
                                       locate=source.span)
            for layer in ("server", "lint"):
                if layer in layers:
                    hits.extend(_run_rules(layer, document, rule_context, context))

    seen: set[tuple[str, str, str]] = set()
    for rule, hit in hits:
        key = (rule.code, hit.pointer, hit.message)
        if key in seen:
            continue
        seen.add(key)
        report.findings.append(_finding(source, rule, hit))
    report.sort()
    return report


def _run_rules(layer: str, document: dict[str, Any], rule_context: RuleContext,
               context: Context) -> Iterable[tuple[Rule, Hit]]:
    for rule in _checks(layer):
        if not context.runs(rule.stage):
            continue
        try:
            produced = list(rule.check(document, rule_context))  # type: ignore[misc]
        except Exception as exc:  # a bug in a rule must not hide the rest of the verdict
            yield REGISTRY["BK000"], Hit("", f"rule {rule.code} ({rule.name}) failed: {type(exc).__name__}: {exc}")
            continue
        for hit in produced:
            yield rule, hit


def _finding(source: Source, rule: Rule, hit: Hit) -> Finding:
    if source.text is None:
        line, column, end_line, end_column = 1, 1, 1, 1
    elif hit.span is not None:
        line, column = source.position(hit.span[0])
        end_line, end_column = source.position(max(hit.span))
    else:
        line, column, end_line, end_column = source.locate(hit.pointer, hit.at)
    return Finding(
        code=rule.code, severity=rule.severity, layer=rule.layer, message=hit.message, pointer=hit.pointer,
        line=line, column=column, end_line=end_line, end_column=end_column, hint=hit.hint, fix=hit.fix,
    )

"""`blockkit fix --unsafe` on every manifest of both corpora: the result parses, keeps the key
order, is a fixed point, and validates at least as well as the original."""

from __future__ import annotations

from pathlib import Path

import pytest

from blockkit.engine import read_path
from blockkit.fix import fix_source
from blockkit.source import read_text
from tests.conftest import corpus_file_params

# What fixes may add: $schema (first) and iframe (last); everything else only goes away.
ADDED_KEYS = {"$schema", "iframe"}


def _errors(report) -> set[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return {(f.code, f.message) for f in report.findings if f.severity == "error"}


@pytest.mark.parametrize("path", corpus_file_params())
def test_fix_round_trip(path: Path) -> None:
    source = read_path(path)
    outcome = fix_source(source, unsafe=True)
    if outcome.refused:
        assert outcome.text == source.text
        return
    assert outcome.text is not None and outcome.before is not None and outcome.report is not None
    fixed = read_text(outcome.text, str(path))
    assert fixed.has_document and isinstance(fixed.data, dict)

    old_keys, new_keys = list(source.data), list(fixed.data)
    kept = [k for k in old_keys if k in fixed.data]
    assert [k for k in new_keys if k not in ADDED_KEYS or k in source.data] == kept
    assert set(new_keys) - set(old_keys) <= ADDED_KEYS
    if "$schema" in new_keys and "$schema" not in old_keys:
        assert new_keys[0] == "$schema"
    # Values that no fix touches are unchanged.
    for key in kept:
        if key not in ("$schema", "repository", "tagline", "scopes", "iframe"):
            assert fixed.data[key] == source.data[key], key

    assert _errors(outcome.report) <= _errors(outcome.before)
    # The report after fixing is what checking the fixed text says.
    assert _errors(outcome.report) == _errors(fix_source(fixed, unsafe=True).before)
    again = fix_source(fixed, unsafe=True)
    assert not again.changed and again.applied == []


def test_the_corpus_exercises_the_fixes(corpus: list[Path]) -> None:
    # Guards the round trip above against passing because nothing was ever fixed.
    applied: set[str] = set()
    for path in corpus:
        applied.update(fix_source(read_path(path), unsafe=True).applied)
    assert {"BK110", "BK216", "BK301", "BK312"} <= applied


_LAYOUTS = {"compact": {"separators": (",", ":")}, "one-line": {}, "tabs": {"indent": "\t"}}


@pytest.mark.parametrize("layout", sorted(_LAYOUTS))
def test_fix_writes_in_the_layout_of_the_file(corpus: list[Path], layout: str) -> None:
    # Each corpus manifest re-written in one layout: whatever the fixes add or remove, the
    # result is exactly what that layout writes for the fixed document.
    import json

    changed = 0
    for path in corpus:
        try:
            document = json.loads(path.read_bytes())
        except ValueError:
            continue
        if not isinstance(document, dict):
            continue
        text = json.dumps(document, ensure_ascii=False, **_LAYOUTS[layout])
        outcome = fix_source(read_text(text, str(path)), unsafe=True)
        if outcome.changed:
            changed += 1
            assert outcome.text == json.dumps(json.loads(outcome.text or ""), ensure_ascii=False,
                                              **_LAYOUTS[layout]), path.name
    assert changed > 10

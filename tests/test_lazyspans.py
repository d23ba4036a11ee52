"""blockkit.lazyspans gives every pointer the position the full tree (Source.spans) gives it."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from blockkit.lazyspans import LAZY_TEXT_MAX
from blockkit.source import read_text
from tests.conftest import corpus_files, OWN_CORPUS, SHARED_CORPUS

# Odd layouts and values: escapes in names, empty containers, nesting, numbers, a BOM.
TEXTS = [
    '{"a": 1, "b": [1, 2, {"c": "x"}], "d": {}, "e": [], "f": {"g": [[], [3]]}}',
    '\ufeff  {\n\t"a~b" : { "c/d" :\t[ true , false , null ] } ,"e":-1.5e+3}\n',
    '{"esc\\"aped": "v\\u00e9", "\\u0041": {"": 0}, "n": 1' + "0" * 400 + "}",
    '[{"a": [1, 2, 3]}, "s", 12, [ ], { }]',
    '"just a string"',
    "null",
    '{"x": {"y": {"z": {"w": [0, [1, [2, {"v": "deep"}]]]}}}}',
    '{"a": "line\\nbreak", "b": "tab\\there", "c": "\\ud800"}\r\n',
]


def _pointers(source) -> list[str]:
    """Every pointer of the document, and near misses: past an array, a missing name, a bad index."""
    pointers = [pointer for _, pointer in source.spans.walk()]
    extra = []
    for pointer in pointers:
        extra += [pointer + "/missing", pointer + "/0", pointer + "/00", pointer + "/-1", pointer + "/1/x"]
    return pointers + extra + ["nope", "/", "//", "/~0", "/~1"]


def _check(text: str, order: int = 0) -> int:
    lazy_source = read_text(text)
    tree_source = read_text(text)
    assert lazy_source.parsed and not lazy_source.has_duplicates
    checked = 0
    pointers = _pointers(tree_source)
    # Containers are read only as far as a lookup needs: ask in document order, in reverse, and shuffled.
    if order == 1:
        pointers.reverse()
    elif order == 2:
        random.Random(len(text)).shuffle(pointers)
    for pointer in pointers:
        for at in ("value", "key", "open"):
            expected = tree_source.span(pointer, at)
            got = lazy_source.span(pointer, at)
            assert got == expected, (pointer, at)
            assert lazy_source.locate(pointer, at) == tree_source.locate(pointer, at), (pointer, at)
            checked += 1
    assert lazy_source._spans is None  # answered without the tree
    return checked


@pytest.mark.parametrize("order", [0, 1, 2])
@pytest.mark.parametrize("text", TEXTS)
def test_lazy_positions_equal_the_tree(text: str, order: int) -> None:
    assert _check(text, order)


def test_lazy_positions_equal_the_tree_on_the_corpora() -> None:
    paths = corpus_files(OWN_CORPUS) + corpus_files(SHARED_CORPUS)
    checked = 0
    for path in paths:
        text = path.read_bytes().decode("utf-8", errors="replace")
        source = read_text(text)
        if source.parsed and not source.has_duplicates and len(text) <= LAZY_TEXT_MAX:
            checked += _check(text, order=checked % 3)
    assert checked > 1000


def test_repeated_names_and_large_texts_use_the_tree() -> None:
    repeated = read_text('{"a": 1, "a": 2}')
    repeated.span("/a")
    assert repeated._spans is not None
    large = read_text(json.dumps({"k": "x" * (LAZY_TEXT_MAX + 1)}))
    large.span("/k")
    assert large._spans is not None
    small = read_text('{"k": 1}')
    small.span("/k")
    assert small._spans is None


def test_unparsed_text_uses_the_tree() -> None:
    broken = read_text('{"a": [1, 2}')
    assert not broken.parsed
    broken.span("/a")
    assert broken._spans is not None

"""blockkit.lazyspans gives every pointer the position the full tree (Source.spans) gives it."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blockkit.source import LAZY_TEXT_MAX, read_text
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


# Names are searched for (blockkit.lazyspans._search_member) while an object has been asked for
# few of them, and read member by member after that: each lookup below runs on a fresh LazySpans
# so that every pointer is answered by search where a search is allowed.
SEARCH_TEXTS = [
    # the name spelled inside strings, as a value, in nested objects, before the member itself
    '{"a": "x \\"b\\": 1", "c": {"b": 2}, "d": ["b", {"b": 3}], "e": "b", "b": {"b": [1, {"b": 4}]}}',
    # a name inside a name, and a string value that ends with the name's spelling
    '{"x \\"b": 1, "y": "z \\"b", "b": 5}',
    # containers nested deeper than the regexes read
    '{"a": [[[[[[{"b": 1}]]]]]], "b": {"c": {"d": {"e": {"f": {"b": [[[[2]]]]}}}}}, "z": [[[[[[[]]]]]]]}',
    # brackets, braces and colons inside strings
    '{"a": "{[}]:\\"", "b": "]", "c": ["}", "{", {"d": "]}"}], "e": {"f": "}"}}',
    # escapes elsewhere in the text give a name two spellings: read member by member
    '{"\\u0062": 1, "c": {"b\\/": 2}}',
    # string items spelled more than once: equal items, items that are separators, a name like an item
    '{"s": ["a", "b", "a", ", ", "x", ", ", "b"], "a": ["x", ", "], "t": "a", "u": [1, "a", "a"]}',
    # empty containers and odd whitespace
    '{ "a" :{ } ,"b":[ ] , "c" :\r\n[ {}, [], { "d" : [ ] } ]\t}',
]


def _check_fresh(text: str) -> int:
    tree_source = read_text(text)
    checked = 0
    for pointer in _pointers(tree_source):
        for at in ("value", "key", "open"):
            lazy_source = read_text(text)
            assert lazy_source.span(pointer, at) == tree_source.span(pointer, at), (pointer, at)
            assert lazy_source._spans is None
            checked += 1
    return checked


@pytest.mark.parametrize("text", TEXTS + SEARCH_TEXTS)
def test_searched_names_equal_the_tree(text: str) -> None:
    assert _check_fresh(text)


@pytest.mark.parametrize("text", SEARCH_TEXTS)
@pytest.mark.parametrize("order", [0, 1, 2])
def test_many_lookups_equal_the_tree(text: str, order: int) -> None:
    assert _check(text, order)


def test_searches_per_object_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """After _SEARCHES_MAX names an object is read member by member; both give the tree's answers."""
    import blockkit.lazyspans as lazyspans

    # Each name is spelled twice (once in the object below it), so that it is searched for.
    text = json.dumps({f"k{i}": {f"k{i}": [i, {"k": i}]} for i in range(20)}, indent=1)
    tree = read_text(text)
    lazy = lazyspans.LazySpans(text, 0, json.loads(text))
    for i in range(20):
        assert lazy.span(f"/k{i}/k{i}/1/k") == tree.span(f"/k{i}/k{i}/1/k")
    assert lazy.searches[lazy.root] == lazyspans._SEARCHES_MAX
    assert lazy.root in lazy.opened  # the rest was read member by member
    monkeypatch.setattr(lazyspans, "_SEARCHES_MAX", 0)
    assert _check(text)


# Generated documents: few distinct names (so that a name recurs at many levels and inside
# strings), strings that spell names with their quotes, brackets and colons, deep nesting.
_names = st.sampled_from(["a", "b", "ab", "", "b:", "{", "a b", "é"])
_strings = _names | st.sampled_from(['"a"', '"b": 1', '\\', '[', '}', ':', '"b', 'x"b"']) | st.text(max_size=4)
_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=False, allow_infinity=False)
    | _strings,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_names, children, max_size=4),
    max_leaves=15,
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(_names, _values, max_size=6), st.sampled_from([None, 0, 1, "\t"]), st.booleans())
def test_generated_documents_equal_the_tree(document: dict, indent: object, ascii_only: bool) -> None:
    text = json.dumps(document, indent=indent, ensure_ascii=ascii_only)
    assert _check_fresh(text)
    assert _check(text, order=len(text) % 3)

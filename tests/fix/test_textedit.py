from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blockkit.fix.textedit import JsonText, apply_edits, detect_indent
from blockkit.report import Edit
from blockkit.source import read_text


def edited(text: str, make) -> str:
    editor = JsonText(read_text(text))
    edit = make(editor)
    assert edit is not None
    result, applied = apply_edits(text, [edit])
    assert applied == [edit]
    json.loads(result)  # every edit leaves valid JSON
    return result


@pytest.mark.parametrize(
    ("text", "pointer", "expected"),
    [
        # middle, first, last and only member, multi-line
        ('{\n  "a": 1,\n  "b": 2,\n  "c": 3\n}\n', "/b", '{\n  "a": 1,\n  "c": 3\n}\n'),
        ('{\n  "a": 1,\n  "b": 2,\n  "c": 3\n}\n', "/a", '{\n  "b": 2,\n  "c": 3\n}\n'),
        ('{\n  "a": 1,\n  "b": 2,\n  "c": 3\n}\n', "/c", '{\n  "a": 1,\n  "b": 2\n}\n'),
        ('{\n  "a": {\n    "x": 1\n  }\n}', "/a/x", '{\n  "a": {}\n}'),
        # one line, with and without spaces
        ('{"a": 1, "b": 2, "c": 3}', "/b", '{"a": 1, "c": 3}'),
        ('{"a":1,"b":2}', "/b", '{"a":1}'),
        ('{"a":1,"b":2}', "/a", '{"b":2}'),
        # container values and odd spacing around the comma
        ('{"a": [1, 2], "b": {"c": [3]} , "d": 4}', "/b", '{"a": [1, 2] , "d": 4}'),
        # array items, inline and multi-line
        ('{"s": ["x", "y", "x"]}', "/s/2", '{"s": ["x", "y"]}'),
        ('{"s": ["x", "y", "x"]}', "/s/0", '{"s": ["y", "x"]}'),
        ('{"s": ["x"]}', "/s/0", '{"s": []}'),
        ('{\n\t"s": [\n\t\t"x",\n\t\t"y"\n\t]\n}', "/s/1", '{\n\t"s": [\n\t\t"x"\n\t]\n}'),
        # Windows line endings are kept
        ('{\r\n  "a": 1,\r\n  "b": 2\r\n}\r\n', "/b", '{\r\n  "a": 1\r\n}\r\n'),
    ],
)
def test_remove_takes_exactly_one_separator(text: str, pointer: str, expected: str) -> None:
    assert edited(text, lambda e: e.remove(pointer)) == expected


def test_remove_handles_escaped_keys() -> None:
    text = '{"a/b": 1, "c~d": 2, "e": 3}'
    assert edited(text, lambda e: e.remove("/a~1b")) == '{"c~d": 2, "e": 3}'
    assert edited(text, lambda e: e.remove("/c~0d")) == '{"a/b": 1, "e": 3}'


def test_remove_of_absent_pointer_or_root_is_no_edit() -> None:
    editor = JsonText(read_text('{"a": 1}'))
    assert editor.remove("/nope") is None
    assert editor.remove("") is None


def test_replace_value_keeps_the_files_escaping_style() -> None:
    assert edited('{"t": "  caf\\u00e9 "}', lambda e: e.replace_value("/t", "café")) == '{"t": "caf\\u00e9"}'
    assert edited('{"t": "  café "}', lambda e: e.replace_value("/t", "café")) == '{"t": "café"}'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{\n  "a": 1\n}\n', '{\n  "$schema": "S",\n  "a": 1\n}\n'),
        ('{\n    "a": 1\n}', '{\n    "$schema": "S",\n    "a": 1\n}'),
        ('{"a": 1}', '{"$schema": "S", "a": 1}'),
        ('{ "a" : 1 }', '{ "$schema" : "S", "a" : 1 }'),
        ("{}", '{"$schema": "S"}'),
        # compact files get no space after the new comma
        ('{"a":1,"b":2}', '{"$schema":"S","a":1,"b":2}'),
        ('{"a":1}', '{"$schema":"S","a":1}'),
        ('{ "a":1,"b":2 }', '{ "$schema":"S","a":1,"b":2 }'),
    ],
)
def test_insert_first_follows_the_files_layout(text: str, expected: str) -> None:
    assert edited(text, lambda e: e.insert_first("", "$schema", "S")) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{\n  "i": {\n    "a": 1\n  }\n}\n', '{\n  "i": {\n    "a": 1,\n    "b": null,\n    "c": false\n  }\n}\n'),
        ('{"i": {"a": 1}}', '{"i": {"a": 1, "b": null, "c": false}}'),
        ('{\n  "x": 0,\n  "i": {}\n}', '{\n  "x": 0,\n  "i": {\n    "b": null,\n    "c": false\n  }\n}'),
        ('{"x":0,"i":{}}', '{"x":0,"i":{"b":null,"c":false}}'),
        ('{"x":0,"i":{"a":1}}', '{"x":0,"i":{"a":1,"b":null,"c":false}}'),
        ('{"i":{"a":1}}', '{"i":{"a":1,"b":null,"c":false}}'),
    ],
)
def test_insert_last_follows_the_files_layout(text: str, expected: str) -> None:
    assert edited(text, lambda e: e.insert_last("/i", [("b", None), ("c", False)])) == expected


def test_insert_last_writes_a_nested_object_on_one_line_in_a_compact_file() -> None:
    text = '{"a":1,"b":2}'
    result = edited(text, lambda e: e.insert_last("", [("i", {"m": 1, "s": ["x", "y"]})]))
    assert result == '{"a":1,"b":2,"i":{"m":1,"s":["x","y"]}}'


def test_insert_last_writes_a_nested_object_in_the_files_style() -> None:
    text = '{\n\t"a": 1\n}'
    result = edited(text, lambda e: e.insert_last("", [("i", {"m": 1, "s": "x"})]))
    assert result == '{\n\t"a": 1,\n\t"i": {\n\t\t"m": 1,\n\t\t"s": "x"\n\t}\n}'


@pytest.mark.parametrize(
    ("text", "unit"),
    [('{\n  "a": {\n    "b": 1\n  }\n}', "  "), ('{\n    "a": 1\n}', "    "), ('{\n\t"a": 1\n}', "\t"),
     ('{"a": 1}', "  ")],
)
def test_detect_indent(text: str, unit: str) -> None:
    assert detect_indent(text) == unit


def test_colliding_edits_wait_for_the_next_pass() -> None:
    text = "0123456789"
    result, applied = apply_edits(text, [Edit(2, 5, ""), Edit(4, 6, "X"), Edit(5, 5, "+"), Edit(5, 5, "-")])
    # The second overlaps the first; the fourth inserts where the third already does.
    assert applied == [Edit(2, 5, ""), Edit(5, 5, "+")]
    assert result == "01+56789"


# --- any layout, any document: the edit does exactly what it says --------------------

_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10, 10), st.text(max_size=4))
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=3), inner, max_size=4)), max_leaves=12)
_layouts = st.sampled_from([
    {"indent": None}, {"indent": None, "separators": (",", ":")}, {"indent": 2}, {"indent": 4}, {"indent": "\t"},
    {"indent": 2, "ensure_ascii": False},
])


def _paths(value, pointer=""):  # type: ignore[no-untyped-def]
    """Every (pointer, parent, key) below ``value``."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        token = str(key).replace("~", "~0").replace("/", "~1")
        yield pointer + "/" + token, value, key
        yield from _paths(child, pointer + "/" + token)


@settings(max_examples=300, deadline=None)
@given(document=st.dictionaries(st.text(max_size=3), _values, min_size=1, max_size=5), layout=_layouts,
       pick=st.integers(0, 10_000))
def test_remove_anything_in_any_layout(document: dict, layout: dict, pick: int) -> None:
    import copy

    text = json.dumps(document, **layout)
    paths = list(_paths(document))
    pointer, _, _ = paths[pick % len(paths)]
    expected = copy.deepcopy(document)
    for candidate, parent, key in _paths(expected):
        if candidate == pointer:
            del parent[key]
            break
    result = edited(text, lambda e: e.remove(pointer))
    assert json.loads(result) == expected


@settings(max_examples=200, deadline=None)
@given(document=st.dictionaries(st.text(max_size=3), _values, max_size=5), layout=_layouts,
       value=_values)
def test_insert_first_and_last_in_any_layout(document: dict, layout: dict, value: object) -> None:
    document.pop("$new", None)
    text = json.dumps(document, **layout)
    first = json.loads(edited(text, lambda e: e.insert_first("", "$new", value)))
    assert list(first) == ["$new", *document] and first["$new"] == value
    last = json.loads(edited(text, lambda e: e.insert_last("", [("$new", value)])))
    assert list(last) == [*document, "$new"] and last["$new"] == value


_ascii_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10, 10),
                           st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=4))


@settings(max_examples=200, deadline=None)
@given(document=st.dictionaries(st.text(st.characters(min_codepoint=97, max_codepoint=122), max_size=3),
                                _values, min_size=1, max_size=5),
       layout=_layouts,
       value=st.one_of(_ascii_scalars, st.dictionaries(st.text("abc", max_size=2), _ascii_scalars, max_size=3)))
def test_inserted_members_are_written_as_the_file_writes_its_own(document: dict, layout: dict,
                                                                 value: object) -> None:
    # The file is whatever json.dumps(layout) writes, so the edited file must be exactly
    # what json.dumps(layout) writes for the edited document: separators, indentation and all.
    document.pop("$new", None)
    text = json.dumps(document, **layout)
    assert edited(text, lambda e: e.insert_first("", "$new", value)) == json.dumps({"$new": value, **document},
                                                                                    **layout)
    assert edited(text, lambda e: e.insert_last("", [("$new", value)])) == json.dumps({**document, "$new": value},
                                                                                       **layout)

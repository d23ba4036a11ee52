from __future__ import annotations

import json

import pytest

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
    ],
)
def test_insert_last_follows_the_files_layout(text: str, expected: str) -> None:
    assert edited(text, lambda e: e.insert_last("/i", [("b", None), ("c", False)])) == expected


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

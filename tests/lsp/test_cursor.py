"""Where an offset is in a JSON text, typed halfway or whole."""

from __future__ import annotations

from blockkit.lsp.cursor import locate

TEXT = ('{"blockId": "abc", "scopes": ["user:read:self", "mo"], '
        '"iframe": {"sandbox": "allow-scripts ", }, "con')


def at(needle: str, delta: int = 0) -> int:
    return TEXT.index(needle) + delta


def test_on_a_key() -> None:
    place = locate(TEXT, at("blockId", 2))
    assert (place.role, place.pointer, place.text) == ("key", "/blockId", "blockId")
    assert place.keys == ["blockId", "scopes", "iframe", "con"]  # keys after the cursor count too


def test_on_a_value_in_an_array() -> None:
    place = locate(TEXT, at('"mo"', 2))
    assert (place.role, place.pointer, place.text, place.is_string) == ("value", "/scopes/1", "mo", True)


def test_where_a_key_goes_in_a_nested_object() -> None:
    place = locate(TEXT, at(", }", 2))
    assert (place.role, place.container, place.token) == ("key", "/iframe", None)
    assert place.keys == ["sandbox"]


def test_an_unterminated_key_at_the_end() -> None:
    place = locate(TEXT, len(TEXT))
    assert (place.role, place.pointer, place.text) == ("key", "/con", "con")


def test_where_a_value_goes_after_a_colon() -> None:
    text = '{"contentRating": '
    place = locate(text, len(text))
    assert (place.role, place.pointer, place.token) == ("value", "/contentRating", None)


def test_escaped_quotes_and_pointer_escapes() -> None:
    text = '{"a/b~": {"x\\"y": 1}}'
    place = locate(text, text.index("x"))
    assert (place.role, place.pointer) == ("key", '/a~1b~0/x"y')


def test_after_the_document_nothing() -> None:
    text = '{"a": 1} '
    assert locate(text, len(text)).role is None

"""jsstr.quote and jsstr.show render values exactly as json.dumps(..., ensure_ascii=False) does.

They skip json.dumps (which builds an encoder per call) for speed; these tests hold them to the
text json.dumps gives, then made visible and cut, for any string (lone surrogates included) and
any JSON value, and to the fallback for values json cannot write.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from blockkit.jsstr import QUOTE_MAX, _visible, cut, quote, show

# Any code point, lone surrogates included (a JSON text can hold them as escapes).
ANY_TEXT = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF, blacklist_categories=()))
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | ANY_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(ANY_TEXT, inner, max_size=4),
    max_leaves=12,
)


def _expected(value: Any, limit: int) -> str:
    if isinstance(value, str):
        head = value if len(value) <= limit else value[:limit]
        return cut(_visible(json.dumps(head, ensure_ascii=False)), limit)
    return cut(_visible(json.dumps(value, ensure_ascii=False)), limit)


@settings(max_examples=400, deadline=None)
@given(ANY_TEXT, st.sampled_from([1, 2, 7, 60, QUOTE_MAX, 1000]))
def test_quote_is_json_dumps_made_visible_and_cut(value: str, limit: int) -> None:
    assert quote(value, limit) == _expected(value, limit)


@settings(max_examples=400, deadline=None)
@given(JSON_VALUES, st.sampled_from([7, 60, QUOTE_MAX, 1000]))
def test_show_is_json_dumps_made_visible_and_cut(value: Any, limit: int) -> None:
    assert show(value, limit) == _expected(value, limit)


def test_show_of_special_numbers_and_str_subclasses_matches_json_dumps() -> None:
    class Name(str):
        pass

    for value in (float("inf"), float("-inf"), float("nan"), 10**30, -0.0, True, None, Name('a"b\u200b'),
                  {"k": [1, 2.5, "\ud800"]}, "\x00\x1f\x7f\u2028"):
        assert show(value) == _expected(value, QUOTE_MAX)


def test_show_falls_back_to_repr_for_what_json_cannot_write() -> None:
    circular: list[Any] = []
    circular.append(circular)
    assert show({1, 2}) == cut(_visible(repr({1, 2})), QUOTE_MAX)  # TypeError: not serialisable
    assert show(circular) == cut(_visible(repr(circular)), QUOTE_MAX)  # ValueError: circular reference

"""BK207-BK213: the goods catalogue rules the schema cannot express."""

from __future__ import annotations

import json
from typing import Any

import pytest

from blockkit.jsstr import js_number, js_stringify
from blockkit.rules.goods import serialized_size

from .conftest import Run, at, codes, manifest, only

PURCHASE = {"goods:purchase:self": "Sells the style pack declared in goods."}


def good(**fields: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": "pack", "title": "Style pack", "priceBuzz": 100}
    entry.update(fields)
    return {k: v for k, v in entry.items() if v is not ...}


def unlock(**fields: Any) -> dict[str, Any]:
    return good(**{"id": "unlock", "kind": "app_unlock", "priceBuzz": 500,
                   "justification": "Unlocks batch mode.", **fields})


def shop(*goods: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return manifest(scopes=["user:read:self", "goods:purchase:self"], scopeJustifications=PURCHASE,
                    goods=list(goods), **changes)


def test_a_complete_catalogue_passes(run: Run) -> None:
    assert run(shop(good(), good(id="badge", description="A badge.", payload={"badge": "supporter"}), unlock())) == []


# --- BK207 --------------------------------------------------------------------------


def test_a_catalogue_needs_the_purchase_scope(run: Run) -> None:
    findings = run(manifest(goods=[good()]))
    assert codes(findings) == {"BK207"}
    assert at(findings, "BK207") == ["/goods"]


def test_an_unlock_only_catalogue_needs_it_too(run: Run) -> None:
    assert codes(run(manifest(goods=[unlock()]))) == {"BK207"}


def test_the_scope_without_its_justification_is_bk203(run: Run) -> None:
    document = shop(good())
    del document["scopeJustifications"]
    assert codes(run(document)) == {"BK203"}


def test_an_empty_catalogue_needs_nothing(run: Run) -> None:
    assert run(manifest(goods=[])) == []


# --- BK208 --------------------------------------------------------------------------


def test_duplicate_ids_are_reported_at_each_repeat(run: Run) -> None:
    findings = run(shop(good(), good(id="badge"), good(), good()))
    assert at(findings, "BK208") == ["/goods/2/id", "/goods/3/id"]
    assert "goods[0]" in findings[0].message


def test_distinct_ids_pass(run: Run) -> None:
    assert run(shop(good(id="a"), good(id="b"))) == []


# --- BK209 / BK210 / BK211 ------------------------------------------------------------


def test_one_unlock_passes_a_second_is_refused(run: Run) -> None:
    findings = run(shop(unlock(), good(), unlock(id="unlock-2"), unlock(id="unlock-3")))
    assert codes(findings) == {"BK209"}
    assert at(findings, "BK209") == ["/goods/2/kind", "/goods/3/kind"]


@pytest.mark.parametrize("price", [2, 4999, 5000])
def test_an_unlock_up_to_5000_passes(run: Run, price: int) -> None:
    assert run(shop(unlock(priceBuzz=price))) == []


@pytest.mark.parametrize("price", [5001, 50000])
def test_an_unlock_over_5000_is_refused(run: Run, price: int) -> None:
    findings = run(shop(unlock(priceBuzz=price)))
    assert codes(findings) == {"BK210"}
    assert at(findings, "BK210") == ["/goods/0/priceBuzz"]


def test_an_ordinary_good_may_cost_more_than_5000(run: Run) -> None:
    assert run(shop(good(priceBuzz=50000))) == []


def test_an_unlock_over_the_schema_cap_gets_both_verdicts(run: Run) -> None:
    assert codes(run(shop(unlock(priceBuzz=60000)))) == {"BK107", "BK210"}


def test_a_missing_unlock_justification_is_reported_at_the_good(run: Run) -> None:
    findings = run(shop(unlock(justification=...)))
    assert codes(findings) == {"BK211"}
    finding = only(findings, "BK211")[0]
    assert finding.pointer == "/goods/0"


@pytest.mark.parametrize("blank", ["", "   ", "\u3000\ufeff"])
def test_a_blank_unlock_justification_is_reported_at_it(run: Run, blank: str) -> None:
    findings = run(shop(unlock(justification=blank)))
    assert codes(findings) == {"BK211"}
    assert at(findings, "BK211") == ["/goods/0/justification"]


def test_the_unlock_rules_run_at_submit(run: Run) -> None:
    document = shop(unlock(priceBuzz=9000, justification=...), unlock(id="second"))
    assert codes(run(document, stage="submit")) == {"BK209", "BK210", "BK211"}


def test_a_non_string_unlock_justification(run: Run) -> None:
    document = shop(unlock(justification=5))
    assert codes(run(document)) == {"BK102"}
    assert codes(run(document, stage="submit")) == {"BK211"}


# --- BK212 --------------------------------------------------------------------------


def test_an_ordinary_good_may_omit_its_justification(run: Run) -> None:
    assert run(shop(good())) == []


@pytest.mark.parametrize("blank", ["", " ", "\u00a0\u2028"])
def test_a_blank_justification_on_an_ordinary_good(run: Run, blank: str) -> None:
    findings = run(shop(good(justification=blank)))
    assert codes(findings) == {"BK212"}
    assert at(findings, "BK212") == ["/goods/0/justification"]


@pytest.mark.parametrize("text", ["x" * 500, " " * 10 + "x" * 490, "\U0001f600" * 250, " " + "\U0001f600" * 250 + " "])
def test_justifications_up_to_500_units_after_trimming_pass(run: Run, text: str) -> None:
    assert run(shop(good(justification=text), unlock(justification=text))) == []


def test_251_emoji_pass_the_schema_and_fail_the_server(run: Run) -> None:
    findings = run(shop(good(justification="\U0001f600" * 251), unlock(justification="\U0001f600" * 251)))
    assert codes(findings) == {"BK212"}
    assert at(findings, "BK212") == ["/goods/0/justification", "/goods/1/justification"]
    assert "502 UTF-16 code units" in findings[0].message


def test_u0085_is_not_trimmed(run: Run) -> None:
    assert codes(run(shop(good(justification="\u0085" + "\U0001f600" * 250)))) == {"BK212"}


def test_501_raw_characters_are_the_schemas(run: Run) -> None:
    assert codes(run(shop(good(justification="x" * 501)))) == {"BK105"}


# --- BK213 --------------------------------------------------------------------------


def test_a_payload_of_exactly_2048_bytes_passes_and_2049_fails(run: Run) -> None:
    exact = {"k": "x" * 2040}  # {"k":"…"} is 8 bytes of syntax
    assert serialized_size(exact) == 2048
    assert run(shop(good(payload=exact))) == []
    findings = run(shop(good(payload={"k": "x" * 2041})))
    assert codes(findings) == {"BK213"}
    assert at(findings, "BK213") == ["/goods/0/payload"]
    assert "2049 bytes" in findings[0].message


def test_the_size_counts_utf8_bytes_not_characters(run: Run) -> None:
    assert serialized_size({"k": "\u00e9" * 1020}) == 2048  # 2 bytes each
    assert codes(run(shop(good(payload={"k": "\u00e9" * 1021})))) == {"BK213"}
    assert serialized_size({"k": "\U0001f600" * 510}) == 2048  # 4 bytes each
    assert codes(run(shop(good(payload={"k": "\U0001f600" * 510})))) == set()


def test_whitespace_in_the_file_does_not_count(run: Run) -> None:
    text = json.dumps(shop(good(payload={"k": "x" * 2040})), indent=8)
    assert run(text) == []


def test_a_lone_surrogate_counts_as_its_six_character_escape(run: Run) -> None:
    # JSON.stringify writes an unpaired surrogate as \udXXX (6 bytes); 2034 + 6 + 8 = 2048.
    text = json.dumps(shop(good(payload={"k": "x" * 2034 + "@@"})))
    assert run(text.replace("@@", "\\ud800")) == []
    assert codes(run(text.replace("@@", "x\\ud800"))) == {"BK213"}


@pytest.mark.parametrize(
    ("value", "js"),
    [
        (1.0, "1"), (100.0, "100"), (-0.0, "0"), (1e21, "1e+21"), (1e20, "100000000000000000000"),
        (123.456, "123.456"), (1e-7, "1e-7"), (1e-6, "0.000001"), (1.5e-10, "1.5e-10"), (2.5e300, "2.5e+300"),
    ],
)
def test_numbers_are_written_as_javascript_writes_them(value: float, js: str) -> None:
    assert js_number(value) == js


def test_stringify_matches_javascript_for_parse_results() -> None:
    value = {"a": [1, 2.5, None, True, False], "b": {"c": "é\n\"\\"}, "big": 12345678901234567890}
    assert js_stringify(value) == '{"a":[1,2.5,null,true,false],"b":{"c":"é\\n\\"\\\\"},"big":12345678901234567000}'


def test_a_payload_that_is_not_an_object_is_the_schemas(run: Run) -> None:
    assert codes(run(shop(good(payload="x" * 3000)))) == {"BK102"}


@pytest.mark.parametrize("goods", [{"not": "a list"}, ["not an object", 3], [{"id": 5, "kind": 7, "priceBuzz": "9"}]])
def test_odd_catalogues_never_crash(run: Run, goods: Any) -> None:
    findings = run(manifest(scopes=["goods:purchase:self"], scopeJustifications=PURCHASE, goods=goods))
    assert not codes(findings) & {"BK208", "BK209", "BK210", "BK211", "BK212", "BK213"}


def test_a_number_too_large_for_a_double_is_null_in_the_payload(run: Run) -> None:
    # JSON.parse reads it as Infinity and JSON.stringify writes null, so the payload is small and valid;
    # it used to be reported as invalid JSON, since Python refuses integers of more than 4300 digits.
    text = json.dumps(shop(good(payload={"n": 1}))).replace('{"n": 1}', '{"n": ' + "9" * 5000 + "}")
    assert run(text) == []

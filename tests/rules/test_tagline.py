"""BK201: the tagline's trimmed length in UTF-16 code units (blank taglines are the schema's BK104)."""

from __future__ import annotations

import pytest

from .conftest import Run, at, codes, manifest, only

EMOJI = "\U0001f3a8"  # outside the BMP: 2 UTF-16 units, 1 code point


@pytest.mark.parametrize(
    "tagline",
    [
        "a" * 140,
        EMOJI * 70,  # 140 units
        " " + EMOJI * 70 + "\u3000",  # U+3000 is JS whitespace, trimmed
        "\ufeff" + EMOJI * 70,  # U+FEFF is JS whitespace (Python's strip keeps it)
        "\u00a0" * 3 + "x" * 137,
        "x",
        "\u0085",  # not JS whitespace: a non-blank tagline
    ],
    ids=["140-ascii", "70-emoji", "u3000-trimmed", "ufeff-trimmed", "nbsp-trimmed", "one-char", "u0085-only"],
)
def test_accepted(run: Run, tagline: str) -> None:
    assert run(manifest(tagline=tagline)) == []


def test_71_emoji_pass_the_schema_and_fail_the_server(run: Run) -> None:
    findings = run(manifest(tagline=EMOJI * 71))
    assert codes(findings) == {"BK201"}
    assert at(findings, "BK201") == ["/tagline"]
    assert "142 UTF-16 code units" in only(findings, "BK201")[0].message


def test_u0085_is_not_trimmed_so_it_counts(run: Run) -> None:
    # JavaScript's trim keeps U+0085: 70 emoji + U+0085 measure 141 units.
    assert codes(run(manifest(tagline="\u0085" + EMOJI * 70))) == {"BK201"}
    assert codes(run(manifest(tagline="\u0085" + EMOJI * 69 + "x"))) == set()


def test_140_ascii_with_surrounding_spaces_passes_the_server_but_not_the_schema(run: Run) -> None:
    findings = run(manifest(tagline="  " + "a" * 140 + "  "))
    assert codes(findings) == {"BK105"}  # the raw length; the server's trimmed length is fine


def test_a_raw_tagline_over_the_cap_is_reported_once(run: Run) -> None:
    findings = run(manifest(tagline="a" * 141))
    assert codes(findings) == {"BK105"}


@pytest.mark.parametrize("tagline", ["", "   ", "\u3000\ufeff", "\t\n"])
def test_blank_taglines_are_the_schemas_bk104_only(run: Run, tagline: str) -> None:
    findings = run(manifest(tagline=tagline))
    assert "BK201" not in codes(findings)
    assert codes(findings) <= {"BK104", "BK105"} and codes(findings)


def test_wrong_type_is_left_to_the_schema(run: Run) -> None:
    assert codes(run(manifest(tagline=["not", "a", "string"]))) == {"BK102"}


def test_position_is_the_tagline_value(run: Run) -> None:
    text = '{"blockId": "demo-block", "version": "1.0.0", "name": "Demo", "contentRating": "g",\n' \
           ' "scopes": [], "iframe": {"minHeight": 400, "maxHeight": null, "resizable": false,\n' \
           ' "sandbox": "allow-scripts"},\n "tagline": "' + EMOJI * 71 + '"}'
    finding = only(run(text), "BK201")[0]
    assert (finding.line, finding.column) == (4, 13)

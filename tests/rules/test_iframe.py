"""BK214-BK217: sandbox tokens per tier, the forbidden pair, required iframe members, height order."""

from __future__ import annotations

import pytest

from blockkit.platform import SANDBOX_TOKENS_BY_TIER

from .conftest import Run, at, codes, iframe, manifest, only


def sandboxed(value: str) -> dict:
    return manifest(iframe=iframe(sandbox=value))


# --- BK214 --------------------------------------------------------------------------


@pytest.mark.parametrize("tier", ["unverified", "verified", "internal"])
def test_each_tier_accepts_its_own_tokens(run: Run, tier: str) -> None:
    tokens = sorted(SANDBOX_TOKENS_BY_TIER[tier] - {"allow-same-origin"})
    assert run(sandboxed(" ".join(tokens)), tier=tier) == []


@pytest.mark.parametrize(
    ("token", "tier", "needed"),
    [
        ("allow-popups", "unverified", "verified"),
        ("allow-modals", "unverified", "verified"),
        ("allow-pointer-lock", "unverified", "verified"),
        ("allow-downloads", "unverified", "verified"),
        ("allow-same-origin", "unverified", "internal"),
        ("allow-same-origin", "verified", "internal"),
    ],
)
def test_a_token_of_a_higher_tier_names_that_tier(run: Run, token: str, tier: str, needed: str) -> None:
    findings = run(sandboxed(f"allow-forms {token}"), tier=tier)
    assert codes(findings) == {"BK214"}
    assert f"only from the {needed} trust tier" in findings[0].message
    assert f"this app is {tier}" in findings[0].message


def test_allow_same_origin_alone_passes_at_internal(run: Run) -> None:
    assert run(sandboxed("allow-forms allow-same-origin"), tier="internal") == []


@pytest.mark.parametrize("token", ["allow-top-navigation", "allow-popups-to-escape-sandbox", "allow-presentation"])
def test_other_tokens_are_refused_at_every_tier(run: Run, token: str) -> None:
    for tier in ("unverified", "verified", "internal"):
        findings = run(sandboxed(f"allow-scripts {token}"), tier=tier)
        assert codes(findings) == {"BK214"}
        assert "not allowed at any trust tier" in findings[0].message


def test_tokens_are_case_sensitive(run: Run) -> None:
    findings = run(sandboxed("Allow-Scripts allow-forms"))
    assert codes(findings) == {"BK214"}
    assert 'write "allow-scripts"' in (findings[0].hint or "")


def test_nbsp_separates_tokens_and_u0085_does_not(run: Run) -> None:
    assert run(sandboxed("allow-scripts\u00a0allow-forms")) == []
    assert run(sandboxed("\u3000allow-scripts\u2003allow-forms\ufeff")) == []
    findings = run(sandboxed("allow-scripts\u0085allow-forms"))
    assert codes(findings) == {"BK214"}


def test_a_token_joined_by_an_invisible_character_is_shown_escaped_and_explained(run: Run) -> None:
    # Printed raw, U+0085 is invisible: "allow-scriptsallow-forms" reads like a missing space.
    (finding,) = run(sandboxed("allow-scripts\u0085allow-forms"))
    assert 'sandbox token "allow-scripts\\u0085allow-forms"' in finding.message
    assert "\u0085" not in finding.message
    assert "U+0085 NEXT LINE is not whitespace to the platform" in (finding.hint or "")
    (finding,) = run(sandboxed("allow-scripts allow-forms\u200b"))
    assert '"allow-forms\\u200b"' in finding.message and "U+200B ZERO WIDTH SPACE" in (finding.hint or "")
    # Still located on the token itself when the string has no escapes in the file.
    assert (finding.column, finding.end_column) == (finding.end_column - 12, finding.end_column)


def test_each_bad_token_is_located_inside_the_string(run: Run) -> None:
    text = ('{"blockId": "demo-block", "version": "1.0.0", "name": "Demo", "contentRating": "g", "scopes": [],\n'
            ' "iframe": {"minHeight": 400, "maxHeight": null, "resizable": false,\n'
            '  "sandbox": "allow-scripts  allow-popups allow-top-navigation"}}')
    findings = only(run(text), "BK214")
    assert [(f.line, f.column, f.end_column) for f in findings] == [(3, 30, 42), (3, 43, 63)]


def test_an_escaped_string_is_located_as_a_whole(run: Run) -> None:
    text = ('{"blockId": "demo-block", "version": "1.0.0", "name": "Demo", "contentRating": "g", "scopes": [],\n'
            ' "iframe": {"minHeight": 400, "maxHeight": null, "resizable": false,\n'
            '  "sandbox": "allow-scripts\\u0020allow-popups"}}')
    finding = only(run(text), "BK214")[0]
    assert (finding.line, finding.column) == (3, 14)


# --- BK215 --------------------------------------------------------------------------


@pytest.mark.parametrize("tier", ["unverified", "verified", "internal"])
def test_same_origin_with_scripts_is_refused_at_every_tier(run: Run, tier: str) -> None:
    findings = run(sandboxed("allow-scripts allow-same-origin"), tier=tier)
    assert at(findings, "BK215") == ["/iframe/sandbox"]
    assert codes(findings) == ({"BK215"} if tier == "internal" else {"BK214", "BK215"})


def test_the_pair_split_by_a_nbsp_is_still_the_pair(run: Run) -> None:
    assert "BK215" in codes(run(sandboxed("allow-same-origin\u00a0allow-scripts"), tier="internal"))


def test_the_pair_needs_both_exact_tokens(run: Run) -> None:
    assert "BK215" not in codes(run(sandboxed("allow-scripts allow-same-originx"), tier="internal"))


# --- BK216 --------------------------------------------------------------------------


@pytest.mark.parametrize("member", ["minHeight", "maxHeight", "resizable", "sandbox"])
def test_each_required_member(run: Run, member: str) -> None:
    findings = run(manifest(iframe=iframe(**{member: ...})))
    assert codes(findings) == {"BK216"}
    assert at(findings, "BK216") == ["/iframe"]
    assert f'"{member}"' in findings[0].message


def test_all_missing_members_are_reported(run: Run) -> None:
    findings = run(manifest(iframe={}))
    assert len(only(findings, "BK216")) == 4


def test_max_height_may_be_null_but_not_absent(run: Run) -> None:
    assert run(manifest(iframe=iframe(maxHeight=None))) == []
    assert "null means unbounded" in run(manifest(iframe=iframe(maxHeight=...)))[0].message


def test_a_missing_iframe_is_reported_at_the_top(run: Run) -> None:
    findings = run(manifest(iframe=...))
    assert codes(findings) == {"BK216"}
    assert findings[0].pointer == "" and (findings[0].line, findings[0].column) == (1, 1)


def test_with_a_page_a_missing_iframe_is_bk219_only(run: Run) -> None:
    assert codes(run(manifest(iframe=..., page={"path": "/", "title": "Demo"}))) == {"BK219"}


def test_a_non_object_iframe_is_the_schemas(run: Run) -> None:
    assert codes(run(manifest(iframe="allow-scripts"))) == {"BK102"}


def test_missing_members_point_at_the_iframe_opening_brace(run: Run) -> None:
    text = ('{"blockId": "demo-block", "version": "1.0.0", "name": "Demo", "contentRating": "g", "scopes": [],\n'
            ' "iframe":   {"minHeight": 400, "resizable": false, "sandbox": "allow-scripts"}}')
    finding = only(run(text), "BK216")[0]
    assert (finding.line, finding.column) == (2, 14)


# --- BK217 --------------------------------------------------------------------------


@pytest.mark.parametrize(("low", "high"), [(400, 400), (400, 401), (40, 4000), (600, None)])
def test_ordered_heights_pass(run: Run, low: int, high: object) -> None:
    assert run(manifest(iframe=iframe(minHeight=low, maxHeight=high))) == []


@pytest.mark.parametrize(("low", "high"), [(401, 400), (4000, 40)])
def test_max_below_min_is_refused(run: Run, low: int, high: int) -> None:
    findings = run(manifest(iframe=iframe(minHeight=low, maxHeight=high)))
    assert codes(findings) == {"BK217"}
    assert at(findings, "BK217") == ["/iframe/maxHeight"]


def test_heights_of_the_wrong_type_are_the_schemas(run: Run) -> None:
    assert codes(run(manifest(iframe=iframe(minHeight="900", maxHeight=400)))) == {"BK102"}
    assert codes(run(manifest(iframe=iframe(minHeight=True, maxHeight=40)))) == {"BK102"}


def test_sandbox_of_the_wrong_type_never_crashes(run: Run) -> None:
    assert codes(run(manifest(iframe=iframe(sandbox=["allow-scripts"])))) == {"BK102"}

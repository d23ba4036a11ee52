"""BK203 sensitive scopes need a justification, BK204 justifications for undeclared scopes,
BK205 declared scopes within the review grant."""

from __future__ import annotations

import pytest

from blockkit.context import Context
from blockkit.platform import SCOPES, SENSITIVE_SCOPES

from .conftest import Run, at, codes, manifest, only

WHY = "Shows the viewer's balance before a paid generation."


@pytest.mark.parametrize("scope", sorted(SENSITIVE_SCOPES))
def test_each_sensitive_scope_needs_a_justification(run: Run, scope: str) -> None:
    findings = run(manifest(scopes=["user:read:self", scope]))
    assert at(findings, "BK203") == ["/scopes/1"]
    assert scope in only(findings, "BK203")[0].message
    assert "BK203" not in codes(run(manifest(scopes=["user:read:self", scope], scopeJustifications={scope: WHY})))


def test_seven_scopes_are_sensitive() -> None:
    assert len(SENSITIVE_SCOPES) == 7


@pytest.mark.parametrize("scope", sorted(set(SCOPES) - SENSITIVE_SCOPES))
def test_other_scopes_need_none(run: Run, scope: str) -> None:
    assert "BK203" not in codes(run(manifest(scopes=[scope])))


@pytest.mark.parametrize("blank", ["   ", "\u3000", "\ufeff\u00a0", "\n\t"])
def test_a_blank_justification_after_js_trim_is_reported_at_the_justification(run: Run, blank: str) -> None:
    findings = run(manifest(scopes=["buzz:read:self"], scopeJustifications={"buzz:read:self": blank}))
    assert codes(findings) == {"BK203"}
    assert at(findings, "BK203") == ["/scopeJustifications/buzz:read:self"]
    assert "blank" in findings[0].message


@pytest.mark.parametrize("text", ["\u0085", "x", " x "])
def test_non_blank_justifications_pass(run: Run, text: str) -> None:
    assert run(manifest(scopes=["buzz:read:self"], scopeJustifications={"buzz:read:self": text})) == []


def test_an_empty_justification_is_reported_once_in_each_stage(run: Run) -> None:
    document = manifest(scopes=["buzz:read:self"], scopeJustifications={"buzz:read:self": ""})
    assert codes(run(document)) == {"BK105"}  # the schema's minLength says it
    assert codes(run(document, stage="submit")) == {"BK203"}  # at submit only the server rule runs


def test_a_non_string_justification_is_the_schemas_unless_only_submit_runs(run: Run) -> None:
    document = manifest(scopes=["buzz:read:self"], scopeJustifications={"buzz:read:self": 7})
    assert codes(run(document)) == {"BK102"}
    assert codes(run(document, stage="submit")) == {"BK203"}


def test_a_repeated_scope_is_reported_once(run: Run) -> None:
    findings = run(manifest(scopes=["buzz:read:self", "buzz:read:self"]))
    assert at(findings, "BK203") == ["/scopes/0"]


def test_scope_justifications_that_is_not_an_object_justifies_nothing(run: Run) -> None:
    findings = run(manifest(scopes=["buzz:read:self"], scopeJustifications=["buzz:read:self"]))
    assert codes(findings) == {"BK102", "BK203"}


def test_the_sensitive_rule_runs_at_submit_and_the_grant_rule_does_not(run: Run) -> None:
    document = manifest(scopes=["buzz:read:self"])
    assert codes(run(document, stage="submit", granted_scopes=frozenset({"user:read:self"}))) == {"BK203"}
    assert codes(run(document, stage="approve", granted_scopes=frozenset({"user:read:self"}))) == {"BK203", "BK205"}


# --- BK204 --------------------------------------------------------------------------


def test_a_justification_for_an_undeclared_scope(run: Run) -> None:
    findings = run(manifest(scopes=["user:read:self"], scopeJustifications={"buzz:read:self": WHY}))
    assert codes(findings) == {"BK204"}
    finding = only(findings, "BK204")[0]
    assert finding.pointer == "/scopeJustifications/buzz:read:self"
    assert "not declared in scopes" in finding.message


def test_justifications_for_declared_scopes_pass(run: Run) -> None:
    document = manifest(scopes=["user:read:self", "buzz:read:self"],
                        scopeJustifications={"user:read:self": "Shows the name.", "buzz:read:self": WHY})
    assert run(document) == []


def test_an_unknown_key_is_bk112_in_all_stages_and_bk204_at_submit(run: Run) -> None:
    document = manifest(scopeJustifications={"buzz:read": WHY})
    assert codes(run(document)) == {"BK112"}
    assert codes(run(document, stage="submit")) == {"BK204"}


def test_bk204_points_at_the_key(run: Run) -> None:
    text = ('{"blockId": "demo-block", "version": "1.0.0", "name": "Demo", "contentRating": "g",\n'
            ' "scopes": [], "iframe": {"minHeight": 400, "maxHeight": null, "resizable": false, "sandbox": "allow-scripts"},\n'
            ' "scopeJustifications": {\n    "user:read:self": "x"}}')
    finding = only(run(text), "BK204")[0]
    assert (finding.line, finding.column, finding.end_column) == (4, 5, 21)


# --- BK205 --------------------------------------------------------------------------


def test_without_a_known_grant_the_subset_rule_is_skipped(run: Run) -> None:
    assert run(manifest(scopes=["user:read:self", "models:read:self"])) == []


def test_declared_equal_to_the_grant_passes(run: Run) -> None:
    granted = frozenset({"user:read:self", "models:read:self"})
    assert run(manifest(scopes=["user:read:self", "models:read:self"]), granted_scopes=granted) == []


def test_declared_a_strict_subset_of_the_grant_passes(run: Run) -> None:
    granted = frozenset({"user:read:self", "models:read:self", "media:read:owned"})
    assert run(manifest(scopes=["models:read:self"]), granted_scopes=granted) == []


def test_a_scope_outside_the_grant(run: Run) -> None:
    findings = run(manifest(scopes=["user:read:self", "models:read:self"]),
                   granted_scopes=frozenset({"user:read:self"}))
    assert codes(findings) == {"BK205"}
    assert at(findings, "BK205") == ["/scopes/1"]
    assert "models:read:self" in findings[0].message and "user:read:self" in (findings[0].hint or "")


def test_an_empty_grant_refuses_every_declared_scope(run: Run) -> None:
    findings = run(manifest(scopes=["user:read:self"]), Context(granted_scopes=frozenset()))
    assert at(findings, "BK205") == ["/scopes/0"]


def test_unknown_scopes_are_the_schemas_not_the_grants(run: Run) -> None:
    findings = run(manifest(scopes=["user:read:self", "made:up:scope"]), granted_scopes=frozenset({"user:read:self"}))
    assert codes(findings) == {"BK103"}


def test_kept_bk203_hits_follow_the_scope_and_its_index(run: Run) -> None:
    """BK203's hits are kept per (index, scope) (scopes._unjustified): each manifest gets its own."""
    first = only(run(manifest(scopes=["buzz:read:self", "social:tip:self"])), "BK203")
    again = only(run(manifest(scopes=["social:tip:self", "user:read:self", "buzz:read:self"])), "BK203")
    assert [(f.pointer, f.message) for f in first] == [
        ("/scopes/0", 'sensitive scope "buzz:read:self" has no justification in scopeJustifications'),
        ("/scopes/1", 'sensitive scope "social:tip:self" has no justification in scopeJustifications')]
    assert [(f.pointer, f.message) for f in again] == [
        ("/scopes/0", 'sensitive scope "social:tip:self" has no justification in scopeJustifications'),
        ("/scopes/2", 'sensitive scope "buzz:read:self" has no justification in scopeJustifications')]
    assert again[1].hint == 'add "scopeJustifications": {"buzz:read:self": "<why the block needs it>"}'


def test_the_kept_bk203_hits_are_bounded() -> None:
    from blockkit.rules.scopes import _unjustified

    assert _unjustified.cache_info().maxsize == 1024  # a hostile list of scopes cannot grow it without end

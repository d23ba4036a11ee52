"""BK206: auth "oauth" cannot be combined with any apps:storage:* scope."""

from __future__ import annotations

import pytest

from blockkit.platform import STORAGE_SCOPES

from .conftest import Run, at, codes, manifest

WHY = {"apps:storage:shared:write": "Saves the shared board that all viewers see."}


@pytest.mark.parametrize("scope", sorted(STORAGE_SCOPES))
def test_oauth_with_each_storage_scope_is_refused(run: Run, scope: str) -> None:
    findings = run(manifest(auth="oauth", scopes=["user:read:self", scope], scopeJustifications=WHY
                            if scope in WHY else {}))
    assert codes(findings) == {"BK206"}
    assert at(findings, "BK206") == ["/auth"]
    assert scope in findings[0].message


def test_oauth_without_storage_passes(run: Run) -> None:
    assert run(manifest(auth="oauth", scopes=["user:read:self", "models:read:self"])) == []


@pytest.mark.parametrize("auth", ["block-token", ...])
def test_block_tokens_may_use_storage(run: Run, auth: object) -> None:
    assert run(manifest(auth=auth, scopes=["apps:storage:read", "apps:storage:write"])) == []


def test_any_apps_storage_prefix_counts_even_an_unknown_one(run: Run) -> None:
    assert codes(run(manifest(auth="oauth", scopes=["apps:storage:archive"]))) == {"BK103", "BK206"}


def test_it_is_a_submit_rule(run: Run) -> None:
    assert codes(run(manifest(auth="oauth", scopes=["apps:storage:read"]), stage="submit")) == {"BK206"}


@pytest.mark.parametrize("auth", ["OAuth", "oauth ", 1])
def test_only_the_exact_value_oauth_triggers_it(run: Run, auth: object) -> None:
    assert "BK206" not in codes(run(manifest(auth=auth, scopes=["apps:storage:read"])))

"""The baseline the other server-rule tests change one key at a time."""

from __future__ import annotations

from blockkit.rules import load_all

from .conftest import VALID, Run


def test_the_baseline_manifest_has_no_findings(run: Run) -> None:
    assert run(VALID) == []


def test_every_server_rule_is_an_error_with_a_bk2_code_and_full_docs() -> None:
    server = [r for r in load_all().values() if r.layer == "server"]
    assert len(server) >= 24
    for rule in server:
        assert rule.code.startswith("BK2") and len(rule.code) == 5
        assert rule.severity == "error"
        assert rule.stage in ("submit", "approve")
        assert rule.check is not None
        assert all((rule.doc.summary, rule.doc.what, rule.doc.why, rule.doc.example, rule.doc.fix))

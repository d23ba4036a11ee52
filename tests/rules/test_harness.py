"""The baseline the other server-rule tests change one key at a time."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from blockkit.context import Context
from blockkit.rules import load_all
from blockkit.rules.base import RuleContext

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


# --- no server rule raises on any document ------------------------------------------

_KEYS = ["blockId", "tagline", "repository", "scopes", "scopeJustifications", "auth", "goods", "iframe", "page",
         "targets", "assetBundleUrl", "renderMode", "outputDir", "buildCommand", "publicSettingsKeys"]
_MEMBERS = ["minHeight", "maxHeight", "resizable", "sandbox", "slotId", "id", "kind", "priceBuzz", "justification",
            "payload", "title", "description", "path", "icon", "user:read:self", "buzz:read:self"]
_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                     st.text(max_size=12), st.sampled_from(["oauth", "app_unlock", "app.page", "https://x.example/",
                                                            "allow-scripts allow-same-origin", "apps:storage:read",
                                                            "goods:purchase:self", "inline", ""]))
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(_MEMBERS), inner, max_size=5)), max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(_KEYS), _values, max_size=8),
       st.sampled_from(["unverified", "verified", "internal"]))
def test_no_server_rule_raises_on_odd_documents(document: dict, tier: str) -> None:
    ctx = RuleContext(context=Context(tier=tier, granted_scopes=frozenset({"user:read:self"})))
    for rule in load_all().values():
        if rule.layer == "server":
            list(rule.check(document, ctx))  # type: ignore[misc]

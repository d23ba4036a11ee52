"""The real manifests in ../shared/corpus: no crash anywhere, and hand-checked verdicts for a dozen."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import blockkit
from blockkit.context import Context
from blockkit.report import Report

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"
FILES = sorted(p for p in CORPUS.rglob("*.json") if p.name != "index.json") if CORPUS.is_dir() else []

pytestmark = pytest.mark.skipif(not FILES, reason="../shared/corpus is not present")


def findings(relative: str, context: Context | None = None) -> list[tuple[str, str]]:
    report = blockkit.validate_file(CORPUS / relative, context)
    return [(f.code, f.pointer) for f in report.findings]


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.name[:60]}" for p in FILES])
def test_every_corpus_file_gets_a_report_and_no_internal_error(path: Path) -> None:
    for context in (Context(), Context(stage="submit"), Context(tier="internal", granted_scopes=frozenset())):
        report = blockkit.validate_file(path, context)
        assert isinstance(report, Report) and len(report.files) == 1
        assert not [f for f in report.findings if f.code == "BK000"]
        for finding in report.findings:
            assert finding.line >= 1 and finding.column >= 1


# Each entry: file -> exact set of codes. The comment names the faults verified by reading the file.
HAND_CHECKED: dict[str, set[str]] = {
    # appId/description/settings are unknown top-level keys (pass silently); "buzz:read" is not a scope
    # (BK103); "ai:write:budgeted" is sensitive with no scopeJustifications (BK203); iframe.src set (BK110);
    # sandbox has allow-popups (verified tier) and allow-popups-to-escape-sandbox (never) (BK214 x2).
    "real/ZacxDev__civitai-block-generate-from-model__8314bca__block.manifest.json": {"BK103", "BK110", "BK203", "BK214"},
    # starter template: iframe.src set (BK110); popups + escape-sandbox tokens (BK214); models:read:self
    # is not sensitive; targets[].priority/requiredContext are stale but unchecked keys.
    "real/civitai__civitai-app-starters__ec0555b__starters_civitai-block-starter_block.manifest.json": {"BK110", "BK214"},
    # same template without iframe.src: only the two sandbox tokens remain (BK214).
    "real/civitai__civitai-app-starters__72d555a__starters_civitai-block-starter_block.manifest.json": {"BK214"},
    # iframe.src set (BK110); ai:write:budgeted declared with no scopeJustifications at all (BK203).
    "real/civitai__civitai-app-starters__13ba162__starters_examples_buzz-purchase_block.manifest.json": {"BK110", "BK203"},
    # doc snippet: ai:write:budgeted unjustified (BK203); a page and no iframe object (BK219).
    "embedded/civitai__civitai-developer-docs__a78bba7__apps_guide_comfy-cloud.md__L147.json": {"BK203", "BK219"},
    # deliberately incomplete: no version, name, contentRating (BK101 x3); no iframe and no page (BK216);
    # both sensitive scopes are justified.
    "embedded/civitai__cli__id68407347688__dogfood-test_heredoc_ab-image-generator_block.manifest.json": {"BK101", "BK216"},
    # a foreign CRM file: lacks version, name, contentRating, scopes (BK101); repository is an object
    # (BK102); no iframe (BK216). blockId "retail-b2c" happens to be valid.
    "foreign/1973zahar__retail-crm__04bd243__block.manifest.json": {"BK101", "BK102", "BK216"},
    # a clean catalogue: goods:purchase:self declared and justified, social:tip:self justified, ids
    # "style-pack"/"supporter" distinct, no app_unlock, tiny payloads, all four iframe members.
    "real/civitai__civitai-app-starters__488bc22__starters_examples_monetize_block.manifest.json": set(),
    # auth "oauth" with user:read:self and buzz:read:self only (no apps:storage:*), both justified;
    # repository https://github.com/ZacxDev/civitai-app-oauth-probe is a plain owner/repo link.
    "real/ZacxDev__civitai-app-oauth-probe__20b96f7__block.manifest.json": set(),
    # category "tool" is not a category (BK103); all four scopes justified; page and iframe complete.
    "real/ZacxDev__civitai-app-sensei__8bd14a8__block.manifest.json": {"BK103"},
    # Go template: blockId "{{ .Slug }}" fails the pattern (BK104); ai:write:budgeted unjustified (BK203).
    "real/civitai__cli__4eb0a3d__internal_scaffold_templates_page-money_block.manifest.json.tmpl.json": {"BK104", "BK203"},
    # social:tip:self, buzz:read:self, apps:storage:shared:write are sensitive and unjustified (BK203 x3);
    # the other five scopes are not sensitive.
    "real/ZacxDev__civitai-app-playable-collections__0b1c611__block.manifest.json": {"BK203"},
    # six scopes, each justified; valid github repository link; budget 1000; clean.
    "real/ZacxDev__civitai-app-custom-generators__91eaf14__block.manifest.json": set(),
    # maxHeight null (unbounded) is accepted; three scopes justified; clean.
    "real/civitai__civitai-app-starters__fbe67fa__starters_examples_page-app_block.manifest.json": set(),
}


@pytest.mark.parametrize("relative", sorted(HAND_CHECKED), ids=lambda r: r.split("__")[1] + "@" + r.split("__")[2])
def test_hand_checked_verdicts(relative: str) -> None:
    assert {code for code, _ in findings(relative)} == HAND_CHECKED[relative]


def test_hand_checked_positions_of_the_server_findings() -> None:
    got = findings("real/ZacxDev__civitai-block-generate-from-model__8314bca__block.manifest.json")
    assert [f for f in got if f[0].startswith("BK2")] == [
        ("BK203", "/scopes/1"), ("BK214", "/iframe/sandbox"), ("BK214", "/iframe/sandbox")]
    got = findings("real/ZacxDev__civitai-app-playable-collections__0b1c611__block.manifest.json")
    assert got == [("BK203", "/scopes/2"), ("BK203", "/scopes/3"), ("BK203", "/scopes/7")]
    got = findings("embedded/civitai__cli__id68407347688__dogfood-test_heredoc_ab-image-generator_block.manifest.json")
    assert Counter(got) == Counter({("BK101", ""): 3, ("BK216", ""): 1})


def test_the_context_changes_the_verdict() -> None:
    starter = "real/civitai__civitai-app-starters__72d555a__starters_civitai-block-starter_block.manifest.json"
    # verified allows allow-popups; allow-popups-to-escape-sandbox stays refused at every tier.
    report = blockkit.validate_file(CORPUS / starter, Context(tier="verified"))
    assert [(f.code, "escape" in f.message) for f in report.findings] == [("BK214", True)]
    # at submit only the sensitive-scope rule of the server layer speaks.
    playable = "real/ZacxDev__civitai-app-playable-collections__0b1c611__block.manifest.json"
    assert {c for c, _ in findings(playable, Context(stage="submit"))} == {"BK203"}
    # a grant without the collections scopes refuses them.
    grant = frozenset({"social:tip:self", "buzz:read:self", "block:settings:read", "block:settings:write",
                       "apps:storage:shared:read", "apps:storage:shared:write"})
    got = findings(playable, Context(granted_scopes=grant))
    assert [p for c, p in got if c == "BK205"] == ["/scopes/0", "/scopes/1"]

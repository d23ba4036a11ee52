"""Both corpora: no crash anywhere; hand-checked verdicts for a dozen real manifests, and the
exact verdict of every manifest of our own corpus."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import blockkit
from blockkit.context import Context
from blockkit.report import Report
from tests.conftest import CORPUS, OWN_CORPUS, SHARED_MISSING, corpus_file_params, corpus_files

needs_shared = pytest.mark.skipif(not corpus_files(CORPUS), reason=SHARED_MISSING)


def findings(relative: str, context: Context | None = None, root: Path = CORPUS) -> list[tuple[str, str]]:
    report = blockkit.validate_file(root / relative, context)
    return [(f.code, f.pointer) for f in report.findings]


@pytest.mark.parametrize("path", corpus_file_params())
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


# One skip, not one per file, where the real corpus is absent.
_HAND_CHECKED_PARAMS = [pytest.param(r, id=r.split("__")[1] + "@" + r.split("__")[2]) for r in sorted(HAND_CHECKED)] \
    if corpus_files(CORPUS) else [pytest.param(None, id="shared", marks=pytest.mark.skip(reason=SHARED_MISSING))]


@pytest.mark.parametrize("relative", _HAND_CHECKED_PARAMS)
def test_hand_checked_verdicts(relative: str) -> None:
    assert {code for code, _ in findings(relative)} == HAND_CHECKED[relative]


@needs_shared
def test_hand_checked_positions_of_the_server_findings() -> None:
    got = findings("real/ZacxDev__civitai-block-generate-from-model__8314bca__block.manifest.json")
    assert [f for f in got if f[0].startswith("BK2")] == [
        ("BK203", "/scopes/1"), ("BK214", "/iframe/sandbox"), ("BK214", "/iframe/sandbox")]
    got = findings("real/ZacxDev__civitai-app-playable-collections__0b1c611__block.manifest.json")
    assert got == [("BK203", "/scopes/2"), ("BK203", "/scopes/3"), ("BK203", "/scopes/7")]
    got = findings("embedded/civitai__cli__id68407347688__dogfood-test_heredoc_ab-image-generator_block.manifest.json")
    assert Counter(got) == Counter({("BK101", ""): 3, ("BK216", ""): 1})


@needs_shared
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


# Our own corpus (tests/fixtures/corpus): each file was written to carry the faults its
# comment names, and its verdict is exactly those findings, as (code, pointer) pairs.
OWN_VERDICTS: dict[str, list[tuple[str, str]]] = {
    # Clean manifests: a minimal page; a generation page with justified sensitive scopes, budget,
    # build settings and a github repository; a model-slot widget with no page; a shop with goods
    # and one justified app_unlock; oauth with non-storage scopes (gitlab repository); a compact
    # one-line file with a prerelease version; CRLF line endings with tab indents; an escaped lone
    # surrogate in the name, which no rule forbids.
    "manifests/page-minimal.json": [],
    "manifests/page-generation-justified.json": [],
    "manifests/model-slot-widget.json": [],
    "manifests/shop-catalogue.json": [],
    "manifests/oauth-balance.json": [],
    "manifests/compact-one-line.json": [],
    "manifests/crlf-tabs.json": [],
    "manifests/lone-surrogate.json": [],
    # Stale keys appId, description and settings are not errors (lint's BK301); iframe.src is set.
    "manifests/stale-appid-settings-description.json": [("BK110", "/iframe/src")],
    # Old starter shape: targets[].priority/requiredContext (lint only), iframe.src set, popup tokens.
    "manifests/stale-targets-priority.json": [
        ("BK110", "/iframe/src"), ("BK214", "/iframe/sandbox"), ("BK214", "/iframe/sandbox")],
    # Old scope names: "buzz:read" and "user:read" are unknown, "Storage.Write" is malformed;
    # ai:write:budgeted has no justification.
    "manifests/old-scope-names.json": [
        ("BK103", "/scopes/1"), ("BK103", "/scopes/2"), ("BK203", "/scopes/3"), ("BK103", "/scopes/4")],
    # Three sensitive scopes unjustified, and social:tip:self justified with blanks only.
    "manifests/sensitive-scopes-unjustified.json": [
        ("BK203", "/scopes/2"), ("BK203", "/scopes/4"), ("BK203", "/scopes/6"),
        ("BK203", "/scopeJustifications/social:tip:self")],
    # A justification for an undeclared scope, and one keyed by a scope that does not exist.
    "manifests/justification-for-undeclared-scope.json": [
        ("BK204", "/scopeJustifications/social:tip:self"), ("BK112", "/scopeJustifications/ai:write")],
    # "type": "app": the only value is "block".
    "manifests/type-not-block.json": [("BK103", "/type")],
    # A Go template: blockId "{{ .Slug }}" fails the pattern; ai:write:budgeted unjustified.
    "manifests/go-template.tmpl.json": [("BK104", "/blockId"), ("BK203", "/scopes/1")],
    # category "tool", contentRating "PG" and renderMode "frame" are not allowed values.
    "manifests/enum-typos.json": [("BK103", "/category"), ("BK103", "/contentRating"), ("BK103", "/renderMode")],
    # trustTier set by hand; allow-same-origin with allow-scripts; allow-same-origin and
    # allow-modals above the unverified tier.
    "manifests/server-owned-and-sandbox.json": [
        ("BK110", "/trustTier"), ("BK215", "/iframe/sandbox"), ("BK214", "/iframe/sandbox"),
        ("BK214", "/iframe/sandbox")],
    # blockId with capitals and an underscore, version "1.0", empty name, minApiVersion "v1",
    # page.path without its leading slash.
    "manifests/malformed-strings.json": [
        ("BK104", "/blockId"), ("BK104", "/version"), ("BK105", "/name"), ("BK104", "/minApiVersion"),
        ("BK104", "/page/path")],
    # minHeight below 40, maxHeight quoted, resizable "yes", unknown keys in iframe and page.
    "manifests/iframe-values.json": [
        ("BK107", "/iframe/minHeight"), ("BK102", "/iframe/maxHeight"), ("BK102", "/iframe/resizable"),
        ("BK106", "/iframe/width"), ("BK106", "/page/subtitle")],
    "manifests/heights-reversed.json": [("BK217", "/iframe/maxHeight")],
    # iframe with minHeight only: the server requires the other three members.
    "manifests/iframe-members-missing.json": [("BK216", "/iframe"), ("BK216", "/iframe"), ("BK216", "/iframe")],
    # buildCommand "make dist" is not an accepted command, and there is no outputDir.
    "manifests/build-settings.json": [("BK109", "/buildCommand"), ("BK104", "/buildCommand")],
    "manifests/output-dir-escapes.json": [("BK111", "/outputDir")],
    # Goods without goods:purchase:self, a repeated id, two app_unlocks, the first one unjustified
    # and priced above 5000.
    "manifests/goods-problems.json": [
        ("BK207", "/goods"), ("BK208", "/goods/1/id"), ("BK211", "/goods/2"), ("BK210", "/goods/2/priceBuzz"),
        ("BK209", "/goods/3/kind")],
    # "model.sidebar" is no slot; "app.page" is the page slot; the repeated target is lint's BK303.
    "manifests/targets-unknown-slots.json": [("BK220", "/targets/0/slotId"), ("BK221", "/targets/1/slotId")],
    "manifests/oauth-with-storage.json": [("BK206", "/auth")],
    # renderMode inline needs a higher tier; the asset bundle is on localhost.
    "manifests/render-mode-and-assets.json": [("BK218", "/renderMode"), ("BK222", "/assetBundleUrl")],
    # 71 emoji: 71 characters for the schema, 142 UTF-16 units for the server; a deep repository link.
    "manifests/repository-and-tagline.json": [("BK201", "/tagline"), ("BK202", "/repository")],
    # A misspelt justification key leaves ai:write:budgeted unjustified.
    "manifests/unknown-justification-key.json": [
        ("BK203", "/scopes/0"), ("BK112", "/scopeJustifications/ai:write:budgted")],
    # "version" and iframe "resizable" given twice (warnings); the repeated scope is lint's BK302.
    "manifests/duplicate-keys.json": [("BK009", "/version"), ("BK009", "/iframe/resizable")],
    # Byte-level shapes: a UTF-8 byte order mark; a JSON5 comment and trailing comma; a list
    # instead of an object; Latin-1 bytes; a 401-digit height (Infinity in JavaScript); an escaped
    # newline ending the version (no-break spaces in the sandbox are lint's BK320); an empty file.
    "manifests/bom-utf8.json": [("BK003", "")],
    "manifests/trailing-comma.json": [("BK002", "")],
    "manifests/list-of-manifests.json": [("BK008", "")],
    "manifests/latin1.json": [("BK005", "")],
    "manifests/huge-number.json": [("BK102", "/iframe/minHeight")],
    "manifests/invisible-characters.json": [("BK104", "/version")],
    "manifests/empty.json": [("BK002", "")],
    # Eight versions of one app, for blockkit diff (tests/diff/test_corpus_history.py): each is valid.
    **{f"history/trail-notes/{name}": [] for name in (
        "01-0.1.0.json", "02-0.1.1.json", "03-0.1.1.json", "04-0.2.0.json", "05-0.1.9.json", "06-1.0.0.json",
        "07-1.1.0.json", "08-2.0.0.json")},
    # Cut from documentation: a page snippet with an unjustified budget scope and no iframe; a
    # test fixture with only blockId and justified scopes; a README with placeholder values.
    "embedded/guide-page-app-snippet.json": [("BK203", "/scopes/0"), ("BK219", "/page")],
    "embedded/cli-test-fixture-incomplete.json": [("BK101", ""), ("BK101", ""), ("BK101", ""), ("BK216", "")],
    "embedded/readme-placeholder-values.json": [("BK104", "/blockId"), ("BK104", "/version")],
    # Other formats named block.manifest.json: each lacks the manifest's required keys and an iframe;
    # the CRM descriptor's repository is an object; the component's "type" is not "block"; the CMS
    # block's category is not one of ours. (The CMS and component files have a "name".)
    "foreign/crm-block-descriptor.json": [
        ("BK101", ""), ("BK101", ""), ("BK101", ""), ("BK101", ""), ("BK216", ""), ("BK102", "/repository")],
    "foreign/ui-component-block.json": [("BK101", ""), ("BK101", ""), ("BK101", ""), ("BK216", ""), ("BK103", "/type")],
    "foreign/cms-block-definition.json": [
        ("BK101", ""), ("BK101", ""), ("BK101", ""), ("BK101", ""), ("BK216", ""), ("BK103", "/category")],
}


def test_every_manifest_of_our_corpus_has_a_verdict() -> None:
    files = {path.relative_to(OWN_CORPUS).as_posix() for path in corpus_files(OWN_CORPUS)}
    assert files == set(OWN_VERDICTS)


@pytest.mark.parametrize("relative", sorted(OWN_VERDICTS))
def test_own_corpus_verdicts(relative: str) -> None:
    assert Counter(findings(relative, root=OWN_CORPUS)) == Counter(OWN_VERDICTS[relative])


def test_the_context_changes_the_verdict_on_our_corpus() -> None:
    def own(relative: str, context: Context) -> list[tuple[str, str]]:
        return findings(relative, context, root=OWN_CORPUS)

    # verified allows allow-popups; allow-popups-to-escape-sandbox stays refused at every tier.
    report = blockkit.validate_file(OWN_CORPUS / "manifests/stale-targets-priority.json", Context(tier="verified"))
    assert sorted((f.code, "escape" in f.message) for f in report.findings) == [("BK110", False), ("BK214", True)]
    # at submit only blockId, version, name and the sensitive-scope rule speak.
    assert own("manifests/sensitive-scopes-unjustified.json", Context(stage="submit")) == \
        OWN_VERDICTS["manifests/sensitive-scopes-unjustified.json"]
    assert Counter(own("manifests/malformed-strings.json", Context(stage="submit"))) == Counter(
        [("BK104", "/blockId"), ("BK104", "/version"), ("BK105", "/name")])
    # a grant without the collections scopes refuses them.
    grant = frozenset({"user:read:self", "social:tip:self", "posts:write:self", "apps:storage:shared:read",
                       "apps:storage:shared:write"})
    got = own("manifests/sensitive-scopes-unjustified.json", Context(granted_scopes=grant))
    assert [p for c, p in got if c == "BK205"] == ["/scopes/1", "/scopes/2"]

"""The canonical schema and the schema layer."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

import blockkit
from blockkit import platform
from blockkit.resources import schema_path
from blockkit.resources import schema_identity
from blockkit.schema import load_schema, registry, validator
from tests.conftest import codes

SCHEMA = json.loads(schema_path().read_text())


def test_schema_is_valid_draft_2020_12() -> None:
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert SCHEMA["$id"] == platform.SCHEMA_ID
    Draft202012Validator.check_schema(SCHEMA)


def test_schema_is_served_by_the_registry_under_its_id_without_fetching() -> None:
    from referencing.exceptions import Unresolvable

    resolver = registry().resolver()
    assert resolver.lookup(platform.SCHEMA_ID).contents is load_schema()
    assert resolver.lookup(platform.SCHEMA_ID + "#/properties/blockId").contents["maxLength"] == 40
    with pytest.raises(Unresolvable):  # anything else is unknown, not fetched
        resolver.lookup("https://example.com/other.json")


def test_schema_agrees_with_the_platform_tables() -> None:
    props = SCHEMA["properties"]
    assert props["scopes"]["items"]["enum"] == list(platform.SCOPES)
    assert len(platform.SCOPES) == 18
    assert props["contentRating"]["enum"] == list(platform.CONTENT_RATINGS)
    assert props["category"]["enum"] == list(platform.CATEGORIES)
    assert props["renderMode"]["enum"] == list(platform.RENDER_MODES)
    assert props["auth"]["enum"] == list(platform.AUTH_MODES)
    assert props["goods"]["items"]["properties"]["kind"]["enum"] == list(platform.GOOD_KINDS)
    assert props["goods"]["maxItems"] == platform.LIMITS.goods_max
    assert props["targets"]["maxItems"] == platform.LIMITS.targets_max
    assert props["tagline"]["maxLength"] == platform.LIMITS.tagline_max
    iframe = props["iframe"]["properties"]
    assert iframe["minHeight"]["minimum"] == platform.LIMITS.iframe_height_min
    assert iframe["maxHeight"]["maximum"] == platform.LIMITS.iframe_height_max


def test_the_validator_is_built_once() -> None:
    assert validator() is validator()


def test_schema_identity_has_the_file_hash() -> None:
    import hashlib

    identity = schema_identity()
    assert identity == {"id": platform.SCHEMA_ID, "sha256": hashlib.sha256(schema_path().read_bytes()).hexdigest()}


def test_valid_manifest_has_no_findings(manifest) -> None:
    assert blockkit.validate(manifest).findings == []


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("1.0.0", True), ("10.20.30-rc.1", True), ("1.0.0-alpha-1", True),
        ("1.0.0\n", False),  # ECMA $ does not match before a trailing newline
        ("١.٠.٠", False),  # ECMA \d is ASCII only
        ("1.0", False), ("1.0.0-", False), ("1.0.0+build", False), (" 1.0.0", False),
    ],
)
def test_version_pattern_has_ecma_semantics(manifest, value: str, ok: bool) -> None:
    manifest["version"] = value
    assert ("BK104" not in codes(blockkit.validate(manifest))) is ok


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("abc", []), ("a" * 40, []), ("a-1", []),
        ("ab", ["BK105"]), ("a" * 41, ["BK105"]),
        ("demo-block\n", ["BK104"]), ("-abc", ["BK104"]), ("abc-", ["BK104"]), ("Abc", ["BK104"]),
        ("1abc", ["BK104"]), ("a_bc", ["BK104"]),
    ],
)
def test_block_id_bounds(manifest, value: str, expected: list[str]) -> None:
    manifest["blockId"] = value
    found = [c for c in codes(blockkit.validate(manifest)) if c.startswith("BK1")]
    assert found == expected


@pytest.mark.parametrize(
    ("value", "ok"),
    [("dist", True), ("build/out", True), ("..\n", True), ("a..b", True), (".dist", True),
     ("/dist", False), ("../dist", False), ("a/../b", False), ("..", False), ("a\\b", False),
     ("C:dist", False), ("di\u0000st", False), ("", False), ("a" * 256, True), ("a" * 257, False)],
)
def test_output_dir_must_be_relative(manifest, value: str, ok: bool) -> None:
    manifest.update(buildCommand="npm run build", outputDir=value)
    assert (not any(c.startswith("BK1") for c in codes(blockkit.validate(manifest)))) is ok


@pytest.mark.parametrize(
    ("value", "ok"),
    [("npm run build", True), ("pnpm run build:prod", True), ("yarn run b_1-x", True), ("vite build", True),
     ("npx vite build", True), ("npm build", False), ("npm run", False), ("npm run build && rm -rf /", False),
     ("npm run build\n", False), ("make", False)],
)
def test_build_command_forms(manifest, value: str, ok: bool) -> None:
    manifest.update(buildCommand=value, outputDir="dist")
    assert ("BK104" not in codes(blockkit.validate(manifest))) is ok


def test_build_command_requires_output_dir(manifest) -> None:
    manifest["buildCommand"] = "npm run build"
    report = blockkit.validate(manifest)
    assert codes(report) == ["BK109"]
    assert report.findings[0].pointer == "/buildCommand"


@pytest.mark.parametrize("key", ["trustTier"])
def test_server_owned_top_level_key(manifest, key: str) -> None:
    manifest[key] = "verified"
    report = blockkit.validate(manifest)
    assert codes(report) == ["BK110"]
    assert "server-owned" in report.findings[0].message


def test_iframe_src_is_server_owned(manifest) -> None:
    manifest["iframe"]["src"] = "https://x.civit.ai"
    assert codes(blockkit.validate(manifest)) == ["BK110"]


@pytest.mark.parametrize("where", ["iframe", "page"])
def test_closed_objects_reject_unknown_keys(manifest, where: str) -> None:
    manifest[where]["extra"] = 1
    report = blockkit.validate(manifest)
    assert codes(report) == ["BK106"]
    assert report.findings[0].pointer == f"/{where}/extra"


def test_goods_entry_is_closed_and_typos_get_suggestions(manifest) -> None:
    manifest["scopes"].append("goods:purchase:self")
    manifest["scopeJustifications"] = {"goods:purchase:self": "sells stickers"}
    manifest["goods"] = [{"id": "pack", "title": "Pack", "priceBuzz": 10, "prize": 1}]
    report = blockkit.validate(manifest)
    unknown = [f for f in report.findings if f.code == "BK106"]
    assert [f.pointer for f in unknown] == ["/goods/0/prize"]
    assert "priceBuzz" in (unknown[0].hint or "")


@pytest.mark.parametrize(("height", "ok"), [(40, True), (4000, True), (39, False), (4001, False)])
def test_iframe_height_bounds(manifest, height: int, ok: bool) -> None:
    manifest["iframe"]["minHeight"] = height
    manifest["iframe"]["maxHeight"] = 4000
    assert ("BK107" not in codes(blockkit.validate(manifest))) is ok


@pytest.mark.parametrize(("price", "ok"), [(2, True), (50000, True), (1, False), (50001, False), (2.5, False)])
def test_good_price_bounds(manifest, price: float, ok: bool) -> None:
    manifest["scopes"].append("goods:purchase:self")
    manifest["scopeJustifications"] = {"goods:purchase:self": "sells stickers"}
    manifest["goods"] = [{"id": "pack", "title": "Pack", "priceBuzz": price}]
    assert (not any(c.startswith("BK1") for c in codes(blockkit.validate(manifest)))) is ok


def test_unknown_and_malformed_scopes(manifest) -> None:
    manifest["scopes"] = ["user:read", "User Read"]
    report = blockkit.validate(manifest)
    assert [(f.code, f.pointer) for f in report.findings] == [("BK103", "/scopes/0"), ("BK103", "/scopes/1")]
    assert report.findings[0].message.startswith("unknown scope") and report.findings[0].hint == 'did you mean "user:read:self"?'
    assert report.findings[1].message.startswith("malformed scope")


def test_scope_justification_key_must_be_a_scope(manifest) -> None:
    manifest["scopeJustifications"] = {"ai:write": "why"}
    report = blockkit.validate(manifest)
    assert [(f.code, f.pointer) for f in report.findings if f.layer == "schema"] == [("BK112", "/scopeJustifications/ai:write")]


def test_missing_required_key_is_reported_at_its_parent(manifest) -> None:
    del manifest["name"]
    report = blockkit.validate(manifest)
    (finding,) = report.findings
    assert (finding.code, finding.pointer, finding.line, finding.column) == ("BK101", "", 1, 1)


def test_wrong_type_hint_for_quoted_number(manifest) -> None:
    manifest["iframe"]["minHeight"] = "600"
    (finding,) = blockkit.validate(manifest).findings
    assert finding.code == "BK102" and "600" in (finding.hint or "")


@pytest.mark.parametrize("value", ["app", "", 1, None, "Block", "block "])
def test_type_is_block_or_absent(manifest, value) -> None:
    # The spec: "optional; only value `block`". The platform's validator refuses anything else.
    assert not blockkit.validate(manifest).findings
    manifest["type"] = "block"
    assert not blockkit.validate(manifest).findings
    manifest["type"] = value
    (finding,) = blockkit.validate(manifest).findings
    assert (finding.code, finding.layer, finding.severity, finding.pointer) == ("BK103", "schema", "error", "/type")
    assert finding.message.endswith('the only allowed value is "block"')
    assert finding.hint in ('did you mean "block"?',
                            'write "type": "block", or remove the key: the platform does nothing with it')
    assert_engines_agree(dict(manifest))


def test_tagline_needs_non_whitespace_in_js_terms(manifest) -> None:
    manifest["tagline"] = "\u3000\u00a0 "
    assert "BK104" in codes(blockkit.validate(manifest))
    manifest["tagline"] = "\u0085"  # not whitespace for JavaScript
    assert "BK104" not in codes(blockkit.validate(manifest))


def test_stage_submit_runs_only_submit_checks(manifest) -> None:
    manifest["iframe"]["minHeight"] = 1
    manifest["version"] = "1"
    submit = blockkit.validate(manifest, blockkit.Context(stage="submit"))
    assert codes(submit) == ["BK104"]
    assert sorted(codes(blockkit.validate(manifest))) == ["BK104", "BK107"]


# --- the two engines agree --------------------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from blockkit.schema import passes_fast, reference_hits, schema_hits  # noqa: E402


def _hit_set(hits) -> set:
    return {(code, hit.pointer, hit.message, hit.at, stage) for code, hit, stage in hits}


def assert_engines_agree(document) -> None:
    reference = _hit_set(reference_hits(document))
    assert passes_fast(document) == (not reference)
    assert _hit_set(schema_hits(document)) == reference


def test_engines_agree_on_every_corpus_manifest(corpus) -> None:
    checked = 0
    for path in corpus:
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        assert_engines_agree(document)
        checked += 1
    assert checked > len(corpus) // 2


_scalars = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=20) | st.sampled_from(
    ["1.0.0", "1.0.0\n", "١.٠.٠", "\u0085", "\u3000", "abc", "a-b", "../x", "C:x", "npm run build", "/", "g",
     "user:read:self", "goods:purchase:self", "app_unlock", "https://github.com/a/b"])
_values = st.recursive(_scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(
    st.sampled_from(["minHeight", "maxHeight", "sandbox", "src", "path", "title", "id", "priceBuzz", "kind",
                     "slotId", "x", "ai:write:budgeted", "bad"]), c, max_size=5), max_leaves=12)
_docs = st.dictionaries(st.sampled_from(list(SCHEMA["properties"]) + ["extra"]), _values, max_size=10)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_docs)
def test_engines_agree_on_generated_manifests(document) -> None:
    assert_engines_agree(document)


# --- hostile strings and numbers ----------------------------------------------------------


def test_a_lone_surrogate_in_a_patterned_string_is_judged_not_crashed_on() -> None:
    # JSON allows "\ud800"; the UTF-8 regex engine cannot take it, so it used to raise.
    text = json.dumps(dict(_sample(), blockId="\ud800abc", tagline="\udfff", version="1.0.0-\ud800"))
    report = blockkit.validate(text)
    assert sorted((f.code, f.pointer) for f in report.findings) == [("BK104", "/blockId"), ("BK104", "/version")]
    assert report.findings[0].message == 'blockId "\\ud800abc" does not have the required form'


def test_a_lone_surrogate_is_one_non_space_character_to_every_pattern() -> None:
    # Under the "u" flag a lone surrogate is one code point: not whitespace, not a letter.
    report = blockkit.validate(json.dumps(dict(_sample(), tagline="\ud800", outputDir="..\ud800",
                                               buildCommand="npm run build")))
    assert report.findings == []


def test_a_number_beyond_the_double_range_is_infinity_as_in_javascript() -> None:
    # JSON.parse reads both spellings as Infinity, which is not a whole number.
    for literal in ("1e400", "9" * 400, "9" * 5000):
        text = json.dumps(dict(_sample(), page={"path": "/", "title": "T", "buzzBudgetPerGen": 7}))
        text = text.replace('"buzzBudgetPerGen": 7', '"buzzBudgetPerGen": ' + literal)
        (finding,) = blockkit.validate(text).findings
        assert (finding.code, finding.pointer) == ("BK102", "/page/buzzBudgetPerGen"), literal
        assert "Infinity" in finding.message and "Infinity" in (finding.hint or "")


def test_values_in_messages_show_invisible_characters_as_escapes() -> None:
    report = blockkit.validate(dict(_sample(), contentRating="g\u200b", version="1.0.0\u0085",
                                    page={"path": "/", "title": "T", "ic\u00a0on": "x"}))
    messages = {f.pointer: f.message for f in report.findings}
    assert messages["/contentRating"].startswith('contentRating is "g\\u200b", which is not one of')
    assert messages["/version"] == 'version "1.0.0\\u0085" does not have the required form'
    assert messages["/page/ic\u00a0on"] == 'unknown key "ic\\u00a0on" in page'
    assert all(f.message.isprintable() for f in report.findings)


def test_paths_in_messages_quote_keys_that_are_not_plain() -> None:
    from blockkit.schema import human_path

    assert human_path("/goods/0/id") == "goods[0].id"
    assert human_path("/scopeJustifications/buzz:read:self") == "scopeJustifications.buzz:read:self"
    assert human_path("/scopeJustifications/a b\u0085") == 'scopeJustifications["a b\\u0085"]'
    assert human_path("/x/") == 'x[""]'


def test_at_submit_only_blockid_version_and_name_must_be_present() -> None:
    # PLATFORM.md §1: at upload the platform checks blockId, version and name; the rest waits for approval.
    document = _sample()
    for key in ("contentRating", "scopes", "blockId"):
        del document[key]
    document["buildCommand"] = "npm run build"  # without outputDir: BK109, an approval-time rule
    submit = blockkit.validate(document, blockkit.Context(stage="submit"))
    assert [(f.code, f.message) for f in submit.findings] == [
        ("BK101", 'the manifest is missing required key "blockId"')]
    assert sorted(codes(blockkit.validate(document))) == ["BK101", "BK101", "BK101", "BK109"]


def _sample() -> dict:
    from sample_manifests import PAGE_BLOCK

    return json.loads(json.dumps(PAGE_BLOCK))


def test_a_length_message_counts_one_character_in_the_singular() -> None:
    import blockkit

    report = blockkit.validate({"blockId": "x", "version": "1.0.0", "name": "n", "contentRating": "g", "scopes": []})
    messages = [f.message for f in report.findings if f.code == "BK105"]
    assert messages == ["blockId is 1 character long; at least 3 are required"]


# --- unknown scopeJustifications keys (issue 14, row 1) -------------------------------------------


def _with_unknown_justifications(manifest: dict, count: int) -> dict:
    manifest = dict(manifest)
    manifest["scopeJustifications"] = {f"user:read:sel{i}": "y" for i in range(count)}
    return manifest


def test_each_unknown_scope_key_is_named_once_not_once_per_error(manifest) -> None:
    # jsonschema-rs reports the object once per bad key; going through every key for every
    # report was N² errors (and N² difflib runs): 300 keys took 46 s.
    from blockkit.prune import prune
    from blockkit.schema import _fast_errors, load_schema

    document = _with_unknown_justifications(manifest, 90)
    errors = _fast_errors(document, prune(document, load_schema()))
    assert len([e for e in errors if "propertyNames" in e.relative_schema_path]) == 90


@pytest.fixture
def close_match_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The words difflib.get_close_matches is asked about, in order, while the test runs."""
    import difflib

    calls: list[str] = []
    real = difflib.get_close_matches

    def counting(word: str, *args: object, **kwargs: object) -> list[str]:
        calls.append(word)
        return real(word, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(difflib, "get_close_matches", counting)
    return calls


def test_suggestions_are_computed_once_per_key_and_capped(manifest, close_match_calls: list[str]) -> None:
    from blockkit.schema import SUGGESTIONS_MAX, _closest

    calls = close_match_calls
    _closest.cache_clear()  # answers kept from other tests would hide the calls
    report = blockkit.validate(_with_unknown_justifications(manifest, 90))
    assert sorted(calls) == sorted(f"user:read:sel{i}" for i in range(90))
    assert len([f for f in report.findings if f.code == "BK112"]) == 90
    calls.clear()
    _closest.cache_clear()
    blockkit.validate(_with_unknown_justifications(manifest, 1000))
    assert 0 < len(calls) <= SUGGESTIONS_MAX


def test_difflib_answers_are_kept_across_documents_and_bounded(manifest, close_match_calls: list[str]) -> None:
    from blockkit.schema import CLOSEST_CACHED, _closest

    calls = close_match_calls
    _closest.cache_clear()
    manifest["scopes"] = ["buzz:read", "user:read:sel"]
    manifest["category"] = "tool"
    first = blockkit.validate(manifest).to_json()
    assert sorted(calls) == ["buzz:read", "tool", "user:read:sel"]
    again = blockkit.validate(manifest).to_json()
    assert again == first and len(calls) == 3  # the same answers, without difflib
    hints = [d["hint"] for d in first["files"][0]["diagnostics"] if d["code"] == "BK103"]
    assert hints == ['did you mean "buzz:read:self"?', 'did you mean "user:read:self"?', None]
    assert _closest.cache_info().maxsize == CLOSEST_CACHED


def test_a_key_too_long_to_be_a_typo_gets_no_difflib_run(manifest, monkeypatch: pytest.MonkeyPatch) -> None:
    import difflib

    monkeypatch.setattr(difflib, "get_close_matches", lambda *a, **k: pytest.fail("difflib ran"))
    manifest["iframe"]["k" * 100_000] = 1
    finding = next(f for f in blockkit.validate(manifest).findings if f.code == "BK106")
    assert finding.hint and finding.hint.startswith("allowed keys:")
    assert finding.message == f'unknown key "{"k" * 78}… in iframe'


def test_kept_answers_do_not_mix_options_that_compare_equal() -> None:
    # 1 == True and (1, "on") == (True, "on"): a cache keyed on the options must still answer
    # from the strings alone, which are the same in both.
    from blockkit.schema import _suggest

    assert _suggest("of", [1, "on", "off"]) == _suggest("of", [True, "on", "off"]) == 'did you mean "off"?'
    assert _suggest("zzz", [1, True]) is None and _suggest("x", [{"a": 1}, "y"]) is None


def test_human_paths_of_long_pointers_are_worked_out_each_time_not_kept() -> None:
    from blockkit.schema import CACHED_POINTER_MAX, _cached_human_path, human_path

    _cached_human_path.cache_clear()
    assert human_path("/goods/0/id") == "goods[0].id"
    long = "/iframe/" + "k" * CACHED_POINTER_MAX
    assert human_path(long) == "iframe." + "k" * 79 + "…"
    assert _cached_human_path.cache_info().currsize == 1

"""Guards (blockkit.rules.guard): a manifest that passes a rule's guard is one the rule finds nothing in.

The engine does not call a check whose guard the manifest passes, so an unsound guard
would lose findings. Each guard is held to its claim, in a dozen contexts, on both
corpora, every JSON file of the tests, the sample manifests and generated manifests
aimed at each rule's inputs (lengths around the caps, astral characters, every kind of
JavaScript whitespace and its lookalikes, every sandbox token and scope, odd types).
And guards are not vacuous: the clean real manifests pass them all.
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from blockkit.context import Context
from blockkit.engine import _checks, _run_rules
from blockkit.jsstr import JS_WHITESPACE
from blockkit.platform import (
    MODEL_SLOTS,
    PAGE_SLOT,
    RENDER_MODES,
    SANDBOX_TOKENS_BY_TIER,
    SCOPES,
    TRUST_TIERS,
)
from blockkit.rules.base import RuleContext
from blockkit.rules.guard import Plan, build_plan, compile_schema, guard_for
from sample_manifests import PAGE_BLOCK
from tests.conftest import OWN_CORPUS, SHARED_CORPUS, corpus_documents, corpus_files
from tests.rules.conftest import VALID

REPO = Path(__file__).resolve().parents[2]
# The real corpus: beside the checkout (CI), or where this machine keeps it for worktrees.
REAL_CORPUS = next((root for root in (SHARED_CORPUS, Path("/work/shared/corpus")) if corpus_files(root)), SHARED_CORPUS)
# A schema cannot compare two goods' ids: BK208's guard clears a single good only.
PARTIAL_GUARDS = {"BK208"}

CONTEXTS = [
    Context(),
    Context(stage="submit"),
    Context(stage="approve"),
    Context(tier="verified"),
    Context(tier="internal"),
    Context(tier="internal", stage="submit"),
    Context(granted_scopes=frozenset()),
    Context(granted_scopes=frozenset({"user:read:self", "ai:write:budgeted", "apps:storage:read"})),
    Context(granted_scopes=frozenset(SCOPES)),
    Context(allowed_origins=("https://example.com", "https://CDN.example.com:443/", "https://cdn.example.com:8443",
                             "https://127.0.0.1", "not a url", "https://bücher.example")),
    Context(app_domain="example.org"),
]


def _rules() -> list[Any]:
    return [rule for layer in ("server", "lint") for rule in _checks(layer) if rule.guard is not None]


@lru_cache(maxsize=None)
def _validator(code: str, context: Context) -> Any:
    rule = next(rule for rule in _rules() if rule.code == code)
    guard = guard_for(rule, context)
    return guard if isinstance(guard, bool) or guard is None else compile_schema(guard)


def _passes(validator: Any, document: Any) -> bool:
    if validator is None or validator is False:
        return False
    if validator is True:
        return True
    try:
        return bool(validator.is_valid(document))
    except Exception:  # the engine then runs the check
        return False


def assert_sound(document: dict[str, Any], contexts: list[Context] = CONTEXTS) -> int:
    """Every check whose guard ``document`` passes finds nothing in it; returns how many passed."""
    texts = (json.dumps(document, indent=2, ensure_ascii=False), json.dumps(document))
    passed = 0
    for context in contexts:
        for rule in _rules():
            if not _passes(_validator(rule.code, context), document):
                continue
            passed += 1
            for text in texts:
                hits = list(rule.check(copy.deepcopy(document), RuleContext(context=context, text=text)))
                assert hits == [], (rule.code, context, document, hits)
    return passed


def _documents() -> Iterator[dict[str, Any]]:
    yield copy.deepcopy(PAGE_BLOCK)
    yield copy.deepcopy(VALID)
    paths = corpus_files(OWN_CORPUS) + corpus_files(REAL_CORPUS)
    paths += sorted(p for p in (REPO / "tests").rglob("*.json") if "corpus" not in p.parts)
    yield from corpus_documents(paths)


def test_the_guards_hold_on_every_known_manifest() -> None:
    passed = sum(assert_sound(document) for document in _documents())
    assert passed > 1000


def test_every_server_rule_has_a_guard() -> None:
    unguarded = [rule.code for rule in _checks("server") if rule.guard is None]
    assert unguarded == []


def test_the_guards_are_not_vacuous() -> None:
    """Each guard passes the sample manifest, and all guards pass most clean real manifests."""
    context = Context()
    for rule in _rules():
        assert _passes(_validator(rule.code, context), VALID), rule.code
    plan = build_plan(_checks("server"), context)
    for root, partial in ((REAL_CORPUS, set()), (OWN_CORPUS, PARTIAL_GUARDS)):
        clean = cleared = 0
        for path in corpus_files(root):
            text = path.read_bytes().decode("utf-8", errors="replace")
            try:
                document = json.loads(text)
            except ValueError:
                continue
            if not isinstance(document, dict):
                continue
            found = _run_rules("server", document, RuleContext(context=context, text=text), context, set())
            if not found:
                clean += 1
                cleared += {rule.code for rule in plan.rules_for(document)} <= partial
        if root == REAL_CORPUS and not clean:
            continue  # the real corpus is not on this machine
        assert clean >= 20
        assert cleared >= 0.9 * clean, (root, cleared, clean)


def _all_rules_found(document: dict[str, Any], context: Context, plan: Plan) -> list[Any]:
    text = json.dumps(document, indent=2, ensure_ascii=False)
    rule_context = RuleContext(context=context, text=text)
    found = []
    for rule in plan.every:
        try:
            found += [(rule.code, hit) for hit in rule.check(document, rule_context)]  # type: ignore[misc]
        except Exception as exc:  # pragma: no cover - the other tests fail first
            found.append((rule.code, repr(exc)))
    return found


def test_the_engine_finds_what_every_rule_finds() -> None:
    """_run_rules with guards gives the findings of calling every check (a manifest per rule that fires)."""
    documents = list(_documents())[:60] + [
        {"tagline": "\U0001F600" * 71, "iframe": {"sandbox": "allow-scripts allow-same-origin", "minHeight": 500,
                                                  "maxHeight": 100}},
        {"scopes": ["buzz:read:self", "apps:storage:read"], "auth": "oauth", "scopeJustifications": {"x:y": "z"}},
        {"goods": [{"id": "a", "kind": "app_unlock", "priceBuzz": 5001, "payload": {"x": "y" * 3000}},
                   {"id": "a", "kind": "app_unlock", "justification": " "}], "renderMode": "inline",
         "targets": [{"slotId": "app.page"}, {"slotId": "nope"}], "page": {"title": "\U0001F600" * 65}},
        {"assetBundleUrl": "https://127.0.0.1/x.js", "repository": "https://github.com/a/b/c"},
        {"assetBundleUrl": "https://elsewhere.example/x.js", "blockId": "demo", "iframe": {}},
        {"blockId": "demo", "tagline": "lone \ud800 surrogate " + "\U0001F600" * 70},
    ]
    for context in CONTEXTS:
        plan = build_plan(_checks("server"), context)
        for document in documents:
            expected = [(code, hit) for code, hit in _all_rules_found(document, context, plan)]
            text = json.dumps(document, indent=2, ensure_ascii=False)
            got = _run_rules("server", document, RuleContext(context=context, text=text), context, set())
            assert [(rule.code, hit) for rule, hit in got] == expected, (context, document)


# --- generated manifests --------------------------------------------------------------

ODD: list[Any] = [None, True, False, 0, 1, 1.0, -1, 10**20, "", "x", [], {}, [None], {"a": 1}]
odd = st.sampled_from(ODD)
SPACES = list(JS_WHITESPACE)
LOOKALIKES = ["\x85", "\u200b", "\x1c", "\x00", "\u180e", "\u2060"]
ASTRAL = ["\U0001F600", "\U00010000", "\U0010FFFF", "\U0001D49C"]
CHARS = ["a", "Z", "0", "-", ".", "_", "/", ":", "@", "\\", "%", "?", "#", '"', "\x01", "é", "中", "\uffff",
         *ASTRAL, *SPACES, *LOOKALIKES]
text = st.text(alphabet=st.sampled_from(CHARS), max_size=12)


@st.composite
def measured(draw: Any, cap: int) -> str:
    """A string about ``cap`` code points or cap/2 long, astral characters and spaces mixed in."""
    total = draw(st.sampled_from([cap // 2 - 1, cap // 2, cap // 2 + 1, cap - 1, cap, cap + 1]) | st.integers(0, cap + 2))
    total = max(total, 0)
    astral = draw(st.integers(0, total))
    wide = draw(st.sampled_from(ASTRAL))
    lead = draw(st.sampled_from(["", " ", "\u3000", "\ufeff", "\x85"]))
    trail = draw(st.sampled_from(["", " ", "\n", "\u2028"]))
    body = wide * astral + draw(st.sampled_from(["a", "é", "\uffff"])) * (total - astral)
    return (lead + body + trail)[: max(total, 1)] if draw(st.booleans()) else lead + body + trail


blank = st.sampled_from(["", " ", "\u3000", "\ufeff", "\x85", "\u200b", " \t\n", "\u00a0"])
justification = measured(500) | blank | text | odd


@st.composite
def repository_url(draw: Any) -> str:
    scheme = draw(st.sampled_from(["https://", "http://", "HTTPS://", "https:/", "", "https:///"]))
    credentials = draw(st.sampled_from(["", "", "u@", ":@", "u:p@"]))
    host = draw(st.sampled_from(["github.com", "gitlab.com", "civitai.com", "GitHub.com", "www.github.com",
                                 "github.com.evil.com", "example.com", ""]))
    port = draw(st.sampled_from(["", "", ":443", ":8080"]))
    segment = st.sampled_from(["acme", "demo-block", ".git", "-x", "_y", "a.b", "x~", ""]) | st.text(
        alphabet="aZ09._-~%\\ @\n", max_size=6)
    segments = draw(st.lists(segment, max_size=4))
    suffix = draw(st.sampled_from(["", "", "/", ".git", ".git/", "?a=b", "#x", "\n", " ", "//", "/.git"]))
    return scheme + credentials + host + port + "".join("/" + s for s in segments) + suffix


ALL_TOKENS = sorted(SANDBOX_TOKENS_BY_TIER[TRUST_TIERS[-1]])
sandbox_token = st.sampled_from([*ALL_TOKENS, "allow-popups-to-escape-sandbox", "Allow-Scripts", "allow-scripts\u200b",
                                 "allow", "allow-forms-x", "allow-scriptsallow-forms", "\x85allow-forms"])


@st.composite
def sandbox(draw: Any) -> str:
    tokens = draw(st.lists(sandbox_token, max_size=5))
    separators = st.sampled_from([" ", "  ", *SPACES, *LOOKALIKES])
    value = draw(st.sampled_from(["", " ", "\n"]))
    for token in tokens:
        value += token + draw(separators)
    return value if draw(st.booleans()) else value.rstrip(JS_WHITESPACE)


height = (st.integers(-10, 5000) | st.floats(-1e6, 1e6, allow_nan=False) | odd
          | st.sampled_from([None, 600.0, 4000.5, 10**20, "600"]))


@st.composite
def asset_url(draw: Any) -> str:
    scheme = draw(st.sampled_from(["https://", "https://", "http://", "HTTPS://", "https:\\\\", " https://",
                                   "https:///"]))
    credentials = draw(st.sampled_from(["", "", "u:p@", "@"]))
    host = draw(st.sampled_from([
        "demo-block.civit.ai", "demo-block.example.org", "Demo-Block.civit.ai", "example.com", "cdn.example.com",
        "127.0.0.1", "2130706433", "0x7f000001", "127.1", "localhost", "a.local", "metadata.google.internal",
        "x.localhost", "[::1]", "[::ffff:7f00:1]", "xn--bcher-kva.example", "bücher.example", "a..b.com", "a.com.",
        "com", "1.2.3.com", "a-.com", "x.internal.com", "x.local.com", "a.0x1", "a.b.09", "%61.com", "a.com\t"]))
    port = draw(st.sampled_from(["", "", ":443", ":8443", ":0443", ":99999", ":"]))
    path = draw(st.sampled_from(["", "/", "/bundle.js", "/a b", "/x\\y", "?q", "#f", "/%41", "/.local", "/a.local/",
                                 "\n", "/assets/app-1.2.js"]))
    return scheme + credentials + host + port + path


def _maybe_odd(strategy: Any) -> Any:
    return strategy | odd


payload_leaf = (st.none() | st.booleans() | st.integers(-10**16, 10**16) | st.floats(allow_nan=False, allow_infinity=False)
                | st.sampled_from([1e15, -1e15, 1e16, 1.2345678901234567e-300]) | st.text(st.sampled_from(CHARS), max_size=24))
payload = st.recursive(payload_leaf, lambda children: st.lists(children, max_size=4)
                       | st.dictionaries(st.text(st.sampled_from(CHARS), max_size=24), children, max_size=10),
                       max_leaves=12)
big_payload = st.builds(lambda n, unit: {f"k{i}": unit * 40 for i in range(n)}, st.integers(0, 12),
                        st.sampled_from(["a", "\x01", '"', "\U0001F600", "é"]))

good = _maybe_odd(st.fixed_dictionaries({}, optional={
    "id": st.sampled_from(["a", "b", "a ", "A"]) | measured(64) | odd,
    "kind": st.sampled_from(["good", "app_unlock", "App_unlock"]) | odd,
    "priceBuzz": st.sampled_from([4999, 5000, 5000.0, 5000.5, 5001, 50000, True, "6000", None, 10**20, -1]),
    "justification": justification,
    "payload": payload | big_payload | odd,
    "title": measured(80) | odd,
    "description": measured(500) | odd,
}))

scope = st.sampled_from([*SCOPES, "unknown:scope", "apps:storage:x", "", "Buzz:read:self"]) | odd
manifests = st.fixed_dictionaries({}, optional={
    "blockId": st.sampled_from(["demo-block", "Demo", "", "x" * 41]) | measured(40) | odd,
    "tagline": measured(140) | text | odd,
    "repository": repository_url() | text | odd,
    "buildCommand": measured(128) | odd,
    "outputDir": measured(256) | odd,
    "publicSettingsKeys": _maybe_odd(st.lists(measured(64) | odd, max_size=3)),
    "scopes": _maybe_odd(st.lists(scope, max_size=8)),
    "scopeJustifications": _maybe_odd(st.dictionaries(st.sampled_from([*SCOPES, "unknown:scope", "x"]), justification,
                                                      max_size=6)),
    "auth": st.sampled_from(["oauth", "block-token", "OAuth"]) | odd,
    "goods": _maybe_odd(st.lists(good, max_size=4)),
    "iframe": _maybe_odd(st.fixed_dictionaries({}, optional={
        "minHeight": height, "maxHeight": height, "resizable": st.booleans() | odd,
        "sandbox": sandbox() | odd})),
    "renderMode": st.sampled_from([*RENDER_MODES, "Inline", ""]) | odd,
    "page": _maybe_odd(st.fixed_dictionaries({}, optional={
        "path": measured(256) | odd, "title": measured(128) | odd, "icon": measured(128) | odd})),
    "targets": _maybe_odd(st.lists(_maybe_odd(st.fixed_dictionaries({}, optional={
        "slotId": st.sampled_from([*MODEL_SLOTS, PAGE_SLOT, "", "model.sidebar", "app.pag"]) | odd})), max_size=3)),
    "assetBundleUrl": asset_url() | text | odd,
})


# Near-valid manifests with one area changed, its values drawn together (a scope and its
# justification, two close heights, tokens of one tier): where a guard's edge is.
sensitive = sorted(s for s, info in SCOPES.items() if info.sensitive)
any_char = st.sampled_from(["a", *SPACES, *LOOKALIKES, *ASTRAL])


@st.composite
def scope_area(draw: Any) -> dict[str, Any]:
    declared = draw(st.lists(st.sampled_from([*SCOPES, "unknown:scope"]) | odd, max_size=5))
    names = [scope for scope in declared if isinstance(scope, str)]
    keys = draw(st.lists(st.sampled_from([*names, *names, *sensitive, "unknown:scope", "x"]), max_size=5))
    values = st.sampled_from(["why", *SPACES, *LOOKALIKES]) | st.builds(str.__add__, any_char, any_char) | justification
    changes: dict[str, Any] = {"scopes": declared, "scopeJustifications": {key: draw(values) for key in keys}}
    if draw(st.booleans()):
        changes["auth"] = draw(st.sampled_from(["oauth", "block-token"]) | odd)
    return changes


@st.composite
def iframe_area(draw: Any) -> dict[str, Any]:
    # Around round numbers, where guards put their steps, and anywhere.
    low = draw(st.builds(int.__add__, st.sampled_from(range(0, 4001, 100)), st.integers(-3, 3)) | st.integers(0, 4100))
    high = low + draw(st.integers(-3, 3) | st.integers(-500, 500))
    members: dict[str, Any] = {"minHeight": low, "maxHeight": high, "resizable": False}
    tier = draw(st.sampled_from(TRUST_TIERS))
    tokens = draw(st.lists(st.sampled_from(sorted(SANDBOX_TOKENS_BY_TIER[tier])) | sandbox_token, max_size=4))
    separator = draw(st.sampled_from([" ", *SPACES, *LOOKALIKES]))
    members["sandbox"] = draw(st.sampled_from(["", " ", separator])) + separator.join(tokens) + \
        draw(st.sampled_from(["", separator, "\n"]))
    for member in draw(st.lists(st.sampled_from(sorted(members)), max_size=2)):
        members.pop(member, None)
    if draw(st.booleans()):
        members[draw(st.sampled_from(sorted(members) or ["minHeight"]))] = draw(height)
    return {"iframe": members}


segment_name = st.sampled_from(["acme", "demo-block", "a", "x.y", "x_y", "0", "-x", ".x", "_x", "x-", "x.git"]) | st.text(
    alphabet="aZ09._-~%\\ @\n?#/", min_size=0, max_size=4)


@st.composite
def url_area(draw: Any) -> dict[str, Any]:
    host = draw(st.sampled_from(["github.com", "gitlab.com", "civitai.com"]) | st.sampled_from(
        ["GitHub.com", "www.github.com", "github.com.", "github.com:443", "u@github.com", "example.com"]))
    owner, repo = draw(segment_name), draw(segment_name)
    tail = draw(st.sampled_from(["", "", "/", ".git", "?a", "#b", "\n", " ", "/x", "//"]))
    origin = draw(st.sampled_from(["https://example.com", "https://cdn.example.com:8443", "https://demo-block.civit.ai",
                                   "https://demo-block.example.org", "https://127.0.0.1"]))
    trick = draw(st.sampled_from(["", "", ".evil.com", "@evil.com", "0", ":84430", ":443", "\\@x.com", "?x", "#x",
                                  "\t", "%2e"]))
    path = draw(st.sampled_from(["", "/", "/bundle.js", "/a/b.js", "/x\\y", "/%41"]))
    return {"repository": f"https://{host}/{owner}/{repo}{tail}", "assetBundleUrl": origin + trick + path}


@st.composite
def goods_area(draw: Any) -> dict[str, Any]:
    count = draw(st.integers(0, 4))
    goods = []
    for index in range(count):
        entry: dict[str, Any] = {"id": draw(st.sampled_from([f"g{index}", "g0", "dup"])), "title": "T", "priceBuzz": 10}
        if draw(st.booleans()):
            entry["kind"] = draw(st.sampled_from(["app_unlock", "good"]))
        if draw(st.booleans()):
            entry["justification"] = draw(st.sampled_from(["why", *SPACES, *LOOKALIKES]) | justification)
        if draw(st.booleans()):
            entry["priceBuzz"] = draw(st.sampled_from([4999, 5000, 5000.0, 5000.5, 5001, True]))
        if draw(st.booleans()):
            entry["payload"] = draw(payload | big_payload)
        goods.append(entry)
    scopes = ["goods:purchase:self"] if draw(st.booleans()) else []
    return {"goods": goods, "scopes": scopes, "scopeJustifications": {s: "sells" for s in scopes}}


@st.composite
def length_area(draw: Any) -> dict[str, Any]:
    where = draw(st.sampled_from(["tagline", "blockId", "repository", "buildCommand", "outputDir", "page",
                                  "publicSettingsKeys", "scopeJustifications", "goods"]))
    caps = {"tagline": 140, "blockId": 40, "repository": 200, "buildCommand": 128, "outputDir": 256}
    if where in caps:
        return {where: draw(measured(caps[where]))}
    if where == "page":
        return {"page": {"path": draw(measured(256)), "title": draw(measured(128)), "icon": draw(measured(128))}}
    if where == "publicSettingsKeys":
        return {where: [draw(measured(64))]}
    if where == "scopeJustifications":
        return {where: {"buzz:read:self": draw(measured(500))}, "scopes": ["buzz:read:self"]}
    return {"goods": [{"id": draw(measured(64)), "title": draw(measured(80)), "description": draw(measured(500)),
                       "justification": draw(measured(500))}]}


def _onto_valid(changes: dict[str, Any]) -> dict[str, Any]:
    document = copy.deepcopy(VALID)
    document.update(changes)
    return document


focused = st.one_of(scope_area(), iframe_area(), url_area(), goods_area(), length_area(),
                    st.fixed_dictionaries({"renderMode": st.sampled_from([*RENDER_MODES, "Inline"]),
                                           "targets": st.lists(st.fixed_dictionaries({"slotId": st.sampled_from(
                                               [*MODEL_SLOTS, PAGE_SLOT, "", "model.sidebar"])}), max_size=2)})
                    ).map(_onto_valid)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(focused)
def test_the_guards_hold_on_near_valid_manifests(document: dict[str, Any]) -> None:
    assert_sound(document)


@pytest.mark.parametrize("char", ["a", *SPACES, *LOOKALIKES, *ASTRAL], ids=lambda char: f"U+{ord(char):04X}")
def test_the_guards_hold_for_every_kind_of_space(char: str) -> None:
    """Blank or not, separator or not: each JavaScript space and each lookalike in each place a guard reads it."""
    tokens = sorted(SANDBOX_TOKENS_BY_TIER[TRUST_TIERS[-1]])
    sandboxes = [char, char + "allow-scripts", "allow-scripts" + char, f"allow-scripts{char}allow-forms",
                 f"allow-scripts{char}allow-same-origin", *(f"allow-forms{char}{token}" for token in tokens)]
    for value in (char, char * 2, char + "x", " " + char):
        assert_sound(_onto_valid({"scopes": sensitive, "scopeJustifications": {s: value for s in sensitive}}))
        assert_sound(_onto_valid({"goods": [{"id": "a", "justification": value},
                                            {"id": "b", "kind": "app_unlock", "justification": value}]}))
        assert_sound(_onto_valid({"tagline": value + "\U0001F600" * 70 + value}))
    for value in sandboxes:
        assert_sound(_onto_valid({"iframe": {**VALID["iframe"], "sandbox": value}}))


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(manifests)
@example({"tagline": "\U0001F600" * 71})
@example({"tagline": " " + "\U0001F600" * 70 + "a"})
@example({"repository": "https://github.com/acme/demo\n"})
@example({"iframe": {"sandbox": "allow-scripts\u00a0allow-same-origin"}})
@example({"iframe": {"sandbox": "allow-scripts\x85allow-forms"}})
@example({"iframe": {"minHeight": 605, "maxHeight": 601}})
@example({"goods": [{"kind": "app_unlock", "priceBuzz": 5000.5}]})
@example({"goods": [{"payload": {f"k{i}": "\x01" * 20 for i in range(8)}}]})
@example({"scopes": ["buzz:read:self"], "scopeJustifications": {"buzz:read:self": "\u3000"}})
@example({"scopeJustifications": {"unknown:scope": "x"}})
@example({"assetBundleUrl": "https://a.local/x.js"})
@example({"assetBundleUrl": "https://cdn.example.com:8443/x.js", "blockId": "demo"})
@example({"assetBundleUrl": "https://CDN.example.com/x.js", "blockId": "demo"})
def test_the_guards_hold_on_generated_manifests(document: dict[str, Any]) -> None:
    assert_sound(document)


@pytest.mark.parametrize("document", [
    {"tagline": "\U0001F600" * 71},
    {"repository": "https://github.com/acme/demo/tree/main"},
    {"scopes": ["buzz:read:self"]},
    {"scopes": [], "scopeJustifications": {"buzz:read:self": "x"}},
    {"scopes": ["apps:storage:read"], "auth": "oauth"},
    {"goods": [{"id": "a", "kind": "app_unlock", "priceBuzz": 9000}, {"id": "a", "kind": "app_unlock"}]},
    {"goods": [{"justification": " "}, {"payload": {"x": "y" * 3000}}, {"title": "\U0001F600" * 41}]},
    {"iframe": {"sandbox": "allow-scripts allow-same-origin allow-top-navigation", "minHeight": 500, "maxHeight": 100}},
    {"renderMode": "inline", "page": {"path": "/"}, "targets": [{"slotId": "app.page"}, {"slotId": "nope"}]},
    {"assetBundleUrl": "https://10.0.0.1/x.js"},
    {"assetBundleUrl": "https://elsewhere.example/x.js", "blockId": "demo"},
], ids=lambda document: ",".join(document))
def test_a_guard_fails_where_its_rule_finds_something(document: dict[str, Any]) -> None:
    """The other side: wherever a check finds something, its guard fails (else the engine would skip it)."""
    fired = 0
    for context in CONTEXTS:
        text = json.dumps(document, indent=2)
        for rule in _rules():
            if list(rule.check(document, RuleContext(context=context, text=text))):
                fired += 1
                assert not _passes(_validator(rule.code, context), document), (rule.code, context)
    assert fired


def _boundary_strings(cap: int) -> list[str]:
    """Strings at a UTF-16 cap: within it in code points, over it (or just at it) in units."""
    wide = "\U0001F600"
    return [wide * (cap // 2 + 1), "a" * (cap - 1) + wide, wide * (cap // 2), " " + wide * (cap // 2) + " ",
            "a" * cap, wide + "a" * (cap - 2)]


@pytest.mark.parametrize("place", ["tagline", "blockId", "repository", "buildCommand", "outputDir", "page/path",
                                   "page/title", "page/icon", "publicSettingsKeys", "scopeJustifications", "goods/id",
                                   "goods/title", "goods/description", "goods/justification"])
def test_the_guards_hold_at_every_utf16_cap(place: str) -> None:
    caps = {"tagline": 140, "blockId": 40, "repository": 200, "buildCommand": 128, "outputDir": 256, "page/path": 256,
            "page/title": 128, "page/icon": 128, "publicSettingsKeys": 64, "scopeJustifications": 500, "goods/id": 64,
            "goods/title": 80, "goods/description": 500, "goods/justification": 500}
    fired = False
    for value in _boundary_strings(caps[place]):
        if place == "publicSettingsKeys":
            changes: dict[str, Any] = {place: [value]}
        elif place == "scopeJustifications":
            changes = {place: {"buzz:read:self": value}, "scopes": ["buzz:read:self"]}
        elif "/" in place:
            outer, inner = place.split("/")
            changes = {outer: [{inner: value}] if outer == "goods" else {inner: value}}
        else:
            changes = {place: value}
        document = _onto_valid(changes)
        assert_sound(document, CONTEXTS[:2])
        text = json.dumps(document, ensure_ascii=False)
        fired = fired or any(list(rule.check(document, RuleContext(context=Context(), text=text))) for rule in _rules())
    assert fired  # the boundary strings do reach the rules


@pytest.mark.parametrize("name", [*SCOPES, *ALL_TOKENS, "allow-popups-to-escape-sandbox"])
def test_the_guards_hold_for_every_scope_and_sandbox_token(name: str) -> None:
    """Each scope alone and beside others, with oauth or not, justified or not; each token alone and in pairs."""
    for auth in ("oauth", "block-token", None):
        for justification in ({}, {name: "why"}, {name: " "}, {"unknown:scope": "why"}):
            for scopes in ([name], ["user:read:self", name], [name, name]):
                changes: dict[str, Any] = {"scopes": scopes, "scopeJustifications": justification}
                if auth is not None:
                    changes["auth"] = auth
                assert_sound(_onto_valid(changes))
    for other in ("", *ALL_TOKENS):
        assert_sound(_onto_valid({"iframe": {**VALID["iframe"], "sandbox": f"{name} {other}".strip()}}))


def _called(rules: Any, document: dict[str, Any]) -> list[str]:
    """The codes of ``rules`` the engine would call on ``document`` (Rule.keys)."""
    return [rule.code for rule in rules if rule.keys is None or not document.keys().isdisjoint(rule.keys)]


def test_rules_for_calls_exactly_the_checks_whose_guards_fail() -> None:
    """Plan.rules_for decides some guards without asking them (the guards after one all pass: that one
    fails); the checks called must be those whose guards, asked one by one, fail."""
    one_by_one = "\U0001F600" * 71
    documents = [*list(_documents())[:80],
                 {"scopes": ["buzz:read:self"]},  # BK203 alone
                 {"iframe": {"sandbox": "allow-top-navigation"}},  # BK214 alone
                 {"goods": [{"id": "a", "kind": "app_unlock"}, {"id": "b", "kind": "app_unlock"}]},  # BK208 and more
                 {"goods": [{"id": "a"}, {"id": "b"}]},  # BK208's guard alone
                 {"tagline": one_by_one},  # one of the rest alone
                 {"scopes": ["buzz:read:self"], "tagline": one_by_one},
                 {"scopes": ["buzz:read:self"], "iframe": {"sandbox": "allow-top-navigation"}},
                 {"scopes": ["buzz:read:self"], "goods": [{"id": "a"}, {"id": "b"}]},
                 {"iframe": {"sandbox": "allow-top-navigation"}, "tagline": one_by_one},
                 {"blockId": "demo", "tagline": "lone \ud800 surrogate " + one_by_one}]
    decided = 0
    for context in CONTEXTS:
        plan = build_plan(_checks("server"), context)
        plan.compile()
        each = {code: compile_schema(guard) for code, guard in plan.guards.items()}
        for document in documents:
            try:
                failing = {code for code, validator in each.items() if not validator.is_valid(document)}
            except Exception:  # what the guards cannot read runs every check
                failing = set(plan.guards)
            expected = _called((rule for rule in plan.every if rule.code in failing or rule.code not in each),
                               document)
            got = _called(plan.rules_for(document), document)
            assert got == expected, (context, document)
            decided += bool(failing)
    assert decided > 50

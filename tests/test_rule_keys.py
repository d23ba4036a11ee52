"""Rule.keys: a rule the engine skips when the manifest has none of its keys must find nothing then.

The engine does not call such a rule (blockkit.engine._run_rules), so a check that
starts reading another top-level key without declaring it would lose findings.
Each rule with keys is run here on manifests without them: both corpora, the sample
manifest, and those with every other top-level value swapped for odd ones.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Iterator

import pytest

from blockkit.context import Context
from blockkit.engine import _checks
from blockkit.rules.base import RuleContext
from sample_manifests import PAGE_BLOCK
from tests.conftest import OWN_CORPUS, SHARED_CORPUS, corpus_documents, corpus_files

CONTEXTS = [
    Context(),
    Context(stage="submit"),
    Context(tier="internal"),
    Context(granted_scopes=frozenset()),
    Context(allowed_origins=("https://example.com",)),
]
ODD_VALUES: list[Any] = [None, "", "x" * 300, 0, -1, 10**6, [], {}, [None, 1, "a:b:c", {}], {"a": {"b": []}}]


def _manifests() -> Iterator[dict[str, Any]]:
    yield copy.deepcopy(PAGE_BLOCK)
    yield from corpus_documents(corpus_files(OWN_CORPUS) + corpus_files(SHARED_CORPUS))


def _keyed_rules() -> list[Any]:
    rules = [rule for layer in ("server", "lint") for rule in _checks(layer) if rule.keys is not None]
    assert len(rules) >= 20  # the server rules declare theirs
    return rules


@pytest.mark.parametrize("rule", _keyed_rules(), ids=lambda rule: rule.code)
def test_a_rule_without_its_keys_finds_nothing(rule: Any) -> None:
    checked = 0
    for number, manifest in enumerate(_manifests()):
        bare = {key: value for key, value in manifest.items() if key not in rule.keys}
        variants = [bare]
        if number < 12:  # odd values under every other key, on a few manifests (the test stays quick)
            for key in bare:
                for odd in ODD_VALUES:
                    variants.append({**bare, key: odd})
        for document in variants:
            text = json.dumps(document, indent=2)
            for context in CONTEXTS:
                hits = list(rule.check(document, RuleContext(context=context, text=text)))
                assert hits == [], (rule.code, document)
                checked += 1
    assert checked > 100


def test_the_keys_are_what_the_rules_read() -> None:
    """Each rule with keys does find something when its key is there (the claim is not vacuous)."""
    found = set()
    samples: list[dict[str, Any]] = [
        {"tagline": "\U0001F600" * 71},
        {"repository": "https://github.com/a"},
        {"scopes": ["buzz:read:self"]},
        {"scopes": [], "scopeJustifications": {"buzz:read:self": "x"}},
        {"auth": "oauth", "scopes": ["apps:storage:read"]},
        {"goods": [{"id": "a", "kind": "app_unlock", "priceBuzz": 10**9, "justification": " ",
                    "payload": {"x": "y" * 5000}}, {"id": "a", "kind": "app_unlock"}, {"id": "b", "justification": " "}]},
        {"iframe": {"sandbox": "allow-scripts allow-same-origin allow-top-navigation", "minHeight": 500,
                    "maxHeight": 100}},
        {"renderMode": "inline"},
        {"page": {"path": "/", "title": "x"}},
        {"targets": [{"slotId": "app.page"}, {"slotId": "nope"}]},
        {"assetBundleUrl": "https://10.0.0.1/x.js"},
        {"assetBundleUrl": "https://elsewhere.example/x.js", "blockId": "demo"},
        {"assetBundleUrl": "https://user:pw@cdn.demo.localhost/x.js"},
        {"settings": {"evil": {"type": "string", "pattern": "(a+)+$"}, "broken": {"pattern": "(", "max_length": 9}}},
    ]
    for rule in _keyed_rules():
        for sample in samples:
            if not rule.keys.isdisjoint(sample):
                context = Context(granted_scopes=frozenset()) if rule.code == "BK205" else Context()
                if list(rule.check(sample, RuleContext(context=context, text=json.dumps(sample)))):
                    found.add(rule.code)
    assert found == {rule.code for rule in _keyed_rules()}

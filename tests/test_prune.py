"""Pruning long lists and objects before the schema layer explains them (issue 14, row 4)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

import blockkit.prune as prune_module
from blockkit.prune import prune
from blockkit.schema import _fast_errors, _to_hits, load_schema, schema_hits
from sample_manifests import PAGE_BLOCK

LIMIT = prune_module.ITEMS_MAX

GOOD = {"id": "g", "title": "Good", "priceBuzz": 10}

# Every list or object whose items the schema constrains, with an item that fails there.
LONG = {
    "scopes": lambda n: ["x"] * n,
    "publicSettingsKeys": lambda n: [0] * n,
    "goods": lambda n: [{}] * n,
    "targets": lambda n: [{"slotId": 1}] * n,
    "scopeJustifications": lambda n: {f"bad:{i}": 0 for i in range(n)},
    "iframe": lambda n: {f"k{i}": 0 for i in range(n)},
    "page": lambda n: {f"k{i}": 0 for i in range(n)},
}


def _doc(**changes: Any) -> dict[str, Any]:
    doc = copy.deepcopy(PAGE_BLOCK)
    doc.update(changes)
    return doc


def _size(value: Any) -> int:
    return len(value) if isinstance(value, (list, dict)) else 0


def test_a_real_manifest_is_not_copied() -> None:
    doc = _doc(goods=[dict(GOOD, id=f"g{i}") for i in range(32)])
    pruned = prune(doc, load_schema())
    assert pruned.document is doc and not pruned.tails and not pruned.indices


@pytest.mark.parametrize("key", sorted(LONG))
def test_every_constrained_container_is_pruned_and_its_tail_counted(key: str) -> None:
    # The schema uses only keywords pruning understands on the way to each of them: if it
    # grows one (allOf, $ref, ...), this fails instead of the validator quietly slowing down.
    doc = _doc(**{key: LONG[key](5 * LIMIT)})
    pruned = prune(doc, load_schema())
    assert _size(pruned.document[key]) <= LIMIT + len(load_schema()["properties"].get(key, {}).get("properties", {}))
    (tail,) = pruned.tails
    assert tail.path == [key] and tail.count == 4 * LIMIT and tail.limit == LIMIT


def test_a_good_with_many_unknown_keys_is_pruned_inside_the_goods_list() -> None:
    doc = _doc(goods=[dict(GOOD, **{f"k{i}": 0 for i in range(3 * LIMIT)})])
    pruned = prune(doc, load_schema())
    assert len(pruned.document["goods"][0]) == LIMIT + 3  # the named members stay
    assert [(t.path, t.count) for t in pruned.tails] == [(["goods", 0], 2 * LIMIT)]


def test_a_failure_at_the_end_of_a_long_valid_list_is_still_explained() -> None:
    doc = _doc(scopes=["user:read:self"] * (3 * LIMIT) + ["nope"])
    pruned = prune(doc, load_schema())
    assert not pruned.tails
    assert pruned.original_path(["scopes", LIMIT]) == ["scopes", 3 * LIMIT]
    hits = [hit for code, hit, _ in schema_hits(doc) if code == "BK103"]
    assert [hit.pointer for hit in hits] == [f"/scopes/{3 * LIMIT}"]


def test_length_limits_fire_and_count_the_whole_list() -> None:
    doc = _doc(goods=[dict(GOOD, id=f"g{i}") for i in range(5 * LIMIT)])
    hits = [hit for code, hit, _ in schema_hits(doc) if code == "BK108"]
    assert [hit.message for hit in hits] == [f"goods has {5 * LIMIT} items; at most 32 are allowed"]


def test_named_members_stay_after_many_unknown_ones() -> None:
    # "blockId" comes last, after more unknown keys than are kept: required must still see it.
    doc = {f"x{i}": 0 for i in range(3 * LIMIT)}
    doc.update(_doc())
    assert not [hit for code, hit, _ in schema_hits(doc) if code == "BK101"]


@pytest.mark.parametrize("seed", range(4))
def test_the_pruned_copy_explains_kept_items_exactly_as_the_whole_document(seed: int) -> None:
    import random

    rng = random.Random(seed)
    items = ["user:read:self", "x", 5, "ai:write:budgeted", "ai:write"]
    doc = _doc(scopes=[rng.choice(items) for _ in range(4 * LIMIT)],
               goods=[rng.choice([GOOD, {}, {"id": 1}, dict(GOOD, extra=1)]) for _ in range(3 * LIMIT)])
    pruned = prune(doc, load_schema())
    whole = {(code, hit.pointer, hit.message) for error in _fast_errors(doc, prune(doc, load_schema(), 10**9))
             for code, hit, _ in _to_hits(error)}
    part = {(code, hit.pointer, hit.message) for code, hit, _ in schema_hits(doc) if code != "BK010"}
    assert part <= whole
    dropped = {"/scopes/" + str(i) for i in range(4 * LIMIT)} | {"/goods/" + str(i) for i in range(3 * LIMIT)}
    kept_pointers = {pointer for _, pointer, _ in part}
    # Each kept item has every finding it has in the whole document; the rest are counted in the tails.
    for code, pointer, message in whole:
        item = "/".join(pointer.split("/")[:3])
        if item in kept_pointers or any(p.startswith(item + "/") for p in kept_pointers):
            assert (code, pointer, message) in part
    failing = {"/".join(p.split("/")[:3]) for _, p, _ in whole if "/".join(p.split("/")[:3]) in dropped}
    kept_items = {"/".join(p.split("/")[:3]) for p in kept_pointers}
    assert len(failing - kept_items) == sum(tail.count for tail in pruned.tails)


def test_what_the_fast_engine_cannot_take_is_kept_for_the_reference_engine() -> None:
    doc = _doc(scopes=["user:read:self"] * (2 * LIMIT) + ["\ud800"])
    hits = [(code, hit.pointer) for code, hit, _ in schema_hits(doc) if code != "BK010"]
    assert hits == [("BK103", f"/scopes/{2 * LIMIT}")]


def test_a_hostile_list_costs_a_bounded_number_of_schema_errors() -> None:
    doc = _doc(scopes=["x"] * 20_000, goods=[{}] * 20_000)
    pruned = prune(doc, load_schema())
    assert len(json.dumps(pruned.document)) < 5_000
    hits = list(schema_hits(doc))
    assert len({(code, hit.pointer, hit.message) for code, hit, _ in hits}) < 6 * LIMIT
    tails = {hit.pointer: hit.message for code, hit, _ in hits if code == "BK010"}
    assert tails == {
        f"/scopes/{LIMIT}": f"19,900 more items of scopes fail the schema and are not listed: only the first "
                            f"{LIMIT} that fail are; this is where the next one is",
        f"/goods/{LIMIT}": f"19,900 more items of goods fail the schema and are not listed: only the first "
                           f"{LIMIT} that fail are; this is where the next one is",
    }


def _walked(document: Any, schema: Any, limit: int) -> prune_module.Pruned:
    """prune without its shortcut: the full walk, every time."""
    result = prune_module.Pruned(document)
    result.document = prune_module._prune(document, schema, (), [], result, limit)
    return result


def _shapes(rng: Any, depth: int = 0) -> Any:
    """A random JSON value, with lists and objects of lengths around small limits."""
    kind = rng.randrange(6 if depth < 3 else 3)
    if kind == 0:
        return rng.choice(["user:read:self", "x", "g", "", "ai:write:budgeted"])
    if kind == 1:
        return rng.choice([0, 1, 40, -3, 2.5, None, True])
    if kind == 2:
        return rng.choice([GOOD, {"slotId": "s"}, {}])
    if kind == 3:
        return [_shapes(rng, depth + 1) for _ in range(rng.randrange(5))]
    keys = ["id", "title", "priceBuzz", "slotId", "minHeight", "path", "user:read:self", "k", "z"]
    return {rng.choice(keys): _shapes(rng, depth + 1) for _ in range(rng.randrange(5))}


@pytest.mark.parametrize("seed", range(3))
def test_the_shortcut_gives_what_the_full_walk_gives(seed: int, corpus: list[Any]) -> None:
    # Where no list or object is long, prune takes a light walk: it must give what the full walk
    # gives (the document itself, or the same copy), with no tail and no index.
    import random

    rng = random.Random(seed)
    schema = load_schema()
    keys = list(schema["properties"]) + ["unknownKey"]
    documents = []
    for path in corpus[:60]:
        try:
            doc = json.loads(path.read_bytes())
        except ValueError:  # the corpora hold broken files too
            continue
        if isinstance(doc, dict):
            documents.append(doc)
    assert documents
    for _ in range(150):
        doc = copy.deepcopy(rng.choice(documents) if documents and rng.random() < 0.5 else PAGE_BLOCK)
        for _ in range(rng.randrange(4)):
            doc[rng.choice(keys)] = _shapes(rng)
        documents.append(doc)
    shortcuts = walks = 0
    for doc in documents:
        for limit in (1, 2, 3, 5, LIMIT):
            fast, slow = prune(doc, schema, limit), _walked(doc, schema, limit)
            assert (fast.document is doc) == (slow.document is doc)
            assert json.dumps(fast.document) == json.dumps(slow.document)
            assert fast.tails == slow.tails
            assert sorted(fast.indices.values()) == sorted(slow.indices.values())
            if prune_module._light(doc, prune_module._plan(schema), limit) is not prune_module._LONG:
                shortcuts += 1
                assert not slow.tails and not slow.indices
            else:
                walks += 1
    assert shortcuts and walks  # both branches ran


def test_the_light_walk_replaces_what_nothing_looks_into_and_copies_only_that_way() -> None:
    doc = _doc(notes={"a": [1, 2]}, targets=[{"slotId": "s", "requiredContext": {"a": 1}}, {"slotId": "t"}])
    pruned = prune(doc, load_schema())
    assert pruned.document["notes"] is None and doc["notes"] == {"a": [1, 2]}
    assert pruned.document["targets"][0]["requiredContext"] is None
    assert pruned.document["targets"][1] is doc["targets"][1] and pruned.document["page"] is doc["page"]
    assert list(pruned.document) == list(doc)  # the order of the keys is kept
    assert prune_module._light(_doc(notes="text"), prune_module._plan(load_schema()), LIMIT) is not prune_module._LONG


# Failing manifests with lists and objects the schema never looks into (which prune replaces by null),
# odd values under them, and failures at the objects that hold them.
UNPRUNED = [
    _doc(settings={"a": [1, {"b": "\ud800"}]}, iframe={"minHeight": "600", "extra": {"x": [1]}}),
    _doc(settings=[{"x": 1}], contentRating="nope", page={"path": 1, "more": {"k": [None]}}),
    _doc(blockId="A", unknown={"scopes": ["x"]}, goods=[dict(GOOD, priceBuzz=-1, meta={"a": {}})]),
    {"settings": {"deep": [[{"a": 1}]]}, "scopes": ["x", 1], "targets": [{"slotId": "s", "extra": [1]}]},
]


@pytest.mark.parametrize("doc", UNPRUNED)
def test_a_short_text_skips_pruning_with_the_same_hits(doc: dict[str, Any]) -> None:
    """schema_hits with the text (fewer than ITEMS_MAX commas: nothing is pruned, the walk is skipped)
    gives what it gives after prune replaced the unread lists and objects by null."""
    text = json.dumps(doc, indent=2)
    assert text.count(",") < LIMIT
    assert prune(doc, load_schema()).document != doc  # prune would have changed something
    with_text = [(code, tuple(hit), stage) for code, hit, stage in schema_hits(doc, text)]
    assert with_text == [(code, tuple(hit), stage) for code, hit, stage in schema_hits(doc)]
    assert with_text


def test_a_text_with_many_commas_is_still_pruned() -> None:
    doc = _doc(scopes=["x"] * (3 * LIMIT))
    hits = list(schema_hits(doc, json.dumps(doc)))
    assert [hit.pointer for code, hit, _ in hits if code == "BK010"] == [f"/scopes/{LIMIT}"]
    assert len(hits) == LIMIT + 1

"""Bounding the schema layer's work on lists and objects far longer than any manifest has.

A schema validator reports every failing item of a list, and both engines pay for
each report (jsonschema-rs about 4-30 µs, the reference engine more). A 1 MiB file
can hold 500,000 failing items, so the schema layer validates a *pruned* copy of the
document instead: in a list or object with more than ``ITEMS_MAX`` items whose items
the schema constrains, it keeps

- the first ``ITEMS_MAX`` items, and after them the failing ones until ``ITEMS_MAX``
  items that fail are kept (so a failure at the end of a long list is still explained,
  and the verdict never changes);
- every member the schema names (``properties``, ``required``, ``dependentRequired``),
  so object-level keywords see what they would see in the whole document;
- in place of an object or list that nothing in the schema looks into (the value of an
  unknown top-level key, say), ``null``: jsonschema-rs converts every value it is given
  before it reports errors.

Each dropped item is still checked, with a validator compiled for the items' schema
(``is_valid`` only, under a microsecond), and those that fail are counted, so the
report can say how many more there are. Everything the pruned copy keeps is validated
exactly as in the whole document: the schema may use only keywords for which that
holds (``_SAFE``) on the way down to a list or object, or nothing below it is pruned.
``ITEMS_MAX`` is more than every ``maxItems`` of the schema plus one, so length
limits fire as they would. A real manifest has no list or object this long: for it,
nothing is dropped.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from blockkit.identity_cache import IdentityCache

# Longer lists and objects are pruned. Real manifests stay far below (goods <= 32,
# targets <= 16, one entry per scope); it must exceed every maxItems in the schema.
ITEMS_MAX = 100

# Keywords under which pruning a list or object keeps every other outcome the same:
# they look at one item at a time, at the named members, or at the length (kept > maxItems).
_CONTAINER = frozenset({"type", "properties", "additionalProperties", "propertyNames", "required",
                        "dependentRequired", "items", "maxItems", "minItems"})
# Keywords that do not apply to lists and objects (validators ignore them there) or only annotate.
_OTHER = frozenset({"pattern", "minLength", "maxLength", "format", "minimum", "maximum", "exclusiveMinimum",
                    "exclusiveMaximum", "multipleOf", "title", "description", "$comment", "default", "examples",
                    "deprecated", "readOnly", "writeOnly", "$schema", "$id", "$defs", "definitions"})
_SAFE = _CONTAINER | _OTHER


@dataclass
class Tail:
    """The failing items of one long list or object that were dropped: counted, not explained."""

    path: list[Any]  # the container's path in the document
    count: int  # how many dropped items fail
    first: Any  # the index or key of the first of them
    is_object: bool
    limit: int  # how many failing items were kept


@dataclass
class Pruned:
    document: Any  # the pruned copy (the document itself when nothing is long)
    tails: list[Tail] = field(default_factory=list)
    # id() of a pruned list -> the document index of each of its items (only where they differ)
    indices: dict[int, list[int]] = field(default_factory=dict)

    def original_path(self, path: list[Any]) -> list[Any]:
        """A path in the pruned copy, as a path in the document."""
        if not self.indices:
            return path
        out = []
        node = self.document
        for token in path:
            if isinstance(node, list) and isinstance(token, int):
                mapping = self.indices.get(id(node))
                out.append(mapping[token] if mapping is not None else token)
            else:
                out.append(token)
            try:
                node = node[token]
            except (KeyError, IndexError, TypeError):
                node = None
        return out


_validators: dict[tuple[Any, ...], Any] = {}
_lock = threading.Lock()


def _item_check(schema: Any, where: tuple[Any, ...]) -> Callable[[Any], bool]:
    """True when ``value`` passes ``schema`` (a subschema at ``where``); a value the fast engine
    cannot take counts as failing, so it is kept and the reference engine explains it."""
    if schema is True or schema is None:
        return lambda value: True
    if schema is False:
        return lambda value: False
    validator = _validators.get(where)
    if validator is None:
        import jsonschema_rs

        with _lock:
            validator = _validators.get(where)
            if validator is None:
                validator = _validators[where] = jsonschema_rs.Draft202012Validator(schema)
    is_valid = validator.is_valid

    def passes(value: Any) -> bool:
        try:
            return bool(is_valid(value))
        except Exception:
            return False

    return passes


def _named(schema: dict[str, Any]) -> set[str]:
    named = set(schema.get("properties", {}))
    named.update(key for key in schema.get("required", ()) if isinstance(key, str))
    for trigger, needed in schema.get("dependentRequired", {}).items():
        named.add(trigger)
        named.update(needed)
    return named


def prune(document: Any, schema: Any, limit: Optional[int] = None) -> Pruned:
    """The document with every list or object longer than ``limit`` (default ITEMS_MAX) pruned
    (see the module's docstring)."""
    limit = ITEMS_MAX if limit is None else limit
    light = _light(document, _plan(schema), limit)
    if light is not _LONG:
        return Pruned(light)  # nothing long: what _prune gives, found without its bookkeeping
    result = Pruned(document)
    result.document = _prune(document, schema, (), [], result, limit)
    return result


class _Plan:
    """What _prune does at one schema node it goes into (a dict of _SAFE keywords), read once
    from the schema, with the plans of the nodes below: None stands for a node where _prune
    leaves the value as it is (not a dict, or a keyword outside _SAFE)."""

    __slots__ = ("properties", "drops_extra", "extra", "counted", "checks_items", "items")

    def __init__(self, schema: dict[str, Any]) -> None:
        extra = schema.get("additionalProperties", True)
        items = schema.get("items")
        self.properties: dict[str, Optional[_Plan]] = {
            key: _compile(sub) for key, sub in schema.get("properties", {}).items()}
        self.drops_extra = extra is True  # an unnamed member's list or object becomes null
        self.extra = _compile(extra)  # the plan for unnamed members
        self.counted = extra is not True or schema.get("propertyNames") is not None  # a long object is pruned
        self.checks_items = items is not None and items is not True  # a long list is pruned
        self.items = _compile(items)


def _compile(schema: Any) -> Optional[_Plan]:
    if not isinstance(schema, dict) or not _SAFE.issuperset(schema):
        return None
    return _Plan(schema)


# The plan of each schema pruned (one schema in use; more are tests' throwaway schemas).
_plans: IdentityCache[Optional[_Plan]] = IdentityCache(64)


def _plan(schema: Any) -> Optional[_Plan]:
    return _plans.get(schema, _compile)


# What _light gives when it meets a list or object longer than the limit: the full walk decides.
_LONG: Any = object()


def _light(value: Any, plan: Optional[_Plan], limit: int) -> Any:
    """What _prune gives for ``value`` while no list or object it looks at is longer than
    ``limit`` (then it only replaces by null what nothing in the schema looks into, and records
    no tail and no index); _LONG as soon as one is, where _prune must run.

    It follows _prune's walk step for step, without the paths and schema locations that
    only a long list or object needs.
    """
    if plan is None:
        return value
    if isinstance(value, dict):
        if plan.counted and len(value) > limit:
            return _LONG
        properties = plan.properties
        out = None  # the copy, made at the first member that changes
        for key, item in value.items():
            if not isinstance(item, (dict, list)):
                continue  # _prune keeps every other value as it is
            if key in properties:
                inner = properties[key]
                if inner is None:
                    continue  # _light(item, None) is item
                pruned = _light(item, inner, limit)
            elif plan.drops_extra:
                pruned = None  # nothing in the schema looks inside it
            else:
                pruned = _light(item, plan.extra, limit)
            if pruned is not item:
                if pruned is _LONG:
                    return _LONG
                if out is None:
                    out = dict(value)
                out[key] = pruned
        return value if out is None else out
    if not isinstance(value, list) or not plan.checks_items:
        return value
    if len(value) > limit:
        return _LONG
    items = plan.items
    if items is None:
        return value
    copied = None
    for index, item in enumerate(value):
        if isinstance(item, (dict, list)):
            pruned = _light(item, items, limit)
            if pruned is not item:
                if pruned is _LONG:
                    return _LONG
                if copied is None:
                    copied = list(value)
                copied[index] = pruned
    return value if copied is None else copied


def _prune(value: Any, schema: Any, where: tuple[Any, ...], path: list[Any], result: Pruned, limit: int) -> Any:
    if not isinstance(value, (dict, list)) or not isinstance(schema, dict) or not _SAFE.issuperset(schema):
        return value
    if isinstance(value, dict):
        return _prune_object(value, schema, where, path, result, limit)
    items = schema.get("items")
    if items is None or items is True:
        return value  # nothing constrains the items
    keep = range(len(value))
    if len(value) > limit:
        passes = _item_check(items, where + ("items",))
        keep, count, first = _choose(((i, value[i]) for i in range(len(value))), passes, limit)
        if count:
            result.tails.append(Tail(list(path), count, first, is_object=False, limit=limit))
    changed = len(keep) != len(value)
    out = []
    for index in keep:
        item = value[index]
        pruned = _prune(item, items, where + ("items",), path + [index], result, limit)
        changed = changed or pruned is not item
        out.append(pruned)
    if not changed:
        return value
    if len(keep) and keep[-1] != len(keep) - 1:
        result.indices[id(out)] = list(keep)
    return out


def _prune_object(value: dict[str, Any], schema: dict[str, Any], where: tuple[Any, ...], path: list[Any],
                  result: Pruned, limit: int) -> dict[str, Any]:
    properties = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    names = schema.get("propertyNames")
    keys: Any = value.keys()
    if len(value) > limit and (extra is not True or names is not None):
        named = _named(schema)
        name_passes = _item_check(names, where + ("propertyNames",)) if names is not None else None
        value_passes = _item_check(extra, where + ("additionalProperties",))

        def passes(member: tuple[str, Any]) -> bool:
            return (name_passes is None or name_passes(member[0])) and value_passes(member[1])

        others = ((key, (key, item)) for key, item in value.items() if key not in named)
        kept, count, first = _choose(others, passes, limit)
        if count:
            result.tails.append(Tail(list(path), count, first, is_object=True, limit=limit))
        kept_set = set(kept)
        keys = [key for key in value if key in named or key in kept_set]
    changed = len(keys) != len(value)
    out = {}
    for key in keys:
        item = value[key]
        if key in properties:
            pruned = _prune(item, properties[key], where + ("properties", key), path + [key], result, limit)
        elif isinstance(extra, dict):
            pruned = _prune(item, extra, where + ("additionalProperties",), path + [key], result, limit)
        elif extra is True and isinstance(item, (dict, list)):
            # Nothing in the schema looks inside: left out, or the engine would convert it all (an
            # unknown key can hold most of a megabyte) just to find nothing there.
            pruned = None
        else:
            pruned = item
        changed = changed or pruned is not item
        out[key] = pruned
    return out if changed else value


def _choose(items: Any, passes: Callable[[Any], bool], limit: int) -> tuple[list[Any], int, Optional[Any]]:
    """(the tokens to keep, how many failing items were dropped, the first of those).

    Keeps the first ``limit`` items, then failing ones until ``limit`` failing items are kept.
    """
    kept: list[Any] = []
    failing = 0
    count = 0
    first = None
    for token, item in items:
        if len(kept) < limit:
            kept.append(token)
            if not passes(item):
                failing += 1
        elif not passes(item):
            if failing < limit:
                kept.append(token)
                failing += 1
            else:
                count += 1
                if first is None:
                    first = token
    return kept, count, first

"""The schema layer: the canonical Draft 2020-12 schema, with ECMA-262 regexes.

Two engines, one schema. ``jsonschema-rs`` does the everyday work: it answers
"valid?" and, when the answer is no, lists the violations, which an adapter
(``_FastError``) turns into the same errors the reference engine would give.
``jsonschema`` with ``regress`` for ECMA-262 patterns is the reference: it takes
over for any document the fast engine cannot convert (huge integers, lone
surrogates), and a differential test holds the two to the same findings.

Each validator is built once, on first use, and reused; both are immutable
after construction, so threads share them. Nothing is fetched: a
``referencing`` registry serves our schema under its ``$id``.
"""

from __future__ import annotations

import json
import math
import re
import threading
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, Iterator

from blockkit.identity_cache import IdentityCache
from blockkit.jsstr import QUOTE_MAX, cut, quote, show, without_lone_surrogates
from blockkit.platform import SCHEMA_ID, SCOPE_SHAPE, SUBMIT_CHECKED_FIELDS
from blockkit.resources import schema_path
from blockkit.rules.base import Hit, declare, pointer_join

if TYPE_CHECKING:
    from blockkit.prune import Pruned

_lock = threading.Lock()


@lru_cache(maxsize=None)
def _schema_bytes() -> bytes:
    return schema_path().read_bytes()


@lru_cache(maxsize=None)
def load_schema() -> dict[str, Any]:
    return json.loads(_schema_bytes())


@lru_cache(maxsize=512)
def ecma_regex(pattern: str) -> Any:
    import regress

    return regress.Regex(pattern, "u")


def _ecma_pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if isinstance(instance, str) and ecma_regex(pattern).find(without_lone_surrogates(instance)) is None:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def registry() -> Any:
    from referencing import Registry, Resource

    return Registry().with_resource(SCHEMA_ID, Resource.from_contents(load_schema()))


_validator: Any = None
_fast_validator: Any = None
_fast_is_valid: Any = None  # its is_valid, bound once: passes_fast runs on every manifest


def fast_validator() -> Any:
    """The jsonschema-rs validator for the yes/no fast path, built on first use."""
    global _fast_validator, _fast_is_valid
    if _fast_validator is None:
        with _lock:
            if _fast_validator is None:
                import jsonschema_rs

                built = jsonschema_rs.Draft202012Validator(load_schema())
                _fast_is_valid = built.is_valid
                _fast_validator = built
    return _fast_validator


def passes_fast(document: Any) -> bool:
    """True when the fast engine accepts ``document``; False means "ask the reference engine"."""
    try:
        return bool((_fast_is_valid or fast_validator().is_valid)(document))
    except Exception:  # values it cannot convert (huge integers, lone surrogates): let the reference decide
        return False


def validator() -> Any:
    """The one shared validator, built on first use."""
    global _validator
    if _validator is None:
        with _lock:
            if _validator is None:
                from jsonschema import Draft202012Validator, validators

                cls = validators.extend(Draft202012Validator, {"pattern": _ecma_pattern})
                _validator = cls(load_schema(), registry=registry())
    return _validator


# --- rules of the schema layer ------------------------------------------------------

_DOCS = {
    "BK101": ("missing-required-key", "A required key is missing.",
              "Reports a key that the schema requires and the manifest lacks, at the object that should hold it.",
              "The platform rejects the manifest at validation; nothing else is looked at until it is there.",
              '{"blockId": "demo", "version": "1.0.0", "name": "Demo", "scopes": []}\n(no contentRating)',
              'Add the key, e.g. "contentRating": "g".'),
    "BK102": ("wrong-type", "A value has the wrong JSON type.",
              "Reports a value whose JSON type (string, number, object, ...) is not the one the schema allows.",
              "The platform's validator rejects the manifest; a block that assumes the type misbehaves.",
              '"iframe": {"minHeight": "600"}', '"iframe": {"minHeight": 600}'),
    "BK103": ("unknown-value", "A value is not one of the allowed values.",
              "Reports an enumerated value (scope, content rating, category, render mode, auth, good kind, `type`) that the platform does not know. `type` is optional, and when present its only value is `block`.",
              "Unknown values are rejected; a misspelt scope is a capability the block will not have.",
              '"scopes": ["user:read"]', '"scopes": ["user:read:self"]'),
    "BK104": ("pattern-mismatch", "A string does not have the required form.",
              "Reports a string that fails its pattern, with ECMA-262 semantics as the platform uses: `$` does not match before a trailing newline and `\\d` is ASCII only.",
              "blockId becomes a host label and version is compared as semver: malformed values are rejected.",
              '"version": "1.0"', '"version": "1.0.0"'),
    "BK105": ("string-length", "A string is too short or too long.",
              "Reports a string outside the schema's length bounds (the schema counts code points; the server rules count UTF-16 units).",
              "The platform rejects out-of-range strings.",
              '"blockId": "ab"', '"blockId": "abc"'),
    "BK106": ("closed-object-unknown-key", "A key is not allowed here.",
              "Reports a key inside `iframe`, `page` or a goods entry that the schema does not define.",
              "These objects are closed: the platform rejects unknown keys in them.",
              '"page": {"path": "/", "title": "Demo", "subtitle": "x"}', '"page": {"path": "/", "title": "Demo"}'),
    "BK107": ("number-range", "A number is out of range.",
              "Reports a number below the minimum or above the maximum (iframe heights, prices, budgets).",
              "The platform rejects values outside the documented limits.",
              '"iframe": {"minHeight": 20}', '"iframe": {"minHeight": 40}'),
    "BK108": ("too-many-items", "A list has too many items.",
              "Reports a list longer than its limit (goods 32, targets 16, publicSettingsKeys 32).",
              "The platform rejects the manifest.",
              '"targets": [ ...17 entries... ]', "Keep at most 16 targets."),
    "BK109": ("dependent-key-missing", "A key requires another key that is missing.",
              "Reports `buildCommand` without `outputDir`.",
              "The platform cannot find the build output and rejects the manifest.",
              '"buildCommand": "npm run build"', '"buildCommand": "npm run build", "outputDir": "dist"'),
    "BK110": ("server-owned-key", "A key the server owns is set in the manifest.",
              "Reports `trustTier` and `iframe.src`, which the platform assigns itself.",
              "The trust tier is decided by review and the iframe source is stamped at build or approval; a manifest that sets either is rejected.",
              '"trustTier": "verified"', "Remove the key."),
    "BK111": ("forbidden-form", "A value has a form the platform forbids.",
              "Reports values with a forbidden shape, such as an `outputDir` that is absolute, climbs out with `..`, uses backslashes or a drive prefix.",
              "The platform builds in a sandbox and only reads output inside the project.",
              '"outputDir": "../dist"', '"outputDir": "dist"'),
    "BK112": ("unknown-scope-key", "A scopeJustifications key is not a known scope.",
              "Reports a key of `scopeJustifications` that is not a scope id.",
              "Justifications are keyed by scope; an unknown key is a typo that leaves the real scope unjustified.",
              '"scopeJustifications": {"ai:write": "..."}', '"scopeJustifications": {"ai:write:budgeted": "..."}'),
    "BK199": ("schema-violation", "The manifest violates the schema.",
              "Reports any other schema violation.",
              "The platform validates against the same schema and rejects the manifest.",
              "(varies)", "Follow the message."),
}
for _code, (_name, _summary, _what, _why, _example, _fix) in _DOCS.items():
    declare(_code, _name, layer="schema", severity="error",
            stage="submit" if _code in ("BK101", "BK102") else "approve",
            doc=f"{_summary}\n\n## What it does\n{_what}\n\n## Why it matters\n{_why}\n\n"
                f"## Example\n{_example}\n\n## Fix\n{_fix}")

_KEYWORD_CODES = {
    "required": "BK101", "type": "BK102", "enum": "BK103", "const": "BK103", "pattern": "BK104",
    "minLength": "BK105", "maxLength": "BK105", "additionalProperties": "BK106",
    "minimum": "BK107", "maximum": "BK107", "exclusiveMinimum": "BK107", "exclusiveMaximum": "BK107",
    "maxItems": "BK108", "minItems": "BK108", "dependentRequired": "BK109", "propertyNames": "BK112",
}
# Pointers whose failures the platform already reports at submit (a missing one too).
_SUBMIT_POINTERS = frozenset("/" + key for key in SUBMIT_CHECKED_FIELDS)
# Hints for a value outside its enum, by pointer, where "did you mean" has nothing close to offer.
_VALUE_HINTS = {
    # The spec calls `type` informational; the platform's validator still refuses any value but "block".
    "/type": 'write "type": "block", or remove the key: the platform does nothing with it',
}
_TYPE_NAMES = {"object": "an object", "array": "a list", "string": "a string", "integer": "a whole number",
               "number": "a number", "boolean": "true or false", "null": "null"}




def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {dict: "object", list: "list", str: "string"}.get(type(value), type(value).__name__)


def _characters(count: int) -> str:
    return f"{count} character" + ("" if count == 1 else "s")


def _show(value: Any, limit: int = 60) -> str:
    return show(value, limit)


def _suggest(value: Any, options: list[Any]) -> str | None:
    if not isinstance(value, str):
        return None
    try:
        candidates, longest = _cached_candidates(tuple(options))
    except TypeError:  # an option that is a list or an object
        candidates, longest = _candidates(options)
    # difflib's ratio is 2*matches/(len(a)+len(b)), so a value more than 7/3 times as long as every
    # candidate can never reach the 0.6 cutoff: skip the work (a hostile key can be 1 MB long).
    if not candidates or 3 * len(value) > 7 * longest:
        return None
    close = _closest(value, candidates)
    return f"did you mean {json.dumps(close)}?" if close is not None else None


def _candidates(options: Any) -> tuple[tuple[str, ...], int]:
    """The options that are strings, and the length of the longest."""
    candidates = tuple(o for o in options if isinstance(o, str))
    return candidates, max(map(len, candidates), default=0)


# Options come from the schema: a few lists, asked about once per misspelt value. (Options that
# compare equal, as 1 and True do, have the same strings in the same places: the same answer.)
_cached_candidates = lru_cache(maxsize=256)(_candidates)


# How many (value, candidates) answers of difflib are kept, across documents: the same typos come
# back file after file, and each answer costs difflib a pass over every candidate. An entry
# is small: the candidates come from the schema and the value is at most 7/3 as long as they are.
CLOSEST_CACHED = 1024


@lru_cache(maxsize=CLOSEST_CACHED)
def _closest(value: str, candidates: tuple[str, ...]) -> str | None:
    """difflib's closest candidate to ``value`` (ratio 0.6 or more), or None."""
    from difflib import get_close_matches  # only when a value is misspelt

    close = get_close_matches(value, candidates, n=1, cutoff=0.6)
    return close[0] if close else None


# At most this many suggestions are computed per document: each costs difflib a pass over
# every allowed value, and a manifest with more misspellings than this is not a typo.
SUGGESTIONS_MAX = 100


class _Suggestions:
    """``_suggest`` for one document: each (value, options) computed once, and at most SUGGESTIONS_MAX."""

    __slots__ = ("memo", "made")

    def __init__(self) -> None:
        self.memo: dict[tuple[Any, ...], str | None] = {}
        self.made = 0

    def __call__(self, value: Any, options: list[Any]) -> str | None:
        if not isinstance(value, str):
            return None
        key = (value, *options)
        if key in self.memo:
            return self.memo[key]
        if self.made >= SUGGESTIONS_MAX:
            return None
        self.made += 1
        found = self.memo[key] = _suggest(value, options)
        return found


class _FastError:
    """A jsonschema-rs error in the shape of a jsonschema one, so both map through ``_to_hits``."""

    __slots__ = ("validator", "absolute_path", "instance", "schema", "validator_value",
                 "relative_schema_path", "message", "full")

    def __init__(self, keyword: str, path: Any, instance: Any, schema: Any, schema_path: list[Any],
                 message: str, full: Any = None) -> None:
        self.validator = keyword
        self.absolute_path = path
        self.instance = instance  # in the pruned document (blockkit.prune): members to go through
        self.schema = schema
        self.validator_value = schema.get(keyword) if isinstance(schema, dict) else None
        self.relative_schema_path = schema_path
        self.message = message
        self.full = instance if full is None else full  # the whole value: what messages show and count


# Schema path -> the subschema there; one schema has a few dozen places that can fail.
_subschemas: dict[tuple[Any, ...], Any] = {}


def _subschema(path: list[Any]) -> Any:
    key = tuple(path)
    node = _subschemas.get(key)
    if node is None:
        node = load_schema()
        for token in path:
            node = node[token]
        if len(_subschemas) < 4096:  # schema paths come from the schema: this is only a guard
            _subschemas[key] = node
    return node


def _instance_at(document: Any, path: list[Any]) -> Any:
    node = document
    for token in path:
        node = node[token]
    return node


def _fast_errors(document: Any, pruned: Pruned) -> list[Any]:
    errors: list[Any] = []
    expanded: set[tuple[tuple[Any, ...], tuple[Any, ...]]] = set()
    for error in fast_validator().iter_errors(pruned.document):
        path = list(error.schema_path)
        inside = list(error.instance_path)
        # Our own objects, not the engine's copies: those lose the document's key order.
        instance = _instance_at(pruned.document, inside)
        where = pruned.original_path(inside)
        full = instance if pruned.document is document else _instance_at(document, where)
        if "propertyNames" in path:
            # jsonschema-rs reports the object once per offending key; name each of them once, as
            # jsonschema does (going through every key for every report would take N² steps).
            names_path = path[: path.index("propertyNames") + 1]
            marker = (tuple(where), tuple(names_path))
            if marker in expanded:
                continue
            expanded.add(marker)
            names = _subschema(names_path)
            allowed = names.get("enum", ())
            for key in instance if isinstance(instance, dict) else ():
                if key not in allowed:
                    errors.append(_FastError("enum", where, key, names, path, error.message))
            continue
        errors.append(_FastError(path[-1], where, instance, _subschema(path[:-1]), path, error.message, full))
    return errors


def _reference_errors(document: Any, pruned: Pruned) -> Iterator[Any]:
    for error in validator().iter_errors(pruned.document):
        if pruned.document is document:
            yield error
            continue
        where = pruned.original_path(list(error.absolute_path))
        schema_path = list(error.relative_schema_path)
        # Under propertyNames the instance is a member name, not the value at the path.
        full = None if "propertyNames" in schema_path else _instance_at(document, where)
        yield _FastError(error.validator, where, error.instance, error.schema, schema_path, error.message, full)


def schema_hits(document: Any, text: str | None = None) -> Iterator[tuple[str, Hit, str]]:
    """Yield (code, hit, stage) for every schema violation in ``document``.

    Lists and objects far longer than a manifest's are pruned first (blockkit.prune): their
    failing items past the first ITEMS_MAX that fail are counted in one BK010 hit, not explained.
    ``text``, the JSON text ``document`` was read from, when known: a text with fewer than
    ITEMS_MAX commas has no list or object of more than ITEMS_MAX items, so nothing is pruned
    and the walk that would find that out is skipped.
    """
    if passes_fast(document):
        return
    yield from failing_hits(document, text)


@lru_cache(maxsize=None)
def _prune_module() -> Any:
    """blockkit.prune, imported for the first document that fails the schema (an import
    statement run on every failing document cost about 1 us)."""
    import blockkit.prune

    return blockkit.prune


def failing_hits(document: Any, text: str | None = None) -> Iterator[tuple[str, Hit, str]]:
    """``schema_hits`` for a document ``passes_fast`` refused (the engine asks that first)."""
    prune_module = _prune_module()
    if text is not None and text.count(",") < prune_module.ITEMS_MAX:
        # (prune would still put null in place of lists and objects the schema never looks into;
        # that spares the engines converting them, and changes no error: nothing reads them.)
        pruned = prune_module.Pruned(document)
    else:
        pruned = prune_module.prune(document, load_schema())
    try:
        errors: Any = _fast_errors(document, pruned)
    except Exception:  # anything the fast engine cannot take: the reference engine explains it
        errors = list(_reference_errors(document, pruned))
    suggest = _Suggestions()
    for error in errors:
        yield from _to_hits(error, suggest)
    for tail in pruned.tails:
        container = _pointer(tail.path)
        kind = "members" if tail.is_object else "items"
        message = (f"{tail.count:,} more {kind} of {human_path(container)} fail the schema and are not listed: "
                   f"only the first {tail.limit} that fail are; this is where the next one is")
        yield "BK010", Hit(pointer_join(container, tail.first), message, at="key" if tail.is_object else "value"), \
            "approve"


def reference_hits(document: Any) -> Iterator[tuple[str, Hit, str]]:
    """The same as ``schema_hits``, from the reference engine alone (for differential tests)."""
    suggest = _Suggestions()
    for error in validator().iter_errors(document):
        yield from _to_hits(error, suggest)


def _pointer(path: Any) -> str:
    return pointer_join("", *path)


# Keys shown bare in paths; any other key is shown quoted, as ["..."].
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_$:@+-]+")


# Pointers up to this long have their human paths kept (CACHED_PATHS of them): the same few
# pointers come back in every manifest. A longer one (a hostile key) is worked out each time.
CACHED_POINTER_MAX = 200
CACHED_PATHS = 2048


def human_path(pointer: str) -> str:
    """``/goods/0/id`` -> ``goods[0].id``, for messages."""
    if len(pointer) <= CACHED_POINTER_MAX:
        return _cached_human_path(pointer)
    return _human_path(pointer)


def _human_path(pointer: str) -> str:
    if not pointer:
        return "the manifest"
    out = ""
    for token in pointer[1:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        if token.isascii() and token.isdigit():
            out += f"[{token}]"
        elif not _PLAIN_KEY.fullmatch(token):  # empty, or holds quotes, dots, spaces or invisible characters
            out += f"[{quote(token)}]"
        else:
            token = cut(token, QUOTE_MAX)  # as long as a quoted key may get
            out += f".{token}" if out else token
    return out


_cached_human_path = lru_cache(maxsize=CACHED_PATHS)(_human_path)


# An enum's list in the schema -> its options as messages show them (the schema has a handful).
_shown_options: IdentityCache[str] = IdentityCache(256)


def _options_text(owner: Any, options: list[Any]) -> str:
    """``options`` (the values of ``owner``, an enum in the schema) as messages list them."""
    return _shown_options.get(owner, lambda _: ", ".join(map(_show, options)))


def _to_hits(error: Any, suggest: Callable[[Any, list[Any]], str | None] = _suggest) -> Iterator[tuple[str, Hit, str]]:
    keyword = error.validator
    pointer = _pointer(error.absolute_path)
    stage = "submit" if pointer in _SUBMIT_POINTERS else "approve"
    where = human_path(pointer)
    if "propertyNames" in error.relative_schema_path:
        keyword = "propertyNames"
    value = error.instance
    full = getattr(error, "full", value)  # the whole list or object where value is a pruned copy
    schema = error.schema if isinstance(error.schema, dict) else {}
    if keyword == "required":
        present = value if isinstance(value, dict) else {}
        for key in error.validator_value:
            if key not in present:
                key_stage = "submit" if pointer_join(pointer, key) in _SUBMIT_POINTERS else "approve"
                yield "BK101", Hit(pointer, f"{where} is missing required key \"{key}\"", at="open",
                                   hint=f"add \"{key}\""), key_stage
        return
    if keyword == "additionalProperties":
        allowed = list(schema.get("properties", {}))
        for key in value if isinstance(value, dict) else ():
            if key not in allowed:
                suggestion = suggest(key, allowed)
                yield "BK106", Hit(pointer_join(pointer, key), f"unknown key {quote(key)} in {where}", at="key",
                                   hint=suggestion or f"allowed keys: {', '.join(allowed)}"), stage
        return
    if keyword == "propertyNames":
        key = value
        suggestion = suggest(key, list(schema.get("enum", [])))
        yield "BK112", Hit(pointer_join(pointer, key), f"{quote(key)} in {where} is not a known scope", at="key",
                           hint=suggestion or "keys must be scope ids that are also listed in \"scopes\""), stage
        return
    if keyword == "not":
        description = schema.get("description", f"{where} has a forbidden value")
        code = "BK110" if not schema.get("not") else "BK111"
        hint = "remove the key" if code == "BK110" else None
        yield code, Hit(pointer, description, at="key" if code == "BK110" else "value", hint=hint), stage
        return
    code = _KEYWORD_CODES.get(keyword, "BK199")
    if keyword == "type":
        expected = error.validator_value
        names = [expected] if isinstance(expected, str) else list(expected)
        wanted = " or ".join(_TYPE_NAMES.get(n, n) for n in names)
        message = f"{where} must be {wanted}, not {_json_type(full)} {_show(full)}"
        hint = None
        if "integer" in names and isinstance(value, str) and value.strip().lstrip("-").isdigit():
            hint = f"write the number without quotes: {value.strip()}"
        elif isinstance(value, float) and math.isinf(value):
            hint = "the number is beyond what JavaScript can hold, so the platform reads it as Infinity"
        yield code, Hit(pointer, message, hint=hint), stage
        return
    if keyword in ("enum", "const"):
        options = list(error.validator_value) if keyword == "enum" else [error.validator_value]
        if pointer.startswith("/scopes/") and isinstance(value, str):
            shape = "malformed scope" if not re.match(SCOPE_SHAPE, value) else "unknown scope"
            message = f"{shape} {_show(value)} in {where}"
        elif len(options) == 1:
            message = f"{where} is {_show(value)}; the only allowed value is {_show(options[0])}"
        else:
            listed = _options_text(error.validator_value, options)
            message = f"{where} is {_show(value)}, which is not one of: {listed}"
        yield code, Hit(pointer, message, hint=suggest(value, options) or _VALUE_HINTS.get(pointer)), stage
        return
    if keyword == "pattern":
        description = schema.get("description")
        message = f"{where} {_show(value)} does not have the required form"
        if isinstance(value, str) and value != value.rstrip("\n\r") and value.rstrip("\n\r"):
            hint = "remove the trailing line break"
        else:
            hint = description or f"it must match the pattern {error.validator_value}"
        yield code, Hit(pointer, message, hint=hint), stage
        return
    if keyword in ("minLength", "maxLength"):
        length = len(value) if isinstance(value, str) else 0
        bound = error.validator_value
        if keyword == "maxLength":
            message = f"{where} is {_characters(length)} long; at most {bound} are allowed"
        elif bound == 1:
            message = f"{where} must not be empty"
        else:
            message = f"{where} is {_characters(length)} long; at least {bound} are required"
        yield code, Hit(pointer, message), stage
        return
    if keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        relation = {"minimum": "at least", "maximum": "at most", "exclusiveMinimum": "greater than",
                    "exclusiveMaximum": "less than"}[keyword]
        yield code, Hit(pointer, f"{where} is {_show(value)}; it must be {relation} {error.validator_value}"), stage
        return
    if keyword in ("maxItems", "minItems"):
        count = len(full) if isinstance(full, list) else 0
        relation = "at most" if keyword == "maxItems" else "at least"
        yield code, Hit(pointer, f"{where} has {count} items; {relation} {error.validator_value} are allowed"), stage
        return
    if keyword == "dependentRequired":
        present = value if isinstance(value, dict) else {}
        for trigger, needed in error.validator_value.items():
            if trigger in present:
                for key in needed:
                    if key not in present:
                        yield code, Hit(pointer_join(pointer, trigger), f"\"{trigger}\" requires \"{key}\", which is missing",
                                        at="key", hint=f"add \"{key}\" (the folder the build writes, e.g. \"dist\")"), stage
        return
    yield code, Hit(pointer, f"{where}: {error.message}"), stage

"""Guards: a proof, checked by jsonschema_rs at Rust speed, that a rule finds nothing.

A rule may declare a guard: a JSON Schema fragment such that any manifest valid
against it makes the rule's check yield nothing (in the context the guard was built
for). A guard may be conservative, failing where the check would find nothing too;
it must never pass where the check would find something. tests/rules/test_guards.py
holds every guard to that, on the corpora and on generated manifests.

Per manifest, the engine asks the guard real manifests fail most (BK203's) alone and
the other guards of the rules that run in one context joined in one validator
(``allOf``; ``Plan.rules_for``): a clean manifest calls no guarded check at all;
otherwise only the checks whose guards fail run (when the joined ones fail, the guards
are asked one at a time, those real manifests fail most first). Anything a
validator cannot take (a lone surrogate in a string a guard reads) runs every check, as
without guards. The validators are compiled once a plan has been used a few times (or
by ``engine.warm_up``): a one-file run calls every check instead.

Where JSON Schema and the platform measure differently, guards stay on the safe side:
``maxLength`` counts code points while the platform counts UTF-16 units (a string of at
most cap/2 code points, or one without astral characters, is within cap units);
patterns use only literal characters and classes, never ``\\s`` or ``\\w`` (whose
meaning differs between regex engines); JSON's ``true`` is not a number (as the checks
skip Python's bools); numbers compare by value (``1.0`` is ``1``).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, Sequence, Union

from blockkit.jsstr import JS_WHITESPACE

if TYPE_CHECKING:
    from blockkit.context import Context
    from blockkit.rules.base import Rule

Schema = dict[str, Any]
# A guard for one context: a schema, True (the check finds nothing in this context at
# all: it need not run) or None (no proof: the check always runs).
GuardResult = Union[Schema, bool, None]
Guard = Union[Schema, Callable[["Context"], GuardResult]]

# Characters outside the Basic Multilingual Plane: 2 UTF-16 units for 1 code point.
ASTRAL = "[\U00010000-\U0010FFFF]"
# A character JavaScript's trim keeps: a string matching it is not blank.
NOT_BLANK = "[^" + JS_WHITESPACE + "]"
# A run of JavaScript whitespace (the separators of iframe.sandbox); literal characters only.
JS_SPACE = "[" + JS_WHITESPACE + "]"
assert not set(JS_WHITESPACE) & set("\\]^-[")  # literal inside a character class


def at(path: Sequence[str], schema: Schema) -> Schema:
    """``schema`` for the value at ``path`` (object members), when it is there."""
    for name in reversed(path):
        schema = {"properties": {name: schema}}
    return schema


def each_item(schema: Schema) -> Schema:
    return {"items": schema}


def fits_utf16(cap: int) -> Schema:
    """A string at most ``cap`` UTF-16 units long, or any other value.

    Each code point is one or two units, two only when it is astral.
    """
    return {"anyOf": [{"maxLength": cap // 2}, {"not": {"pattern": ASTRAL}}]}


def not_blank() -> Schema:
    """A string with something left after JavaScript's trim, or any other value."""
    return {"pattern": NOT_BLANK}


def all_of(*schemas: Schema) -> Schema:
    return {"allOf": list(schemas)}


def merged(schemas: Iterable[Any]) -> Schema:
    """All of ``schemas`` as one schema that reads each member once.

    ``{"allOf": [{"properties": {"k": A}}, {"properties": {"k": B}}]}`` means
    ``{"properties": {"k": {"allOf": [A, B]}}}``; the second form looks ``k`` up once,
    and a lookup in a Python object is most of what a guard costs jsonschema_rs.
    """
    members: dict[str, list[Any]] = {}
    others: list[Any] = []
    pending = list(schemas)
    while pending:
        schema = pending.pop(0)
        if isinstance(schema, dict) and schema.keys() == {"allOf"}:
            pending[:0] = schema["allOf"]
        elif isinstance(schema, dict) and schema.keys() == {"properties"}:
            for name, inner in schema["properties"].items():
                members.setdefault(name, []).append(inner)
        else:
            others.append(schema)
    result: Schema = {}
    if members:
        result["properties"] = {name: inner[0] if len(inner) == 1 else merged(inner) for name, inner in members.items()}
    if others:
        result["allOf"] = others
    return result


def guard_for(rule: "Rule", context: "Context") -> GuardResult:
    """The rule's guard in ``context``."""
    guard = rule.guard
    if guard is None or isinstance(guard, (dict, bool)):
        return guard
    return guard(context)


def compile_schema(schema: Schema) -> Any:
    import jsonschema_rs

    return jsonschema_rs.Draft202012Validator(schema)


# The guards that real manifests fail most often (BK203: 42 of the 106 real manifests, for
# a missing justification; BK214: 3; BK208, whose guard clears a single good only: 1), in that
# order. The first is asked alone for every manifest, the others together; when the others fail,
# the rest of these are decided one at a time (Plan.rules_for).
OFTEN_FAILED: tuple[str, ...] = ("BK203", "BK214", "BK208")
# Guards pay off over many manifests; compiling them costs a few milliseconds, more than a
# one-file run saves. So the first WARM_USES - 1 manifests of a plan are checked by every rule.
WARM_USES = 3


class Plan:
    """The checks of one layer in one context, and the validators of their guards."""

    def __init__(self, every: Sequence["Rule"], guards: dict[str, Schema]) -> None:
        self.every = tuple(every)  # the checks that can find something here, in the engine's order
        self.always = tuple(rule for rule in self.every if rule.code not in guards)  # those without a guard
        self.guards = guards  # rule code -> its guard
        self.compiled = False
        self._often: tuple[tuple["Rule", Any], ...] = ()  # OFTEN_FAILED rules and their guards' validators
        # All guards but the first of _often, at once (None: there are none): with that one asked
        # alone, two calls clear a clean manifest, and decide one that fails the first only.
        self.validator: Any = None
        self._rest_codes: list[str] = []  # the guards not in _often
        # _after[i]: the guards after the i-th of _often (the later ones of _often and the rest) at once,
        # None when there are none; built when first needed.
        self._after: Optional[tuple[Any, ...]] = None
        self._each_rest: Optional[tuple[tuple["Rule", Any], ...]] = None  # built when first needed
        self._by_code = {rule.code: rule for rule in self.every}
        self._rank = {rule.code: index for index, rule in enumerate(self.every)}  # its place in ``every``
        self._always_codes = frozenset(rule.code for rule in self.always)
        self._uses = 0
        self._lock = threading.Lock()

    def compile(self) -> None:
        """Build the validators now (before forking workers, or once the plan is used enough)."""
        with self._lock:
            if self.compiled or not self.guards:
                return
            often = [code for code in OFTEN_FAILED if code in self.guards]
            self._often = tuple((self._by_code[code], compile_schema(self.guards[code])) for code in often)
            self._rest_codes = [code for code in self.guards if code not in often]
            others = [code for code in self.guards if not often or code != often[0]]
            self.validator = compile_schema(merged(self.guards[code] for code in others)) if others else None
            self.compiled = True

    def _each_of_rest(self) -> tuple[tuple["Rule", Any], ...]:
        each = self._each_rest
        if each is None:
            each = self._each_rest = tuple((self._by_code[code], compile_schema(self.guards[code]))
                                           for code in self._rest_codes)
        return each

    def _afters(self) -> tuple[Any, ...]:
        after = self._after
        if after is None:
            codes = [rule.code for rule, _ in self._often]
            built = []
            for index in range(len(codes)):
                later = codes[index + 1:] + self._rest_codes
                if index == 0:
                    built.append(self.validator)  # the same guards
                elif not later:
                    built.append(None)
                else:
                    built.append(compile_schema(merged(self.guards[code] for code in later)))
            after = self._after = tuple(built)
        return after

    def rules_for(self, document: dict[str, Any]) -> Sequence["Rule"]:
        """The checks that may find something in ``document``, in order."""
        if not self.compiled:
            if not self.guards:
                return self.every
            self._uses += 1  # a race here only compiles a little sooner or later
            if self._uses < WARM_USES:
                return self.every
            self.compile()
        # Guards are asked only for checks that would be called (Rule.keys); a check the engine
        # does not call may be listed. (The joined validator's errors would cost far more to
        # build than these calls.)
        often = self._often
        try:
            lead_fails = False
            if often:
                rule, guard = often[0]
                keys = rule.keys
                lead_fails = (keys is None or not document.keys().isdisjoint(keys)) and not guard.is_valid(document)
            others = self.validator
            if others is None or others.is_valid(document):
                if not lead_fails:
                    return self.always  # a clean manifest: two calls
                failing = {often[0][0].code}
            else:
                failing = self._failing_others(document)
                if lead_fails:
                    failing.add(often[0][0].code)
        except Exception:  # a value it cannot read (a lone surrogate): no proof, run them all
            return self.every
        if not failing:
            return self.always
        if len(failing) == 1 and not self.always:  # the usual case: BK203's guard alone
            (code,) = failing
            return (self._by_code[code],)
        # The failing ones beside those without a guard, in the engine's order (usually one or two).
        codes = failing.union(self._always_codes) if self.always else failing
        return [self._by_code[code] for code in sorted(codes, key=self._rank.__getitem__)]

    def _failing_others(self, document: dict[str, Any]) -> set[str]:
        """The codes of the guards after the first of _often that ``document`` fails, knowing that it
        fails one of them.

        Each step starts knowing that one of the guards not yet decided fails; the next of _often
        is decided by the guards after it: when they all pass, it is the one that fails, without
        asking it; otherwise it is asked alone, and one after it is known to fail. Then the rest
        are asked one by one.
        """
        present = document.keys()
        failing: set[str] = set()
        often = self._often
        afters = self._afters()
        for index in range(1 if often else 0, len(often)):
            rule, guard = often[index]
            after = afters[index]
            if after is None or after.is_valid(document):
                failing.add(rule.code)
                return failing
            if (rule.keys is None or not present.isdisjoint(rule.keys)) and not guard.is_valid(document):
                failing.add(rule.code)
        for rule, guard in self._each_of_rest():
            if (rule.keys is None or not present.isdisjoint(rule.keys)) and not guard.is_valid(document):
                failing.add(rule.code)
        return failing


def build_plan(rules: Iterable["Rule"], context: "Context") -> Plan:
    every: list["Rule"] = []
    guards: dict[str, Schema] = {}
    submit_only = not context.runs("approve")
    for rule in rules:
        if submit_only and rule.stage != "submit":
            continue
        guard = guard_for(rule, context)
        if guard is True:
            continue  # finds nothing in this context at all
        every.append(rule)
        if isinstance(guard, dict):
            guards[rule.code] = guard
    return Plan(every, guards)


_PLANS_MAX = 64  # distinct (layer, context) pairs kept; a long-lived caller may make many contexts
_plans: dict[tuple[str, Any], Plan] = {}
_plans_lock = threading.Lock()
# The last (layer, context, plan) given out: most runs check every file in one context, and
# comparing a Context by identity costs less than hashing it. One tuple, replaced whole, so
# that no thread sees one context's plan beside another context.
_last: tuple[Any, Any, Any] = (None, None, None)


def plan_for(layer: str, context: "Context", rules: Callable[[str], Iterable["Rule"]]) -> Plan:
    """The cached Plan of ``layer`` in ``context``; ``rules(layer)`` gives the layer's checks in order."""
    global _last
    last_layer, last_context, plan = _last
    if last_context is context and last_layer == layer:
        return plan  # type: ignore[no-any-return]
    key = (layer, context)
    plan = _plans.get(key)
    if plan is None:
        with _plans_lock:
            plan = _plans.get(key)
            if plan is None:
                plan = build_plan(rules(layer), context)
                if len(_plans) >= _PLANS_MAX:
                    _plans.clear()
                _plans[key] = plan
    _last = (layer, context, plan)
    return plan

"""Is a JavaScript regex open to catastrophic backtracking? The platform's criteria, in Python.

The platform refuses a `settings.*.pattern` unless the ReDoS checker ``recheck`` (4.5,
run with its defaults, no flags, a 5 s timeout) answers ``safe``; ``vulnerable`` and
``unknown`` are both refused (civitai/civitai@ebed661
src/server/services/blocks/settings-pattern-guard.ts). No Python package implements
recheck's analysis under a usable licence, so this module implements recheck's documented
automaton criteria (its "automaton" checker and its "auto" routing):

1. The pattern is read without flags, over UTF-16 code units (``blockkit.rules.jsregex``).
2. Routing as recheck's ``auto``: a pattern with a look-around or a back-reference, a sum
   of repetition counts of 30 or more (``{n}`` counts n, ``{n,}`` n, ``{n,m}`` m), or a
   size of 1500 or more goes to recheck's fuzzer. A pattern with no unbounded repetition
   is safe.
3. Otherwise: an ordered ε-NFA (Thompson construction with priorities; an implicit lazy
   ``[^]*?`` before the pattern unless every start point is ``^``, and ``[^]*`` after it
   unless every end point is ``$``), ordered NFA by ε-elimination over the classes of
   characters the pattern distinguishes, then the NFA with look-ahead (each transition
   pruned when a higher-priority one can already accept the rest of the input, using the
   determinised reverse automaton), then:
   - EDA (exponential): a strongly connected component with two parallel transitions on
     the same letter, or whose pair graph has a component holding (q, q) and (q1, q2) with
     q1 != q2;
   - IDA (polynomial): the longest chain of components linked by an IDA structure (paths
     p->p, p->q, q->q on one word, through a triple graph); a chain of degree 2 or more
     is polynomial.
   Exponential or polynomial is ``vulnerable``; constant or linear is ``safe``.

Limits, recorded in docs/platform-shapes.md: recheck's fuzzer (step 2's other branch) is a
seeded genetic search that cannot be reproduced here. For those patterns this module
analyses an over-approximation instead (look-arounds dropped, a back-reference read as a
copy of its group, a repetition bounded at 10 or more read as unbounded, `{n,}` as `+`),
which agrees with the fuzzer on the clear cases (tests/rules/test_settings.py holds it to
recheck's own answers on a table of patterns) but is not it. An automaton that outgrows
the limits gives ``unknown``/"too-large", which BK227 refuses as the platform refuses
recheck's ``unknown`` (a time-out); a pattern this parser does not read gives
``unknown``/"unread" and no finding.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional, Union

from blockkit.rules.jsregex import (
    ANY,
    WORD,
    Alt,
    Assert,
    BackRef,
    Chars,
    Group,
    Intervals,
    Look,
    Node,
    Repeat,
    Seq,
    parse,
)

MAX_REPEAT_COUNT = 30  # recheck's maxRepeatCount
MAX_PATTERN_SIZE = 1500  # recheck's maxPatternSize
MAX_NFA_SIZE = 35000  # recheck's maxNFASize
_BOUNDED_AS_LOOP = 10  # approximation only: {n,m} with m >= this is read as unbounded
_WORK_LIMIT = 2_000_000  # steps of any one stage before giving up ("unknown")


@dataclass(frozen=True)
class Verdict:
    status: str  # "safe" | "vulnerable" | "unknown"
    # "constant" | "linear" | "polynomial" | "exponential"; with "unknown": "too-large" (the
    # automaton outgrew the limits) or "unread" (this parser cannot read the pattern)
    complexity: str
    degree: int = 0
    route: str = "automaton"  # "automaton" (recheck's own criteria) or "approximation" (recheck fuzzes)

    def describe(self) -> str:
        if self.complexity == "polynomial":
            return f"polynomial (degree {self.degree})"
        return self.complexity


class _TooLarge(Exception):
    pass


@lru_cache(maxsize=256)
def analyse(source: str) -> Verdict:
    """The verdict on ``source`` (a pattern that compiles as ``new RegExp(source)``)."""
    tree = parse(source)
    if tree is None:
        return Verdict("unknown", "unread")
    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(max(limit, 20000))
        return _analyse(tree)
    except (_TooLarge, RecursionError):
        return Verdict("unknown", "too-large")
    finally:
        sys.setrecursionlimit(limit)


def _analyse(tree: Node) -> Verdict:
    fuzz = _has_look_or_backref(tree) or _repeat_count(tree) >= MAX_REPEAT_COUNT or _size(tree) >= MAX_PATTERN_SIZE
    if not fuzz:
        if _is_constant(tree):
            return Verdict("safe", "constant")
        complexity, degree = _Automaton(tree).complexity()
        status = "vulnerable" if complexity in ("exponential", "polynomial") else "safe"
        return Verdict(status, complexity, degree)
    loose = _approximate(tree, _groups(tree))
    if _is_constant(loose):
        return Verdict("safe", "constant", 0, "approximation")
    complexity, degree = _Automaton(loose).complexity()
    status = "vulnerable" if complexity in ("exponential", "polynomial") else "safe"
    return Verdict(status, complexity, degree, "approximation")


# --- facts about the tree (recheck's PatternExtensions, as documented) ---------------------


def _children(node: Node) -> list[Node]:
    if isinstance(node, (Seq, Alt)):
        return node.items
    if isinstance(node, (Group, Repeat, Look)):
        return [node.body]
    return []


def _has_look_or_backref(node: Node) -> bool:
    if isinstance(node, (Look, BackRef)):
        return True
    return any(_has_look_or_backref(child) for child in _children(node))


def _repeat_count(node: Node) -> int:
    total = sum(_repeat_count(child) for child in _children(node))
    if isinstance(node, Repeat) and node.braced:  # *, + and ? count 0
        total += node.low if node.high is None else node.high  # {n,} counts n; {n} and {n,m} count the top
    return total


def _size(node: Node) -> int:
    if isinstance(node, Alt):
        return sum(map(_size, node.items)) + len(node.items) - 1
    if isinstance(node, Seq):
        return sum(map(_size, node.items))
    if isinstance(node, Group):
        return _size(node.body)
    if isinstance(node, Look):
        return _size(node.body) + 1
    if isinstance(node, Repeat):
        inner = _size(node.body)
        if not node.braced:
            return inner + 1
        if node.high is None:
            return inner * (node.low + 1) + 1
        return inner * node.high + (node.high - node.low)
    return 1


def _is_constant(node: Node) -> bool:
    if isinstance(node, Repeat) and node.high is None:
        return False
    return all(_is_constant(child) for child in _children(node))


def _begins_with_caret(node: Node) -> bool:
    if isinstance(node, Alt):
        return all(map(_begins_with_caret, node.items))
    if isinstance(node, Seq):
        return bool(node.items) and _begins_with_caret(node.items[0])
    if isinstance(node, Group):
        return _begins_with_caret(node.body)
    return isinstance(node, Assert) and node.kind == "^"


def _ends_with_dollar(node: Node) -> bool:
    if isinstance(node, Alt):
        return all(map(_ends_with_dollar, node.items))
    if isinstance(node, Seq):
        return bool(node.items) and _ends_with_dollar(node.items[-1])
    if isinstance(node, Group):
        return _ends_with_dollar(node.body)
    return isinstance(node, Assert) and node.kind == "$"


def _uses_word_boundary(node: Node) -> bool:
    if isinstance(node, Assert) and node.kind in ("b", "B"):
        return True
    return any(_uses_word_boundary(child) for child in _children(node))


def _groups(node: Node) -> dict[Union[int, str], Node]:
    found: dict[Union[int, str], Node] = {}

    def walk(n: Node) -> None:
        if isinstance(n, Group) and n.index is not None:
            found[n.index] = n.body
            if n.name is not None:
                found[n.name] = n.body
        for child in _children(n):
            walk(child)

    walk(node)
    return found


def _approximate(node: Node, groups: dict[Union[int, str], Node], depth: int = 0) -> Node:
    """The tree an automaton can take in place of one recheck would fuzz (see the module doc)."""
    if depth > 8:
        return Seq([])
    if isinstance(node, Look):
        return Seq([])
    if isinstance(node, BackRef):
        body = groups.get(node.ref)
        return Seq([]) if body is None else Group(_approximate(body, groups, depth + 1), None, None)
    if isinstance(node, Seq):
        return Seq([_approximate(n, groups, depth) for n in node.items])
    if isinstance(node, Alt):
        return Alt([_approximate(n, groups, depth) for n in node.items])
    if isinstance(node, Group):
        return Group(_approximate(node.body, groups, depth), node.index, node.name)
    if isinstance(node, Repeat):
        body = _approximate(node.body, groups, depth)
        if node.high is not None and node.high >= _BOUNDED_AS_LOOP:
            return Repeat(body, min(node.low, 1), None, node.lazy)
        return Repeat(body, node.low if node.high is not None else min(node.low, 1), node.high, node.lazy)
    return node


# --- the automata -----------------------------------------------------------------------

_EPS, _CHAR, _ASSERT, _FINAL = 0, 1, 2, 3
_START, _WORDCH, _OTHER = 0, 1, 2  # what the last consumed character was
_END = -1  # "the next character" at the end of the input


class _Automaton:
    def __init__(self, tree: Node) -> None:
        self.kinds: list[int] = []
        self.targets: list[list[int]] = []  # EPS: ordered targets; CHAR/ASSERT: [target]
        self.labels: list[object] = []  # CHAR: frozenset of atom ids; ASSERT: kind
        self.word = _uses_word_boundary(tree)
        self.loop_body: dict[int, int] = {}  # loop state of an unbounded repetition -> its body's entry
        self._atoms(tree)
        start, end = self._build(tree)
        final = self._state(_FINAL)
        if _ends_with_dollar(tree):
            self.targets[end].append(final)
        else:  # [^]* after the pattern: accept first, else consume anything and stay
            loop = self._state(_EPS)
            self.targets[end].append(loop)
            anything = self._state(_CHAR, frozenset(range(len(self.atom_word))))
            self.targets[loop] += [final, anything]
            self.targets[anything].append(loop)
        if _begins_with_caret(tree):
            self.init = start
        else:  # lazy [^]*? before the pattern: try the pattern first, else consume one and retry
            loop = self._state(_EPS)
            anything = self._state(_CHAR, frozenset(range(len(self.atom_word))))
            self.targets[loop] += [start, anything]
            self.targets[anything].append(loop)
            self.init = loop

    # ε-NFA construction
    def _state(self, kind: int, label: object = None) -> int:
        self.kinds.append(kind)
        self.targets.append([])
        self.labels.append(label)
        if len(self.kinds) > MAX_NFA_SIZE:
            raise _TooLarge
        return len(self.kinds) - 1

    def _atoms(self, tree: Node) -> None:
        sets: list[Intervals] = [ANY]
        if self.word:
            sets.append(WORD)

        def walk(n: Node) -> None:
            if isinstance(n, Chars):
                sets.append(n.ranges)
            for child in _children(n):
                walk(child)

        walk(tree)
        bounds = sorted({0, 0x10000} | {lo for s in sets for lo, _ in s} | {hi + 1 for s in sets for _, hi in s})
        unique = list(dict.fromkeys(sets))
        signature_of: dict[tuple[bool, ...], int] = {}
        self.pieces: list[tuple[int, int, int]] = []  # (lo, hi, atom id)
        for lo, nxt in zip(bounds, bounds[1:]):
            signature = tuple(_contains(s, lo) for s in unique)
            atom = signature_of.setdefault(signature, len(signature_of))
            self.pieces.append((lo, nxt - 1, atom))
        self.atom_word = [False] * len(signature_of)
        for lo, _, atom in self.pieces:
            self.atom_word[atom] = _contains(WORD, lo)
        self._cache: dict[Intervals, frozenset[int]] = {}

    def _atoms_of(self, ranges: Intervals) -> frozenset[int]:
        found = self._cache.get(ranges)
        if found is None:
            found = frozenset(atom for lo, _, atom in self.pieces if _contains(ranges, lo))
            self._cache[ranges] = found
        return found

    def _build(self, node: Node) -> tuple[int, int]:
        """(entry, exit) of a fragment; the exit is an EPS state whose targets come later."""
        if isinstance(node, Chars):
            entry = self._state(_CHAR, self._atoms_of(node.ranges))
            exit_ = self._state(_EPS)
            self.targets[entry].append(exit_)
            return entry, exit_
        if isinstance(node, Assert):
            entry = self._state(_ASSERT, node.kind)
            exit_ = self._state(_EPS)
            self.targets[entry].append(exit_)
            return entry, exit_
        if isinstance(node, Group):
            return self._build(node.body)
        if isinstance(node, Seq):
            entry = self._state(_EPS)
            current = entry
            for item in node.items:
                start, end = self._build(item)
                self.targets[current].append(start)
                current = end
            return entry, current
        if isinstance(node, Alt):
            entry = self._state(_EPS)
            exit_ = self._state(_EPS)
            for item in node.items:
                start, end = self._build(item)
                self.targets[entry].append(start)
                self.targets[end].append(exit_)
            return entry, exit_
        if isinstance(node, Repeat):
            entry = self._state(_EPS)
            current = entry
            for _ in range(node.low):
                start, end = self._build(node.body)
                self.targets[current].append(start)
                current = end
            if node.high is None:
                loop = self._state(_EPS)
                exit_ = self._state(_EPS)
                self.targets[current].append(loop)
                start, end = self._build(node.body)
                self.targets[loop] += [exit_, start] if node.lazy else [start, exit_]
                self.targets[end].append(loop)
                self.loop_body[loop] = start
                return entry, exit_
            exit_ = self._state(_EPS)
            for _ in range(node.high - node.low):
                choice = self._state(_EPS)
                self.targets[current].append(choice)
                start, end = self._build(node.body)
                self.targets[choice] += [exit_, start] if node.lazy else [start, exit_]
                current = end
            self.targets[current].append(exit_)
            return entry, exit_
        return self._build(Seq([]))  # look-arounds and back-references never reach here

    # ordered NFA by ε-elimination
    def _holds(self, kind: object, prev: int, nxt: int) -> bool:
        if kind == "^":
            return prev == _START
        if kind == "$":
            return nxt == _END
        before = prev == _WORDCH
        after = nxt != _END and self.atom_word[nxt]
        return (before != after) == (kind == "b")

    def _closure(self, state: int, prev: int, nxt: int, budget: list[int]) -> tuple[list[int], bool]:
        """(states reached by consuming ``nxt``, in priority order with repeats; whether ``nxt`` is
        the end of input and the final state is reached)."""
        out: list[int] = []
        accepted = False
        # DFS in priority order. An ε-path may not enter the body of the same unbounded
        # repetition twice: an iteration that consumes nothing ends (JavaScript's empty check,
        # recheck's LoopEnter/LoopExit), which also ends every ε-cycle.
        stack: list[tuple[int, frozenset[int]]] = [(state, frozenset())]
        while stack:
            q, entered = stack.pop()
            budget[0] -= 1
            if budget[0] < 0:
                raise _TooLarge
            kind = self.kinds[q]
            if kind == _CHAR:
                if nxt != _END and nxt in self.labels[q]:  # type: ignore[operator]
                    out.append(self.targets[q][0])
                continue
            if kind == _FINAL:
                accepted = accepted or nxt == _END
                continue
            if kind == _ASSERT and not self._holds(self.labels[q], prev, nxt):
                continue
            body = self.loop_body.get(q)
            for target in reversed(self.targets[q]):
                if body is not None and target == body:
                    if q in entered:
                        continue
                    stack.append((target, entered | {q}))
                else:
                    stack.append((target, entered))
        return out, accepted

    def _ordered(self) -> tuple[list[tuple[int, int]], dict[tuple[int, int], list[int]], set[int]]:
        atoms = range(len(self.atom_word))
        infos = (_START, _WORDCH, _OTHER) if self.word else (_START, _OTHER)
        index: dict[tuple[int, int], int] = {}
        states: list[tuple[int, int]] = []

        def state_id(key: tuple[int, int]) -> int:
            found = index.get(key)
            if found is None:
                found = index[key] = len(states)
                states.append(key)
            return found

        del infos
        state_id((self.init, _START))
        delta: dict[tuple[int, int], list[int]] = {}
        accept: set[int] = set()
        budget = [_WORK_LIMIT]
        size = 0
        i = 0
        while i < len(states):
            q, prev = states[i]
            _, ok = self._closure(q, prev, _END, budget)
            if ok:
                accept.add(i)
            for a in atoms:
                info = _WORDCH if (self.word and self.atom_word[a]) else _OTHER
                reached, _ = self._closure(q, prev, a, budget)
                if reached:
                    delta[(i, a)] = [state_id((r, info)) for r in reached]
                    size += len(reached)
                    if size >= MAX_NFA_SIZE:
                        raise _TooLarge
            i += 1
        return states, delta, accept

    # the NFA with look-ahead, and its graph
    def complexity(self, exponential_only: bool = False) -> tuple[str, int]:
        states, delta, accept = self._ordered()
        n_atoms = len(self.atom_word)
        # reverse automaton, determinised from the accepting states
        reverse: dict[tuple[int, int], set[int]] = {}
        for (q1, a), qs in delta.items():
            for q2 in qs:
                reverse.setdefault((q2, a), set()).add(q1)
        init_p = frozenset(accept)
        dfa_states = [init_p]
        dfa_index = {init_p: 0}
        dfa_delta: dict[tuple[int, int], int] = {}
        i = 0
        while i < len(dfa_states):
            p = dfa_states[i]
            for a in range(n_atoms):
                nxt = frozenset(q1 for q2 in p for q1 in reverse.get((q2, a), ()))
                j = dfa_index.get(nxt)
                if j is None:
                    j = dfa_index[nxt] = len(dfa_states)
                    dfa_states.append(nxt)
                    if len(dfa_states) > MAX_NFA_SIZE:
                        raise _TooLarge
                dfa_delta[(i, a)] = j
            i += 1
        # p1 <-a- p2 in the reverse DFA: from the suffix state p2, reading a gives p1
        by_atom: dict[int, list[tuple[int, int]]] = {}
        for (p2, a), p1 in dfa_delta.items():
            by_atom.setdefault(a, []).append((p1, p2))
        edges: dict[tuple[int, int], list[tuple[tuple[int, int], tuple[int, int]]]] = {}
        size = 0
        for (q1, a), qs in delta.items():
            for p1, p2 in by_atom.get(a, ()):
                members = dfa_states[p2]
                kept: list[int] = []
                for q2 in qs:
                    kept.append(q2)
                    if q2 in members:
                        break
                for q2 in kept:
                    edges.setdefault((q1, p1), []).append(((a, p2), (q2, p2)))
                size += len(kept)
                if size >= MAX_NFA_SIZE:
                    raise _TooLarge
        inits = [(0, p) for p in range(len(dfa_states))]
        return _Graph(inits, edges).complexity(exponential_only)


def _contains(ranges: Intervals, unit: int) -> bool:
    for lo, hi in ranges:
        if lo <= unit <= hi:
            return True
        if lo > unit:
            return False
    return False


Vertex = tuple[int, int]
Label = tuple[int, int]


class _Graph:
    """The reachable part of the NFA with look-ahead, and recheck's EDA/IDA search on it."""

    def __init__(self, inits: list[Vertex], edges: dict[Vertex, list[tuple[Label, Vertex]]]) -> None:
        seen = set(inits)
        todo = list(inits)
        while todo:
            v = todo.pop()
            for _, w in edges.get(v, ()):
                if w not in seen:
                    seen.add(w)
                    todo.append(w)
        self.nodes = sorted(seen)
        self.out = {v: edges.get(v, []) for v in self.nodes}
        self.scc_of, self.sccs = _tarjan(self.nodes, lambda v: (w for _, w in self.out[v]))

    def _atom(self, c: int) -> bool:
        members = self.sccs[c]
        if len(members) != 1:
            return False
        v = members[0]
        return not any(w == v for _, w in self.out[v])

    def complexity(self, exponential_only: bool) -> tuple[str, int]:
        internal: dict[int, dict[Label, list[tuple[Vertex, Vertex]]]] = {}
        between: dict[tuple[int, int], dict[Label, list[tuple[Vertex, Vertex]]]] = {}
        for v in self.nodes:
            for label, w in self.out[v]:
                key = (self.scc_of[v], self.scc_of[w])
                between.setdefault(key, {}).setdefault(label, []).append((v, w))
        for (c1, c2), by_label in between.items():
            if c1 == c2:
                internal[c1] = by_label
        for c in range(len(self.sccs)):
            if not self._atom(c) and _has_eda(internal.get(c, {})):
                return "exponential", 0
        if exponential_only:
            return "linear", 1
        return self._polynomial(internal, between)

    def _polynomial(self, internal: dict[int, dict[Label, list[tuple[Vertex, Vertex]]]],
                    between: dict[tuple[int, int], dict[Label, list[tuple[Vertex, Vertex]]]]) -> tuple[str, int]:
        count = len(self.sccs)
        succ: list[set[int]] = [set() for _ in range(count)]
        for c1, c2 in between:
            if c1 != c2:
                succ[c1].add(c2)
        reach: list[Optional[frozenset[int]]] = [None] * count
        # Tarjan numbers components in reverse topological order: successors come first.
        for c in range(count):
            acc = {c}
            for d in succ[c]:
                acc |= reach[d]  # type: ignore[arg-type]
            reach[c] = frozenset(acc)
        lookahead = [frozenset(p for _, p in self.sccs[c]) for c in range(count)]
        degree: list[int] = [0] * count
        for c in range(count):  # successors first
            best = max((degree[d] for d in succ[c]), default=0)
            if best == 0:
                degree[c] = 0 if self._atom(c) else 1
                continue
            if self._atom(c):
                degree[c] = best
                continue
            degree[c] = best
            for target in sorted(reach[c]):  # type: ignore[arg-type]
                if target == c or self._atom(target) or degree[target] != best:
                    continue
                if not (lookahead[c] & lookahead[target]):
                    continue
                if self._ida(c, target, reach, internal, between):
                    degree[c] = best + 1
                    break
        top = max(degree, default=0)
        if top == 0:
            return "constant", 0
        if top == 1:
            return "linear", 1
        return "polynomial", top

    def _ida(self, source: int, target: int, reach: list[Optional[frozenset[int]]],
             internal: dict[int, dict[Label, list[tuple[Vertex, Vertex]]]],
             between: dict[tuple[int, int], dict[Label, list[tuple[Vertex, Vertex]]]]) -> bool:
        middle = {c for c in reach[source] if target in reach[c]}  # type: ignore[union-attr]
        mid_edges: dict[Label, list[tuple[Vertex, Vertex]]] = {}
        for (c1, c2), by_label in between.items():
            if c1 in middle and c2 in middle:
                for label, pairs in by_label.items():
                    mid_edges.setdefault(label, []).extend(pairs)
        src, tgt = internal.get(source, {}), internal.get(target, {})
        graph: dict[tuple[Vertex, Vertex, Vertex], list[tuple[Vertex, Vertex, Vertex]]] = {}
        work = 0
        for label, pairs1 in src.items():
            pairs2, pairs3 = mid_edges.get(label, ()), tgt.get(label, ())
            for a1, b1 in pairs1:
                for a2, b2 in pairs2:
                    for a3, b3 in pairs3:
                        graph.setdefault((a1, a2, a3), []).append((b1, b2, b3))
                        work += 1
                        if work > _WORK_LIMIT:
                            raise _TooLarge
        for q1 in self.sccs[source]:
            for q2 in self.sccs[target]:
                graph.setdefault((q1, q2, q2), []).append((q1, q1, q2))
        nodes = set(graph)
        for targets in graph.values():
            nodes.update(targets)
        scc_of, _ = _tarjan(sorted(nodes), lambda v: graph.get(v, ()))
        for (q1, q2, q3), c in scc_of.items():
            if q1 == q2 and q2 != q3 and scc_of.get((q1, q3, q3)) == c:
                return True
        return False


def _has_eda(by_label: dict[Label, list[tuple[Vertex, Vertex]]]) -> bool:
    for pairs in by_label.values():
        if len(pairs) != len(set(pairs)):
            return True  # two parallel transitions on one letter
    graph: dict[tuple[Vertex, Vertex], list[tuple[Vertex, Vertex]]] = {}
    work = 0
    for pairs in by_label.values():
        for a1, b1 in pairs:
            for a2, b2 in pairs:
                graph.setdefault((a1, a2), []).append((b1, b2))
                work += 1
                if work > _WORK_LIMIT:
                    raise _TooLarge
    nodes = set(graph)
    for targets in graph.values():
        nodes.update(targets)
    scc_of, sccs = _tarjan(sorted(nodes), lambda v: graph.get(v, ()))
    for members in sccs:
        if len(members) < 2:
            continue
        if any(a == b for a, b in members) and any(a != b for a, b in members):
            return True
    return False


def _tarjan(nodes: list, successors) -> tuple[dict, list[list]]:  # type: ignore[no-untyped-def,type-arg]
    """Strongly connected components, iteratively; components come in reverse topological
    order (every component after all the components it reaches)."""
    index: dict = {}  # type: ignore[type-arg]
    low: dict = {}  # type: ignore[type-arg]
    on_stack: set = set()  # type: ignore[type-arg]
    stack: list = []  # type: ignore[type-arg]
    scc_of: dict = {}  # type: ignore[type-arg]
    sccs: list[list] = []  # type: ignore[type-arg]
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(successors(root)))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(successors(w))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
            if low[v] == index[v]:
                members = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    scc_of[w] = len(sccs)
                    members.append(w)
                    if w == v:
                        break
                sccs.append(members)
    return scc_of, sccs

"""JavaScript regular expressions as ``new RegExp(source)`` reads them (no flags).

Two services for the `settings` pattern rules (BK226, BK227):

- ``compile_problem(source)``: why ``new RegExp(source)`` would throw, or None. The
  syntax check is ``regress`` (the ECMA-262 engine the schema layer already uses), run
  on the pattern rewritten so that regress sees exactly the UTF-16 code units
  JavaScript sees (see ``_code_unit_text``), plus the one rule where regress is more
  lenient than V8: an assertion ``\\b``/``\\B`` may not take a quantifier.
- ``parse(source)``: the pattern as a tree over UTF-16 code units, for the ReDoS
  analysis in ``blockkit.rules.redos``. It follows ECMA-262 with Annex B (the syntax
  of a regex without the ``u`` flag) and assumes the pattern compiles.

Without the ``u`` flag JavaScript reads a pattern as UTF-16 code units: an emoji is
two characters, a lone surrogate is one, and ``[\\ud83d\\ude00-\\ud83d\\ude01]`` is an
out-of-order range. Nothing here raises on any string: problems are values.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional, Union

# --- code units ------------------------------------------------------------------

MAX_UNIT = 0xFFFF
_SURROGATES = range(0xD800, 0xE000)


def code_units(text: str) -> list[int]:
    """``text`` as UTF-16 code units (lone surrogates kept as themselves)."""
    data = text.encode("utf-16-le", "surrogatepass")
    return [data[i] | (data[i + 1] << 8) for i in range(0, len(data), 2)]


def _shift(unit: int) -> str:
    """One code unit as one Unicode scalar regress can take, order kept: units from
    U+D800 up move up by 0x800, so surrogates become U+E000..U+E7FF and the rest of the
    plane moves above them (up to U+107FF, one character each, as regress reads it)."""
    return chr(unit if unit < 0xD800 else unit + 0x800)


_HEX = frozenset("0123456789abcdefABCDEF")


def _code_unit_text(source: str) -> str:
    """``source`` rewritten so that regress (which reads code points) sees JavaScript's code
    units: every literal unit and every ``\\uXXXX`` escape at or above U+D800 becomes one
    shifted character (``_shift``). Syntax, ranges' order and escapes' meaning are kept."""
    units = code_units(source)
    out: list[str] = []
    i = 0
    n = len(units)
    while i < n:
        unit = units[i]
        if unit == 0x5C and i + 1 < n:  # backslash
            nxt = units[i + 1]
            if nxt == 0x75 and i + 6 <= n and all(chr(u) in _HEX for u in units[i + 2:i + 6]):
                value = int("".join(chr(u) for u in units[i + 2:i + 6]), 16)
                if value >= 0xD800:
                    out.append(_shift(value))
                    i += 6
                    continue
            out.append("\\")
            out.append(_shift(nxt))
            i += 2
            continue
        out.append(_shift(unit))
        i += 1
    return "".join(out)


# --- the compile check -----------------------------------------------------------------


@lru_cache(maxsize=256)
def compile_problem(source: str) -> Optional[str]:
    """Why ``new RegExp(source)`` throws a SyntaxError, or None when it compiles."""
    try:
        import regress

        regress.Regex(_code_unit_text(source), "")
    except Exception as exc:  # regress raises its own error type; any failure is a syntax error
        text = str(exc).strip() or type(exc).__name__
        return text.splitlines()[0]
    if _quantified_word_assertion(code_units(source)):
        return "nothing to repeat: \\b and \\B cannot take a quantifier"
    return None


def _quantified_word_assertion(units: list[int]) -> bool:
    """Whether ``\\b`` or ``\\B`` outside a class is followed by a quantifier."""
    i, n, in_class = 0, len(units), False
    while i < n:
        ch = units[i]
        if ch == 0x5C:
            if not in_class and i + 1 < n and units[i + 1] in (0x62, 0x42):
                if _quantifier_at(units, i + 2) is not None:
                    return True
            i += 2
            continue
        if in_class:
            if ch == 0x5D:
                in_class = False
        elif ch == 0x5B:
            in_class = True
        i += 1
    return False


def _quantifier_at(units: list[int], i: int) -> Optional[tuple[int, Optional[int], int]]:
    """(min, max or None, index after) when a quantifier starts at ``i`` (lazy mark not included)."""
    if i >= len(units):
        return None
    ch = units[i]
    if ch == 0x2A:
        return 0, None, i + 1
    if ch == 0x2B:
        return 1, None, i + 1
    if ch == 0x3F:
        return 0, 1, i + 1
    if ch != 0x7B:
        return None
    j = i + 1
    start = j
    while j < len(units) and 0x30 <= units[j] <= 0x39:
        j += 1
    if j == start:
        return None
    low = int("".join(map(chr, units[start:j])))
    if j < len(units) and units[j] == 0x7D:
        return low, low, j + 1
    if j >= len(units) or units[j] != 0x2C:
        return None
    j += 1
    start = j
    while j < len(units) and 0x30 <= units[j] <= 0x39:
        j += 1
    high = int("".join(map(chr, units[start:j]))) if j > start else None
    if j < len(units) and units[j] == 0x7D:
        return low, high, j + 1
    return None


# --- the tree ------------------------------------------------------------------------

Intervals = tuple[tuple[int, int], ...]  # sorted, disjoint, inclusive code-unit ranges


def _norm(ranges: list[tuple[int, int]]) -> Intervals:
    out: list[list[int]] = []
    for lo, hi in sorted(ranges):
        if lo > hi:
            continue
        if out and lo <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return tuple((lo, hi) for lo, hi in out)


def complement(ranges: Intervals) -> Intervals:
    out: list[tuple[int, int]] = []
    start = 0
    for lo, hi in ranges:
        if lo > start:
            out.append((start, lo - 1))
        start = hi + 1
    if start <= MAX_UNIT:
        out.append((start, MAX_UNIT))
    return tuple(out)


ANY: Intervals = ((0, MAX_UNIT),)
DIGIT = _norm([(0x30, 0x39)])
WORD = _norm([(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)])
SPACE = _norm([(0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A), (0x2028, 0x2029),
               (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000), (0xFEFF, 0xFEFF)])
LINE_TERMINATORS = _norm([(0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029)])
DOT = complement(LINE_TERMINATORS)


class Node:
    __slots__ = ()


class Chars(Node):
    __slots__ = ("ranges",)

    def __init__(self, ranges: Intervals) -> None:
        self.ranges = ranges


class Seq(Node):
    __slots__ = ("items",)

    def __init__(self, items: list[Node]) -> None:
        self.items = items


class Alt(Node):
    __slots__ = ("items",)

    def __init__(self, items: list[Node]) -> None:
        self.items = items


class Group(Node):
    __slots__ = ("body", "index", "name")

    def __init__(self, body: Node, index: Optional[int], name: Optional[str]) -> None:
        self.body, self.index, self.name = body, index, name


class Repeat(Node):
    __slots__ = ("body", "low", "high", "lazy", "braced")

    def __init__(self, body: Node, low: int, high: Optional[int], lazy: bool, braced: bool = False) -> None:
        self.body, self.low, self.high, self.lazy = body, low, high, lazy
        self.braced = braced  # written {n}, {n,} or {n,m}, not *, + or ?


class Assert(Node):
    __slots__ = ("kind",)  # "^", "$", "b", "B"

    def __init__(self, kind: str) -> None:
        self.kind = kind


class Look(Node):
    __slots__ = ("body", "ahead", "negative")

    def __init__(self, body: Node, ahead: bool, negative: bool) -> None:
        self.body, self.ahead, self.negative = body, ahead, negative


class BackRef(Node):
    __slots__ = ("ref",)

    def __init__(self, ref: Union[int, str]) -> None:
        self.ref = ref


class Unsupported(Exception):
    """The parser met syntax it does not follow (never escapes ``parse``)."""


def parse(source: str) -> Optional[Node]:
    """The tree of a pattern that compiles, or None when this parser cannot read it."""
    try:
        return _Parser(code_units(source)).parse()
    except (Unsupported, IndexError, ValueError, RecursionError):
        return None


def _count_groups(units: list[int]) -> tuple[int, bool]:
    """(number of capturing groups, whether any is named), as JavaScript counts them first."""
    count, named, i, n, in_class = 0, False, 0, len(units), False
    while i < n:
        ch = units[i]
        if ch == 0x5C:
            i += 2
            continue
        if in_class:
            in_class = ch != 0x5D
        elif ch == 0x5B:
            in_class = True
        elif ch == 0x28:
            if i + 1 < n and units[i + 1] == 0x3F:
                if i + 2 < n and units[i + 2] == 0x3C and i + 3 < n and units[i + 3] not in (0x3D, 0x21):
                    count += 1
                    named = True
            else:
                count += 1
        i += 1
    return count, named


class _Parser:
    def __init__(self, units: list[int]) -> None:
        self.u = units
        self.i = 0
        self.groups, self.named = _count_groups(units)
        self.next_group = 0

    def peek(self, offset: int = 0) -> int:
        j = self.i + offset
        return self.u[j] if j < len(self.u) else -1

    def parse(self) -> Node:
        node = self.disjunction()
        if self.i != len(self.u):
            raise Unsupported("unbalanced )")
        return node

    def disjunction(self) -> Node:
        items = [self.alternative()]
        while self.peek() == 0x7C:
            self.i += 1
            items.append(self.alternative())
        return items[0] if len(items) == 1 else Alt(items)

    def alternative(self) -> Node:
        items: list[Node] = []
        while self.i < len(self.u) and self.peek() not in (0x7C, 0x29):
            items.append(self.term())
        return Seq(items)

    def term(self) -> Node:
        ch = self.peek()
        if ch == 0x5E:
            self.i += 1
            return Assert("^")
        if ch == 0x24:
            self.i += 1
            return Assert("$")
        if ch == 0x5C and self.peek(1) in (0x62, 0x42):
            self.i += 2
            return Assert("b" if self.u[self.i - 1] == 0x62 else "B")
        if ch == 0x28 and self.peek(1) == 0x3F and self.peek(2) == 0x3C and self.peek(3) in (0x3D, 0x21):
            negative = self.peek(3) == 0x21
            self.i += 4
            body = self.disjunction()
            self._close()
            return Look(body, ahead=False, negative=negative)  # not quantifiable
        atom = self.atom()
        quantifier = _quantifier_at(self.u, self.i)
        if quantifier is None:
            return atom
        braced = self.peek() == 0x7B
        low, high, self.i = quantifier
        lazy = self.peek() == 0x3F
        if lazy:
            self.i += 1
        return Repeat(atom, low, high, lazy, braced)

    def _close(self) -> None:
        if self.peek() != 0x29:
            raise Unsupported("missing )")
        self.i += 1

    def atom(self) -> Node:
        ch = self.peek()
        if ch == 0x2E:
            self.i += 1
            return Chars(DOT)
        if ch == 0x28:
            if self.peek(1) == 0x3F:
                kind = self.peek(2)
                if kind == 0x3A:
                    self.i += 3
                    body = self.disjunction()
                    self._close()
                    return Group(body, None, None)
                if kind in (0x3D, 0x21):
                    self.i += 3
                    body = self.disjunction()
                    self._close()
                    return Look(body, ahead=True, negative=kind == 0x21)
                if kind == 0x3C:
                    end = self.u.index(0x3E, self.i + 3)
                    name = "".join(map(chr, self.u[self.i + 3:end]))
                    self.i = end + 1
                    self.next_group += 1
                    index = self.next_group
                    body = self.disjunction()
                    self._close()
                    return Group(body, index, name)
                raise Unsupported("group modifiers")
            self.i += 1
            self.next_group += 1
            index = self.next_group
            body = self.disjunction()
            self._close()
            return Group(body, index, None)
        if ch == 0x5B:
            return Chars(self.char_class())
        if ch == 0x5C:
            return self.atom_escape()
        self.i += 1
        return Chars(((ch, ch),))

    def atom_escape(self) -> Node:
        self.i += 1  # the backslash
        ch = self.peek()
        if 0x31 <= ch <= 0x39:
            start = self.i
            while 0x30 <= self.peek() <= 0x39:
                self.i += 1
            number = int("".join(map(chr, self.u[start:self.i])))
            if number <= self.groups:
                return BackRef(number)
            self.i = start  # Annex B: a legacy octal escape, or the digit itself
            return Chars(self._legacy_octal_or_digit())
        if ch == 0x6B and self.named:  # \k<name>
            end = self.u.index(0x3E, self.i + 2)
            name = "".join(map(chr, self.u[self.i + 2:end]))
            self.i = end + 1
            return BackRef(name)
        return Chars(self.char_escape(in_class=False))

    def _legacy_octal_or_digit(self) -> Intervals:
        ch = self.peek()
        if 0x30 <= ch <= 0x37:
            digits = [ch - 0x30]
            self.i += 1
            limit = 3 if digits[0] <= 3 else 2
            while len(digits) < limit and 0x30 <= self.peek() <= 0x37:
                digits.append(self.peek() - 0x30)
                self.i += 1
            value = 0
            for d in digits:
                value = value * 8 + d
            return ((value, value),)
        self.i += 1
        return ((ch, ch),)

    def char_escape(self, in_class: bool) -> Intervals:
        """The set an escape after a backslash stands for (the backslash already read)."""
        ch = self.peek()
        self.i += 1
        simple = {0x74: 9, 0x6E: 10, 0x76: 11, 0x66: 12, 0x72: 13}
        if ch in simple:
            return ((simple[ch], simple[ch]),)
        classes = {0x64: DIGIT, 0x77: WORD, 0x73: SPACE}
        if ch in classes:
            return classes[ch]
        if ch in (0x44, 0x57, 0x53):
            return complement(classes[ch + 0x20])
        if ch == 0x62 and in_class:
            return ((8, 8),)
        if ch == 0x30 and not (0x30 <= self.peek() <= 0x39):
            return ((0, 0),)
        if 0x30 <= ch <= 0x39:
            self.i -= 1
            return self._legacy_octal_or_digit()
        if ch == 0x63:  # \cX
            letter = self.peek()
            if (0x41 <= letter <= 0x5A) or (0x61 <= letter <= 0x7A) or \
                    (in_class and (0x30 <= letter <= 0x39 or letter == 0x5F)):
                self.i += 1
                return ((letter % 32, letter % 32),)
            self.i -= 1  # a backslash, then "c" read as a literal next
            return ((0x5C, 0x5C),)
        for letter, width in ((0x78, 2), (0x75, 4)):  # \xHH, \uHHHH
            digits = self.u[self.i:self.i + width]
            if ch == letter and len(digits) == width and all(chr(u) in _HEX for u in digits):
                value = int("".join(map(chr, digits)), 16)
                self.i += width
                return ((value, value),)
        if ch == -1:
            raise Unsupported("trailing backslash")
        return ((ch, ch),)  # identity escape

    def char_class(self) -> Intervals:
        self.i += 1  # [
        negate = self.peek() == 0x5E
        if negate:
            self.i += 1
        ranges: list[tuple[int, int]] = []
        while self.peek() != 0x5D:
            if self.peek() == -1:
                raise Unsupported("unclosed [")
            first = self.class_atom()
            if self.peek() == 0x2D and self.peek(1) not in (0x5D, -1):
                self.i += 1
                second = self.class_atom()
                if len(first) == 1 and len(second) == 1 and first[0][0] == first[0][1] \
                        and second[0][0] == second[0][1]:
                    ranges.append((first[0][0], second[0][0]))
                    continue
                ranges.extend(first)  # Annex B: a class escape on either side makes "-" literal
                ranges.append((0x2D, 0x2D))
                ranges.extend(second)
                continue
            ranges.extend(first)
        self.i += 1  # ]
        result = _norm(ranges)
        return complement(result) if negate else result

    def class_atom(self) -> Intervals:
        ch = self.peek()
        if ch == 0x5C:
            self.i += 1
            return self.char_escape(in_class=True)
        self.i += 1
        return ((ch, ch),)

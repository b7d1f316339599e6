"""Hostile lines for a regex, derived from its parsed structure.

A backtracking engine takes time growing faster than its line wherever one run can be read
more than one way and a last character fails every way: a repeat beside another that
reads the same characters (``\\s*\\+?\\s*``, ``[\\w.]*\\.\\w*``), a repeat of a body that
reads a run several ways (``(\\w+\\s?)*``, ``(?:a|ab)*``), or, under ``search``, a repeat
that reads to the line's end from each of many starts (``batch_?norm\\w*(backward|grad)``
on ``batchnorm`` a thousand times over). So for each repeat of the pattern (at any depth:
inside groups, alternatives, look-arounds and other repeats) the lines are

- a **lead** (what the pattern reads before the repeat, each optional piece written and
  left out, each alternative once), then a **unit** of the repeat repeated, then an **end**;
- the lead and a unit together repeated (every copy a new start for ``search``), then an end.

A unit is each character the repeat reads, one per kind (:func:`kinds`: characters that
every class and literal of the pattern treats alike behave alike, so one stands for all),
or, for a body longer than one character, each way of writing the body. An end is nothing
or a character of a kind the unit does not read (it stops the run, so that what follows
the repeat fails and every split of the run is tried).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterator
from itertools import chain, zip_longest
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

Item = tuple[Any, Any]      # one parsed piece: (opcode, argument)

# Characters tried, the likeliest in real names and lines first (the first of each kind
# stands for it); all of printable ASCII, so that no class of the pattern is missed, and a
# few others (a control character, accented and non-ASCII letters and digits, a no-break
# space) that a class may treat apart.
ALPHABET = "".join(dict.fromkeys(
    "a1 _-.:/<>=,()[]{}@#%+*'\"\\|!?&$^~`\tZyx\n\r" + string.printable
    + "\x01\x7féſ٣\u00a0\u2028"))
MAX_WAYS = 4        # ways of writing one sequence (its first way, then one piece changed)
MAX_LEADS = 3       # leads of one repeat
MAX_UNITS = 6       # units of one repeat
MAX_ENDS = 3        # ends after one unit, besides nothing

_CATEGORY_PATTERNS = {
    sre.CATEGORY_DIGIT: r"\d", sre.CATEGORY_NOT_DIGIT: r"\D", sre.CATEGORY_SPACE: r"\s",
    sre.CATEGORY_NOT_SPACE: r"\S", sre.CATEGORY_WORD: r"\w", sre.CATEGORY_NOT_WORD: r"\W",
    sre.CATEGORY_LINEBREAK: r"\n", sre.CATEGORY_NOT_LINEBREAK: r"[^\n]"}
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)
_ONE_CHARACTER = (sre.LITERAL, sre.NOT_LITERAL, sre.ANY, sre.IN)
# (an int & an int is cheap, a flag's & is not)
_IGNORECASE, _DOTALL, _ASCII = int(re.IGNORECASE), int(re.DOTALL), int(re.ASCII)


def parsed(pattern: re.Pattern[Any]) -> tuple[list[Item], int]:
    """``pattern`` parsed, and the flags that change what its pieces read (a bytes
    pattern is read as Latin-1, as its lines are written, its classes ASCII)."""
    if isinstance(pattern.pattern, bytes):
        source, ascii_classes = pattern.pattern.decode("latin-1"), re.ASCII
    else:
        source, ascii_classes = pattern.pattern, re.NOFLAG
    flags = pattern.flags & (re.IGNORECASE | re.MULTILINE | re.DOTALL | re.VERBOSE | re.ASCII)
    return list(_parser.parse(source, flags | ascii_classes)), int(flags | ascii_classes)


def _in_class(char: str, items: list[Item], flags: int) -> bool:
    """Whether ``char`` is one of the class ``items`` (without its NEGATE)."""
    for op, value in items:
        if op is sre.LITERAL and chr(value) == char or \
                op is sre.RANGE and value[0] <= ord(char) <= value[1]:
            return True
        if op is sre.CATEGORY and re.fullmatch(_CATEGORY_PATTERNS.get(value, "(?!)"), char,
                                               flags & _ASCII):
            return True
    return False


def reads(item: Item, char: str, flags: int) -> bool:
    """Whether the one-character piece ``item`` reads ``char`` (either case under
    IGNORECASE).

    >>> reads(_parser.parse(r"[^\\s=]")[0], "=", 0), reads(_parser.parse("B")[0], "b", re.I)
    (False, True)
    """
    op, value = item
    cases = {char, char.lower(), char.upper()} if flags & _IGNORECASE else {char}
    if op is sre.LITERAL:
        return chr(value) in cases
    if op is sre.NOT_LITERAL:
        return chr(value) not in cases
    if op is sre.ANY:
        return char != "\n" or bool(flags & _DOTALL)
    negated = bool(value) and value[0][0] is sre.NEGATE
    members = value[1:] if negated else value
    return any(_in_class(case, members, flags) for case in cases) != negated


def _walk(items: list[Item]) -> Iterator[Item]:
    """Every piece of ``items``, at any depth."""
    for item in items:
        yield item
        for sequence in _inner(*item):
            yield from _walk(sequence)


def _inner(op: Any, value: Any) -> list[list[Item]]:
    """The sequences inside one piece."""
    if op in _REPEATS:
        return [list(value[2])]
    if op is sre.SUBPATTERN:
        return [list(value[-1])]
    if op is sre.ATOMIC_GROUP:
        return [list(value)]
    if op in (sre.ASSERT, sre.ASSERT_NOT):
        return [list(value[1])]
    if op is sre.BRANCH:
        return [list(branch) for branch in value[1]]
    if op is sre.GROUPREF_EXISTS:
        return [list(branch) for branch in value[1:] if branch is not None]
    return []


def kinds(items: list[Item], flags: int, alphabet: str = ALPHABET) -> list[str]:
    """One character of each kind: characters that every one-character piece of ``items``
    reads alike (both or neither) are of one kind, and the first of ``alphabet`` stands
    for them.

    >>> kinds(_parser.parse(r"\\s*[a-z_]+"), 0)        # "_" reads as "a" does
    ['a', '1', ' ']
    """
    pieces = list({repr(item): item for item in _walk(items) if item[0] in _ONE_CHARACTER}
                  .values())
    by_kind: dict[tuple[bool, ...], str] = {}
    for char in alphabet:
        by_kind.setdefault(tuple(reads(piece, char, flags) for piece in pieces), char)
    return list(by_kind.values())


class _Writer:
    """Texts that pieces of one pattern read."""

    def __init__(self, items: list[Item], flags: int, alphabet: str) -> None:
        self.flags = flags
        self.kinds = kinds(items, flags, alphabet)
        self._members: dict[str, list[str]] = {}

    def members(self, item: Item) -> list[str]:
        """One character of each kind that the one-character piece ``item`` reads."""
        key = repr(item)
        if key not in self._members:
            self._members[key] = [char for char in self.kinds if reads(item, char, self.flags)]
        return self._members[key]

    def first(self, items: list[Item]) -> str:
        """A text ``items`` read, each piece the first way (a repeat once at least)."""
        return "".join(self._first_one(*item) for item in items)

    def _first_one(self, op: Any, value: Any) -> str:
        if op in _ONE_CHARACTER:
            return next(iter(self.members((op, value))), "")
        if op in _REPEATS:
            low, high, body = value
            return self.first(list(body)) * min(max(low, 1), high)
        if op in (sre.SUBPATTERN, sre.ATOMIC_GROUP, sre.BRANCH, sre.GROUPREF_EXISTS):
            return self.first(_inner(op, value)[0])
        return ""   # a position (^, $, \b), a look-around, a back reference: nothing read

    def ways(self, items: list[Item]) -> list[str]:
        """Up to :data:`MAX_WAYS` texts ``items`` read: the first way, then the first way
        with one piece written another way (an optional piece left out, another
        alternative)."""
        found = [self.first(items)]
        for index, item in enumerate(items):
            for other in self._other_ways(*item):
                found.append(self.first(items[:index]) + other + self.first(items[index + 1:]))
        return list(dict.fromkeys(found))[:MAX_WAYS]

    def _other_ways(self, op: Any, value: Any) -> list[str]:
        if op in _REPEATS:
            low, high, body = value
            return ([""] if low == 0 else []) + [
                way * min(max(low, 1), high) for way in self.ways(list(body))[1:]]
        if op in (sre.BRANCH, sre.GROUPREF_EXISTS):
            return [self.first(sequence) for sequence in _inner(op, value)[1:]]
        if op in (sre.SUBPATTERN, sre.ATOMIC_GROUP):
            return self.ways(_inner(op, value)[0])[1:]
        return []

    def units(self, body: list[Item], after: list[Item]) -> list[str]:
        """What one turn of a repeat of ``body`` reads: each kind of character a
        one-character body reads, those that a piece right ``after`` it reads too first
        (there the two compete), or each way of writing a longer body."""
        if _one_character(body):
            followers = _starts(after)
            members = self.members(body[0])
            return sorted(members, key=lambda char: not any(
                char in self.members(piece) for piece in followers))[:MAX_UNITS]
        return [way for way in self.ways(body) if way][:MAX_UNITS]

    def ends(self, body: list[Item], unit: str) -> list[str]:
        """Characters of kinds that stop the run (that a one-character body does not read,
        or that a longer body's unit does not start with), then nothing."""
        stops = [char for char in self.kinds if char not in self.members(body[0])] \
            if _one_character(body) else [char for char in self.kinds if char != unit[:1]]
        return stops[:MAX_ENDS] + [""]


def _one_character(body: list[Item]) -> bool:
    return len(body) == 1 and body[0][0] in _ONE_CHARACTER


def _starts(items: list[Item]) -> list[Item]:
    """The one-character pieces that may read the first character of ``items`` (looking
    past pieces that may read nothing)."""
    found: list[Item] = []
    for op, value in items:
        if op in _ONE_CHARACTER:
            return found + [(op, value)]
        if op not in (sre.ASSERT, sre.ASSERT_NOT):
            for sequence in _inner(op, value):
                found += _starts(sequence)
        if not _may_read_nothing(op, value):
            return found
    return found


def _may_read_nothing(op: Any, value: Any) -> bool:
    """Whether one piece may match without reading a character (a position, a
    look-around, a back reference, an optional repeat, a group that may)."""
    if op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT, sre.GROUPREF) or \
            op in _REPEATS and value[0] == 0:
        return True
    return op not in _ONE_CHARACTER and any(
        all(_may_read_nothing(*item) for item in sequence) for sequence in _inner(op, value))


def _repeats(items: list[Item], leads: list[str], then: list[Item],
             writer: _Writer) -> Iterator[tuple[list[str], list[Item], list[Item]]]:
    """(leads, body, what follows) of each repeat in ``items`` at any depth: the leads
    being ``leads`` then each way of writing what comes before it in its own sequence; what
    follows it, the rest of its sequence then ``then`` (what follows the sequence)."""
    for index, (op, value) in enumerate(items):
        before = [lead + way for lead in leads for way in writer.ways(items[:index])]
        here = list(dict.fromkeys(before))[:MAX_LEADS]
        after = items[index + 1:] + then
        if op in _REPEATS and value[1] > 1:
            yield here, list(value[2]), after
        # inside a repeat, a turn may follow another; inside a look-around, nothing is read
        inner_then = (list(value[2]) + after if op in _REPEATS
                      else [] if op in (sre.ASSERT, sre.ASSERT_NOT) else after)
        for sequence in _inner(op, value):
            yield from _repeats(sequence, here, inner_then, writer)


def structural_lines(pattern: re.Pattern[Any]) -> Iterator[tuple[str, Callable[[int], str]]]:
    """(description, line of about N characters) pairs for the repeats of ``pattern`` (see
    the module's text), each line once: each repeat's likeliest line, then each one's
    second, and so on, so that the first few already try every repeat.

    >>> lines = dict(structural_lines(re.compile(r"batch_?norm\\w*(backward|grad)|bn_bw")))
    >>> lines["('batchnorm' + 'a') repeated + ''"](40)
    'batchnormabatchnormabatchnormabatchnorma'
    """
    items, flags = parsed(pattern)
    bytes_pattern = isinstance(pattern.pattern, bytes)
    writer = _Writer(items, flags, ALPHABET.encode("latin-1", "ignore").decode("latin-1")
                     if bytes_pattern else ALPHABET)
    each_repeat = [_lines_of(leads, body, after, writer)
                   for leads, body, after in _repeats(items, [""], [], writer)]
    seen = set()
    for line in chain.from_iterable(zip_longest(*each_repeat)):
        if line is not None and line[0] not in seen:
            seen.add(line[0])
            yield line


def _lines_of(leads: list[str], body: list[Item], after: list[Item],
              writer: _Writer) -> list[tuple[str, Callable[[int], str]]]:
    """The lines of one repeat, its likeliest first: by unit, then by end (one that stops
    the run before none), then by lead."""
    return [line for unit in writer.units(body, after) for end in writer.ends(body, unit)
            for lead in leads for line in _shapes(lead, unit, end)]


def _shapes(lead: str, unit: str, end: str) -> Iterator[tuple[str, Callable[[int], str]]]:
    yield (f"{lead!r} + {unit!r} repeated + {end!r}",
           lambda n: lead + unit * max((n - len(lead)) // len(unit), 1) + end)
    if lead:
        yield (f"({lead!r} + {unit!r}) repeated + {end!r}",
               lambda n: (lead + unit) * max(n // len(lead + unit), 1) + end)

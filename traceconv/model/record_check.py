"""Checks of a record traceconv wrote into a file for reading back (the Perfetto model
attribute, the Chrome writer's ``traceconv`` key): the record is part of the input, and a
file can say anything in it, so each part a reader uses is checked for its type, its range
and its count before it is used. A check raises :class:`Bad` naming the first place that
does not hold together; it allocates nothing in proportion to a number the file gives.

>>> try:
...     a_row([1, "x"], "tracks[0]", (a_text, a_text))
... except Bad as bad:
...     print(bad)
tracks[0][0]: expected a text
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

INT64 = 1 << 63
UINT64 = 1 << 64


class Bad(Exception):
    """A part of a record that does not hold together; its text says where."""


Check = Callable[[Any, str], None]
# A check's test of a whole list at once (C-speed type and range tests): a list of a
# million block addresses is judged without a Python call per item; only a list that fails
# it is walked item by item, to name the first bad one.
_HOLDS_FOR_ALL: dict[Check, Callable[[list[Any]], bool]] = {}


def _with_bulk(check: Check, holds_for_all: Callable[[list[Any]], bool]) -> Check:
    _HOLDS_FOR_ALL[check] = holds_for_all
    return check


def _ints_within(items: list[Any], lo: int, hi: int) -> bool:
    return set(map(type, items)) <= {int} and (not items or lo <= min(items) and max(items) < hi)


def fail(where: str, expected: str) -> None:
    raise Bad(f"{where}: expected {expected}")


def integer_in(lo: int, hi: int) -> Check:
    def check(value: Any, where: str) -> None:
        if type(value) is not int or not lo <= value < hi:
            fail(where, f"an integer in [{lo}, {hi})")
    return _with_bulk(check, lambda items: _ints_within(items, lo, hi))


def index_below(size: int) -> Check:
    def check(value: Any, where: str) -> None:
        if type(value) is not int or not 0 <= value < size:
            fail(where, f"an index below {size}")
    return _with_bulk(check, lambda items: _ints_within(items, 0, size))


def a_text(value: Any, where: str) -> None:
    if type(value) is not str:
        fail(where, "a text")


_with_bulk(a_text, lambda items: set(map(type, items)) <= {str})


def optional(check: Check) -> Check:
    def optional(value: Any, where: str) -> None:
        if value is not None:
            check(value, where)
    bulk = _HOLDS_FOR_ALL.get(check)
    if bulk is None:
        return optional
    return _with_bulk(optional, lambda items: bulk([v for v in items if v is not None]))


def one_of(values: frozenset[str]) -> Check:
    def check(value: Any, where: str) -> None:
        if type(value) is not str or value not in values:
            fail(where, "one of " + ", ".join(sorted(values)))
    return check


def number_or_text(value: Any, where: str) -> None:
    """An id the writer kept: a number, or its decimal text when beyond 64 bits."""
    if not (value is None or type(value) is str or type(value) is int
            and -INT64 <= value < UINT64):
        fail(where, "an integer, its text or null")


def a_list(value: Any, where: str, size: int | None = None) -> list[Any]:
    if type(value) is not list or size is not None and len(value) != size:
        fail(where, "a list" if size is None else f"a list of {size}")
    return value  # type: ignore[no-any-return]


def each(value: Any, where: str, check: Check) -> list[Any]:
    """``value``, a list whose every item passes ``check``; else the first bad item named.

    >>> each([0, 5, 1 << 63, 2], "memory.size", INT64_NUMBER)
    Traceback (most recent call last):
    ...
    traceconv.model.record_check.Bad: memory.size[2]: expected an integer in [-9223372036854775808, 9223372036854775808)
    >>> each([None, 3, True], "memory.free_ns", optional(INT64_NUMBER))   # (a bool is no int)
    Traceback (most recent call last):
    ...
    traceconv.model.record_check.Bad: memory.free_ns[2]: expected an integer in [-9223372036854775808, 9223372036854775808)
    """
    items = a_list(value, where)
    bulk = _HOLDS_FOR_ALL.get(check)
    if bulk is not None and bulk(items):
        return items
    for k, item in enumerate(items):
        check(item, f"{where}[{k}]")
    return items


def a_row(value: Any, where: str, checks: tuple[Check, ...]) -> None:
    for k, (item, check) in enumerate(zip(a_list(value, where, len(checks)), checks,
                                          strict=True)):
        check(item, f"{where}[{k}]")


def a_dict(value: Any, where: str) -> dict[str, Any]:
    if type(value) is not dict:
        fail(where, "an object")
    return value  # type: ignore[no-any-return]


def an_object(value: Any, where: str) -> None:
    a_dict(value, where)


_with_bulk(an_object, lambda items: set(map(type, items)) <= {dict})


def texts(value: Any, where: str) -> None:
    each(value, where, a_text)


INT64_NUMBER = integer_in(-INT64, INT64)


def numbers(value: Any, where: str) -> None:
    each(value, where, INT64_NUMBER)

"""Argument names that traceconv's writer nested at their dots, made flat again.

The writer marks each dict it makes of dotted names; such a dict reads back as a
:class:`NestedGroup`, its names already flat (``est`` → `` a`` is ``(" a", value)``), and
the row's name is put in front. A file written before the marks lists the nested names in
its model attribute instead: :class:`DottedNames`.

Reading them back asks, for each argument name (and each name made while flattening a
nested dict), whether a dotted name starts with it and a dot. Asked of every name in turn
that is quadratic (10^4 distinct dotted names on 10^4 slices: 10^8 comparisons); in sorted
order the names that start with a prefix lie together, so one binary search answers.

>>> names = DottedNames(["est. a", "x.y.z"])
>>> names.nests("est"), names.nests("x.y"), names.nests("x.y.z"), names.nests("es")
(True, True, False, False)
>>> "x.y.z" in names, sorted(names.heads)
(True, ['est', 'x'])
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator
from typing import Any


class NestedGroup(list):  # type: ignore[type-arg]
    """A dict the writer made of dotted names, read back: (name after the group's own
    name, value) pairs, flat."""

    __slots__ = ()


def expanded(pairs: Iterable[tuple[str, Any]]) -> Iterator[tuple[str, Any]]:
    """``pairs`` with each :class:`NestedGroup` value as the pairs it stands for.

    >>> list(expanded([("est", NestedGroup([(" a", 1), ("b.c", 2)])), ("est", 3)]))
    [('est. a', 1), ('est.b.c', 2), ('est', 3)]
    """
    for key, value in pairs:
        if type(value) is NestedGroup:
            for inner, item in value:
                yield f"{key}.{inner}", item
        else:
            yield key, value


class DottedNames:
    """A set of dotted argument names, with :meth:`nests` and their first parts; and the
    argument names under which the file has marked groups (``groups``)."""

    __slots__ = ("_names", "_sorted", "groups", "heads")

    def __init__(self, names: Iterable[str] = (), *, groups: Iterable[str] = ()) -> None:
        self.groups = frozenset(groups)
        self._names = frozenset(names)
        self._sorted = sorted(self._names)
        self.heads = frozenset(name.split(".", 1)[0] for name in self._names)

    def nests(self, prefix: str) -> bool:
        """Whether some name starts with ``prefix`` followed by a dot."""
        head = prefix + "."
        at = bisect_left(self._sorted, head)
        return at < len(self._sorted) and self._sorted[at].startswith(head)

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(self._sorted)

    def __len__(self) -> int:
        return len(self._names)

    def __bool__(self) -> bool:
        return bool(self._names) or bool(self.groups)

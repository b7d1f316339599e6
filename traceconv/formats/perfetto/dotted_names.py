"""The argument names that traceconv's writer nested at their dots, asked fast.

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


class DottedNames:
    """A set of dotted argument names, with :meth:`nests` and their first parts."""

    __slots__ = ("_names", "_sorted", "heads")

    def __init__(self, names: Iterable[str] = ()) -> None:
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

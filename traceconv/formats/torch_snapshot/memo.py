"""The unpickler's memo, numbered as CPython's ``_pickle`` numbers it, with shared runs.

``MEMOIZE`` (protocol 4+) stores the top of the stack at index *count of entries so far*;
``PUT`` stores at an explicit index. A snapshot memoizes every string and container, so a
memo that held each object would hold the whole file: a run of objects decoded once and
shared (the frames of a stack seen before) is kept as one :class:`Region` instead.
"""

from __future__ import annotations

import bisect
from typing import Any

# Values whose equality is identity as far as a reader can tell (nothing can change them).
IMMUTABLE = (str, bytes, int, float, bool, type(None))


class Memo:
    """Index -> object; ``count`` is where the next ``MEMOIZE`` stores.

    >>> memo = Memo()
    >>> memo.memoize("a"); memo.add_region(("x", "y")); memo.memoize("b")
    True
    >>> memo.get(0), memo.get(2), memo.get(3), memo.count
    ('a', 'y', 'b', 4)
    >>> memo.put(9, "c"); memo.memoize("d"); memo.get(5), memo.count   # C numbering
    ('d', 6)
    >>> memo.add_region(("z",))   # index 9 lies ahead: store one by one
    False
    """

    def __init__(self) -> None:
        self.table: dict[int, Any] = {}
        self.count = 0
        self.highest = -1               # highest explicit PUT index
        self._starts: list[int] = []    # first index of each region, ascending
        self._regions: list[tuple[Any, ...]] = []

    def put(self, index: int, obj: Any) -> None:
        """Store at ``index`` (``PUT``); a new index adds one to ``count``."""
        if index not in self.table and not (index < self.count and self._in_region(index)):
            self.count += 1
        self.table[index] = obj
        if index > self.highest:
            self.highest = index

    def memoize(self, obj: Any) -> None:
        """Store at ``count`` (``MEMOIZE``)."""
        index = self.count
        if index in self.table or index <= self.highest:
            self.put(index, obj)
        else:
            self.table[index] = obj
            self.count = index + 1

    def get(self, index: int) -> Any:
        """The object at ``index``; KeyError when nothing was stored there."""
        try:
            return self.table[index]
        except KeyError:
            found = bisect.bisect_right(self._starts, index) - 1
            if found >= 0 and index - self._starts[found] < len(self._regions[found]):
                return self._regions[found][index - self._starts[found]]
            raise

    def add_region(self, objects: tuple[Any, ...]) -> bool:
        """Memoize ``objects`` in order as one run; False (nothing done) where explicit
        indices lie ahead, so that each must be stored one by one."""
        if self.highest >= self.count:
            return False
        self._starts.append(self.count)
        self._regions.append(objects)
        self.count += len(objects)
        return True

    def _in_region(self, index: int) -> bool:
        found = bisect.bisect_right(self._starts, index) - 1
        return found >= 0 and index - self._starts[found] < len(self._regions[found])


class Overlay:
    """A memo for decoding a run of bytes on its own: reads fall through to ``base``
    (and are recorded as what the run depends on), writes stay here (and are recorded to
    be replayed on ``base`` each time the same bytes are met again)."""

    def __init__(self, base: Memo, foreign: set[int]) -> None:
        self.base = base
        self.foreign = foreign   # ids of containers read from ``base``: not to be changed
        self.count = base.count
        self.table: dict[int, Any] = {}
        self.writes: list[tuple[int | None, Any]] = []   # (index, or None for MEMOIZE; obj)
        self.depends: list[tuple[int, Any]] = []
        self.memoized: set[int] = set()
        self.position_dependent = False   # a GET of a MEMOIZE made in the run

    def _exists(self, index: int) -> bool:
        if index in self.table or index in self.base.table:
            return True
        try:
            self.base.get(index)
        except KeyError:
            return False
        return True

    def put(self, index: int, obj: Any) -> None:
        if not self._exists(index):
            self.count += 1
        self.table[index] = obj
        self.writes.append((index, obj))

    def memoize(self, obj: Any) -> None:
        index = self.count
        if not self._exists(index):
            self.count += 1
        self.table[index] = obj
        self.memoized.add(index)
        self.writes.append((None, obj))

    def get(self, index: int) -> Any:
        if index in self.table:
            self.position_dependent |= index in self.memoized
            return self.table[index]
        obj = self.base.get(index)
        self.depends.append((index, obj))
        if not isinstance(obj, IMMUTABLE):
            self.foreign.add(id(obj))
        return obj


def still_holds(memo: Memo, depends: tuple[tuple[int, Any], ...]) -> bool:
    """Whether every memo read of a decoded run would read the same value now."""
    for index, obj in depends:
        try:
            now = memo.get(index)
        except KeyError:
            return False
        if now is not obj and not (type(now) is type(obj) and isinstance(obj, IMMUTABLE)
                                   and now == obj):
            return False
    return True

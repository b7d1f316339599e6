"""Compact storage for the argument dicts of events.

A dict per event costs ~200 bytes before its values, and millions of events repeat a few
dozen key sets. :class:`ArgsColumn` keeps each distinct key tuple once and, per row, only
the key set's id and where its values start in one flat list: the values stay the very
objects that were given (no re-encoding), the keys are shared.

Rows read back as new dicts, so the column cannot be changed through them: writes go
through :meth:`ArgsColumn.set` (the tables' ``set_args``).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate, chain
from typing import Any, overload

import numpy as np

Args = dict[str, Any] | None

_NONE = -1  # key-set id of a row without args (distinct from an empty dict)


class ArgsColumn(Sequence[Args]):
    """Per-row argument dicts held as interned key sets plus a flat list of values.

    >>> column = ArgsColumn()
    >>> column.append({"bytes": 64, "stream": 7}); column.append(None)
    >>> column.append({"bytes": 128, "stream": 7})
    >>> column[2], column[1], len(column), len(column.key_sets)
    ({'bytes': 128, 'stream': 7}, None, 3, 1)
    >>> column.set(0, {"note": "moved"}); list(column)[0]
    {'note': 'moved'}
    """

    __slots__ = ("_ids", "key_sets", "key_set", "start", "values")

    def __init__(self, rows: Iterable[Args] = ()) -> None:
        self._ids: dict[tuple[Any, ...], int] = {}
        self.key_sets: list[tuple[Any, ...]] = []   # id -> keys, in insertion order
        self.key_set = array("i")                   # per row: key-set id, or -1 for None
        self.start = array("q")                     # per row: its first value in ``values``
        self.values: list[Any] = []
        self.extend(rows)

    def _key_set_id(self, keys: tuple[Any, ...]) -> int:
        found = self._ids.get(keys)
        if found is None:
            found = self._ids[keys] = len(self.key_sets)
            self.key_sets.append(keys)
        return found

    def append(self, args: Args) -> None:
        """Add one row (``args`` is read now: later changes to that dict are not seen)."""
        values = self.values
        self.start.append(len(values))
        if args is None:
            self.key_set.append(_NONE)
            return
        keys = tuple(args)
        found = self._ids.get(keys)   # inlined lookup: this is the readers' hot path
        self.key_set.append(self._key_set_id(keys) if found is None else found)
        values.extend(args.values())

    def extend(self, rows: Iterable[Args]) -> None:
        """Add many rows at once (each read now, as :meth:`append` reads one).

        >>> column = ArgsColumn(); column.extend([{"a": 1}, None, {"a": 2, "b": 3}, {"a": 4}])
        >>> list(column), column.key_sets
        ([{'a': 1}, None, {'a': 2, 'b': 3}, {'a': 4}], [('a',), ('a', 'b')])
        """
        rows = rows if isinstance(rows, list) else list(rows)
        if not rows:
            return
        get = self._ids.get
        if None in rows:
            keys: list[tuple[Any, ...] | None] = [None if a is None else tuple(a) for a in rows]
            found = [_NONE if k is None else get(k) for k in keys]
            sizes = [0 if k is None else len(k) for k in keys]
            rows = [a for a in rows if a]
        else:   # every row has args (a Kineto slice does): C-level maps, no Python per row
            keys = list(map(tuple, rows))  # type: ignore[arg-type]
            found = list(map(get, keys))  # type: ignore[arg-type]
            sizes = list(map(len, keys))  # type: ignore[arg-type]
        if None in found:   # new key sets: interned in row order
            found = [self._key_set_id(k) if f is None else f  # type: ignore[arg-type]
                     for f, k in zip(found, keys, strict=True)]
        values = self.values
        self.start.extend(accumulate(sizes[:-1], initial=len(values)))
        self.key_set.extend(found)  # type: ignore[arg-type]
        values.extend(chain.from_iterable(map(dict.values, rows)))  # type: ignore[arg-type]

    def _positions(self, key: str) -> np.ndarray:
        """Per key-set id, where ``key`` is in it (-1: absent); one more entry, -1, serves
        the rows without args (key-set id -1)."""
        return np.array([keys.index(key) if key in keys else -1 for keys in self.key_sets]
                        + [-1], dtype=np.int64)

    def values_of(self, key: str) -> tuple[np.ndarray, list[Any]]:
        """The rows whose args hold ``key`` (ascending), and its value in each: one pass
        over the key sets, no dict per row.

        >>> column = ArgsColumn([{"a": 1}, None, {"b": 2, "a": 3}, {"b": 4}])
        >>> rows, values = column.values_of("a"); rows.tolist(), values
        ([0, 2], [1, 3])
        """
        position = self._positions(key)
        if not len(self) or not (position >= 0).any():
            return np.zeros(0, dtype=np.int64), []
        at = position[np.frombuffer(self.key_set, dtype=np.int32)]
        rows = np.flatnonzero(at >= 0)
        return rows, self._gather(rows, at[rows])

    def get_many(self, rows: np.ndarray, key: str, default: Any = None) -> list[Any]:
        """The value of ``key`` in the args of each of ``rows`` (``default`` where absent).

        >>> ArgsColumn([{"a": 1}, None, {"b": 2, "a": 3}]).get_many(np.array([2, 1, 0]), "a")
        [3, None, 1]
        """
        if not len(rows):
            return []
        at = self._positions(key)[np.frombuffer(self.key_set, dtype=np.int32)[rows]]
        found = self._gather(rows, at)
        return [value if a >= 0 else default
                for value, a in zip(found, at.tolist(), strict=True)]

    def _gather(self, rows: np.ndarray, at: np.ndarray) -> list[Any]:
        """``values[start[row] + at]`` for each row (any value where ``at`` is -1)."""
        first = np.frombuffer(self.start, dtype=np.int64)[rows] + np.maximum(at, 0)
        values = self.values
        return [values[i] for i in np.minimum(first, max(len(values) - 1, 0)).tolist()] \
            if values else [None] * len(rows)

    def set(self, row: int, args: Args) -> None:
        """Replace the args of ``row`` (its old values stay unused in the flat list)."""
        if not -len(self) <= row < len(self):
            raise IndexError(row)
        self.start[row] = len(self.values)
        if args is None:
            self.key_set[row] = _NONE
            return
        self.key_set[row] = self._key_set_id(tuple(args))
        self.values.extend(args.values())

    def __len__(self) -> int:
        return len(self.key_set)

    @overload
    def __getitem__(self, row: int) -> Args: ...

    @overload
    def __getitem__(self, row: slice) -> list[Args]: ...

    def __getitem__(self, row: int | slice) -> Args | list[Args]:
        if isinstance(row, slice):
            return [self[i] for i in range(*row.indices(len(self)))]
        key_set = self.key_set[row]
        if key_set == _NONE:
            return None
        keys = self.key_sets[key_set]
        first = self.start[row]
        return dict(zip(keys, self.values[first:first + len(keys)], strict=True))

    def __iter__(self) -> Iterator[Args]:
        key_sets, values = self.key_sets, self.values
        for key_set, first in zip(self.key_set, self.start, strict=True):
            if key_set == _NONE:
                yield None
            else:
                keys = key_sets[key_set]
                yield dict(zip(keys, values[first:first + len(keys)], strict=True))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ArgsColumn | list):
            return len(self) == len(other) and all(
                a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by content

    def __repr__(self) -> str:
        return f"ArgsColumn({len(self)} rows, {len(self.key_sets)} key sets)"

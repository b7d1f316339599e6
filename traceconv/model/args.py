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
from typing import Any, overload

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
        append = self.append
        for args in rows:
            append(args)

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

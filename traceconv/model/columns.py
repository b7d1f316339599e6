"""Compact columnar event storage.

A trace can hold millions of events, so events are not objects: each table keeps one typed
``array.array`` per field (8 bytes per time, 4 per id) plus an :class:`~traceconv.model.args.ArgsColumn` for argument dicts (interned key sets).
Rows are addressed by their index. :meth:`numpy` gives columns for vectorised work (copies
while a trace is built, read-only views of a frozen one).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from .args import Args, ArgsColumn
from .frozen import FrozenWhenUnpickled, frozen_array
from .typed_arrays import extend_typed, read_only_view


class Slice(NamedTuple):
    """A read-only view of one slice row."""

    index: int  # type: ignore[assignment]  # (shadows tuple.index, on purpose)
    track: int
    start: int
    dur: int
    name: str
    category: str
    args: Args

    @property
    def end(self) -> int:
        return self.start + self.dur


class Instant(NamedTuple):
    index: int  # type: ignore[assignment]  # (shadows tuple.index, on purpose)
    track: int
    ts: int
    name: str
    category: str
    args: Args


class CounterSample(NamedTuple):
    index: int  # type: ignore[assignment]  # (shadows tuple.index, on purpose)
    track: int
    ts: int
    value: float


class Flow(NamedTuple):
    """A directed link between two slices (by row index)."""

    index: int  # type: ignore[assignment]  # (shadows tuple.index, on purpose)
    source: int
    target: int
    category: str
    name: str


class _Table(FrozenWhenUnpickled):
    """Shared machinery: named typed columns and the row count."""

    _columns: tuple[tuple[str, str], ...] = ()
    # columns that may be left out when extending (they get this value)
    _defaults: dict[str, int] = {}

    def __init__(self) -> None:
        for column, typecode in self._columns:
            setattr(self, column, array(typecode))

    def __len__(self) -> int:
        return len(getattr(self, self._columns[0][0]))

    def __copy__(self) -> _Table:
        """A table sharing the columns (frozen ones stay read-only) whose own columns may
        be replaced: a view that swaps one column of a frozen trace.

        >>> import copy; table = CounterTable(); table.freeze(); view = copy.copy(table)
        >>> view.track = array("i"); view.track is table.track
        False
        """
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.__dict__.pop("_frozen", None)
        return new

    def freeze(self) -> None:
        """Make every column read-only (:class:`~traceconv.model.frozen.FrozenArray`) and
        the table refuse new columns."""
        if self.__dict__.get("_frozen"):
            return
        for column, _ in self._columns:
            setattr(self, column, frozen_array(getattr(self, column)))
        object.__setattr__(self, "_frozen", True)

    def numpy(self, column: str) -> np.ndarray:
        """``column`` as a numpy array (int64 / int32 / float64): a copy while the table
        is built, a read-only view (no copy) once it is frozen.

        >>> table = CounterTable(); _ = table.append(0, 5, 1.0); table.freeze()
        >>> view = table.numpy("ts"); view.tolist(), view.flags.writeable
        ([5], False)
        """
        if not self.__dict__.get("_frozen"):
            return self.numpy_view(column).copy()
        return self.numpy_view(column)

    def numpy_view(self, column: str) -> np.ndarray:
        """``column`` as a read-only numpy array that shares its memory, frozen or not: for
        a reader that looks at a column many times while nothing is added (the column
        cannot grow while the view is alive).

        >>> table = CounterTable(); _ = table.append(0, 5, 1.0)
        >>> view = table.numpy_view("ts"); view.tolist(), view.flags.writeable
        ([5], False)
        """
        return read_only_view(getattr(self, column))


class _EventTable(_Table):
    """A table whose rows carry argument dicts."""

    def __init__(self) -> None:
        super().__init__()
        self.args = ArgsColumn()

    def freeze(self) -> None:
        if not self.__dict__.get("_frozen"):
            self.args.freeze()
        super().freeze()

    def extend(self, args: list[Args], **columns: np.ndarray | list[int]) -> None:
        """Append ``len(args)`` rows at once, one sequence per column (ids as interned).

        >>> table = InstantTable()
        >>> table.extend([None, {"a": 1}], track=[0, 0], ts=[5, 7], name=[0, 0], category=[0, 0])
        >>> table.ts.tolist(), table.args[1]
        ([5, 7], {'a': 1})
        """
        self._extend_columns(len(args), columns)
        self.args.extend(args)

    def extend_sets(self, key_sets: Sequence[tuple[str, ...]], sets: np.ndarray,
                    values: list[Any], **columns: np.ndarray | list[int]) -> None:
        """:meth:`extend` with the args as key-set numbers and all values one row after
        another (see ``ArgsColumn.extend_sets``).

        >>> table = InstantTable()
        >>> table.extend_sets([("a",)], np.array([0]), [1], track=[0], ts=[5], name=[0],
        ...                   category=[0])
        >>> table.args[0]
        {'a': 1}
        """
        self._extend_columns(len(sets), columns)
        self.args.extend_sets(key_sets, sets, values)

    def extend_json(self, texts: bytes, sizes: Sequence[int] | np.ndarray,
                    **columns: np.ndarray | list[int]) -> None:
        """:meth:`extend` with the args as JSON object texts (see ``ArgsColumn.extend_json``).

        >>> table = InstantTable()
        >>> table.extend_json(b'{"a": 1},', [8], track=[0], ts=[5], name=[0], category=[0])
        >>> table.args[0]
        {'a': 1}
        """
        self._extend_columns(len(sizes), columns)
        self.args.extend_json(texts, sizes)

    def _extend_columns(self, rows: int, columns: dict[str, np.ndarray | list[int]]) -> None:
        arrays = {column: np.asarray(columns[column], dtype=typecode)
                  if column in columns or column not in self._defaults
                  else np.full(rows, self._defaults[column], dtype=typecode)
                  for column, typecode in self._columns}
        if any(len(values) != rows for values in arrays.values()):
            raise ValueError("every column needs one value per row")
        targets = [getattr(self, column) for column in arrays]   # (all, before any grows)
        for target, values in zip(targets, arrays.values(), strict=True):
            extend_typed(target, values)

    def set_args(self, row: int, args: Args) -> None:
        """Replace the args of ``row`` (rows read back as copies: this is the way to change them).

        >>> table = InstantTable(); table.append(0, 5, 0, 0, {"a": 1})
        0
        >>> table.set_args(0, {"a": 2}); table.args[0]
        {'a': 2}
        """
        self.args.set(row, args)


class SliceTable(_EventTable):
    """Slices: (track, start ns, duration ns, name id, category id, activity, args).

    ``activity`` is the slice's :class:`~traceconv.model.activity.Activity` value (kind
    and roles) as its reader stated it, ``0`` (unknown) by default. Rows appended column
    by column (a reader's fast path, or code that predates the column) read as unknown:
    the column is padded when it is next read.
    """

    _columns = (("track", "i"), ("start", "q"), ("dur", "q"), ("name", "i"), ("category", "i"),
                ("activity", "b"))
    _defaults = {"activity": 0}
    track: array[int]
    start: array[int]
    dur: array[int]
    name: array[int]
    category: array[int]
    _activity: array[int]

    @property
    def activity(self) -> array[int]:
        """One int8 per row (see the class text). The rows are those whose args are in:
        args are appended last, so a column read while others are being extended is
        padded to the rows already complete.

        >>> table = SliceTable(); table.track.append(0); table.args.append(None)
        >>> table.activity.tolist()
        [0]
        """
        column = self._activity
        if len(column) < len(self.args):
            column.frombytes(bytes(len(self.args) - len(column)))
        return column

    @activity.setter
    def activity(self, column: array[int]) -> None:
        self._activity = column

    def set_activity(self, values: np.ndarray | Sequence[int]) -> None:
        """Replace the whole activity column (one value per row).

        >>> table = SliceTable(); _ = table.append(0, 0, 5, 0, 0)
        >>> table.set_activity([7]); table.activity.tolist()
        [7]
        """
        data = np.asarray(values, dtype=np.int8)
        if len(data) != len(self.track):
            raise ValueError("the activity column needs one value per row")
        self.activity = array("b", data.tobytes())

    def append(self, track: int, start: int, dur: int, name: int, category: int,
               args: Args = None, activity: int = 0) -> int:
        index = len(self.args)
        # the int64 columns first: a time that does not fit raises before any column grew
        self.start.append(start)
        try:
            self.dur.append(dur)
        except (OverflowError, TypeError):
            self.start.pop()
            raise
        self.track.append(track)
        self.name.append(name)
        self.category.append(category)
        if len(self._activity) < index:   # (rows appended column by column before)
            self._activity.frombytes(bytes(index - len(self._activity)))
        self._activity.append(activity)
        self.args.append(args)
        return index


class InstantTable(_EventTable):
    """Instants: (track, ts ns, name id, category id, args)."""

    _columns = (("track", "i"), ("ts", "q"), ("name", "i"), ("category", "i"))
    track: array[int]
    ts: array[int]
    name: array[int]
    category: array[int]

    def append(self, track: int, ts: int, name: int, category: int, args: Args = None) -> int:
        index = len(self.args)
        self.ts.append(ts)   # first: a time that does not fit raises before any column grew
        self.track.append(track)
        self.name.append(name)
        self.category.append(category)
        self.args.append(args)
        return index


class CounterTable(_Table):
    """Counter samples: (track, ts ns, value)."""

    _columns = (("track", "i"), ("ts", "q"), ("value", "d"))
    track: array[int]
    ts: array[int]
    value: array[float]

    def append(self, track: int, ts: int, value: float) -> int:
        index = len(self.ts)
        self.ts.append(ts)   # first: a time that does not fit raises before any column grew
        try:
            self.value.append(value)
        except (OverflowError, TypeError):
            self.ts.pop()
            raise
        self.track.append(track)
        return index


class FlowTable(_Table):
    """Flows: (source slice row, target slice row, category id, name id)."""

    _columns = (("source", "q"), ("target", "q"), ("category", "i"), ("name", "i"))
    source: array[int]
    target: array[int]
    category: array[int]
    name: array[int]

    def append(self, source: int, target: int, category: int, name: int) -> int:
        index = len(self.source)
        self.source.append(source)
        self.target.append(target)
        self.category.append(category)
        self.name.append(name)
        return index


"""Memory blocks held as columns: :attr:`Trace.memory` and :attr:`Trace.reservations`.

A profile of a long run holds millions of allocations. As records, each took about 250
bytes (the record and its two times as Python ints), over a third of a Kineto trace's
model; as columns it takes 70. A :class:`BlockTable` is a sequence of
:class:`~traceconv.model.MemoryBlock`: its items are views of one row (a ``MemoryBlock``
in every way: fields, ``==``, ``repr``, ``dataclasses.replace``, pickling as a plain
record). While the trace is built, setting a view's field changes its row (a reader that
pairs a free with an earlier alloc sets that block's ``free_ns``); once it is frozen, the
views refuse changes as frozen records do.

Addresses, sizes and times are int64 columns (a time may be None); the text-like fields
(device, names, owner links, category, shape, dtype) are codes into the table's distinct
values; args are kept only for the blocks that have some. Readers that pair 10^6 blocks in
numpy add them as columns (:meth:`BlockTable.extend_columns`), with no record made.

>>> table = BlockTable([MemoryBlock(64, 128, 5, None, device="cuda:0")])
>>> block = table[0]; block.free_ns = 9; table[0]
MemoryBlock(address=64, size=128, alloc_ns=5, free_ns=9, device='cuda:0', pool='', name='', owner_op=None, owner_name=None, owner_tensor=None, category='', shape=None, dtype=None, args={})
>>> table.freeze(); table[0].size = 1
Traceback (most recent call last):
...
traceconv.model.frozen.FrozenTraceError: this trace is frozen (read-only): build a new one (Trace.copy(), traceconv.model.copying)
"""

from __future__ import annotations

import dataclasses
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import compress, repeat
from typing import Any, overload

import numpy as np

from ..numbers import INT64_MAX, INT64_MIN, NumberError, to_int64
from .entities import MemoryBlock
from .frozen import (
    FrozenDict,
    FrozenTraceError,
    FrozenWhenUnpickled,
    deep_freeze,
    deep_freeze_in_place,
    frozen_array,
    frozen_list,
    seal_records,
)
from .typed_arrays import extend_typed, read_only_view

FIELDS = tuple(field.name for field in dataclasses.fields(MemoryBlock))
NUMBERS = ("address", "size", "alloc_ns", "free_ns")   # int64 columns
TIMES = ("alloc_ns", "free_ns")                         # ... that may be None
CODED = tuple(name for name in FIELDS if name not in NUMBERS and name != "args")
_NO_ARGS: FrozenDict[str, Any] = FrozenDict()


class BlockTable(FrozenWhenUnpickled, Sequence[MemoryBlock]):
    """Memory blocks as columns (see the module text); ``blocks``: the first ones."""

    def __init__(self, blocks: Iterable[MemoryBlock] = ()) -> None:
        self._numbers = {name: array("q") for name in NUMBERS}
        self._known = {name: array("b") for name in TIMES}     # 1: the time is not None
        self._codes = {name: array("i") for name in CODED}
        self._values: list[Any] = []             # the coded fields' distinct values
        self._code_of: dict[tuple[type, Any], int] = {}
        self._args: dict[int, Any] = {}          # row -> args, for rows that have some
        self._frozen = False
        self.extend(blocks)

    # -- reading ------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._numbers["address"])

    @overload
    def __getitem__(self, index: int) -> MemoryBlock: ...

    @overload
    def __getitem__(self, index: slice) -> list[MemoryBlock]: ...

    def __getitem__(self, index: int | slice) -> MemoryBlock | list[MemoryBlock]:
        if isinstance(index, slice):
            return [_view(self, row) for row in range(*index.indices(len(self)))]
        row = index.__index__()
        if row < 0:
            row += len(self)
        if not 0 <= row < len(self):
            raise IndexError("memory block index out of range")
        return _view(self, row)

    def __iter__(self) -> Iterator[MemoryBlock]:
        return map(_view, repeat(self), range(len(self)))

    def rows(self, rows: Iterable[int]) -> list[MemoryBlock]:
        """The blocks of ``rows`` (row numbers in range, e.g. a numpy selection's).

        >>> [b.size for b in BlockTable([MemoryBlock(0, 8), MemoryBlock(8, 4)]).rows([1])]
        [4]
        """
        return list(map(_view, repeat(self), map(int, rows)))

    def __add__(self, other: Iterable[MemoryBlock]) -> list[MemoryBlock]:
        return [*self, *other]

    def __radd__(self, other: Iterable[MemoryBlock]) -> list[MemoryBlock]:
        return [*other, *self]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None   # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"BlockTable({list(self)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return _unpickled, (self.__dict__,)

    @property
    def frozen(self) -> bool:
        return self._frozen

    def _args_at(self, row: int) -> Any:
        """Row ``row``'s args (a changeable empty dict, kept, while the table is built)."""
        args = self._args.get(row)
        if args is None:
            args = _NO_ARGS if self._frozen else self._args.setdefault(row, {})
        return args

    def held_args(self) -> Iterator[tuple[int, Any]]:
        """(row, args) of the blocks whose args are not empty, in row order.

        >>> list(BlockTable([MemoryBlock(0, 8), MemoryBlock(8, 4, args={"a": 1})]).held_args())
        [(1, {'a': 1})]
        """
        return ((row, self._args[row]) for row in sorted(self._args) if self._args[row])

    def numbers(self, name: str) -> np.ndarray:
        """Int64 column ``name`` (``address``, ``size``, ``alloc_ns``, ``free_ns``; a time
        that is None reads as 0: see :meth:`known`), read-only.

        >>> BlockTable([MemoryBlock(0, 8, None, 4)]).numbers("free_ns").tolist()
        [4]
        """
        return read_only_view(self._numbers[name])

    def known(self, name: str) -> np.ndarray:
        """Per block, whether its time ``name`` (``alloc_ns`` or ``free_ns``) is not None,
        read-only.

        >>> BlockTable([MemoryBlock(0, 8, None, 4)]).known("alloc_ns").tolist()
        [False]
        """
        return read_only_view(self._known[name]).view(bool)   # (0 or 1 each: no copy)

    def coded(self, name: str) -> tuple[list[Any], np.ndarray]:
        """Coded field ``name`` as (the table's distinct values, per block its value's
        number in them): ``values[codes[k]]`` is block k's.

        >>> values, codes = BlockTable([MemoryBlock(0, 8, device="a")]).coded("device")
        >>> values[codes[0]]
        'a'
        """
        return self._values, read_only_view(self._codes[name])

    def distinct(self, name: str) -> list[Any]:
        """The values coded field ``name`` takes, in the order of their codes.

        >>> BlockTable([MemoryBlock(0, 8, device="b"), MemoryBlock(8, 8, device="a")]
        ...            ).distinct("device")
        ['b', 'a']
        """
        values, codes = self.coded(name)
        return [values[code] for code in np.unique(codes).tolist()]

    def rows_where(self, name: str, test: Callable[[Any], bool]) -> np.ndarray:
        """The numbers of the blocks whose coded field ``name`` passes ``test`` (asked once
        per distinct value).

        >>> table = BlockTable([MemoryBlock(0, 8, device="cpu"), MemoryBlock(8, 8, device="cuda:0")])
        >>> table.rows_where("device", lambda d: d.startswith("cuda")).tolist()
        [1]
        """
        values, codes = self.coded(name)
        passing = [code for code in np.unique(codes).tolist() if test(values[code])]
        return np.flatnonzero(np.isin(codes, passing))

    def column(self, name: str) -> list[Any]:
        """Field ``name`` of every block, as a list.

        >>> BlockTable([MemoryBlock(0, 8, None, 4)]).column("alloc_ns")
        [None]
        """
        if name in self._codes:
            values = self._values
            return [values[code] for code in self._codes[name]]
        if name == "args":   # (read-only empties: reading makes no dict per block)
            return [self._args.get(row, _NO_ARGS) for row in range(len(self))]
        values = self._numbers[name].tolist()
        if name in self._known:
            known = self._known[name]
            return [value if known[k] else None for k, value in enumerate(values)]
        return values

    # -- building -----------------------------------------------------------------------

    def append(self, block: MemoryBlock) -> None:
        """Add ``block``: its address, size and times must fit int64 (``NumberError``
        otherwise: the memory analyses and the writers hold them in int64 arrays); a float
        or numeric text is stored as the int it names. The table holds its fields from now
        on, so ``block`` becomes read-only (its ``args`` dict is the table's, and stays
        changeable while the trace is built): change ``table[i]`` instead.

        >>> table = BlockTable(); table.append(MemoryBlock(8, 4.0, "5", None, device="cpu"))
        >>> table[0].size, table[0].alloc_ns, table[0].free_ns, table[0].device
        (4, 5, None, 'cpu')
        """
        # A row at a time, field by field: readers add their blocks one by one as they pair
        # frees with allocs, and the column path's fixed numpy cost (some 70 µs a call) made
        # 300 k blocks take 20 s. The values are checked as the column path checks them.
        self._refuse_if_frozen()
        row = len(self)
        numbers = [_int64(getattr(block, name), name) for name in NUMBERS]   # (all, first)
        for name, number in zip(NUMBERS, numbers, strict=True):
            self._numbers[name].append(0 if number is None else number)
            if name in self._known:
                self._known[name].append(number is not None)
        for name in CODED:
            self._codes[name].append(self._code(getattr(block, name)))
        self._keep_args(row, block.args)
        _hand_over([block])

    def extend(self, blocks: Iterable[MemoryBlock], *,
               unreadable: dict[int, str] | None = None) -> None:
        """:meth:`append` each of ``blocks`` (none added when one does not fit; with
        ``unreadable``, those left out instead: see :meth:`extend_columns`)."""
        blocks = list(blocks)
        count = len(blocks)
        self.extend_columns(
            {name: np.fromiter((getattr(b, name) for b in blocks), object, count)
             for name in NUMBERS},
            {name: ([getattr(b, name) for b in blocks], np.arange(count)) for name in CODED},
            [b.args for b in blocks], unreadable=unreadable)
        _hand_over(blocks)

    def extend_columns(self, numbers: dict[str, np.ndarray], coded: dict[str, Any],
                       args: Sequence[Any] | None = None, *,
                       unreadable: dict[int, str] | None = None) -> None:
        """Add blocks given as columns: ``numbers`` maps ``address``, ``size``, ``alloc_ns``
        and ``free_ns`` to int64 arrays (a time column may be a masked array: masked is
        None); ``coded`` maps other fields to one value for every block or to
        (values, codes per block); ``args``, when given, holds each block's args dict (the
        table keeps them, not copies). Fields not given take the record's default.

        A number that does not fit int64 raises ``NumberError`` (none added); given
        ``unreadable``, its block is left out instead and ``unreadable`` maps its position
        in the given columns to why (what the trace builder counts).

        >>> table = BlockTable()
        >>> table.extend_columns({"address": np.array([8, 16]), "size": np.array([4, 4]),
        ...     "alloc_ns": np.array([1, 2]),
        ...     "free_ns": np.ma.array([5, 0], mask=[False, True])},
        ...     {"device": "CPU", "owner_name": (["mm", None], np.array([0, 1]))})
        >>> [(b.free_ns, b.owner_name, b.device) for b in table]
        [(5, 'mm', 'CPU'), (None, None, 'CPU')]
        >>> left_out = {}
        >>> table.extend_columns({"address": np.array(["0x10", 24], object),
        ...     "size": np.array([4, 2**64], object)}, {}, unreadable=left_out)
        >>> len(table), left_out
        (2, {0: "memory block address is not a number: '0x10'", 1: 'memory block size is out of the int64 range: 18446744073709551616'})
        """
        self._refuse_if_frozen()
        first, count = len(self), len(numbers["address"])
        checked = {}   # (all converted before any is added: none added when one does not fit)
        for name in NUMBERS:
            values = numbers.get(name)
            if values is None:
                values = np.ma.masked_all(count, np.int64)
            checked[name] = _int64_column(np.ma.getdata(values), np.ma.getmaskarray(values),
                                          name, unreadable)
        kept = None
        if unreadable:
            kept = np.ones(count, dtype=bool)
            kept[list(unreadable)] = False
            checked = {name: (values[kept], mask[kept])
                       for name, (values, mask) in checked.items()}
            args = None if args is None else list(compress(args, kept.tolist()))
        for name, (values, mask) in checked.items():
            extend_typed(self._numbers[name], values)
            if name in self._known:
                extend_typed(self._known[name], ~mask)
        defaults = {f.name: f.default for f in dataclasses.fields(MemoryBlock) if f.name in CODED}
        for name in CODED:
            given = coded.get(name, defaults[name])
            if isinstance(given, tuple) and len(given) == 2 and isinstance(given[1], np.ndarray):
                values, codes = given
                mine = np.array([self._code(v) for v in values], dtype=np.int32)
                extend_typed(self._codes[name], mine[codes if kept is None else codes[kept]])
            else:
                extend_typed(self._codes[name],
                             np.full(len(checked["address"][0]), self._code(given), np.int32))
        for row, held in enumerate(args or (), first):
            self._keep_args(row, held)

    def set(self, row: int, name: str, value: Any) -> None:
        """Set field ``name`` of row ``row`` (what setting a view's field does)."""
        self._refuse_if_frozen()
        if name in self._codes:
            self._codes[name][row] = self._code(value)
        elif name == "args":
            self._args[row] = value
        else:
            number = _int64(value, name)
            if name in self._known:
                self._known[name][row] = number is not None
            self._numbers[name][row] = 0 if number is None else number

    def writable(self, name: str) -> np.ndarray:
        """Int64 column ``name`` as a numpy array that writes through: for the model's
        repairs, which clamp times and sizes a column at a time while the trace is built."""
        self._refuse_if_frozen()
        column = self._numbers[name]
        return np.frombuffer(column, np.int64) if len(column) else np.zeros(0, np.int64)

    def freeze(self) -> None:
        """Refuse changes from now on (the args and values too)."""
        if self._frozen:
            return
        for columns in (self._numbers, self._known, self._codes):
            for name, column in columns.items():
                columns[name] = frozen_array(column)  # type: ignore[assignment]  # (read as an array)
        deep_freeze_in_place(self._values)
        self._values = frozen_list(self._values)   # (handed out by coded())
        self._args = {row: deep_freeze(args) for row, args in self._args.items() if args}
        self._frozen = True

    def _keep_args(self, row: int, args: Any) -> None:
        # (an empty dict too while the table is built: its reader may fill it later)
        if args or type(args) is dict:
            self._args[row] = args

    def _refuse_if_frozen(self) -> None:
        if self._frozen:
            raise FrozenTraceError

    def _code(self, value: Any) -> int:
        """The number of ``value`` in the distinct values (a new one when unseen)."""
        try:
            key = (type(value), value)
            code = self._code_of.get(key)
        except TypeError:   # (a list: not shared, kept as given)
            self._values.append(value)
            return len(self._values) - 1
        if code is None:
            code = self._code_of[key] = len(self._values)
            self._values.append(value)
        return code


def coded_column(values: Iterable[Any]) -> tuple[list[Any], np.ndarray]:
    """A field's values for :meth:`BlockTable.extend_columns`: (the distinct ones, per
    value its number in them), numbered in the order of their first use, as adding the
    blocks one by one numbers them (the order in which a field's values are listed).

    >>> coded_column(["cuda:0", "cpu", "cuda:0"])
    (['cuda:0', 'cpu'], array([0, 1, 0]))
    """
    seen: dict[Any, int] = {}
    codes = np.fromiter((seen.setdefault(value, len(seen)) for value in values), np.int64)
    return list(seen), codes


def renumbered_by_first_use(values: Sequence[Any], codes: np.ndarray
                            ) -> tuple[list[Any], np.ndarray]:
    """(values, codes) of a field, as :func:`coded_column` numbers them: the values used,
    in the order of their first use in ``codes``.

    >>> renumbered_by_first_use(["a", "b", "c"], np.array([2, 0, 2]))
    (['c', 'a'], array([0, 1, 0]))
    """
    used, first = np.unique(codes, return_index=True)
    order = used[np.argsort(first)]
    number = np.zeros(len(values), dtype=np.int64)
    number[order] = np.arange(len(order))
    return [values[code] for code in order.tolist()], number[codes]


def _hand_over(blocks: list[MemoryBlock]) -> None:
    """Blocks added to a table are read-only from now on: a change would reach the record,
    not the table (change ``trace.memory[i]`` instead). Views stay as they are."""
    seal_records([block for block in blocks if type(block) is not BlockView])


def _unpickled(state: dict[str, Any]) -> BlockTable:
    table = BlockTable.__new__(BlockTable)
    table.__setstate__(dict(state))
    return table


def _int64_column(values: np.ndarray, mask: np.ndarray, name: str,
                  unreadable: dict[int, str] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``values`` (masked: None) of int64 field ``name`` as int64, checked as
    :func:`_int64` checks one (an object array: value by value); with ``unreadable``, a
    value that does not fit is noted there by its position (and read as 0) instead of
    raising."""
    if values.dtype.kind == "i":   # (signed integers fit; any other kind is checked)
        return values.astype(np.int64, copy=False), mask
    if values.dtype.kind == "u" and not (values > np.uint64(INT64_MAX)).any():
        return values.astype(np.int64), mask   # (an unsigned column that fits: at once)
    listed = values.tolist()
    if values.dtype.kind == "O" and all(type(value) is int for value in listed):
        try:   # (Python ints, as a reader hands over its cells: at once when all fit)
            return np.where(mask, 0, np.array(listed, dtype=np.int64)), mask
        except OverflowError:
            pass
    checked = []
    for at, (value, hidden) in enumerate(zip(listed, mask.tolist(), strict=True)):
        try:
            checked.append(None if hidden else _int64(value, name))
        except NumberError as exc:
            if unreadable is None:
                raise
            unreadable.setdefault(at, str(exc))
            checked.append(0)
    mask = np.array([value is None for value in checked], dtype=bool)
    return np.array([0 if value is None else value for value in checked], np.int64), mask


def _int64(value: Any, name: str) -> int | None:
    """``value`` of int64 field ``name`` (None: a time that is not known)."""
    if type(value) is int and INT64_MIN <= value <= INT64_MAX:
        return value
    if value is None and name in TIMES:
        return None
    return to_int64(value, f"memory block {'time' if name in TIMES else name}")


class BlockView(MemoryBlock):
    """One row of a :class:`BlockTable`, read and set through the table."""

    __slots__ = ("_table", "_row")

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        return MemoryBlock(*args, **kwargs)   # (dataclasses.replace: a plain record)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MemoryBlock):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in FIELDS)

    __hash__ = None   # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(_record(self))

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        return MemoryBlock, tuple(getattr(self, name) for name in FIELDS)

    def __copy__(self) -> MemoryBlock:
        return _record(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> MemoryBlock:
        import copy
        return MemoryBlock(*(copy.deepcopy(getattr(self, name), memo) for name in FIELDS))


def _record(view: MemoryBlock) -> MemoryBlock:
    return MemoryBlock(*(getattr(view, name) for name in FIELDS))


def _field(name: str) -> property:
    """The view's property for field ``name``: read straight from the column (a loop over
    10^6 blocks reads millions of fields), set through :meth:`BlockTable.set`."""
    if name in CODED:
        def read(view: Any) -> Any:
            table = view._table
            return table._values[table._codes[name][view._row]]
    elif name in TIMES:
        def read(view: Any) -> Any:
            table = view._table
            return table._numbers[name][view._row] if table._known[name][view._row] else None
    elif name in NUMBERS:
        def read(view: Any) -> Any:
            return view._table._numbers[name][view._row]
    else:
        def read(view: Any) -> Any:
            return view._table._args_at(view._row)

    def write(view: Any, value: Any) -> None:
        view._table.set(view._row, name, value)

    return property(read, write, doc=f"The block's {name}.")


for _name in FIELDS:
    setattr(BlockView, _name, _field(_name))


def _view(table: BlockTable, row: int) -> MemoryBlock:
    view = object.__new__(BlockView)
    object.__setattr__(view, "_table", table)
    object.__setattr__(view, "_row", row)
    return view

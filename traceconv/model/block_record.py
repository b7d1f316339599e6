"""The memory blocks (or reservations) of a trace traceconv writes, kept for reading back:
one record, in the Perfetto model attribute and the Chrome writer's ``traceconv`` key, made
by one rule and read back by one rule, so what one writer keeps the other keeps.

A viewer sees blocks only as the live-bytes counters made of them (written as any counter);
the record keeps every field of every block: one list per field, a field of few distinct
values as [values, index per block], made into text a chunk of values at a time, so a trace
of 10^7 blocks never holds a field as a list of objects nor more than a piece of the text.
Reading it back checks every column (:func:`check_blocks`) before any is used.

>>> from traceconv.model.entities import MemoryBlock
>>> text = b"".join(record_text([MemoryBlock(64, 128, 5, None, device="cpu")]))
>>> table = BlockTable(); add_blocks(table, orjson.loads(text)); list(table)[0].device
'cpu'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from copy import copy
from typing import Any

import numpy as np
import orjson

from .block_table import NUMBERS, BlockTable
from .entities import MemoryBlock
from .json_values import json_text, jsonable
from .record_check import (
    INT64_NUMBER,
    Bad,
    Check,
    a_dict,
    a_list,
    a_text,
    an_object,
    each,
    index_below,
    numbers,
    optional,
)
from .trace import Trace

BLOCK_FIELDS = tuple(field.name for field in dataclasses.fields(MemoryBlock))
REPEATED = ("device", "pool", "name", "owner_op", "owner_name", "owner_tensor", "category",
             "shape", "dtype")   # few distinct values: kept once, and an index per block
CHUNK = 1 << 16   # a field's values made into text together


def record_text(blocks: Sequence[MemoryBlock]) -> Iterator[bytes]:
    """The JSON text of :func:`block_columns` for ``blocks``, in pieces made as they are
    asked for (a writer may ask twice: once for the size, once to write).

    >>> b"".join(record_text([]))[:22]
    b'{"address":[],"size":['
    """
    table = _table(blocks)
    yield b"{"
    for k, name in enumerate(BLOCK_FIELDS):
        yield (b"," if k else b"") + json_text(name) + b":"
        yield from _field_text(table, name)
    yield b"}"


def block_columns(blocks: Sequence[MemoryBlock]) -> dict[str, Any]:
    """Memory blocks as one list per field (JSON-safe: shapes as lists, args that JSON
    cannot hold left out); a field of few distinct values as [values, index per block].

    >>> block_columns([MemoryBlock(64, 128, 5, None, device="cpu")])["device"]
    [['cpu'], [0]]
    """
    table = _table(blocks)
    return {name: orjson.loads(b"".join(_field_text(table, name))) for name in BLOCK_FIELDS}


def _table(blocks: Sequence[MemoryBlock]) -> BlockTable:
    """``blocks`` as a table (copies of records: the table would seal the caller's own)."""
    return blocks if isinstance(blocks, BlockTable) else BlockTable(map(copy, blocks))


def _field_text(table: BlockTable, name: str) -> Iterator[bytes]:
    """Field ``name`` of :func:`block_columns` as JSON text in pieces, a chunk of values
    each."""
    count = len(table)
    if name in REPEATED:
        shown, ranks = _repeated(table, name)
        yield b"[" + json_text(shown) + b","
        yield from list_text(count, lambda lo, hi: ranks[lo:hi].tolist())
        yield b"]"
    elif name == "args":
        held = table.column("args")
        made = (lambda lo, hi: [jsonable(a) if a else {} for a in held[lo:hi]]) \
            if any(held) else (lambda lo, hi: [{}] * (hi - lo))   # (10^5 blocks, no args: no loop)
        yield from list_text(count, made)
    else:
        numbers = table.numbers(name)
        known = table.known(name) if name in ("alloc_ns", "free_ns") else None

        def made(lo: int, hi: int) -> list[Any]:
            values = numbers[lo:hi].tolist()
            if known is None or known[lo:hi].all():
                return values   # type: ignore[no-any-return]
            return [v if k else None for v, k in zip(values, known[lo:hi].tolist(), strict=True)]

        yield from list_text(count, made)


def list_text(count: int, made: Callable[[int, int], list[Any]]) -> Iterator[bytes]:
    """The JSON text of a list of ``count`` values, :data:`CHUNK` at a time
    (``made(lo, hi)``: values lo to hi).

    >>> b"".join(list_text(5, lambda lo, hi: list(range(lo, hi))))
    b'[0,1,2,3,4]'
    """
    if not count:
        yield b"[]"
        return
    for lo in range(0, count, CHUNK):
        text = json_text(made(lo, min(lo + CHUNK, count)))
        yield (b"[" if lo == 0 else b",") + text[1:-1]
    yield b"]"


def _repeated(table: BlockTable, name: str) -> tuple[list[Any], np.ndarray]:
    """Field ``name`` of the blocks as (its distinct values in the order they first come,
    per block the number of its value)."""
    values, codes = table.coded(name)
    distinct, first, number = np.unique(codes, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    shown = [values[code] for code in distinct[order].tolist()]
    if name == "shape":
        shown = [None if v is None else list(v) for v in shown]
    return shown, rank[number.reshape(-1)]


def add_blocks(table: BlockTable, columns: dict[str, Any] | None) -> None:
    """Add the blocks of :func:`block_columns` (as :func:`check_blocks` passed them)
    to ``table``, column by column: no record per block.

    >>> table = BlockTable()
    >>> add_blocks(table, block_columns([MemoryBlock(64, 128, 5, None, shape=(2, 3))]))
    >>> list(table)
    [MemoryBlock(address=64, size=128, alloc_ns=5, free_ns=None, device='', pool='', name='', owner_op=None, owner_name=None, owner_tensor=None, category='', shape=(2, 3), dtype=None, args={})]
    """
    if not columns:
        return
    coded = {}
    for name in REPEATED:
        values, index = columns[name]
        if name == "shape":
            values = [None if v is None else tuple(v) for v in values]
        coded[name] = (values, np.array(index, dtype=np.int64))
    table.extend_columns({name: _int64s(columns[name]) for name in NUMBERS}, coded,
                         [args or None for args in columns["args"]])


def _int64s(values: list[int | None]) -> np.ndarray:
    """A checked column of int64 numbers (None: masked) as an array.

    >>> _int64s([3, None]).tolist(), _int64s([]).dtype.name
    ([3, None], 'int64')
    """
    if None not in values:
        return np.array(values, dtype=np.int64)
    mask = np.fromiter((value is None for value in values), bool, len(values))
    return np.ma.array([0 if value is None else value for value in values], np.int64,
                       mask=mask)


_SHAPE = optional(numbers)
# MemoryBlock fields (see block_columns): plain columns, then columns kept as
# [distinct values, an index per block]
_PLAIN_COLUMNS: dict[str, Check] = {
    "address": INT64_NUMBER, "size": INT64_NUMBER, "alloc_ns": optional(INT64_NUMBER),
    "free_ns": optional(INT64_NUMBER), "args": an_object}
_INDEXED_COLUMNS: dict[str, Check] = {
    "device": a_text, "pool": a_text, "name": a_text, "category": a_text,
    "owner_op": optional(a_text), "owner_name": optional(a_text),
    "owner_tensor": optional(a_text), "dtype": optional(a_text), "shape": _SHAPE}


def check_blocks(value: Any, where: str) -> None:
    """Raise :class:`~.record_check.Bad` where ``value`` (the decoded text of
    :func:`record_text`, or None: no blocks kept) does not hold together.

    >>> check_blocks({"address": [1]}, "memory")
    Traceback (most recent call last):
    ...
    traceconv.model.record_check.Bad: memory.size: expected a list of 1
    """
    if value is None:
        return
    columns = a_dict(value, where)
    size = len(a_list(columns.get("address"), f"{where}.address"))
    for name, check in _PLAIN_COLUMNS.items():
        each(a_list(columns.get(name), f"{where}.{name}", size), f"{where}.{name}", check)
    for name, check in _INDEXED_COLUMNS.items():
        place = f"{where}.{name}"
        values, index = a_list(columns.get(name), place, 2)
        each(values, f"{place}[0]", check)
        each(a_list(index, f"{place}[1]", size), f"{place}[1]", index_below(len(values)))


def restore_blocks(trace: Trace, record: dict[str, Any]) -> None:
    """Make the memory blocks and reservations of ``trace`` (being read) those ``record``
    (a writer's record, as :func:`record_text` made each list) keeps, in place of any the
    events made (a Kineto source's ``[memory]`` instants pair into the same blocks again);
    a list not as the writer makes it is left out, counted (``input.carried_blocks_unread``),
    and a record without the lists (a file written before blocks were kept) changes nothing.

    >>> t = Trace(); restore_blocks(t, {"memory": orjson.loads(b"".join(record_text(
    ...     [MemoryBlock(64, 128, 5, 9)]))), "reservations": {"address": 1}})
    >>> len(t.memory), t.diagnostics.count("input.carried_blocks_unread")
    (1, 1)
    """
    for key in ("memory", "reservations"):
        if key not in record:
            continue
        try:
            check_blocks(record[key], key)
        except Bad as bad:
            trace.diagnostics.add("input.carried_blocks_unread", example=str(bad))
            continue
        setattr(trace, key, BlockTable())
        add_blocks(getattr(trace, key), record[key])

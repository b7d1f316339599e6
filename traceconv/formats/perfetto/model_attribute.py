"""What a ``.pftrace`` cannot say about the model, kept in one trace attribute.

Perfetto has no words for a process's kind (host or device), a track's kind, a flow's
category and name, or an argument name with a dot (written as nested dicts, see
:mod:`.annotations`). The writer puts them in the trace attribute ``traceconv.model`` (one
JSON text) and the reader, finding it in a file traceconv wrote, gives back the model the
file came from: same processes and tracks (lane tracks folded back into their home track),
same metadata and reading diagnostics, flows with their labels, dotted names flat again, and
the memory blocks (which Perfetto shows only as the live-bytes counters made of them).

>>> from traceconv.model import Trace
>>> t = Trace(); _ = t.add_track("main", process=t.add_process("python", pid=7), tid=7)
>>> described = describe(t, base=64)
>>> described["processes"], described["tracks"], described["base"]
([['python', 'host', 7, None, []]], [['main', 0, 'thread', 7, None, None, None, None]], 64)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Sequence
from copy import copy
from typing import Any

import numpy as np
import orjson

from ...model import MemoryBlock, Trace
from ...model.block_table import NUMBERS, BlockTable
from ...model.metadata_record import metadata_record
from ...model.stats_record import stats_record
from .dotted_names import DottedNames, expanded
from .model_attribute_check import problem
from .model_attribute_check import time_shift as checked_shift

ATTRIBUTE = "traceconv.model"
VERSION = 1
# DebugAnnotation has no null and no empty value: the writer writes this field (unknown to
# trace_processor, which skips it) instead of a value, saying which of the three it is.
SPELLED_MARK = 2047
SPELLED_NULL, SPELLED_LIST, SPELLED_DICT = 0, 1, 2
# The same field on a dict the writer made of dotted names (``est. a`` → ``est`` → `` a``):
# the reader makes exactly those flat again.
NESTED_MARK = 3


def describe(trace: Trace, base: int) -> dict[str, Any]:
    """The attribute's content for ``trace`` whose uuids start at ``base``. (Its
    ``dotted``, the argument names written as nested dicts, is empty since the writer marks
    the dicts it makes (:data:`NESTED_MARK`); a file written before lists them.)"""
    return {**_described(trace, base), "memory": _blocks(trace.memory),
            "reservations": _blocks(trace.reservations)}


def _described(trace: Trace, base: int) -> dict[str, Any]:
    """:func:`describe` but the memory blocks and reservations (:data:`_BLOCK_LISTS`)."""
    meta = trace.metadata
    return {
        "version": VERSION, "base": base,
        "processes": [[p.name, p.kind.value, p.pid, p.sort_index, list(p.labels)]
                      for p in trace.processes],
        "tracks": [[t.name, t.process, t.kind.value, t.tid, t.sort_index, t.unit, t.description,
                    t.parent] for t in trace.tracks],
        "metadata": {**metadata_record(meta), "attributes": _jsonable(meta.attributes)},
        "flows": _flow_labels(trace),
        "dotted": [],
        "diagnostics": trace.diagnostics.as_list(),
        "stats": stats_record(trace.stats),
    }


_BLOCK_LISTS = ("memory", "reservations")   # the attribute's last keys, written field by field


def encode(trace: Trace, base: int) -> Iterator[bytes]:
    """:func:`describe` as JSON text, in pieces made as they are asked for (an integer
    beyond 64 bits, which a fuzzed input can give a pid or a rank, as its decimal text).
    The memory blocks are made into text :data:`_CHUNK` values at a time, so a trace of
    10^7 blocks never holds a field as a list, nor more than a piece of the text (the
    writer asks twice: once for the size, once to write).

    >>> from traceconv.model import Trace
    >>> t = Trace(); _ = t.add_process("p", pid=2**70)
    >>> decode(b"".join(encode(t, 0)).decode(), flow_ids=0)[0]["processes"][0][2]
    '1180591620717411303424'
    """
    yield b"{"
    for key, value in _described(trace, base).items():
        yield _json(key) + b":" + _json(value) + b","
    for n, key in enumerate(_BLOCK_LISTS):
        yield _json(key) + b":{"
        table = _table(getattr(trace, key))
        for k, name in enumerate(_BLOCK_FIELDS):
            yield (b"," if k else b"") + _json(name) + b":"
            yield from _field_text(table, name)
        yield b"}," if n + 1 < len(_BLOCK_LISTS) else b"}}"


def _json(value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except TypeError:
        return orjson.dumps(_within_64_bits(value))


def _within_64_bits(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if -(1 << 63) <= value < 1 << 64 else str(value)
    if isinstance(value, list | tuple):
        return [_within_64_bits(v) for v in value]
    if isinstance(value, dict):
        return {k: _within_64_bits(v) for k, v in value.items()}
    return value


def decode(text: str, *, flow_ids: int, time_shift: Any = None
           ) -> tuple[dict[str, Any] | None, str | None]:
    """The attribute read back, with the ``time_shift_ns`` attribute ``time_shift`` as its
    ``"shift"``, for a file whose events carry ``flow_ids`` flow ids; or (None, where it
    does not hold together) when it is not one this reader knows or any part of it fails
    the checks of :mod:`.model_attribute_check` (the file is then read as any Perfetto
    trace).

    >>> decode('{"version": 1, "base": 0, "processes": [["p"]], "tracks": []}', flow_ids=0)
    (None, 'processes[0]: expected a list of 5')
    >>> decode('{"version": 1, "base": 0, "processes": [], "tracks": []}', flow_ids=0,
    ...        time_shift="12")
    (None, 'time_shift_ns: expected an integer in [0, 2^63)')
    """
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None, "not JSON"
    found = problem(data, flow_ids=flow_ids, version=VERSION)
    shift = checked_shift(time_shift)
    if found is None and shift is None:
        found = "time_shift_ns: expected an integer in [0, 2^63)"
    if found is not None:
        return None, found
    for part in ("flows", "dotted", "diagnostics"):   # (parts a writer may leave out)
        data[part] = data.get(part) or []
    data["metadata"] = data.get("metadata") or {}
    data["shift"] = shift
    return data, None


def _jsonable(attributes: dict[str, Any]) -> dict[str, Any]:
    """The metadata attributes that survive JSON (the others are left out)."""
    kept = {}
    for key, value in attributes.items():
        try:
            orjson.dumps(value)
        except TypeError:
            continue
        kept[str(key)] = value
    return kept


def _flow_labels(trace: Trace) -> list[list[Any]]:
    """Flow (category, name) in flow order, run-length encoded: [[count, category, name]]."""
    strings = trace.strings.strings
    runs: list[list[Any]] = []
    for category, name in zip(trace.flows.category, trace.flows.name, strict=True):
        if runs and runs[-1][1] == category and runs[-1][2] == name:
            runs[-1][0] += 1
        else:
            runs.append([1, category, name])
    return [[count, strings[c], strings[n]] for count, c, n in runs]


def flow_labels(runs: list[list[Any]]) -> list[tuple[str, str]]:
    """The (category, name) of each flow, from :func:`_flow_labels`'s runs.

    >>> flow_labels([[2, "ac2g", ""], [1, "fwdbwd", "fwdbwd"]])
    [('ac2g', ''), ('ac2g', ''), ('fwdbwd', 'fwdbwd')]
    """
    out: list[tuple[str, str]] = []
    for count, category, name in runs:
        out += [(str(category), str(name))] * int(count)
    return out


def flatten_dotted(args: Iterable[tuple[str, Any]], dotted: DottedNames) -> dict[str, Any]:
    """The (name, value) pairs ``args`` as a dict with the dicts that the writer made of
    dotted names flat again: marked ones (:class:`.dotted_names.NestedGroup`), or in a file
    written before the marks, those that ``dotted`` names (a name given twice keeps its
    last value).

    >>> flatten_dotted([("est", {" achieved occupancy %": 50}), ("grid", [1])],
    ...                DottedNames({"est. achieved occupancy %"}))
    {'grid': [1], 'est. achieved occupancy %': 50}
    """
    out: dict[str, Any] = {}
    nested: list[tuple[str, Any]] = []
    for key, value in expanded(args):
        if isinstance(value, dict) and dotted.nests(key):
            nested.append((key, value))
        else:
            out[key] = value
    for key, value in nested:
        _flatten_into(out, key, value, dotted)
    return out


def _flatten_into(out: dict[str, Any], prefix: str, value: dict[str, Any],
                  dotted: DottedNames) -> None:
    for key, item in value.items():
        name = f"{prefix}.{key}"
        if name in dotted:
            out[name] = item
        elif isinstance(item, dict) and dotted.nests(name):
            _flatten_into(out, name, item, dotted)
        else:
            out[name] = item


_BLOCK_FIELDS = tuple(field.name for field in dataclasses.fields(MemoryBlock))


_REPEATED = ("device", "pool", "name", "owner_op", "owner_name", "owner_tensor", "category",
             "shape", "dtype")   # few distinct values: kept once, and an index per block


_CHUNK = 1 << 16   # a field's values made into text together


def _blocks(blocks: Sequence[MemoryBlock]) -> dict[str, Any]:
    """Memory blocks as one list per field (JSON-safe: shapes as lists, args that JSON
    cannot hold left out); a field of few distinct values as [values, index per block].

    >>> _blocks([MemoryBlock(64, 128, 5, None, device="cpu")])["device"]
    [['cpu'], [0]]
    """
    table = _table(blocks)
    return {name: orjson.loads(b"".join(_field_text(table, name))) for name in _BLOCK_FIELDS}


def _table(blocks: Sequence[MemoryBlock]) -> BlockTable:
    """``blocks`` as a table (copies of records: the table would seal the caller's own)."""
    return blocks if isinstance(blocks, BlockTable) else BlockTable(map(copy, blocks))


def _field_text(table: BlockTable, name: str) -> Iterator[bytes]:
    """Field ``name`` of :func:`_blocks` as JSON text in pieces, a chunk of values each."""
    count = len(table)
    if name in _REPEATED:
        shown, ranks = _repeated(table, name)
        yield b"[" + _json(shown) + b","
        yield from _list_text(count, lambda lo, hi: ranks[lo:hi].tolist())
        yield b"]"
    elif name == "args":
        held = table.column("args")
        made = (lambda lo, hi: [_jsonable(a) if a else {} for a in held[lo:hi]]) \
            if any(held) else (lambda lo, hi: [{}] * (hi - lo))   # (10^5 blocks, no args: no loop)
        yield from _list_text(count, made)
    else:
        numbers = table.numbers(name)
        known = table.known(name) if name in ("alloc_ns", "free_ns") else None

        def made(lo: int, hi: int) -> list[Any]:
            values = numbers[lo:hi].tolist()
            if known is None or known[lo:hi].all():
                return values   # type: ignore[no-any-return]
            return [v if k else None for v, k in zip(values, known[lo:hi].tolist(), strict=True)]

        yield from _list_text(count, made)


def _list_text(count: int, made: Callable[[int, int], list[Any]]) -> Iterator[bytes]:
    """The JSON text of a list of ``count`` values, :data:`_CHUNK` at a time
    (``made(lo, hi)``: values lo to hi).

    >>> b"".join(_list_text(5, lambda lo, hi: list(range(lo, hi))))
    b'[0,1,2,3,4]'
    """
    if not count:
        yield b"[]"
        return
    for lo in range(0, count, _CHUNK):
        text = _json(made(lo, min(lo + _CHUNK, count)))
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
    """Add the blocks of :func:`_blocks` (as :mod:`.model_attribute_check` passed them)
    to ``table``, column by column: no record per block.

    >>> table = BlockTable()
    >>> add_blocks(table, _blocks([MemoryBlock(64, 128, 5, None, shape=(2, 3))]))
    >>> list(table)
    [MemoryBlock(address=64, size=128, alloc_ns=5, free_ns=None, device='', pool='', name='', owner_op=None, owner_name=None, owner_tensor=None, category='', shape=(2, 3), dtype=None, args={})]
    """
    if not columns:
        return
    coded = {}
    for name in _REPEATED:
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

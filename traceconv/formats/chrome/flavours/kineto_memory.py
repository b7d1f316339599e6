"""Kineto ``[memory]`` instants → memory blocks (see formats/kineto.md).

Kineto writes its events one thread at a time, and the caching allocator often frees a
block on another thread than the one that allocated it: in file order a free can come
before its alloc. Time order is the allocator's order: the events of an address are paired
in it by the rule of every allocator log (traceconv/model/block_pairing.py). A block's owner is the innermost op
(``cpu_op``, else any slice) around the alloc on the allocating thread.

A profile of a long run holds hundreds of thousands of these events, nearly always with
plain integer args: those are read and paired as int64 columns; anything else (a list, a
float, a text, a number beyond int64) is read value by value.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import compress
from typing import Any

import numpy as np

from ....keys import first_places
from ....model import Trace
from ....model.block_pairing import Pairing, pair_events
from ....model.memory import ALLOCATOR_TOTALS, add_allocator_counters, add_live_bytes_counters
from ....model.slice_index import SliceIndex, enclosing_rows
from ....vocabularies.kineto import memory_device_name
from .base import hashable

ARGS = ("Bytes", "Addr", "Device Type", "Device Id")
DEFAULTS = (None, None, None, -1)   # (None: an event without it has no usable number)
CATEGORIES = ("allocated before trace", "allocation")   # by whether the event allocates
_INT64_MIN = np.iinfo(np.int64).min


@dataclass
class MemoryEvents:
    """The usable ``[memory]`` events in time order, one entry per event: sizes and
    addresses as int64 (object arrays when a value is not an int64 number)."""

    rows: np.ndarray        # instant rows
    sizes: np.ndarray       # Bytes: > 0 allocates, else frees
    addresses: np.ndarray
    device_names: list[str]
    device_of: np.ndarray   # per event: the number of its device's name
    keys: tuple[np.ndarray, ...]   # per event, the parts of its key: (device, address)
    malformed: int          # events left out: a list or an object where a key must be
    without_block: int = 0  # events with no Addr or no int Bytes: instants, no block


def memory_blocks(trace: Trace, take_index: Callable[[], SliceIndex | None]) -> None:
    """Pair the [memory] alloc (+Bytes) and free (-Bytes) instants of ``trace`` per
    (device type, device id, address) in timestamp order into its memory blocks, and add
    the live-bytes counters made of them. ``take_index`` hands over the reader's index of
    every slice, if it has one. The owners are looked up first, for every [memory] event,
    so that the slice indexes are gone before the events are read."""
    name_id = trace.strings.find("[memory]")
    if name_id is None:
        return
    rows = np.flatnonzero(trace.instants.numpy_view("name") == name_id)
    owner = _owners(trace, rows, take_index)
    events = _int_events(trace, rows) or _any_events(trace, rows)
    alloc = events.sizes > 0
    paired = pair_events(events.keys, alloc)
    owners = _names(trace, owner[np.searchsorted(rows, events.rows[alloc])])
    del owner
    trace.add_memory_columns(*_block_columns(trace, events, paired, owners))
    trace.diagnostics.add("kineto.malformed_memory_event", count=events.malformed)
    trace.diagnostics.add("kineto.memory_event_without_block", count=events.without_block)
    paired.count(trace.diagnostics, "kineto")
    totals = _allocator_totals(trace, events)
    del events, alloc, paired, owners   # (the counters need memory now)
    add_live_bytes_counters(trace)
    for device, (times, values) in totals.items():
        add_allocator_counters(trace, device, times, values)


_TOTALS = {"Total Allocated": ALLOCATOR_TOTALS[0], "Total Reserved": ALLOCATOR_TOTALS[1]}


def _allocator_totals(trace: Trace, events: MemoryEvents
                      ) -> dict[str, tuple[np.ndarray, dict[str, np.ndarray]]]:
    """Per device, the times of its events and the caching allocator's totals each states
    (``Total Allocated``, ``Total Reserved``; NaN where one is missing or no number)."""
    columns = trace.instants.args.int_columns(events.rows, tuple(_TOTALS), (None, None))
    if columns is not None:   # (the usual case: integers, read as columns)
        numbers, known = columns
        values = np.where(known & (numbers >= 0), numbers, np.nan)
    else:   # (a float, a text, a list somewhere: value by value)
        values = np.full((len(_TOTALS), len(events.rows)), np.nan)
        args = trace.instants.args
        for k, row in enumerate(events.rows.tolist()):
            found = args[row] or {}
            for j, key in enumerate(_TOTALS):
                value = found.get(key)
                if type(value) is int and 0 <= value < 1 << 62:
                    values[j, k] = value
    times = trace.instants.numpy_view("ts")[events.rows]
    return {device: (times[mine], {kind: values[j, mine]
                                   for j, kind in enumerate(_TOTALS.values())})
            for code, device in enumerate(events.device_names)
            if len(mine := np.flatnonzero(events.device_of == code))}


def _int_events(trace: Trace, rows: np.ndarray) -> MemoryEvents | None:
    """The events when each one's args hold its four numbers as int64 (the usual case,
    read as columns, in file order: the texts lie side by side); else None."""
    found = trace.instants.args.int_columns(rows, ARGS, DEFAULTS)
    if found is None or not found[1].all():   # (a Device Type absent: named as value by value)
        return None
    numbers = found[0]
    del found   # (each column is put in time order on its own: one copy alive at a time)
    names, code = _devices(numbers[2], numbers[3])
    order = np.argsort(trace.instants.numpy_view("ts")[rows], kind="stable")
    sizes, addresses, code = numbers[0][order], numbers[1][order], code[order]
    del numbers
    if len(sizes) and sizes.min() == _INT64_MIN:   # a free of -2**63 bytes: a size beyond int64
        sizes = sizes.astype(object)               # (that the memory table refuses)
    return MemoryEvents(rows[order], sizes, addresses, names.tolist(), code, (code, addresses), 0)


def _devices(kinds: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct names of the devices of (device type, device id) pairs, and per given pair
    the number of its device's name (two pairs can name one device: CUDA, ids -1 and -2).

    >>> names, code = _devices(np.array([1, 1, 0, 1]), np.array([-2, 3, -1, -1]))
    >>> names.tolist(), code.tolist()
    (['CPU', 'CUDA', 'CUDA:3'], [1, 2, 0, 1])
    """
    kind_values, kind_of = np.unique(kinds, return_inverse=True)
    index_values, index_of = np.unique(indices, return_inverse=True)
    pairs, pair_of = np.unique(kind_of * len(index_values) + index_of, return_inverse=True)
    names = [memory_device_name(kind, index) for kind, index in zip(
        kind_values[pairs // len(index_values)].tolist(),
        index_values[pairs % len(index_values)].tolist(), strict=True)]
    codes = {name: k for k, name in enumerate(dict.fromkeys(names))}
    return (np.array(list(codes), dtype=object),
            np.array(list(map(codes.__getitem__, names)), dtype=np.int64)[pair_of])


def _any_events(trace: Trace, rows: np.ndarray) -> MemoryEvents:
    """The events whatever their args hold, read value by value: those without an int
    Bytes or with no Addr make no block (older Kineto writes no Addr: they stay instants,
    counted apart); those with a list or an object where a key must be are malformed."""
    i = trace.instants
    rows = rows[np.argsort(i.numpy("ts")[rows], kind="stable")]
    sizes, addresses, *kinds = i.args.get_columns(rows, ARGS, DEFAULTS)
    picked = [isinstance(size, int) and address is not None
              for size, address in zip(sizes, addresses, strict=True)]
    devices = _device_names(list(zip(*(compress(column, picked) for column in kinds),
                                     strict=True)))
    first = _first_of_key(list(zip(devices, compress(addresses, picked), strict=True)))
    if None in devices:
        first[[k for k, device in enumerate(devices) if device is None]] = -1
    good = first >= 0
    events, first = np.flatnonzero(picked)[good], first[good]
    named = [device for device in compress(devices, good) if device is not None]   # (all)
    names = {name: k for k, name in enumerate(dict.fromkeys(named))}
    return MemoryEvents(rows[events], _objects(sizes)[events], _objects(addresses)[events],
                        list(names), np.array([names[d] for d in named], dtype=np.int64),
                        (first,), int((~good).sum()), picked.count(False))


def _objects(values: list[Any]) -> np.ndarray:
    """``values`` as an object array (a list among them stays one element).

    >>> _objects([1, [2, 3], None]).tolist()
    [1, [2, 3], None]
    """
    return np.fromiter(values, dtype=object, count=len(values))


def _block_columns(trace: Trace, events: MemoryEvents, paired: Pairing,
                   owners: tuple[list[str | None], np.ndarray]
                   ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The blocks as columns, in the time order of their first event: per alloc one (open
    at the end when no free closes it, owned by ``owners``: names and per alloc its
    number), per free that closes no alloc one allocated before the trace."""
    times = trace.instants.numpy_view("ts")[events.rows]
    alloc = paired.allocates
    kept = paired.block_events()
    allocs = alloc[kept]
    sizes = np.where(alloc, events.sizes, -events.sizes)[kept]
    owner_names, owner_of_alloc = owners
    owner = np.full(len(alloc), len(owner_names), dtype=np.int64)   # (None: not an alloc)
    owner[alloc] = owner_of_alloc
    alloc_ns, free_ns = paired.block_times(times, kept)
    numbers = {"address": events.addresses[kept], "size": sizes,
               "alloc_ns": alloc_ns, "free_ns": free_ns}
    return numbers, {"device": (events.device_names, events.device_of[kept]),
                     "owner_name": ([*owner_names, None], owner[kept]),
                     "category": (list(CATEGORIES), allocs.astype(np.int64))}


def _owners(trace: Trace, rows: np.ndarray,
            take_index: Callable[[], SliceIndex | None]) -> np.ndarray:
    """Per instant of ``rows``, the innermost ``cpu_op`` around it on its thread, else the
    innermost slice there (found in the index ``take_index`` hands over); -1: none."""
    tracks = trace.instants.numpy_view("track")[rows]
    times = trace.instants.numpy_view("ts")[rows]
    around = enclosing_rows(take_index() or SliceIndex(trace), tracks, times)
    owner = enclosing_rows(SliceIndex(trace, "cpu_op"), tracks, times)
    return np.where(owner >= 0, owner, around)


def _names(trace: Trace, owner: np.ndarray) -> tuple[list[str | None], np.ndarray]:
    """The names of slice rows ``owner`` (-1: None) as (the distinct names, per row its
    number in them)."""
    owned = owner >= 0
    name_ids = np.full(len(owner), -1, dtype=np.int64)
    name_ids[owned] = trace.slices.numpy_view("name")[owner[owned]]
    distinct, number = np.unique(name_ids, return_inverse=True)
    strings = trace.strings.strings
    return [None if i < 0 else strings[i] for i in distinct.tolist()], number


def _device_names(kinds: list[tuple[Any, Any]]) -> list[str | None]:
    """The device name of each (device type, device id); None where a list or an object
    in it makes it malformed.

    >>> _device_names([(1, 0), (0, -1), (1, [0])])
    ['CUDA:0', 'CPU', None]
    """
    try:   # the usual case: a few distinct pairs of numbers
        names = {kind: memory_device_name(*kind) for kind in set(kinds)}
        return list(map(names.__getitem__, kinds))
    except TypeError:   # a list or an object: name the pairs one by one
        names = {}
    found: list[str | None] = []
    for kind in kinds:
        try:
            name = names.get(kind)
        except TypeError:   # not hashable
            found.append(None)
            continue
        found.append(name if name is not None else names.setdefault(kind, memory_device_name(*kind)))
    return found


def _first_of_key(keys: list[tuple[Any, ...]]) -> np.ndarray:
    """Per key, the index of its first occurrence (-1 where a list or an object makes it
    unusable as a key).

    >>> _first_of_key([("CUDA:0", 8), ("CUDA:0", 16), ("CUDA:0", 8), ("CUDA:0", [8])]).tolist()
    [0, 1, 0, -1]
    """
    seen: dict[tuple[Any, ...], int] = {}
    try:
        return first_places(keys, seen)
    except TypeError:
        first = np.full(len(keys), -1, dtype=np.int64)
        for k, key in enumerate(keys):
            if hashable(key):
                first[k] = seen.setdefault(key, k)
        return first

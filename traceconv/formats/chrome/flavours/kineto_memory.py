"""Kineto ``[memory]`` instants → memory blocks (see formats/kineto.md).

Kineto writes its events one thread at a time, and the caching allocator often frees a
block on another thread than the one that allocated it: in file order a free can come
before its alloc. Time order is the allocator's order: a free closes the block of the
address's event just before it when that one is an alloc, and an alloc that another alloc
of the same address follows was freed unrecorded. A block's owner is the innermost op
(``cpu_op``, else any slice) around the alloc on the allocating thread.

A profile of a long run holds hundreds of thousands of these events, nearly always with
plain integer args: those are read and paired as int64 columns; anything else (a list, a
float, a text, a number beyond int64) is read value by value.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import compress, repeat
from typing import Any

import numpy as np

from ....keys import first_places
from ....model import MemoryBlock, Trace
from ....model.frozen import FrozenDict
from ....model.memory import add_live_bytes_counters
from ....model.slice_index import SliceIndex, enclosing_rows
from .base import hashable

# c10::DeviceType values that appear in [memory] events.
DEVICE_TYPES = {0: "CPU", 1: "CUDA", 6: "HIP", 9: "XLA", 12: "XPU", 13: "MPS", 19: "MTIA",
                20: "PrivateUse1"}
ARGS = ("Bytes", "Addr", "Device Type", "Device Id")
DEFAULTS = (None, None, None, -1)   # (None: an event without it has no usable number)
CATEGORIES = ("allocated before trace", "allocation")   # by whether the event allocates
_INT64_MIN = np.iinfo(np.int64).min
NO_ARGS: FrozenDict[str, Any] = FrozenDict()   # every block's: one read-only empty dict, not one each


@dataclass
class MemoryEvents:
    """The usable ``[memory]`` events in time order, one entry per event: sizes and
    addresses as int64 (object arrays when a value is not an int64 number)."""

    rows: np.ndarray        # instant rows
    sizes: np.ndarray       # Bytes: > 0 allocates, else frees
    addresses: np.ndarray
    devices: np.ndarray     # object: the device's name
    by_key: np.ndarray      # the events grouped by (device, address), in time order in each
    same_key: np.ndarray    # per by_key[1:]: same (device, address) as the event before it
    malformed: int          # events left out: a list or an object where a key must be


def memory_blocks(trace: Trace, take_index: Callable[[], SliceIndex | None]) -> None:
    """Pair the [memory] alloc (+Bytes) and free (-Bytes) instants of ``trace`` per
    (device type, device id, address) in timestamp order into its memory blocks, and add
    the live-bytes counters made of them. ``take_index`` hands over the reader's index of
    every slice, if it has one (only the owner search holds it, so it goes once the owners
    are found)."""
    name_id = trace.strings.find("[memory]")
    if name_id is None:
        return
    rows = np.flatnonzero(trace.instants.numpy("name") == name_id)
    events = _int_events(trace, rows) or _any_events(trace, rows)
    alloc = events.sizes > 0
    freeing, freed_at = _pair_frees(events.by_key, events.same_key, alloc)
    at = events.rows[alloc]
    owners = _owner_names(trace, trace.instants.numpy_view("track")[at],
                          trace.instants.numpy_view("ts")[at],
                          take_index() or SliceIndex(trace))
    blocks = _blocks(trace, events, alloc, freeing, freed_at, owners)
    # (blocks of int64 columns are vouched for: sizes of -2**63, which negated do not fit,
    # made the sizes an object array)
    trace.add_memory_blocks(blocks,
                            vouched=object not in (events.sizes.dtype, events.addresses.dtype))
    found = {"kineto.malformed_memory_event": events.malformed,
             "kineto.free_without_alloc": int((~alloc & ~freeing).sum()),
             "kineto.alloc_without_free": int(alloc.sum() - freeing.sum())}
    for code, count in found.items():
        trace.diagnostics.add(code, count=count)
    del events, alloc, freeing, freed_at, owners, blocks   # (the counters need memory now)
    add_live_bytes_counters(trace)


def _int_events(trace: Trace, rows: np.ndarray) -> MemoryEvents | None:
    """The events when each one's args hold its four numbers as int64 (the usual case,
    read as columns, in file order: the texts lie side by side); else None."""
    found = trace.instants.args.int_columns(rows, ARGS, DEFAULTS)
    if found is None or not found[1].all():   # (a Device Type absent: named as value by value)
        return None
    numbers = found[0]
    order = np.argsort(trace.instants.numpy("ts")[rows], kind="stable")
    sizes, addresses, kinds, indices = numbers[:, order]
    if len(sizes) and sizes.min() == _INT64_MIN:   # a free of -2**63 bytes: a size beyond int64
        sizes = sizes.astype(object)               # (that add_memory_blocks refuses)
    names, code = _devices(kinds, indices)
    # (stable: time order within a key; one device, the usual case: one sort, of addresses)
    by_key = np.argsort(addresses, kind="stable") if len(names) == 1 else \
        np.lexsort((addresses, code))
    after, before = by_key[1:], by_key[:-1]
    same_key = (code[after] == code[before]) & (addresses[after] == addresses[before])
    return MemoryEvents(rows[order], sizes, addresses, names[code], by_key, same_key, 0)


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
    names = [_device_name(kind, index) for kind, index in zip(
        kind_values[pairs // len(index_values)].tolist(),
        index_values[pairs % len(index_values)].tolist(), strict=True)]
    codes = {name: k for k, name in enumerate(dict.fromkeys(names))}
    return (np.array(list(codes), dtype=object),
            np.array(list(map(codes.__getitem__, names)), dtype=np.int64)[pair_of])


def _device_name(kind: Any, index: Any) -> str:
    name = DEVICE_TYPES.get(kind, f"device type {kind}")
    return name if not isinstance(index, int) or index < 0 else f"{name}:{index}"


def _any_events(trace: Trace, rows: np.ndarray) -> MemoryEvents:
    """The events whatever their args hold, read value by value: those without an int
    Bytes or with no Addr are left out, those with a list or an object where a key must be
    are counted as malformed."""
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
    by_key = np.lexsort((np.arange(len(first)), first))   # each address's events in time order
    return MemoryEvents(rows[events], _objects(sizes)[events], _objects(addresses)[events],
                        _objects(devices)[good], by_key,
                        first[by_key[1:]] == first[by_key[:-1]], int((~good).sum()))


def _objects(values: list[Any]) -> np.ndarray:
    """``values`` as an object array (a list among them stays one element).

    >>> _objects([1, [2, 3], None]).tolist()
    [1, [2, 3], None]
    """
    return np.fromiter(values, dtype=object, count=len(values))


def _pair_frees(by_key: np.ndarray, same_key: np.ndarray,
                alloc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which frees close the alloc just before them on their address, and per alloc the
    event that frees it (-1: none), for events ``by_key`` (grouped by address, in time
    order in each; ``same_key``: per by_key[1:], same address as the event before it)
    and whether each is an ``alloc``.

    >>> key, alloc = np.array([0, 0, 1, 0, 1]), np.array([True, False, False, False, True])
    >>> by_key = np.lexsort((np.arange(5), key))
    >>> freeing, freed_at = _pair_frees(by_key, key[by_key[1:]] == key[by_key[:-1]], alloc)
    >>> freeing.tolist(), freed_at.tolist()
    ([False, True, False, False, False], [1, -1, -1, -1, -1])
    """
    after, before = by_key[1:], by_key[:-1]
    closes = ~alloc[after] & alloc[before] & same_key
    freeing = np.zeros(len(alloc), dtype=bool)
    freeing[after] = closes
    freed_at = np.full(len(alloc), -1, dtype=np.int64)
    freed_at[before[closes]] = after[closes]
    return freeing, freed_at


def _blocks(trace: Trace, events: MemoryEvents, alloc: np.ndarray, freeing: np.ndarray,
            freed_at: np.ndarray, owner_names: np.ndarray) -> list[MemoryBlock]:
    """The blocks in the time order of their first event: per alloc one (open at the end
    when no free closes it, owned by ``owner_names``, one per alloc), per free that closes
    no alloc one allocated before the trace. Made a column at a time, then the blocks at
    once (positional: no keyword parsing)."""
    times = trace.instants.numpy("ts")[events.rows]
    kept = np.flatnonzero(alloc | ~freeing)
    allocs = alloc[kept]
    sizes = np.where(alloc, events.sizes, -events.sizes)[kept]
    alloc_ns = times[kept].astype(object)
    alloc_ns[~allocs] = None
    free_ns = np.where(alloc, times[np.maximum(freed_at, 0)], times)[kept].astype(object)
    free_ns[allocs & (freed_at[kept] < 0)] = None
    owners = np.full(len(alloc), None, dtype=object)
    owners[alloc] = owner_names
    return list(map(MemoryBlock, _shared(events.addresses[kept].tolist()),
                    _shared(sizes.tolist()), alloc_ns.tolist(), free_ns.tolist(),
                    events.devices[kept].tolist(),
                    repeat(""), repeat(""), repeat(None), owners[kept].tolist(), repeat(None),
                    map(CATEGORIES.__getitem__, allocs.tolist()), repeat(None), repeat(None),
                    repeat(NO_ARGS)))


def _shared(values: list[Any]) -> list[Any]:
    """``values`` with equal numbers as one object: the allocator reuses addresses and
    sizes, and a block's numbers are most of its memory (a Python int is 28-36 bytes).

    >>> a, b = _shared([10**12 + 1, 10**12 + 1]); a is b
    True
    """
    one: dict[Any, Any] = {}
    return [one.setdefault(value, value) for value in values]


def _owner_names(trace: Trace, tracks: np.ndarray, times: np.ndarray,
                 index: SliceIndex) -> np.ndarray:
    """Per (track, time) of an alloc, the name of the innermost ``cpu_op`` around it (else
    of any slice there, found in ``index`` of every slice; None: no slice)."""
    owner = enclosing_rows(SliceIndex(trace, "cpu_op"), tracks, times)
    missing = np.flatnonzero(owner < 0)
    if len(missing):   # (only these need the other slices)
        owner[missing] = enclosing_rows(index, tracks[missing], times[missing])
    owned = owner >= 0
    found = np.full(len(owner), None, dtype=object)
    found[owned] = list(map(trace.strings.strings.__getitem__,
                            trace.slices.numpy("name")[owner[owned]].tolist()))
    return found


def _device_names(kinds: list[tuple[Any, Any]]) -> list[str | None]:
    """The device name of each (device type, device id); None where a list or an object
    in it makes it malformed.

    >>> _device_names([(1, 0), (0, -1), (1, [0])])
    ['CUDA:0', 'CPU', None]
    """
    try:   # the usual case: a few distinct pairs of numbers
        names = {kind: _device_name(*kind) for kind in set(kinds)}
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
        found.append(name if name is not None else names.setdefault(kind, _device_name(*kind)))
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

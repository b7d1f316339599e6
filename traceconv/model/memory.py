"""Memory-block arithmetic: live bytes over time, peaks, and the counter tracks built from them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..numbers import INT64_MIN, int64_of_floats, int64_running_sums
from . import MemoryBlock, ProcessKind, Trace, TrackKind
from .block_table import BlockTable


@dataclass(frozen=True)
class LiveBytes:
    """A step function: ``bytes[i]`` are live from ``times[i]`` until ``times[i + 1]``.

    A level int64 cannot hold (sizes that sum past 2**63 - 1) is at the int64 edge, never
    wrapped around; ``beyond_int64`` counts such levels (the peak is then the first moment
    live bytes passed int64)."""

    times: np.ndarray   # int64 ns, strictly increasing
    bytes: np.ndarray   # int64
    beyond_int64: int = 0

    @property
    def peak(self) -> tuple[int, int]:
        """(time of the first maximum, bytes at it); (0, 0) for no blocks."""
        if not len(self.bytes):
            return 0, 0
        i = int(np.argmax(self.bytes))
        return int(self.times[i]), int(self.bytes[i])

# what a live-bytes counter track made of memory blocks says it is
LIVE_BYTES_DESCRIPTION = "bytes held by live memory blocks"


def live_bytes(blocks: Iterable[MemoryBlock], start: int | None = None,
               end: int | None = None, rows: np.ndarray | None = None) -> LiveBytes:
    """Live bytes over time for ``blocks`` (``rows``: only the blocks of these numbers).

    Blocks with no alloc time count from ``start`` (default: the earliest known time); blocks
    with no free time stay live to the end. Frees at the same instant as allocs apply first.

    >>> lb = live_bytes([MemoryBlock(0, 10, 0, 5), MemoryBlock(16, 4, 5, None)])
    >>> lb.times.tolist(), lb.bytes.tolist(), lb.peak
    ([0, 5], [10, 4], (0, 10))
    >>> live_bytes([MemoryBlock(0, 10, 0, 5), MemoryBlock(16, 4, 5, None)], rows=[1]).peak
    (5, 4)
    """
    columns = _columns(blocks)
    return _live_bytes(columns if rows is None else columns.rows(np.asarray(rows, np.int64)),
                       start=start, end=end)


def live_bytes_by_group(blocks: Iterable[MemoryBlock], groups: np.ndarray,
                        start: int | None = None) -> list[LiveBytes]:
    """:func:`live_bytes` of each group of ``blocks`` (``groups``: per block, the number of
    its group, 0 to n-1); blocks with no alloc time count from ``start`` (default: the
    earliest known time of them all). A :class:`BlockTable` is read by its columns.

    >>> blocks = [MemoryBlock(0, 10, 0, 5), MemoryBlock(16, 4, 5, None), MemoryBlock(32, 2)]
    >>> [lb.peak for lb in live_bytes_by_group(blocks, np.array([0, 1, 0]))]
    [(0, 12), (5, 4)]
    """
    columns = _columns(blocks)
    if start is None:
        start = _earliest(columns)
    order = np.argsort(groups, kind="stable")
    bounds = np.searchsorted(groups[order], np.arange(int(groups.max(initial=-1)) + 2))
    return [_live_bytes(columns.rows(order[lo:hi]), start, None)
            for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)]


@dataclass(frozen=True)
class _Columns:
    """Blocks' times and sizes as int64 arrays (a time's ``*_known`` False: None)."""

    allocs: np.ndarray
    alloc_known: np.ndarray
    frees: np.ndarray
    free_known: np.ndarray
    sizes: np.ndarray

    def rows(self, rows: np.ndarray) -> _Columns:
        return _Columns(*(column[rows] for column in (
            self.allocs, self.alloc_known, self.frees, self.free_known, self.sizes)))


def _columns(blocks: Iterable[MemoryBlock]) -> _Columns:
    """The alloc times, free times and sizes of ``blocks`` (a :class:`BlockTable`: its
    columns, with no block made)."""
    if isinstance(blocks, BlockTable):
        return _Columns(blocks.numbers("alloc_ns"), blocks.known("alloc_ns"),
                        blocks.numbers("free_ns"), blocks.known("free_ns"),
                        blocks.numbers("size"))
    blocks = list(blocks)
    allocs, frees = [b.alloc_ns for b in blocks], [b.free_ns for b in blocks]
    return _Columns(np.array([0 if t is None else t for t in allocs], np.int64),
                    np.array([t is not None for t in allocs], bool),
                    np.array([0 if t is None else t for t in frees], np.int64),
                    np.array([t is not None for t in frees], bool),
                    np.array([b.size for b in blocks], np.int64))


def _live_bytes(columns: _Columns, start: int | None, end: int | None) -> LiveBytes:
    """:func:`live_bytes` of the blocks of these columns."""
    if start is None:
        start = _earliest(columns)
    allocs = np.where(columns.alloc_known, columns.allocs, start)
    freed = columns.free_known if end is None else columns.free_known & (columns.frees <= end)
    times = np.concatenate([allocs, columns.frees[freed]])
    if not len(times):
        return LiveBytes(np.zeros(0, np.int64), np.zeros(0, np.int64))
    sizes = columns.sizes
    if int(sizes.min()) == INT64_MIN:   # (its negation, the free, passes int64: Python ints)
        sizes = sizes.astype(object)
    deltas = np.concatenate([sizes, -sizes[freed]])
    order = np.argsort(times, kind="stable")   # (the level after all changes at a time is their sum)
    t, (level, moved) = times[order], int64_running_sums(deltas[order])
    last_of_time = np.append(t[1:] != t[:-1], True)  # keep the level after all changes at t
    # (counted among the levels kept: a sum passed within one instant is no level)
    beyond = 0 if moved is None else int(np.count_nonzero(moved[last_of_time]))
    return LiveBytes(t[last_of_time], level[last_of_time], beyond)


def _earliest(columns: _Columns) -> int:
    """The earliest known time (0 for none)."""
    known = np.concatenate([columns.allocs[columns.alloc_known],
                            columns.frees[columns.free_known]])
    return int(known.min()) if len(known) else 0


def add_live_bytes_counters(trace: Trace, process_name: str = "Memory",
                            by_category: bool = False) -> list[int]:
    """Add one ``live bytes`` counter track per device (and pool) from ``trace.memory``.

    The tracks go under the process that already carries the device name, else under a
    synthetic process ``process_name``. With ``by_category``, each device (and pool) also
    gets one track per block category. Tracks that already exist (same name) are left as
    they are. Returns the new track ids.

    >>> trace = Trace(); _ = trace.add_memory_block(MemoryBlock(0, 64, 10, 20, device="cpu"))
    >>> [trace.tracks[t].name for t in add_live_bytes_counters(trace)]
    ['cpu live bytes']
    """
    memory = trace.memory
    if not memory:
        return []
    processes = _DeviceProcesses(trace, process_name)
    values, device_codes = memory.coded("device")
    pool_codes = memory.coded("pool")[1]
    keys = [device_codes, pool_codes]
    if by_category:
        keys.append(memory.coded("category")[1])
    groups = _groups(values, keys, by_category)
    # One start for every group, so blocks that predate the trace line up across tracks.
    columns = _columns(memory)
    start = _earliest(columns)
    # Idempotent: a trace read back from traceconv's own output already has these tracks.
    existing = {t.name for t in trace.tracks if t.kind is TrackKind.COUNTER}
    new_tracks = []
    for (device, pool, *category), rows in groups.items():
        label = " ".join(x for x in (device, pool, *category) if x) or "memory"
        if f"{label} live bytes" in existing:
            continue
        track = trace.add_track(f"{label} live bytes", process=processes.of(device),
                                kind=TrackKind.COUNTER, unit="bytes",
                                description=LIVE_BYTES_DESCRIPTION)
        curve = _live_bytes(columns if rows is None else columns.rows(rows), start=start,
                            end=None)
        add_live_bytes_series(trace, track, curve)
        new_tracks.append(track)
    return new_tracks


def add_live_bytes_series(trace: Trace, track: int, curve: LiveBytes) -> None:
    """Add ``curve`` as the samples of the counter ``track``; its levels past int64 (at
    the edge) are counted as ``model.live_bytes_beyond_int64``.

    >>> trace = Trace(); p = trace.add_process("p"); k = trace.add_track("live", process=p)
    >>> add_live_bytes_series(trace, k, live_bytes([MemoryBlock(0, 2**62, 0), MemoryBlock(1, 2**62, 5)]))
    >>> trace.counters.numpy("value").tolist(), trace.diagnostics["model.live_bytes_beyond_int64"].count
    ([4.611686018427388e+18, 9.223372036854776e+18], 1)
    """
    trace.add_counter_series(track, curve.times, curve.bytes)
    trace.diagnostics.add("model.live_bytes_beyond_int64", count=curve.beyond_int64,
                          example=trace.tracks[track].name if curve.beyond_int64 else None)


class _DeviceProcesses:
    """The process a device's memory counters go under: the one named as the device, else
    one synthetic process named ``fallback`` (made when first needed)."""

    def __init__(self, trace: Trace, fallback: str) -> None:
        self.trace, self.fallback = trace, fallback
        self.by_name = {p.name: p.id for p in trace.processes}
        self.made: int | None = None

    def of(self, device: Any) -> int:
        process = self.by_name.get(device)
        if process is None:
            if self.made is None:   # (the fallback made before, for the live bytes: that one)
                self.made = self.by_name.get(self.fallback)
            if self.made is None:
                self.made = self.trace.add_process(self.fallback, kind=ProcessKind.SYNTHETIC)
            process = self.made
        return process


# the counters of an allocator's own totals (``{device} {kind}``): its stated figures, blocks
# allocated before a trace began included (what live bytes, made of the blocks, cannot know)
ALLOCATOR_TOTALS = ("allocated (allocator)", "reserved (allocator)")


def add_allocator_counters(trace: Trace, device: str, times: np.ndarray,
                           totals: dict[str, np.ndarray], process_name: str = "Memory") -> None:
    """Add a device's allocator totals (``ALLOCATOR_TOTALS`` kind → values at ``times``,
    NaN where an event does not state it) as counter tracks beside its live bytes.

    >>> t = Trace()
    >>> add_allocator_counters(t, "CPU", np.array([5, 9]), {"reserved (allocator)": np.array([2e6, np.nan])})
    >>> [(tr.name, len(t.counters)) for tr in t.tracks]
    [('CPU reserved (allocator)', 1)]
    """
    processes = _DeviceProcesses(trace, process_name)
    # (idempotent, as the live bytes: traceconv's own output read back has these tracks)
    existing = {t.name for t in trace.tracks if t.kind is TrackKind.COUNTER}
    for kind, values in totals.items():
        stated = ~np.isnan(values)
        if f"{device} {kind}" in existing:
            continue
        if stated.any() and values[stated].any():   # (all 0: no cache, as CPU's reserved)
            track = trace.add_track(f"{device} {kind}", process=processes.of(device),
                                    kind=TrackKind.COUNTER, unit="bytes",
                                    description="the allocator's own total, as its events "
                                    "state it (blocks held before the trace began included)")
            trace.add_counter_series(track, times[stated], values[stated])


def allocator_total(trace: Trace, device: str, kind: str, at: int) -> int | None:
    """The allocator's ``kind`` total of ``device`` (``ALLOCATOR_TOTALS``) as last stated
    at or before ``at`` (None: the trace states none).

    >>> t = Trace()
    >>> add_allocator_counters(t, "CPU", np.array([5, 9]), {"reserved (allocator)": np.array([2e6, 3e6])})
    >>> allocator_total(t, "CPU", "reserved (allocator)", 7), allocator_total(t, "CPU", "reserved (allocator)", 1)
    (2000000, None)
    """
    name = f"{device} {kind}"
    tracks = [i for i, t in enumerate(trace.tracks) if t.kind is TrackKind.COUNTER
              and t.name == name]
    if not tracks:
        return None
    counters = trace.counters
    rows = np.flatnonzero(np.isin(counters.numpy_view("track"), tracks))
    times = counters.numpy_view("ts")[rows]
    before = rows[times <= at]
    if not len(before):
        return None
    stamps = counters.numpy_view("ts")[before]
    last = before[np.flatnonzero(stamps == stamps.max())[-1]]   # (the latest: the last stated)
    # (a counter holds a double: a stated 2**63 - 1 reads back as 2**63, one past int64)
    return int(int64_of_floats(counters.numpy_view("value")[[last]], name)[0])


def allocator_series(trace: Trace) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(times, reserved, allocated) of the devices' caching allocators, as their totals'
    counter tracks (``ALLOCATOR_TOTALS``) state them, device after device; each time one
    of a device's two totals changes, with the other as last stated (a host allocator,
    which reserves nothing, has no reserved track: none of its times).

    >>> t = Trace()
    >>> add_allocator_counters(t, "CUDA:0", np.array([5, 9]), {
    ...     "allocated (allocator)": np.array([1e6, 2e6]), "reserved (allocator)": np.array([4e6, 4e6])})
    >>> [a.tolist() for a in allocator_series(t)]
    [[5, 9], [4000000, 4000000], [1000000, 2000000]]
    """
    tracks: dict[str, dict[str, int]] = {}
    for track in trace.tracks:
        for kind in ALLOCATOR_TOTALS:
            if track.kind is TrackKind.COUNTER and track.name.endswith(f" {kind}"):
                tracks.setdefault(track.name[:-len(kind) - 1], {})[kind] = track.id
    counters = trace.counters
    track_of, stamps, values = (counters.numpy_view(c) for c in ("track", "ts", "value"))
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    kinds = (ALLOCATOR_TOTALS[1], ALLOCATOR_TOTALS[0])   # (reserved, allocated)
    for device, found in tracks.items():
        if len(found) < len(ALLOCATOR_TOTALS):
            continue
        series = []
        for kind in kinds:
            rows = np.flatnonzero(track_of == found[kind])
            rows = rows[np.argsort(stamps[rows], kind="stable")]
            series.append((stamps[rows], values[rows]))
        times = np.unique(np.concatenate([t for t, _ in series]))
        times = times[times >= max(t[0] for t, _ in series)]   # (both stated by then)
        parts.append((times, *(int64_of_floats(v[np.searchsorted(t, times, "right") - 1],
                                               f"{device} {kind}")
                               for (t, v), kind in zip(series, kinds, strict=True))))
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    return tuple(np.concatenate(column) for column in zip(*parts, strict=True))  # type: ignore[return-value]


def _groups(values: list[Any], keys: list[np.ndarray], by_category: bool
            ) -> dict[tuple[str, ...], np.ndarray | None]:
    """The blocks of each (device, pool) and, ``by_category``, of each (device, pool,
    category), each in the order its first block comes (None: every block); ``keys`` are
    codes into ``values`` per block."""
    groups = _rows_by(values, keys[:2])
    if by_category:
        for (device, pool, category), rows in _rows_by(values, keys).items():
            key = (device, pool, category or "uncategorised")   # (None and "" are one)
            found = groups.get(key)
            groups[key] = rows if found is None or rows is None else np.union1d(found, rows)
    return groups


def _rows_by(values: list[Any], keys: list[np.ndarray]) -> dict[tuple[Any, ...], np.ndarray | None]:
    """The rows of each distinct combination of ``keys`` (codes into ``values``), in the
    order its first row comes; None: one combination, every row."""
    distinct, first, which = np.unique(np.stack(keys, axis=1), axis=0, return_index=True,
                                       return_inverse=True)
    named = [tuple(values[code] for code in combination) for combination in distinct.tolist()]
    if len(named) == 1:   # (one device, one pool: the usual case)
        return {named[0]: None}
    which = which.reshape(-1)
    return {named[k]: np.flatnonzero(which == k) for k in np.argsort(first).tolist()}


def tensor_blocks(trace: Trace) -> dict[str, int]:
    """Op-graph tensor node id → the row of the memory block that stores it: the block
    whose ``owner_tensor`` it is, or (a view, an in-place result) the block of the tensor it
    is ``alias_of``. Derived from the links each time, so it holds after any copy.

    >>> from traceconv.model.graph import add_tensor
    >>> t = Trace(); _ = add_tensor(t.graph, 1, "x"); _ = add_tensor(t.graph, 2, "x_view")
    >>> t.graph.nodes["tensor/2"]["alias_of"] = "tensor/1"
    >>> _ = t.add_memory_block(MemoryBlock(0, 64, owner_tensor="tensor/1")); tensor_blocks(t)
    {'tensor/1': 0, 'tensor/2': 0}
    """
    owned: dict[str, int] = {}
    for row, owner in enumerate(trace.memory.column("owner_tensor")):
        if owner is not None:
            owned.setdefault(owner, row)
    if not owned or not trace.has_graph:
        return owned
    for node, root in trace.graph.nodes(data="alias_of"):
        if root in owned and node not in owned:
            owned[node] = owned[root]
    return owned

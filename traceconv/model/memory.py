"""Memory-block arithmetic: live bytes over time, peaks, and the counter tracks built from them."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import compress, repeat
from operator import is_not

import numpy as np

from . import MemoryBlock, ProcessKind, Trace, TrackKind


@dataclass(frozen=True)
class LiveBytes:
    """A step function: ``bytes[i]`` are live from ``times[i]`` until ``times[i + 1]``."""

    times: np.ndarray   # int64 ns, strictly increasing
    bytes: np.ndarray   # int64

    @property
    def peak(self) -> tuple[int, int]:
        """(time of the first maximum, bytes at it); (0, 0) for no blocks."""
        if not len(self.bytes):
            return 0, 0
        i = int(np.argmax(self.bytes))
        return int(self.times[i]), int(self.bytes[i])


_SAFE = 1 << 53   # beyond: the levels are summed as Python ints (exact, no wrap-around)


def live_bytes(blocks: Iterable[MemoryBlock], start: int | None = None,
               end: int | None = None) -> LiveBytes:
    """Live bytes over time for ``blocks``.

    Blocks with no alloc time count from ``start`` (default: the earliest known time); blocks
    with no free time stay live to the end. Frees at the same instant as allocs apply first.

    >>> lb = live_bytes([MemoryBlock(0, 10, 0, 5), MemoryBlock(16, 4, 5, None)])
    >>> lb.times.tolist(), lb.bytes.tolist(), lb.peak
    ([0, 5], [10, 4], (0, 10))
    """
    return _live_bytes(*_columns(list(blocks)), start=start, end=end)


Columns = tuple[list[int | None], list[int | None], list[int]]


def _columns(blocks: list[MemoryBlock]) -> Columns:
    """The alloc times, free times and sizes of ``blocks``."""
    return [b.alloc_ns for b in blocks], [b.free_ns for b in blocks], [b.size for b in blocks]


def _live_bytes(allocs: list[int | None], frees: list[int | None], sizes: list[int],
                start: int | None, end: int | None) -> LiveBytes:
    """:func:`live_bytes` of the blocks of these columns."""
    if start is None:
        start = _earliest(allocs, frees)
    if None in allocs:
        allocs = [start if t is None else t for t in allocs]
    if end is None:
        freed = list(map(is_not, frees, repeat(None)))
    else:
        freed = [t is not None and t <= end for t in frees]
    times = allocs + list(compress(frees, freed))
    if not times:
        return LiveBytes(np.zeros(0, np.int64), np.zeros(0, np.int64))
    # sizes fit int64 but their negations and sums may not (a hostile -2**63): Python ints then
    exact = min(sizes) <= -_SAFE or max(sizes) >= _SAFE
    kept = np.asarray(sizes, dtype=object if exact else np.int64)
    deltas = np.concatenate([kept, -kept[np.array(freed, dtype=bool)]])
    t = np.asarray(times, dtype=np.int64)
    order = np.argsort(t, kind="stable")   # (the level after all changes at a time is their sum)
    t, level = t[order], np.cumsum(deltas[order])
    last_of_time = np.append(t[1:] != t[:-1], True)  # keep the level after all changes at t
    return LiveBytes(t[last_of_time], level[last_of_time])


def _earliest(allocs: list[int | None], frees: list[int | None]) -> int:
    """The earliest known time (0 for none)."""
    both = allocs + frees
    known: list[int] = list(compress(both, map(is_not, both, repeat(None))))  # type: ignore[arg-type]
    return min(known, default=0)   # (of a list: twice as fast as of the iterator)


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
    devices, pools = [b.device for b in memory], [b.pool for b in memory]
    groups: dict[tuple[str, ...], list[int]] = defaultdict(list)   # place: its blocks in order
    if len(set(devices)) == 1 and len(set(pools)) == 1:   # (one device, one pool: the usual case)
        groups[(devices[0], pools[0])] = list(range(len(memory)))
    else:
        for k, place in enumerate(zip(devices, pools, strict=True)):
            groups[place].append(k)
    if by_category:
        for k, block in enumerate(memory):
            groups[(block.device, block.pool, block.category or "uncategorised")].append(k)
    # One start for every group, so blocks that predate the trace line up across tracks.
    columns = _columns(memory)
    start = _earliest(*columns[:2])
    by_name = {p.name: p.id for p in trace.processes}
    # Idempotent: a trace read back from traceconv's own output already has these tracks.
    existing = {t.name for t in trace.tracks if t.kind is TrackKind.COUNTER}
    fallback: int | None = None
    new_tracks = []
    for (device, pool, *category), rows in groups.items():
        label = " ".join(x for x in (device, pool, *category) if x) or "memory"
        if f"{label} live bytes" in existing:
            continue
        process = by_name.get(device)
        if process is None:
            if fallback is None:
                fallback = trace.add_process(process_name, kind=ProcessKind.SYNTHETIC)
            process = fallback
        track = trace.add_track(f"{label} live bytes", process=process, kind=TrackKind.COUNTER,
                                unit="bytes", description="bytes held by live memory blocks")
        allocs, frees, sizes = columns if len(rows) == len(memory) else (  # (all: as they are)
            [columns[0][k] for k in rows], [columns[1][k] for k in rows],
            [columns[2][k] for k in rows])
        curve = _live_bytes(allocs, frees, sizes, start=start, end=None)
        trace.add_counter_series(track, curve.times, curve.bytes)
        new_tracks.append(track)
    return new_tracks

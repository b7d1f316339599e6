"""Memory-block arithmetic: live bytes over time, peaks, and the counter tracks built from them."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..model import MemoryBlock, ProcessKind, Trace, TrackKind


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
    blocks = list(blocks)
    known = [t for b in blocks for t in (b.alloc_ns, b.free_ns) if t is not None]
    if start is None:
        start = min(known, default=0)
    times, deltas = [], []
    for b in blocks:
        times.append(start if b.alloc_ns is None else b.alloc_ns)
        deltas.append(b.size)
        if b.free_ns is not None and (end is None or b.free_ns <= end):
            times.append(b.free_ns)
            deltas.append(-b.size)
    if not times:
        return LiveBytes(np.zeros(0, np.int64), np.zeros(0, np.int64))
    t = np.asarray(times, dtype=np.int64)
    # sizes fit int64 but their negations and sums may not (a hostile -2**63): Python ints then
    exact = any(not -_SAFE < x < _SAFE for x in deltas)
    d = np.asarray(deltas, dtype=object if exact else np.int64)
    order = np.lexsort((d.astype(float) if exact else d, t))  # by time, frees (negative) first
    t, d = t[order], d[order]
    level = np.cumsum(d)
    last_of_time = np.append(t[1:] != t[:-1], True)  # keep the level after all changes at t
    return LiveBytes(t[last_of_time], level[last_of_time])


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
    groups: dict[tuple[str, ...], list[MemoryBlock]] = defaultdict(list)
    for block in trace.memory:
        groups[(block.device, block.pool)].append(block)
    if by_category:
        for block in trace.memory:
            groups[(block.device, block.pool, block.category or "uncategorised")].append(block)
    if not groups:
        return []
    # One start for every group, so blocks that predate the trace line up across tracks.
    start = min((t for b in trace.memory for t in (b.alloc_ns, b.free_ns) if t is not None),
                default=0)
    by_name = {p.name: p.id for p in trace.processes}
    # Idempotent: a trace read back from traceconv's own output already has these tracks.
    existing = {t.name for t in trace.tracks if t.kind is TrackKind.COUNTER}
    fallback: int | None = None
    new_tracks = []
    for (device, pool, *category), blocks in groups.items():
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
        curve = live_bytes(blocks, start=start)
        trace.add_counter_series(track, curve.times, curve.bytes)
        new_tracks.append(track)
    return new_tracks

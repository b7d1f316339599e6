"""Binding Chrome flow events (``s``/``t``/``f``, flow v2 ``bind_id``) to slices."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...model import Trace

MAX_WALK = 256  # how far back to look for an enclosing slice before giving up


@dataclass(slots=True)
class FlowPoint:
    """One flow event: where it is, and how it binds (``row`` set when bound already)."""

    key: tuple            # (category, id): ids are unique only within a category
    phase: str            # "s" start, "t" step, "f" finish
    place: Any            # what the reader's track resolver maps to candidate tracks
    ts: int
    enclosing: bool       # bind to the enclosing slice (bp:"e", s and t) or the next one (f)
    seq: int              # position in the file, to order points with equal timestamps
    name: str = ""
    row: int | None = None


class SliceIndex:
    """Per-track slices sorted by (start, -dur) for binding points to slices."""

    def __init__(self, trace: Trace) -> None:
        s = trace.slices
        track, start, dur = s.numpy("track"), s.numpy("start"), s.numpy("dur")
        self.order = np.lexsort((-dur, start, track))
        self.start = start[self.order]
        self.end = (start + dur)[self.order]
        # bounds[t]:bounds[t + 1] is track t's run in sorted order
        self.bounds = np.searchsorted(track[self.order], np.arange(len(trace.tracks) + 1))

    def _segment(self, track: int) -> tuple[int, int]:
        return int(self.bounds[track]), int(self.bounds[track + 1])

    def bind(self, track: int, ts: int, enclosing: bool) -> int | None:
        """The slice row a point binds to: the innermost slice starting at ``ts``, else the
        innermost enclosing one (``enclosing``) or the next one to start."""
        lo, hi = self._segment(track)
        starts = self.start[lo:hi]
        first = int(np.searchsorted(starts, ts, "left"))
        after = int(np.searchsorted(starts, ts, "right"))
        if after > first:  # slices start exactly here: the last in order is the innermost
            return int(self.order[lo + after - 1])
        if not enclosing:
            return int(self.order[lo + first]) if first < len(starts) else None
        ends = self.end[lo:hi]
        for i in range(after - 1, max(after - 1 - MAX_WALK, -1), -1):
            if ends[i] >= ts:
                return int(self.order[lo + i])
        return None


def enclosing_slices(index: SliceIndex, tracks: np.ndarray, times: np.ndarray) -> list[int | None]:
    """The innermost slice around each (track, time) point, all points at once.

    Starting from the last slice to begin at or before each point, step back through earlier
    slices until one still contains the point: the first found is the innermost. Each step
    is one numpy operation over the points still searching.

    >>> from traceconv.model import Trace
    >>> t = Trace(); p = t.add_process("p"); th = t.add_track("t", process=p)
    >>> _ = t.add_slice(th, 0, 100, "outer"); _ = t.add_slice(th, 10, 20, "inner")
    >>> enclosing_slices(SliceIndex(t), np.array([th, th, th]), np.array([15, 50, 200]))
    [1, 0, None]
    """
    found = np.full(len(times), -1, dtype=np.int64)
    for track in np.unique(tracks).tolist():
        lo, hi = index._segment(track)
        where = np.flatnonzero(tracks == track)
        if hi == lo:
            continue
        starts, ends, ts = index.start[lo:hi], index.end[lo:hi], times[where]
        candidate = np.searchsorted(starts, ts, "right") - 1
        searching = candidate >= 0
        for _ in range(MAX_WALK):
            if not searching.any():
                break
            inside = searching.copy()
            inside[searching] = ends[candidate[searching]] >= ts[searching]
            found[where[inside]] = index.order[lo + candidate[inside]]
            searching &= ~inside
            candidate[searching] -= 1
            searching &= candidate >= 0
    return [None if row < 0 else row for row in found.tolist()]


def link_flows(trace: Trace, points: list[FlowPoint], tracks_of: Callable[[Any], list[int]],
               index: SliceIndex) -> None:
    """Turn flow points into model flows between the slices they bind to.

    Points with the same (category, id) form a chain in time order; each consecutive pair of
    bound slices becomes a flow. ``tracks_of(point.place)`` lists the tracks a point may sit
    on (the first that binds wins); ``index`` holds the trace's slices. Chains with a single endpoint and points that bind to
    no slice are counted in the diagnostics.
    """
    if not points:
        return
    chains: dict[tuple, list[FlowPoint]] = defaultdict(list)
    for point in points:
        chains[point.key].append(point)
    diags = trace.diagnostics
    unbound = dangling = 0
    unbound_example = dangling_example = None
    for (category, flow_id), chain in chains.items():
        chain.sort(key=lambda p: (p.ts, p.seq))
        rows = []
        for point in chain:
            row = point.row
            for track in tracks_of(point.place) if row is None else ():
                row = index.bind(track, point.ts, point.enclosing)
                if row is not None:
                    break
            if row is None:
                unbound += 1
                unbound_example = unbound_example or f"{category} id {flow_id} at {point.ts} ns"
            elif not rows or rows[-1][0] != row:
                rows.append((row, point))
        if len(rows) < 2:
            dangling += len(rows)
            dangling_example = dangling_example or f"{category} id {flow_id}: only '{chain[0].phase}'"
            continue
        for (src, point), (dst, _) in zip(rows, rows[1:], strict=False):
            trace.add_flow(src, dst, category, point.name)
    diags.add("chrome.flow_unbound", "flow events with no slice to bind to (no slice at that "
              "time on that thread)", kind="dropped", count=unbound,
              example=unbound_example)
    diags.add("chrome.flow_dangling", "flow events whose other end is missing (a start with no "
              "finish or a finish with no start)", kind="dropped", count=dangling,
              example=dangling_example)

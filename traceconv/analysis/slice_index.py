"""Finding the slices around points in time: which op was running when a kernel was
launched, a flow event fired, or memory was allocated."""

from __future__ import annotations

import numpy as np

from ..model import Trace

MAX_WALK = 256  # how far back to look for an enclosing slice before giving up


class SliceIndex:
    """Per-track slices sorted by (start, -dur) for binding points in time to slices;
    only those of ``category`` when given. ``order`` maps sorted positions to slice rows."""

    def __init__(self, trace: Trace, category: str | None = None) -> None:
        s = trace.slices
        track, start, dur = s.numpy("track"), s.numpy("start"), s.numpy("dur")
        rows = np.arange(len(track))
        if category is not None:
            wanted = trace.strings.find(category)
            rows = rows[s.numpy("category") == (-1 if wanted is None else wanted)]
            track, start, dur = track[rows], start[rows], dur[rows]
        sort = np.lexsort((-dur, start, track))
        self.order = rows[sort]
        track, start, dur = track[sort], start[sort], dur[sort]
        self.start = start
        self.end = start + dur
        # bounds[t]:bounds[t + 1] is track t's run in sorted order
        self.bounds = np.searchsorted(track, np.arange(len(trace.tracks) + 1))

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
    >>> _ = t.add_slice(th, 12, 5, "infer_shape", "OperatorInner")
    >>> enclosing_slices(SliceIndex(t, category="OperatorInner"), np.array([th, th]),
    ...                  np.array([15, 50]))
    [2, None]
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

"""Finding the slices around points in time: which op was running when a kernel was
launched, a flow event fired, or memory was allocated."""

from __future__ import annotations

import numpy as np

from . import Trace
from .groups import grouped
from .timeline_order import timeline_order

MAX_WALK = 256  # steps back one slice at a time; past them, block by block
_BLOCK = 1024     # slices per block whose furthest end is kept (the block walk's step)
_POINTS = 1 << 15   # points looked up together (their search arrays are alive at once)


class SliceIndex:
    """Per-track slices sorted by (start, -dur) for binding points in time to slices;
    only those of ``category`` (a reader's own word) or of ``rows`` when given. ``order``
    maps sorted positions to slice rows.

    With ``instants`` (True: every instant; or the rows of those wanted, e.g.
    :func:`~traceconv.model.instant_slices.instants_near` the flow points), the instants
    are there too, as slices of no length (as trace_processor has them, to bind flows):
    ``order`` gives ``instant_base`` + its instant row (:func:`~traceconv.model.instant_slices.instants_as_slices` makes the
    bound ones slices), and :meth:`slices_only` is the index without them.

    >>> from traceconv.model import Trace
    >>> t = Trace(); th = t.add_track("t", process=t.add_process("p"))
    >>> _ = t.add_slice(th, 0, 100, "RunTask"); _ = t.add_instant(th, 10, "PostTask")
    >>> index = SliceIndex(t, instants=True); index.instant_base
    1
    >>> index.bind_many(np.array([th, th]), np.array([10, 50]), np.array([True, True])).tolist()
    [1, 0]
    >>> index.slices_only().order.tolist()
    [0]
    """

    def __init__(self, trace: Trace, category: str | None = None,
                 rows: np.ndarray | None = None, *, instants: bool | np.ndarray = False
                 ) -> None:
        s = trace.slices
        # (views: the index keeps sorted copies, not these; no slice is added meanwhile)
        track, start, dur = s.numpy_view("track"), s.numpy_view("start"), s.numpy_view("dur")
        self.instant_base = len(s)
        if category is not None:
            wanted = trace.strings.find(category)
            found = s.numpy_view("category") == (-1 if wanted is None else wanted)
            rows = np.flatnonzero(found) if rows is None else rows[found[rows]]
        # the instants held: all, or those rows of them (None: none)
        chosen = None if instants is False or not len(trace.instants) else \
            np.arange(len(trace.instants)) if instants is True else np.asarray(instants)
        if chosen is not None and not len(chosen):
            chosen = None
        copied = rows is not None or chosen is not None
        named = rows is None and chosen is not None and len(chosen) < len(trace.instants)
        if rows is not None:
            track, start, dur = track[rows], start[rows], dur[rows]
        if chosen is not None:
            points = trace.instants
            if rows is not None:
                rows = np.r_[rows, len(s) + chosen]
            track = np.r_[track, points.numpy_view("track")[chosen]]
            start = np.r_[start, points.numpy_view("ts")[chosen]]
            dur = np.r_[dur, np.zeros(len(chosen), dtype=np.int64)]
        # (-dur, enclosing slices first: in place where dur is this index's own copy)
        tie = np.negative(dur, out=dur) if copied else -dur
        del dur
        sort = timeline_order(track, start, tie)
        self.order = sort if rows is None else rows[sort]   # (every slice: no row column)
        del rows
        self.start = start[sort]
        del start
        self.end = self.start - tie[sort]
        del tie
        track = track[sort]
        del sort
        if named:   # (positions past the slices are the chosen instants': rows named)
            assert chosen is not None
            tail = self.order >= len(s)
            self.order[tail] = len(s) + chosen[self.order[tail] - len(s)]
            del tail
        # bounds[t]:bounds[t + 1] is track t's run in sorted order
        self.bounds = np.searchsorted(track, np.arange(len(trace.tracks) + 1))

    def slices_only(self) -> SliceIndex:
        """This index without the instants it holds (itself when it holds none), made out of
        this one, which it empties an array at a time so that the two are never held whole
        together (10 M Kineto events: 2.46 M instants beside 7.5 M slices); this one is not
        to be used again."""
        kept = self.order < self.instant_base
        if kept.all():
            return self
        index = object.__new__(SliceIndex)
        index.instant_base = self.instant_base
        index.bounds = np.r_[0, np.cumsum(kept)][self.bounds]
        for name in ("order", "start", "end"):
            setattr(index, name, getattr(self, name)[kept])
            delattr(self, name)
        return index

    def _segment(self, track: int) -> tuple[int, int]:
        return int(self.bounds[track]), int(self.bounds[track + 1])

    def bind_many(self, tracks: np.ndarray, times: np.ndarray,
                  enclosing: np.ndarray) -> np.ndarray:
        """The slice row each point binds to (-1: none): the innermost slice starting at its
        time, else the innermost one around it (``enclosing``) or the next one to start.

        >>> from traceconv.model import Trace
        >>> t = Trace(); p = t.add_process("p"); th = t.add_track("t", process=p)
        >>> _ = t.add_slice(th, 0, 100, "outer"); _ = t.add_slice(th, 10, 20, "inner")
        >>> SliceIndex(t).bind_many(np.array([th] * 3), np.array([10, 50, 5]),
        ...                         np.array([True, True, False])).tolist()
        [1, 0, 1]
        """
        found = np.full(len(times), -1, dtype=np.int64)
        around = np.flatnonzero(enclosing)
        # the innermost enclosing slice is also the innermost one starting exactly there
        found[around] = enclosing_rows(self, tracks[around], times[around])
        rest = np.flatnonzero(~enclosing)
        for track, positions in grouped(tracks[rest]):
            lo, hi = self._segment(track)
            where = rest[positions]
            starts = self.start[lo:hi]
            first = np.searchsorted(starts, times[where], "left")
            after = np.searchsorted(starts, times[where], "right")
            exact = after > first
            position = np.where(exact, after - 1, first)
            known = position < hi - lo
            found[where[known]] = self.order[lo + position[known]]
        return found


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
    return [None if row < 0 else row for row in enclosing_rows(index, tracks, times).tolist()]


def enclosing_rows(index: SliceIndex, tracks: np.ndarray, times: np.ndarray) -> np.ndarray:
    """:func:`enclosing_slices` as an array, -1 for none.

    >>> from traceconv.model import Trace
    >>> t = Trace(); p = t.add_process("p"); th = t.add_track("t", process=p)
    >>> _ = t.add_slice(th, 0, 100, "outer")
    >>> enclosing_rows(SliceIndex(t), np.array([th, th]), np.array([15, 200])).tolist()
    [0, -1]
    """
    found = np.full(len(times), -1, dtype=np.int64)
    block_tops_of: dict[int, np.ndarray] = {}   # per track, made once it is needed
    for track, points in grouped(tracks):   # (one sort: points over many tracks stay linear)
        lo, hi = index._segment(track)
        if hi == lo:
            continue
        starts, ends = index.start[lo:hi], index.end[lo:hi]
        reach = np.maximum.accumulate(ends)   # (how far any slice up to here reaches)
        for first in range(0, len(points), _POINTS):   # (a block at a time: bounded arrays)
            where = points[first:first + _POINTS]
            ts = times[where]
            candidate = np.searchsorted(starts, ts, "right") - 1
            # only the points still searching are carried to the next step back; a point
            # that no earlier slice reaches (between top-level ops) has none to find: no walk
            keep = candidate >= 0
            keep[keep] = reach[candidate[keep]] >= ts[keep]
            where, ts, candidate = where[keep], ts[keep], candidate[keep]
            for _ in range(MAX_WALK):
                if not len(where):
                    break
                inside = ends[candidate] >= ts
                found[where[inside]] = index.order[lo + candidate[inside]]
                keep = ~inside & (candidate > 0)
                where, ts, candidate = where[keep], ts[keep], candidate[keep] - 1
            if len(where):   # (inside a slice that many shorter ones follow: few points)
                tops = block_tops_of.get(track)
                if tops is None:
                    tops = block_tops_of[track] = block_tops(ends)
                rows = last_reaching(ends, tops, candidate, ts)
                hit = rows >= 0
                found[where[hit]] = index.order[lo + rows[hit]]
    return found


def block_tops(ends: np.ndarray) -> np.ndarray:
    """The furthest end of each block of :data:`_BLOCK` slices (in start order): a block
    none of whose slices reaches a point is stepped over at once (one value per block
    instead of a pointer per slice: 7 K values for a track of 7.5 M slices, not 60 MB).

    >>> block_tops(np.array([100, 30, 20, 90, 50]))[0].item()
    100
    """
    return np.maximum.reduceat(ends, np.arange(0, len(ends), _BLOCK)) if len(ends) else ends


def last_reaching(ends: np.ndarray, tops: np.ndarray, candidate: np.ndarray,
                  ts: np.ndarray) -> np.ndarray:
    """For each point (a time ``ts``, and ``candidate``: the last slice not yet looked at
    that starts at or before it), the last slice at or before ``candidate`` whose end
    reaches ``ts`` (-1: none), ``tops`` being :func:`block_tops` of ``ends``: back one slice
    at a time to the start of the candidate's block, then a block at a time to the first
    that reaches, then one slice at a time inside it. At most 2 x :data:`_BLOCK` + one step
    per block, each step one numpy operation over the points still searching.

    >>> ends = np.array([100, 30, 20, 90, 50])
    >>> last_reaching(ends, block_tops(ends), np.array([4, 4, 2, 1]), np.array([60, 95, 25, 150])).tolist()
    [3, 0, 1, -1]
    """
    found = np.full(len(ts), -1, dtype=np.int64)
    block = _BLOCK
    points = np.flatnonzero(candidate >= 0)
    at = candidate[points]
    past: list[tuple[np.ndarray, np.ndarray]] = []   # (points, the block before theirs)
    while len(points):   # inside the candidate's own block
        inside = ends[at] >= ts[points]
        found[points[inside]] = at[inside]
        first = ~inside & (at % block == 0)
        past.append((points[first], at[first] // block - 1))
        keep = ~inside & ~first
        points, at = points[keep], at[keep] - 1
    points, blocks = (np.concatenate(parts) for parts in zip(*past, strict=True)) if past \
        else (np.zeros(0, dtype=np.int64),) * 2
    reached: list[tuple[np.ndarray, np.ndarray]] = []
    while len(points):   # block by block
        keep = blocks >= 0
        points, blocks = points[keep], blocks[keep]
        hit = tops[blocks] >= ts[points]
        reached.append((points[hit], blocks[hit]))
        points, blocks = points[~hit], blocks[~hit] - 1
    points, blocks = (np.concatenate(parts) for parts in zip(*reached, strict=True)) if reached \
        else (np.zeros(0, dtype=np.int64),) * 2
    at = (blocks + 1) * block - 1
    while len(points):   # inside the block that reaches (one of its slices does)
        inside = ends[at] >= ts[points]
        found[points[inside]] = at[inside]
        points, at = points[~inside], at[~inside] - 1
    return found

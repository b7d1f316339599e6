"""Host threads cut into pieces where one innermost slice runs (its self time).

Shared by the critical path (which walks these pieces back in time) and the time attribution
of ``diff`` (which charges each piece to its slice).
"""

from __future__ import annotations

import numpy as np

from ..model.groups import grouped
from ..model.timeline_order import timeline_order
from .activity import Activity, Timeline

# Python frames, user ranges and steps count too: the host is busy in them (their self time
# is interpreter and framework work between ops); so does the profiler's own work, on the
# thread that paid it (Timeline.host_track)
HOST_WORK = np.array([Activity.HOST_OP, Activity.LAUNCH, Activity.SYNC, Activity.RUNTIME,
                      Activity.DATALOADER, Activity.COMMUNICATION, Activity.OTHER,
                      Activity.PYTHON, Activity.ANNOTATION, Activity.STEP,
                      Activity.OVERHEAD], np.int8)


class HostSegments:
    """Each host thread cut into pieces where one innermost slice runs (its self time).

    >>> from traceconv.model import Trace
    >>> t = Trace(); a = t.add_track("main", process=t.add_process("p"))
    >>> _ = t.add_slice(a, 0, 10, "step", "cpu_op"); _ = t.add_slice(a, 2, 3, "mm", "cpu_op")
    >>> h = HostSegments(Timeline(t))
    >>> h.start.tolist(), h.end.tolist(), h.row.tolist(), h.at(0, 4), h.before(0, 2)
    ([0, 2, 5], [2, 5, 10], [0, 1, 0], 1, 0)
    """

    def __init__(self, tl: Timeline) -> None:
        rows = np.flatnonzero(np.isin(tl.activity, HOST_WORK) & ~tl.on_device)
        track_of = tl.host_track
        rows = rows[timeline_order(track_of[rows], tl.start[rows], -tl.dur[rows])]
        starts, ends, owners, tracks = [], [], [], []
        for track, positions in grouped(track_of[rows]):   # (one sort, not a scan per track)
            mine = rows[positions]
            s, e, r = flatten(tl.start[mine].tolist(), tl.end[mine].tolist(), mine.tolist())
            starts += s
            ends += e
            owners += r
            tracks += [track] * len(s)
        self.start = np.asarray(starts, np.int64)
        self.end = np.asarray(ends, np.int64)
        self.row = np.asarray(owners, np.int64)
        self.track = np.asarray(tracks, np.int64)
        # segments are grouped by track and sorted by time inside each group
        self.bounds = {t: (int(np.searchsorted(self.track, t, "left")),
                           int(np.searchsorted(self.track, t, "right")))
                       for t in np.unique(self.track).tolist()}
        self.last_of_row: dict[int, int] = {}
        self.first_of_row: dict[int, int] = {}
        for i, row in enumerate(owners):
            self.last_of_row[row] = i
            self.first_of_row.setdefault(row, i)

    def before(self, track: int, ts: int) -> int | None:
        """The segment of ``track`` that ends last at or before ``ts``."""
        lo, hi = self.bounds.get(track, (0, 0))
        i = int(np.searchsorted(self.end[lo:hi], ts, "right")) - 1
        return lo + i if i >= 0 else None

    def at(self, track: int, ts: int) -> int | None:
        """The segment of ``track`` running just before ``ts`` (start < ts ≤ end), else the
        one that ends last before ``ts``."""
        lo, hi = self.bounds.get(track, (0, 0))
        i = int(np.searchsorted(self.end[lo:hi], ts, "left"))
        if i < hi - lo and self.start[lo + i] < ts:
            return lo + i
        return self.before(track, ts)

    def busy_ns(self, activity: np.ndarray | None = None,
                frames: frozenset[int] = frozenset()) -> dict[int, int]:
        """Per host track, the time some slice runs on it (the union of its slices); given
        the slices' ``activity``, only the time whose innermost slice is no ``frames`` kind
        (the time a thread runs ops: a Python frame or range around none is no op)."""
        lengths = self.end - self.start
        if activity is not None and frames:
            lengths = np.where(np.isin(activity[self.row], list(frames)), 0, lengths)
        return {track: int(lengths[lo:hi].sum()) for track, (lo, hi) in self.bounds.items()}


def flatten(starts: list[int], ends: list[int], rows: list[int]
            ) -> tuple[list[int], list[int], list[int]]:
    """Pieces of one thread's nested slices (sorted by start, longest first) where the
    innermost slice is the same; a child sticking out of its parent is cut at the parent's end.

    >>> flatten([0, 2], [10, 5], [7, 8])
    ([0, 2, 5], [2, 5, 10], [7, 8, 7])
    """
    out_s: list[int] = []
    out_e: list[int] = []
    out_r: list[int] = []
    stack: list[tuple[int, int]] = []   # (end, row)
    cursor = 0

    def emit(until: int, row: int) -> None:
        if until > cursor:
            out_s.append(cursor)
            out_e.append(until)
            out_r.append(row)

    for start, end, row in zip(starts, ends, rows, strict=True):
        while stack and stack[-1][0] <= start:
            top_end, top_row = stack.pop()
            emit(top_end, top_row)
            cursor = max(cursor, top_end)
        if stack:
            emit(start, stack[-1][1])
            end = min(end, stack[-1][0])
        cursor = max(cursor, start)
        stack.append((end, row))
    while stack:
        top_end, top_row = stack.pop()
        emit(top_end, top_row)
        cursor = max(cursor, top_end)
    return out_s, out_e, out_r

"""The order in which a trace's events are written: by time, each track as a call stack.

trace_processor sorts events by timestamp and keeps file order for ties, and an END closes
the innermost open slice of its track. So per track, at one timestamp, ENDs must come
before BEGINs (innermost END first, outermost BEGIN first) and a zero-length slice must
close before its next sibling opens. With the slices sorted by (track, start, -duration)
and properly nested (see :mod:`traceconv.analysis.nesting`), the END of slice *i* belongs
right before the BEGIN of the first later slice of its track that starts at or after *i*'s
end; everything is computed with numpy sorts and searches, no per-event Python (the slices
sorted by :func:`~traceconv.analysis.timeline_order.timeline_order`, which takes their
mostly time-ordered input as it comes).
"""

from __future__ import annotations

import numpy as np

from ...analysis.nesting import Timeline, trace_timeline
from ...model import Trace

BEGIN, END, INSTANT, COUNTER = 0, 1, 2, 3  # event codes: row * 4 + kind


def event_order(trace: Trace, timeline: Timeline | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """All events of ``trace`` in write order, as (timestamps, codes).

    A code is ``row * 4 + kind`` with kind BEGIN/END (slice rows), INSTANT (instant rows)
    or COUNTER (counter rows). ``timeline``: that of ``trace``'s slices when the caller has
    it (:func:`~traceconv.analysis.nesting.nested_view_timeline`), else it is sorted here.

    >>> trace = Trace(); p = trace.add_process("p", pid=1)
    >>> t = trace.add_track("main", process=p, tid=1)
    >>> outer, inner = trace.add_slice(t, 0, 10, "outer"), trace.add_slice(t, 0, 10, "inner")
    >>> ts, codes = event_order(trace)
    >>> ts.tolist(), [(int(c) >> 2, ("B", "E")[int(c) & 3]) for c in codes]
    ([0, 0, 10, 10], [(0, 'B'), (1, 'B'), (1, 'E'), (0, 'E')])
    """
    if timeline is None:
        timeline = trace_timeline(trace)
    order, sorted_track = timeline.order, timeline.tracks
    sorted_start, sorted_end = timeline.starts, timeline.ends
    n = len(order)
    # first later slice of the same track starting at or after each slice's end
    close_before = np.empty(n, dtype=np.int64)
    bounds = np.flatnonzero(np.diff(sorted_track)) + 1
    for lo, hi in zip(np.r_[0, bounds], np.r_[bounds, n], strict=True):
        close_before[lo:hi] = lo + np.searchsorted(sorted_start[lo:hi], sorted_end[lo:hi], "left")
    position = np.arange(n, dtype=np.int64)
    close_before = np.maximum(close_before, position + 1)

    inst = trace.instants
    cnt = trace.counters
    n_inst, n_cnt = len(inst), len(cnt)
    ts = np.concatenate([sorted_start, sorted_end, inst.numpy("ts"), cnt.numpy("ts")])
    # ties at one timestamp, in one sort key: the slot on the track's stack sequence, then
    # ENDs innermost first and instants and counters (slot -1: first), then BEGINs
    rank = 2 * n + 2   # the in-slot ranks: END n - position (1..n), others n, BEGIN 2n + 1
    tie = np.concatenate([(position + 1) * rank + 2 * n + 1,
                          (close_before + 1) * rank + n - position,
                          np.full(n_inst + n_cnt, n, np.int64)])
    codes = np.concatenate([order * 4 + BEGIN, order * 4 + END,
                            np.arange(n_inst, dtype=np.int64) * 4 + INSTANT,
                            np.arange(n_cnt, dtype=np.int64) * 4 + COUNTER])
    write_order = np.lexsort((tie, ts))   # measured faster here than timeline_order
    return ts[write_order], codes[write_order]

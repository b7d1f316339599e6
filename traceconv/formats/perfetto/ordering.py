"""The order in which a trace's events are written: by time, each track as a call stack.

trace_processor sorts events by timestamp and keeps file order for ties, and an END closes
the innermost open slice of its track. So per track, at one timestamp, ENDs must come
before BEGINs (innermost END first, outermost BEGIN first) and a zero-length slice must
close before its next sibling opens. With the slices sorted by (track, start, -duration)
and properly nested (see :mod:`traceconv.model.nesting`), the END of slice *i* belongs
right before the BEGIN of the first later slice of its track that starts at or after *i*'s
end; everything is computed with numpy sorts and searches, no per-event Python (the slices
sorted by :func:`~traceconv.model.timeline_order.timeline_order`, which takes their
mostly time-ordered input as it comes).
"""

from __future__ import annotations

import numpy as np

from ...model import Trace
from ...model.nesting import Timeline, clamped_ends, slice_timeline, trace_timeline

BEGIN, END, INSTANT, COUNTER = 0, 1, 2, 3  # event codes: row * 4 + kind


def event_order(trace: Trace, timeline: Timeline | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """All events of ``trace`` in write order, as (timestamps, codes).

    A code is ``row * 4 + kind`` with kind BEGIN/END (slice rows), INSTANT (instant rows)
    or COUNTER (counter rows). ``timeline``: that of ``trace``'s slices when the caller has
    it (:func:`~traceconv.model.nesting.nested_view_timeline`), else it is sorted here.

    >>> trace = Trace(); p = trace.add_process("p", pid=1)
    >>> t = trace.add_track("main", process=p, tid=1)
    >>> outer, inner = trace.add_slice(t, 0, 10, "outer"), trace.add_slice(t, 0, 10, "inner")
    >>> ts, codes = event_order(trace)
    >>> ts.tolist(), [(int(c) >> 2, ("B", "E")[int(c) & 3]) for c in codes]
    ([0, 0, 10, 10], [(0, 'B'), (1, 'B'), (1, 'E'), (0, 'E')])
    """
    if timeline is None:
        timeline = trace_timeline(trace)
    order = timeline.order
    sorted_start, sorted_end = timeline.starts, timeline.ends
    n = len(order)
    slot, close_before = _slots(timeline)

    # big arrays are filled in place, and the sorted results written over the keys:
    # fresh memory costs more here than the arithmetic (page faults)
    instant_ts, counter_ts = trace.instants.numpy_view("ts"), trace.counters.numpy_view("ts")
    ts = np.concatenate([sorted_start, sorted_end, instant_ts, counter_ts])
    begins, ends, others = slice(0, n), slice(n, 2 * n), slice(2 * n, len(ts))
    # ties at one timestamp, in one sort key: the slot on the track's stack sequence, then
    # ENDs innermost first and instants and counters (slot 0: first), then BEGINs
    rank = 2 * n + 2   # the in-slot ranks: END n - position (1..n), others n, BEGIN 2n + 1
    tie = np.empty(len(ts), dtype=np.int64)
    np.multiply(slot, rank, out=tie[begins])
    tie[begins] += 2 * n + 1
    close_before += 1
    np.multiply(close_before, rank, out=tie[ends])
    tie[ends] += n + 1
    tie[ends] -= slot
    tie[others] = n
    del close_before, slot
    write_order = np.lexsort((tie, ts))   # measured faster here than timeline_order
    sorted_ts = np.take(ts, write_order, out=tie, mode="clip")   # (mode "raise" buffers out)
    # the codes follow from each event's place in the concatenation, so they are made
    # after the sort, into the unsorted times' memory, a block at a time: one array of
    # the trace's size fewer at the sort's peak
    return sorted_ts, _codes(write_order, order, len(instant_ts), out=ts)


def _slots(timeline: Timeline) -> tuple[np.ndarray, np.ndarray]:
    """Per slice of ``timeline``: its BEGIN's slot (its position + 1), and the slot its END
    comes right before: that of the first later slice of its track starting at or after its
    end (never before its own BEGIN).

    >>> from traceconv.model.nesting import slice_timeline
    >>> t = slice_timeline(np.array([0, 0, 0]), np.array([0, 2, 9]), np.array([9, 4, 9]))
    >>> [v.tolist() for v in _slots(t)]
    [[1, 2, 3], [2, 2, 3]]
    """
    n = len(timeline.order)
    slot = np.arange(1, n + 1, dtype=np.int64)
    close_before = np.empty(n, dtype=np.int64)
    bounds = np.flatnonzero(np.diff(timeline.tracks)) + 1
    for lo, hi in zip(np.r_[0, bounds], np.r_[bounds, n], strict=True):
        close_before[lo:hi] = np.searchsorted(timeline.starts[lo:hi], timeline.ends[lo:hi],
                                              "left")
        close_before[lo:hi] += lo
    np.maximum(close_before, slot, out=close_before)
    return slot, close_before


def _codes(places: np.ndarray, order: np.ndarray, instants: int, out: np.ndarray,
           block: int = 1 << 18) -> np.ndarray:
    """The code of the event at each place of the concatenation [BEGINs, ENDs, instants,
    counters] (slices in timeline ``order``), written into ``out``.

    >>> _codes(np.array([3, 0, 4, 2, 1]), np.array([1, 0]), 1, np.empty(5, np.int64)).tolist()
    [1, 4, 2, 5, 0]
    """
    n = len(order)
    firsts = np.array([0, n, 2 * n, 2 * n + instants], dtype=np.int64)   # kind = segment
    for lo in range(0, len(places), block):
        place = places[lo:lo + block]
        kind = np.searchsorted(firsts, place, "right") - 1
        row = place - firsts[kind]
        of_slice = kind <= END
        row[of_slice] = order[row[of_slice]]
        np.multiply(row, 4, out=out[lo:lo + block])
        out[lo:lo + block] += kind
    return out


def window_event_order(trace: Trace, rows: np.ndarray, with_begin: np.ndarray,
                       with_end: np.ndarray, instant_rows: np.ndarray,
                       counter_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`event_order` for one time window of a trace written window by window: the
    slices ``rows`` (each with its BEGIN, ``with_begin``, or its END, ``with_end``, in the
    window), the instants and counter samples in it, as (timestamps, codes).

    Events that tie are ordered as in :func:`event_order`: every slice with an event at a
    timestamp of the window has a row here, and their order on their track among these rows
    is their order among all the track's slices.

    >>> trace = Trace(); p = trace.add_process("p", pid=1)
    >>> t = trace.add_track("main", process=p, tid=1)
    >>> outer, inner = trace.add_slice(t, 0, 10, "outer"), trace.add_slice(t, 0, 10, "inner")
    >>> both, none = np.array([True, True]), np.array([False, False])
    >>> ts, codes = window_event_order(trace, np.array([0, 1]), none, both, np.zeros(0, int),
    ...                                np.zeros(0, int))   # a window holding their ENDs
    >>> ts.tolist(), [(int(c) >> 2, ("B", "E")[int(c) & 3]) for c in codes]
    ([10, 10], [(1, 'E'), (0, 'E')])
    """
    slices = trace.slices
    start = slices.numpy_view("start")[rows]
    timeline = slice_timeline(slices.numpy_view("track")[rows], start,
                              clamped_ends(start, slices.numpy_view("dur")[rows]))
    order = timeline.order
    n = len(order)
    slot, close_before = _slots(timeline)
    begins, ends = with_begin[order], with_end[order]
    others = len(instant_rows) + len(counter_rows)
    rank = 2 * n + 2   # the ranks of event_order: END n - position, others n, BEGIN 2n + 1
    ts = np.concatenate([timeline.starts[begins], timeline.ends[ends],
                         trace.instants.numpy_view("ts")[instant_rows],
                         trace.counters.numpy_view("ts")[counter_rows]])
    tie = np.concatenate([slot[begins] * rank + 2 * n + 1,
                          (close_before[ends] + 1) * rank + n + 1 - slot[ends],
                          np.full(others, n, dtype=np.int64)])
    codes = np.concatenate([rows[order[begins]] * 4 + BEGIN, rows[order[ends]] * 4 + END,
                            np.asarray(instant_rows, dtype=np.int64) * 4 + INSTANT,
                            np.asarray(counter_rows, dtype=np.int64) * 4 + COUNTER])
    write_order = np.lexsort((tie, ts))
    return ts[write_order], codes[write_order]

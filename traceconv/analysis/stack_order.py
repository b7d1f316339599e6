"""Sorting events by time when they mostly come sorted already.

Slices and events arrive nearly in time order (a profiler writes them as they happen), and
a stable argsort of int64 in numpy is a timsort, which takes such input in one pass or a
few merges; ``np.lexsort`` sorts every key from scratch. So the time is sorted alone, and
only the runs of equal times are then put in order by the tie key: the result is exactly
that of the lexsort, in a fraction of its time on real traces (and no worse on shuffled
ones).
"""

from __future__ import annotations

import numpy as np


def stack_order(track: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Slice positions sorted by (track, start, -duration), ties kept in row order: each
    track as its call stack is walked, parents before the children they enclose. The same
    as ``np.lexsort((start - end, start, track))``.

    >>> stack_order(np.array([1, 0, 0, 0]), np.array([0, 5, 0, 0]), np.array([9, 6, 2, 4]))
    array([3, 2, 1, 0])
    """
    order = np.argsort(start, kind="stable")
    order = order[np.argsort(track[order], kind="stable")]
    sorted_track, sorted_start = track[order], start[order]
    same = (sorted_track[1:] == sorted_track[:-1]) & (sorted_start[1:] == sorted_start[:-1])
    return _runs_ordered(order, same, (start - end)[order])


def time_order(ts: np.ndarray, tie: np.ndarray) -> np.ndarray:
    """Positions sorted by time, equal times by ``tie``, then by position: the same as
    ``np.lexsort((tie, ts))``.

    >>> time_order(np.array([5, 1, 5, 1]), np.array([0, 2, -1, 2])).tolist()
    [1, 3, 2, 0]
    """
    order = np.argsort(ts, kind="stable")
    sorted_ts = ts[order]
    return _runs_ordered(order, sorted_ts[1:] == sorted_ts[:-1], tie[order])


def _runs_ordered(order: np.ndarray, same: np.ndarray, key: np.ndarray) -> np.ndarray:
    """``order`` with each run of positions that tie (``same[i]``: position i ties with
    i + 1) sorted by ``key`` (given in the order of ``order``), stably. Only the runs that
    are out of order are sorted again."""
    unsorted = same & (key[1:] < key[:-1])
    if not unsorted.any():
        return order
    run = np.cumsum(np.r_[True, ~same])   # each position's run number (from 1)
    redo = np.zeros(int(run[-1]) + 1, dtype=bool)
    redo[run[1:][unsorted]] = True
    members = np.flatnonzero(redo[run])
    resorted = np.lexsort((key[members], run[members]))
    order[members] = order[members[resorted]]
    return order

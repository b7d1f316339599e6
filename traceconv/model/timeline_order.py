"""Slices in timeline order (by track, then start), fast for the order traces come in.

Readers take events in file order, and profilers write each thread's events nearly in
time order. ``np.lexsort`` over three keys does not profit from that (70–110 ms for
0.5–0.75 M slices); a stable sort of one composite key does (timsort finds the runs: about
2 ms). Only the rows of equal track and start that the tie key leaves out of order are then
sorted again, and those are few.
"""

from __future__ import annotations

import numpy as np

_LIMIT = 1 << 62   # composite keys stay below this (int64, with room for the subtraction)


def timeline_order(track: np.ndarray, start: np.ndarray, tie: np.ndarray) -> np.ndarray:
    """The rows sorted by ``track``, then ``start``, then ``tie`` (e.g. ``-dur``: enclosing
    slices first), equal rows in row order: exactly ``np.lexsort((tie, start, track))``.

    >>> timeline_order(np.array([1, 0, 0, 0]), np.array([5, 9, 2, 2]),
    ...                np.array([0, 0, -1, -7])).tolist()
    [3, 2, 1, 0]
    """
    if not len(track):
        return np.zeros(0, dtype=np.int64)
    low, first_track = int(start.min()), int(track.min())
    span = int(start.max()) - low + 1
    if span * (int(track.max()) - first_track + 1) >= _LIMIT:
        return np.lexsort((tie, start, track))
    key = track.astype(np.int64)   # (track - first_track) * span + start - low, in place
    key -= first_track
    key *= span
    key += start
    key -= low
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    del key   # (the keys in order are what the rest needs: one array fewer at the peak)
    sorted_tie = tie[order]
    same = sorted_key[1:] == sorted_key[:-1]
    disorder = np.flatnonzero(same & (sorted_tie[1:] < sorted_tie[:-1]))
    if len(disorder):   # sort again the runs of equal keys that hold a disorder
        run = np.cumsum(np.r_[True, ~same]) - 1   # run number of each sorted position
        unsettled = np.zeros(int(run[-1]) + 1, dtype=bool)
        unsettled[run[disorder]] = True
        again = np.flatnonzero(unsettled[run])
        rows = order[again]
        order[again] = rows[np.lexsort((tie[rows], sorted_key[again]))]
    return order

"""Positions grouped by key in one sort: the linear way to loop over tracks.

``for track in np.unique(tracks): where = np.flatnonzero(tracks == track)`` scans every
point once per track: quadratic when the points are spread over many tracks (one slice
per thread, flows between thousands of threads). One stable sort groups them instead.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np


def grouped(keys: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """``(key, positions of that key in ascending order)`` for each distinct key, keys in
    ascending order.

    >>> [(k, p.tolist()) for k, p in grouped(np.array([3, 1, 3, 2, 1]))]
    [(1, [1, 4]), (2, [3]), (3, [0, 2])]
    """
    if not len(keys):
        return
    order = np.argsort(keys, kind="stable")
    distinct, firsts = np.unique(keys[order], return_index=True)
    lasts = [*firsts[1:].tolist(), len(order)]
    for key, first, last in zip(distinct.tolist(), firsts.tolist(), lasts, strict=True):
        yield key, order[first:last]


def grouped_pairs(first: np.ndarray, second: np.ndarray
                  ) -> Iterator[tuple[tuple[int, int], np.ndarray]]:
    """:func:`grouped` by the pair ``(first, second)``, pairs in ascending order.

    >>> [(k, p.tolist()) for k, p in grouped_pairs(np.array([2, 1, 2]), np.array([0, 5, 0]))]
    [((1, 5), [1]), ((2, 0), [0, 2])]
    """
    if not len(first):
        return
    order = np.lexsort((second, first))
    a, b = first[order], second[order]
    cuts = np.r_[0, np.flatnonzero((a[1:] != a[:-1]) | (b[1:] != b[:-1])) + 1, len(order)]
    for lo, hi in zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True):
        yield (int(a[lo]), int(b[lo])), order[lo:hi]

"""Rows of an args column grouped by key set: the shape that column-wise writers encode.

Writers encode arguments a key set at a time (one template, then each key's values as a
column) instead of a dict per row; :func:`key_set_groups` gives them the groups and
:func:`gather` a key's values.
"""

from __future__ import annotations

from collections.abc import Iterator
from operator import itemgetter
from typing import Any

import numpy as np

from .args import ArgsColumn


def key_set_groups(column: ArgsColumn, rows: np.ndarray, decode: bool = True
                   ) -> Iterator[tuple[np.ndarray, tuple[Any, ...] | None, np.ndarray]]:
    """For each key set among ``rows`` (row indices): the positions in ``rows`` of its
    rows (ascending), its keys (None: rows without args) and where each row's values start.
    Without ``decode``, rows held as JSON text are left out (and stay text).

    >>> column = ArgsColumn([{"a": 1}, None, {"a": 2}, {"b": 3, "c": 4}])
    >>> [(p.tolist(), keys, s.tolist()) for p, keys, s in key_set_groups(column, np.arange(4))]
    [([1], None, [1]), ([0, 2], ('a',), [0, 1]), ([3], ('b', 'c'), [2])]
    """
    if not len(rows):
        return
    key_sets, starts = (np.frombuffer(column.key_set, dtype=np.int32),
                        np.frombuffer(column.start, dtype=np.int64)) if decode else \
        column.held()[:2]
    key_set = key_sets[rows]
    order = np.argsort(key_set, kind="stable")
    grouped = key_set[order]
    cuts = (np.flatnonzero(grouped[1:] != grouped[:-1]) + 1).tolist()
    starts = starts[rows][order]
    for lo, hi in zip([0, *cuts], [*cuts, len(rows)], strict=True):
        k = int(grouped[lo])
        if k >= -1:   # (-2: held as JSON text)
            yield order[lo:hi], column.key_sets[k] if k >= 0 else None, starts[lo:hi]


def gather(column: ArgsColumn, starts: np.ndarray, position: int, decode: bool = True
           ) -> list[Any]:
    """The values at ``position`` in the key set of the rows that start at ``starts``.

    >>> column = ArgsColumn([{"a": 1, "b": "x"}, {"a": 2, "b": "y"}])
    >>> gather(column, np.array([0, 2]), 1)
    ['x', 'y']
    """
    values = column.values if decode else column.held()[2]
    at = (starts + position).tolist()
    if len(at) < 2:   # itemgetter of one index gives the item, not a 1-tuple
        return [values[i] for i in at]
    return list(itemgetter(*at)(values))   # one C call: twice map(__getitem__)'s speed

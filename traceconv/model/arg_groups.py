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


def key_set_groups(column: ArgsColumn, rows: np.ndarray
                   ) -> Iterator[tuple[np.ndarray, tuple[Any, ...] | None, np.ndarray]]:
    """For each key set among ``rows`` (row indices): the positions in ``rows`` of its
    rows (ascending), its keys (None: rows without args) and where each row's values start.

    >>> column = ArgsColumn([{"a": 1}, None, {"a": 2}, {"b": 3, "c": 4}])
    >>> [(p.tolist(), keys, s.tolist()) for p, keys, s in key_set_groups(column, np.arange(4))]
    [([1], None, [1]), ([0, 2], ('a',), [0, 1]), ([3], ('b', 'c'), [2])]
    """
    if not len(rows):
        return
    key_set = np.frombuffer(column.key_set, dtype=np.int32)[rows]
    order = np.argsort(key_set, kind="stable")
    grouped = key_set[order]
    cuts = (np.flatnonzero(grouped[1:] != grouped[:-1]) + 1).tolist()
    starts = np.frombuffer(column.start, dtype=np.int64)[rows][order]
    for lo, hi in zip([0, *cuts], [*cuts, len(rows)], strict=True):
        k = int(grouped[lo])
        yield order[lo:hi], column.key_sets[k] if k >= 0 else None, starts[lo:hi]


def gather(column: ArgsColumn, starts: np.ndarray, position: int) -> list[Any]:
    """The values at ``position`` in the key set of the rows that start at ``starts``.

    >>> column = ArgsColumn([{"a": 1, "b": "x"}, {"a": 2, "b": "y"}])
    >>> gather(column, np.array([0, 2]), 1)
    ['x', 'y']
    """
    at = (starts + position).tolist()
    if len(at) < 2:   # itemgetter of one index gives the item, not a 1-tuple
        return [column.values[i] for i in at]
    return list(itemgetter(*at)(column.values))   # one C call: twice map(__getitem__)'s speed

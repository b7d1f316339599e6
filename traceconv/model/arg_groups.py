"""Rows of an args column grouped by key set: the shape that column-wise writers encode.

Writers encode arguments a key set at a time (one template, then each key's values as a
column) instead of a dict per row; :func:`row_groups` gives them the groups and
:func:`gather` a key's values. Rows a reader kept as JSON text are decoded for the batch
only (the column keeps them as text), and the groups come in the order of their first row,
so that what a writer makes of them does not depend on how the rows are held.
"""

from __future__ import annotations

from collections.abc import Iterator
from operator import itemgetter
from typing import Any

import msgspec
import numpy as np

from .args import ArgsColumn

_DECODE = msgspec.json.Decoder(list[dict[str, Any]]).decode

Group = tuple[np.ndarray, ArgsColumn, tuple[Any, ...] | None, np.ndarray]


def row_groups(column: ArgsColumn, rows: np.ndarray) -> list[Group]:
    """``rows`` (row indices) by key set, in the order of each group's first row: the
    positions in ``rows`` of the group's rows, the column that holds their values (for
    rows held as JSON text, one decoded for now), their keys (None: no args) and where each
    row's values start there (read them with ``gather(group_column, starts, j, False)``).

    >>> column = ArgsColumn([{"a": 1}, None]); column.extend_json(b'{"a": 2},{"b": 3},', [8, 8])
    >>> [(p.tolist(), keys) for p, _, keys, _ in row_groups(column, np.array([3, 1, 0, 2]))]
    [([0], ('b',)), ([1], None), ([2], ('a',)), ([3], ('a',))]
    """
    held, array_text, others = column.json_rows(rows)
    groups: list[Group] = []
    if len(held):
        decoded = ArgsColumn(_DECODE(array_text))
        groups += [(held[at], decoded, keys, starts) for at, keys, starts
                   in key_set_groups(decoded, np.arange(len(held)), decode=False)]
    groups += [(others[at], column, keys, starts) for at, keys, starts
               in key_set_groups(column, rows[others], decode=False)]
    groups.sort(key=lambda group: int(group[0][0]))   # (not by key-set id: how rows came in)
    return groups


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

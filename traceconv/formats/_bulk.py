"""Building model columns a batch at a time from numpy columns (the SQLite readers' path):
strings interned once per distinct value, tracks made once per distinct key, flows added
as whole columns."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from ..model import Trace
from ..model.args import Args
from ..model.builder import TraceBuilder
from ..model.typed_arrays import extend_typed

# rows whose Python objects (arg dicts) are made at once: bounds a large table's extra memory
BATCH = 16384


def batches(count: int, size: int = BATCH) -> Iterator[slice]:
    """The slices that cut ``count`` rows into batches of ``size``.

    >>> list(batches(5, 2))
    [slice(0, 2, None), slice(2, 4, None), slice(4, 5, None)]
    """
    return (slice(first, min(first + size, count)) for first in range(0, count, size))


def intern_ids(trace: Trace, ids: np.ndarray, text_of: Callable[[int], str]) -> np.ndarray:
    """Trace string ids for a column of vendor string ids: each distinct id is looked up
    (``text_of``) and interned once.

    >>> t = Trace(); intern_ids(t, np.array([7, 9, 7]), {7: "a", 9: "b"}.__getitem__).tolist()
    [1, 2, 1]
    """
    distinct, inverse = np.unique(ids, return_inverse=True)
    interned = np.fromiter((trace.strings.intern(text_of(int(i))) for i in distinct.tolist()),
                           dtype=np.int32, count=len(distinct))
    return interned[inverse.reshape(-1)] if len(ids) else np.zeros(0, np.int32)


def intern_texts(trace: Trace, texts: Iterable[str]) -> np.ndarray:
    """Trace string ids for a sequence of texts.

    >>> intern_texts(Trace(), ["x", "y", "x"]).tolist()
    [1, 2, 1]
    """
    intern = trace.strings.intern
    return np.fromiter(map(intern, texts), dtype=np.int32)


def map_keys(keys: np.ndarray, make: Callable[[int], int]) -> np.ndarray:
    """A value per row from a value per distinct key (``make`` called once per key): track
    ids from thread ids, and the like.

    >>> map_keys(np.array([5, 3, 5]), lambda k: k * 10).tolist()
    [50, 30, 50]
    """
    distinct, inverse = np.unique(keys, return_inverse=True)
    made = np.fromiter(map(make, distinct.tolist()), dtype=np.int64, count=len(distinct))
    return made[inverse.reshape(-1)] if len(keys) else np.zeros(0, np.int64)


def rows_of_args(keys: tuple[str, ...], *columns: Sequence[Any] | np.ndarray
                 ) -> list[dict[str, Any]]:
    """One args dict per row from parallel columns (numpy columns become Python numbers).

    >>> rows_of_args(("bytes", "kind"), np.array([64, 8]), ["HtoD", "DtoH"])
    [{'bytes': 64, 'kind': 'HtoD'}, {'bytes': 8, 'kind': 'DtoH'}]
    """
    lists = [c.tolist() if isinstance(c, np.ndarray) else list(c) for c in columns]
    return [dict(zip(keys, row, strict=True)) for row in zip(*lists, strict=True)]


def args_by_batch(keys: tuple[str, ...], *columns: Sequence[Any] | np.ndarray
                  ) -> Callable[[slice], list[dict[str, Any]]]:
    """:func:`rows_of_args` made a batch of rows at a time (see :func:`batches`).

    >>> args_by_batch(("bytes",), np.array([64, 8, 2]))(slice(1, 3))
    [{'bytes': 8}, {'bytes': 2}]
    """
    return lambda part: rows_of_args(keys, *(column[part] for column in columns))


def add_intervals_by_batch(trace: TraceBuilder, track: np.ndarray, start: np.ndarray,
                          end: np.ndarray, name: np.ndarray, category: np.ndarray,
                          args: Callable[[slice], Sequence[Args]]) -> np.ndarray:
    """:meth:`TraceBuilder.add_intervals` with ``args`` made a batch of rows at a time (a
    function of the batch's slice), so that a large table's arg dicts are never all held
    at once; returns the slices' rows.

    >>> b = TraceBuilder(); t = b.add_track("t", process=b.add_process("p"))
    >>> rows = add_intervals_by_batch(b, np.array([t, t]), np.array([0, 5]), np.array([4, 9]),
    ...                               np.zeros(2, np.int32), np.zeros(2, np.int32),
    ...                               lambda part: [{"i": i} for i in range(*part.indices(2))])
    >>> rows.tolist(), list(b.build().slices.args)
    ([0, 1], [{'i': 0}, {'i': 1}])
    """
    rows = np.zeros(len(start), np.int64)
    for part in batches(len(start)):
        rows[part] = trace.add_intervals(track[part], start[part], end[part], name[part],
                                         category[part], args(part))
    return rows


def add_flows(trace: Trace, sources: np.ndarray, targets: np.ndarray, category: str,
              name: str) -> None:
    """Add one flow per (source slice row, target slice row) pair.

    >>> t = Trace(); add_flows(t, np.array([0, 1]), np.array([2, 3]), "ac2g", "launch")
    >>> [(f.source, f.target, f.category) for f in t.iter_flows()]
    [(0, 2, 'ac2g'), (1, 3, 'ac2g')]
    """
    if len(sources) != len(targets):
        raise ValueError("one target per source")
    flows = trace.flows
    for column, values in (("source", sources), ("target", targets)):
        extend_typed(getattr(flows, column), values)
    for column, text in (("category", category), ("name", name)):
        value = trace.strings.intern(text)
        extend_typed(getattr(flows, column), np.full(len(sources), value))

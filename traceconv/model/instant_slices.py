"""Instants that a flow ends on, as slices of no length.

The model links flows between slices, and trace_processor imports every instant as a slice
of no length, so a flow may start or end on one (Chromium's ``PostTask`` → ``RunTask``, a
TrackEvent INSTANT with ``flow_ids``). Every reader that binds a flow to an instant makes it
a slice here, by one rule: the same track, time, name, category and args, no length, and
the instant no longer among the instants (one event is never both).
"""

from __future__ import annotations

import numpy as np

from .columns import InstantTable
from .groups import grouped
from .trace import Trace
from .typed_arrays import extend_typed


def instants_near(trace: Trace, times: np.ndarray) -> np.ndarray:
    """The rows of the instants a point at one of ``times`` may bind to, on any track: an
    instant at one of the times (it holds the point), and on each track the first after
    one (the next to start), all of that time. A binding index holds these instead of every
    instant (a Kineto trace: millions of ``[memory]`` instants, a few flow points).

    >>> t = Trace(); th = t.add_track("main", process=t.add_process("p"))
    >>> for ts in (5, 10, 10, 30, 40):
    ...     _ = t.add_instant(th, ts, "mark")
    >>> instants_near(t, np.array([10, 12])).tolist()
    [1, 2, 3]
    """
    instants = trace.instants
    near = np.zeros(len(instants), dtype=bool)
    times = np.unique(times)
    if not len(instants) or not len(times):
        return np.zeros(0, dtype=np.int64)
    ts = instants.numpy_view("ts")
    for _, rows in grouped(instants.numpy_view("track")):
        order = rows[np.argsort(ts[rows], kind="stable")]
        sorted_ts = ts[order]
        after = np.searchsorted(sorted_ts, times, "right")
        at = np.searchsorted(sorted_ts, times, "left")
        following = after[after < len(order)]
        starts = np.r_[at, following]
        ends = np.r_[after, np.searchsorted(sorted_ts, sorted_ts[following], "right")]
        marked = np.zeros(len(order) + 1, dtype=np.int64)   # (+1 where a range starts, -1 past it)
        np.add.at(marked, starts, 1)
        np.add.at(marked, ends, -1)
        near[order[np.cumsum(marked[:-1]) > 0]] = True
    return np.flatnonzero(near)


def instants_as_slices(trace: Trace, rows: np.ndarray) -> np.ndarray:
    """Move instants ``rows`` (distinct) to the end of the slice table as slices of no
    length; returns their slice rows, in the order of ``rows``. The other instants keep
    their order (their rows close up).

    >>> t = Trace(); th = t.add_track("main", process=t.add_process("p"))
    >>> _ = t.add_slice(th, 0, 50, "RunTask")
    >>> _ = t.add_instant(th, 10, "PostTask", "toplevel", {"n": 1})
    >>> _ = t.add_instant(th, 20, "mark")
    >>> instants_as_slices(t, np.array([0])).tolist()
    [1]
    >>> t.slice(1).name, t.slice(1).start, t.slice(1).dur, t.slice(1).args
    ('PostTask', 10, 0, {'n': 1})
    >>> [i.name for i in t.iter_instants()]
    ['mark']
    """
    rows = np.asarray(rows, dtype=np.int64)
    first = len(trace.slices)
    if not len(rows):
        return np.zeros(0, dtype=np.int64)
    instants = trace.instants
    ts = instants.numpy_view("ts")[rows]
    trace.slices.extend([instants.args[row] for row in rows.tolist()],
                        track=instants.numpy_view("track")[rows], start=ts,
                        dur=np.zeros(len(rows), dtype=np.int64),
                        name=instants.numpy_view("name")[rows],
                        category=instants.numpy_view("category")[rows])
    trace.instants = _without(instants, rows)
    return np.arange(first, first + len(rows), dtype=np.int64)


def _without(table: InstantTable, rows: np.ndarray) -> InstantTable:
    """``table`` less ``rows``: a new table (the args' texts are shared, never decoded)."""
    kept = np.ones(len(table), dtype=bool)
    kept[rows] = False
    kept_rows = np.flatnonzero(kept)
    new = InstantTable()
    for column, _ in new._columns:
        extend_typed(getattr(new, column), table.numpy_view(column)[kept_rows])
    new.args = table.args.take(kept_rows)
    return new


def bound_slices(trace: Trace, rows: np.ndarray, instant_base: int) -> np.ndarray:
    """``rows`` bound by an index that holds the instants (``SliceIndex(trace,
    instants=True)``: ``instant_base`` + an instant's row) as slice rows, the instants
    among them made slices (:func:`instants_as_slices`, each once, in row order).

    >>> t = Trace(); th = t.add_track("main", process=t.add_process("p"))
    >>> _ = t.add_slice(th, 0, 50, "RunTask"); _ = t.add_instant(th, 10, "PostTask")
    >>> bound_slices(t, np.array([0, 1, 1]), instant_base=1).tolist(), len(t.instants)
    ([0, 1, 1], 0)
    """
    on_instant = rows >= instant_base
    if not on_instant.any():
        return rows
    instants, which = np.unique(rows[on_instant] - instant_base, return_inverse=True)
    slices = rows.copy()
    slices[on_instant] = instants_as_slices(trace, instants)[which]
    return slices

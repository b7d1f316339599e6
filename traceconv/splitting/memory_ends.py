"""Where each ``[memory]`` block of a trace being split ends, known before it is routed.

A piece gets a copy of every block alive at its start (the allocation event, marked; see
:mod:`.route`), so that read alone it pairs the frees it holds as the whole trace does.
Which blocks those are follows from pairing allocations and frees *in time order* by the
rule every reader uses (:func:`~traceconv.model.block_pairing.pair_events`); the file is
not in time order (Kineto writes a thread at a time, and the caching allocator frees on
another thread than the one that allocated), so the pairing is made from the first pass:
it notes each event's key (as its 64-bit hash: no table of the addresses, which a long run
has millions of), time and thread (21 bytes an event, :class:`MemoryEvents`), and
the routing pass, meeting an allocation, knows where its block ends
(:class:`MemoryEnds`) and copies it into every piece up to that one.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from operator import attrgetter
from typing import Any

import numpy as np

from ..model.block_pairing import pair_events
from .events import Head, floats, hashable


class KeyedMemory:
    """The ``[memory]`` events of a list of heads that allocate or free a block: timed
    ``[memory]`` instants whose ``Bytes`` is an int other than 0, keyed by (device type,
    device id, address); a column each: their positions in the list, keys, threads
    (``hashable(pid, tid)``), times and whether they allocate. Both passes of ``split``
    find them so, one rule for the two, a column at a time (a quarter of a Kineto trace's
    events are ``[memory]`` ones)."""

    __slots__ = ("positions", "keys", "threads", "ts", "allocates")

    def __init__(self, positions: list[int], keys: list[tuple[Any, ...]],
                 threads: list[tuple[Any, ...]], ts: list[Any], allocates: list[bool]) -> None:
        self.positions, self.keys, self.threads = positions, keys, threads
        self.ts, self.allocates = ts, allocates

    @classmethod
    def of(cls, heads: list[Head]) -> KeyedMemory:
        """The keyed ``[memory]`` events of ``heads``.

        >>> from traceconv.splitting.events import Arguments
        >>> heads = [Head(ph="i", name="[memory]", ts=1, args=Arguments(size=8, address=64)),
        ...          Head(ph="X", name="op", ts=2),
        ...          Head(ph="i", name="[memory]", ts="x", args=Arguments(size=8, address=9)),
        ...          Head(ph="i", name="[memory]", ts=3, args=Arguments(size=True, address=9))]
        >>> keyed = KeyedMemory.of(heads); keyed.positions, keyed.keys, keyed.allocates
        ([0], [(None, None, 64)], [True])
        """
        at = [i for i, h in enumerate(heads) if h.name == "[memory]" and h.ph == "i"
              and h.args is not None and type(h.args.size) is int and h.args.size]
        if not at:
            return cls([], [], [], [], [])
        chosen = [heads[i] for i in at]
        timed = floats([h.ts for h in chosen])
        if not np.isfinite(timed).all():
            keep = np.isfinite(timed).tolist()
            at = [i for i, k in zip(at, keep, strict=True) if k]
            chosen = [h for h, k in zip(chosen, keep, strict=True) if k]
        args = [h.args for h in chosen]
        return cls(at, _rows(args, "device_type", "device_id", "address"),
                   _rows(chosen, "pid", "tid"), [h.ts for h in chosen],
                   [a.size > 0 for a in args])   # type: ignore[union-attr,operator]


_PLAIN = frozenset({int, float, str, bool, type(None)})


def _rows(records: list[Any], *fields: str) -> list[tuple[Any, ...]]:
    """``hashable(*fields)`` of each record, a column at a time where no value is a list
    or an object (the rule: they are rare, hostile)."""
    columns = [list(map(attrgetter(f), records)) for f in fields]
    if all(set(map(type, column)) <= _PLAIN for column in columns):
        return list(zip(*columns, strict=True))
    return [hashable(*row) for row in zip(*columns, strict=True)]


class MemoryEvents:
    """The first pass's note of every ``[memory]`` event :class:`KeyedMemory` keys, in file
    order: its key's hash, its thread (a number), time, and whether it allocates."""

    def __init__(self) -> None:
        self.keys, self.threads = array("q"), array("i")
        self.ts, self.allocates = array("d"), array("b")
        self._thread_codes: dict[tuple[Any, ...], int] = {}

    def note(self, heads: list[Head]) -> None:
        """Note the ``[memory]`` events of ``heads`` that allocate or free."""
        keyed = KeyedMemory.of(heads)
        if not keyed.positions:
            return
        self.keys.extend(map(hash, keyed.keys))
        codes = self._thread_codes
        self.threads.extend([codes.setdefault(t, len(codes)) for t in keyed.threads])
        self.ts.extend(map(float, keyed.ts))
        self.allocates.extend(keyed.allocates)

    def ends(self) -> MemoryEnds:
        """Where each block ends: the pairing in time order (file order among ties).

        >>> from traceconv.splitting.events import Arguments
        >>> events = MemoryEvents()
        >>> events.note([Head(ph="i", name="[memory]", ts=ts, pid=1, tid=2,
        ...                       args=Arguments(size=size, address=64))
        ...              for ts, size in ((1, 8), (3, -8), (2, -8), (0, 8))])   # not time order
        >>> events.ends().end.tolist()   # the last (at 0) ends at the first, that at the third
        [2, -1, -1, 0]
        """
        ts = np.frombuffer(self.ts, dtype=np.float64)
        order = np.argsort(ts, kind="stable")
        keys = np.frombuffer(self.keys, dtype=np.int64)[order]
        allocates = np.frombuffer(self.allocates, dtype=np.int8)[order].astype(bool)
        freed_at = pair_events([keys], allocates).freed_at
        end = np.full(len(order), -1, dtype=np.int64)
        ended = freed_at >= 0
        end[order[ended]] = order[freed_at[ended]]
        threads = list(self._thread_codes)
        return MemoryEnds(end, ts.copy(), np.frombuffer(self.threads, dtype=np.int32).copy(),
                          threads)


class MemoryEnds:
    """Per ``[memory]`` event (file order, as :class:`MemoryEvents` noted them), the
    event that ends its block (an allocation's: a free, or the next allocation of its
    key when the free was not recorded; -1: none)."""

    def __init__(self, end: np.ndarray, ts: np.ndarray, threads: np.ndarray,
                 thread_keys: list[tuple[Any, ...]]) -> None:
        self.end, self.ts, self.threads, self.thread_keys = end, ts, threads, thread_keys

    def stops(self, place: Callable[[np.ndarray, tuple[Any, ...]], np.ndarray],
              count: int) -> np.ndarray:
        """Per event, the window after the last one its block is alive in: that of the
        event ending it plus one (``place(times, thread)``: the windows of times on one
        thread), or ``count``, the number of windows, when nothing ends it.

        >>> from traceconv.splitting.events import Arguments
        >>> events = MemoryEvents()
        >>> events.note([Head(ph="i", name="[memory]", ts=ts, pid=1, tid=2,
        ...                   args=Arguments(size=size, address=64))
        ...              for ts, size in ((1, 8), (25, -8), (30, 8))])
        >>> place = lambda ts, thread: np.searchsorted([10.0, 20.0, 30.0], ts, "right")
        >>> events.ends().stops(place, 4).tolist()   # [-inf, 10), [10, 20), [20, 30), [30, inf)
        [3, 4, 4]
        """
        stops = np.full(len(self.end), count, dtype=np.int64)
        ended = np.flatnonzero(self.end >= 0)
        at = self.end[ended]
        threads = self.threads[at]
        for code in np.unique(threads).tolist():
            mine = threads == code
            stops[ended[mine]] = place(self.ts[at[mine]], self.thread_keys[code]) + 1
        return stops

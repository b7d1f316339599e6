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
from typing import Any

import numpy as np

from ..model.block_pairing import pair_events
from .events import Head, hashable, time_of


def memory_key(h: Head) -> tuple[Any, ...] | None:
    """The block key (device type, device id, address) of a timed ``[memory]`` instant that
    allocates or frees (``Bytes`` an int other than 0), else None.

    >>> from traceconv.splitting.events import Arguments
    >>> memory_key(Head(ph="i", name="[memory]", ts=5, args=Arguments(size=-8, address=64)))
    (None, None, 64)
    >>> memory_key(Head(ph="i", name="[memory]", ts=5, args=Arguments(size=0, address=64)))
    """
    args = h.args
    if h.ph != "i" or h.name != "[memory]" or args is None or time_of(h.ts) is None:
        return None
    size = args.size
    if not isinstance(size, int) or isinstance(size, bool) or size == 0:
        return None
    return hashable(args.device_type, args.device_id, args.address)


class MemoryEvents:
    """The first pass's note of every ``[memory]`` event :func:`memory_key` keys, in file
    order: its key's hash, its thread (a number), time, and whether it allocates."""

    def __init__(self) -> None:
        self.keys, self.threads = array("q"), array("i")
        self.ts, self.allocates = array("d"), array("b")
        self._thread_codes: dict[tuple[Any, ...], int] = {}

    def note(self, h: Head) -> None:
        """Note ``h`` if it is a ``[memory]`` event that allocates or frees."""
        key = memory_key(h)
        if key is None:
            return
        self.keys.append(hash(key))
        thread = hashable(h.pid, h.tid)
        self.threads.append(self._thread_codes.setdefault(thread, len(self._thread_codes)))
        self.ts.append(float(h.ts))
        self.allocates.append(h.args.size > 0)   # type: ignore[union-attr,operator]

    def ends(self) -> MemoryEnds:
        """Where each block ends: the pairing in time order (file order among ties).

        >>> from traceconv.splitting.events import Arguments
        >>> events = MemoryEvents()
        >>> for ts, size in ((1, 8), (3, -8), (2, -8), (0, 8)):   # file order, not time order
        ...     events.note(Head(ph="i", name="[memory]", ts=ts, pid=1, tid=2,
        ...                      args=Arguments(size=size, address=64)))
        >>> ends = events.ends(); [ends.end_of(n) for n in (0, 3)]
        [(2.0, (1, 2)), (1.0, (1, 2))]
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

    def end_of(self, n: int) -> tuple[float, tuple[Any, ...]] | None:
        """The time and thread (pid, tid) of the event that ends event ``n``'s block, or
        None when it stays open to the end."""
        if n >= len(self.end) or self.end[n] < 0:
            return None
        at = int(self.end[n])
        return float(self.ts[at]), self.thread_keys[int(self.threads[at])]

"""Which pieces of a split are complete before the routing pass ends.

The routing pass reads the file in order, and the file is not in time order (Kineto
writes a thread at a time, device work after its host), so a window's last event may come
at any point. The first pass therefore notes, per chunk of events, the earliest time an
event of that chunk can be placed at (:class:`ChunkFloors`): its earliest start, the start
of the ``B`` an ``E`` of it ends, minus infinity for an event without a time (the first
piece keeps those); and, per device work or launch flow end, its launch (it goes to its
launch's window). Once the windows are known, these give each chunk the lowest window it
can add to (:meth:`ChunkFloors.windows`); after the routing pass has taken chunk ``k``,
every window below the lowest of the chunks after ``k`` is complete (:class:`ReadyPieces`)
and can be written and handed to the workers while the pass goes on.

A few events far earlier than the rest of their chunk would hold every window back to
theirs (Kineto ends its file with a slice spanning the whole run, written at its start):
a chunk's events below ``median - 4 x interquartile range`` of its starts, at most
:data:`STRAGGLERS_PER_CHUNK` of them, of the kinds routed by their own times alone (a
slice, an instant, a counter: no ``B``/``E``, flow, launched work or memory block), are
*stragglers*: left out of the chunk's bound, each holds back only the windows from its
start's to its end's (:data:`MAX_STRAGGLERS` in all; the chunks past it hold theirs in).

What the routing pass adds to a window besides its own events comes from an event of a
lower window in the same chunk (a memory block carried on, a clipped slice continued, a
slice copied for context), so the same bound holds for it. The routing pass checks that
it reads the chunks the first pass noted (their event counts); if not, nothing more is
written before its end.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable
from typing import Any, Literal

import numpy as np

from ..numbers import int64
from .events import Head, end_of, hashable, time_of
from .memory_ends import KeyedMemory
from .windows import DEVICE_WORK, Boundaries, Launches

# device work and launch flow ends noted (12 bytes each); past it, the chunks holding more
# are complete only at the end (as if their launches were unknown)
MAX_NOTED = 12_000_000
STRAGGLERS_PER_CHUNK = 16
MAX_STRAGGLERS = 65_536
_ORDER_BOUND = frozenset({"M", "B", "E", "s", "t", "f"})   # routed by what came before


def launch_ids(heads: list[Head]) -> tuple[list[int], list[int]]:
    """Positions and launch correlation ids of the events among ``heads`` that go with
    their launch: device work (a kernel, copy or memset ``X``: its ``correlation``) and the
    end of a launch flow (Kineto's ``ac2g``, Paddle's ``launch``: its ``id``).

    >>> from traceconv.splitting.events import Arguments
    >>> launch_ids([Head(ph="X", cat="kernel", args=Arguments(correlation=7)),
    ...             Head(ph="X", cat="cpu_op"), Head(ph="f", cat="ac2g", id=7)])
    ([0, 2], [7, 7])
    """
    positions, ids = [], []
    candidates = [i for i, h in enumerate(heads)
                  if h.ph == "t" or h.ph == "f" or h.ph == "X" and DEVICE_WORK[h.cat]]
    for i in candidates:
        h = heads[i]
        cat = h.cat
        if h.ph == "X":
            found = h.correlation
        elif cat == "ac2g" or cat == "async" and h.name == "launch":
            found = int64(h.id)
        else:
            continue
        if found is not None:
            positions.append(i)
            ids.append(found)
    return positions, ids


class ChunkFloors:
    """The first pass's note, per chunk: its event count and the earliest time its events
    can be placed at; per launched event, its launch id and chunk."""

    def __init__(self) -> None:
        self.events, self.floors = array("q"), array("d")
        self.ids, self.chunks = array("q"), array("i")
        self.open: dict[tuple[Any, ...], list[float]] = {}   # B starts, per thread
        # stragglers: chunk, start and end (the start of an event that is not a slice)
        self.straggler_chunks = array("i")
        self.straggler_starts, self.straggler_ends = array("d"), array("d")

    def note(self, heads: list[Head], phases: list[Any], ts: np.ndarray | None) -> None:
        """Note one chunk (``phases``: each event's ``ph``; ``ts``: the starts as a column,
        NaN for ``M`` events and for events without a time; None: taken event by
        event)."""
        chunk = len(self.events)
        positions, ids = launch_ids(heads)
        if ts is None:
            starts = [time_of(h.ts) for h in heads if h.ph != "M"]
            floor = -math.inf if None in starts else min(starts, default=math.inf)
        else:
            timed = ts[~np.isnan(ts)]
            metadata = phases.count("M")
            if len(heads) - len(timed) > metadata:
                floor = -math.inf
            else:
                floor = self._stragglers(chunk, heads, ts, timed, positions)
        if "B" in phases or "E" in phases:
            for h in [h for h in heads if h.ph == "B" or h.ph == "E"]:
                floor = min(floor, self._duration_event(h))
        self.events.append(len(heads))
        self.floors.append(floor)
        if len(self.ids) + len(ids) > MAX_NOTED:
            self.floors[-1] = -math.inf
        else:
            self.ids.extend(ids)
            self.chunks.extend([chunk] * len(ids))

    def _stragglers(self, chunk: int, heads: list[Head], ts: np.ndarray, timed: np.ndarray,
                    launched: list[int]) -> float:
        """Note the chunk's stragglers; return the earliest start of its other events."""
        if not len(timed):
            return math.inf
        low, median, high = np.percentile(timed, [25, 50, 75])
        far = np.flatnonzero(ts < median - 4 * (high - low))   # (NaN: not far)
        if not len(far) or len(far) > STRAGGLERS_PER_CHUNK \
                or len(self.straggler_chunks) + len(far) > MAX_STRAGGLERS:
            return float(timed.min())
        chosen = [heads[i] for i in far.tolist()]
        if any(h.ph in _ORDER_BOUND for h in chosen) or set(far.tolist()) & set(launched) \
                or KeyedMemory.of(chosen).positions:
            return float(timed.min())
        for h, start in zip(chosen, ts[far].tolist(), strict=True):
            end = end_of(h.ts, h.dur) if h.ph == "X" else None
            self.straggler_chunks.append(chunk)
            self.straggler_starts.append(start)
            self.straggler_ends.append(start if end is None else float(end))
        rest = np.delete(ts, far)
        return float(np.nanmin(rest)) if not np.isnan(rest).all() else math.inf

    def _duration_event(self, h: Head) -> float:
        """Where the routing pass places a ``B`` (its start) or an ``E`` (its ``B``'s)."""
        stack = self.open.setdefault(hashable(h.pid, h.tid), [])
        start = time_of(h.ts)
        start = -math.inf if start is None else float(start)
        if h.ph == "B":
            stack.append(start)
            return start
        return stack.pop() if stack else start

    def windows(self, starts: list[float], boundaries: Boundaries | None,
                launches: Launches | None) -> np.ndarray:
        """The lowest window each chunk can add to, given the windows' ``starts``, the
        threads' own step ends and the launches' windows (None: placed by their starts).

        >>> floors = ChunkFloors()
        >>> floors.events.extend([2, 2]); floors.floors.extend([15.0, 5.0])
        >>> floors.windows([-math.inf, 10.0, 20.0], None, None).tolist()
        [1, 0]
        """
        lowest = _placed(np.frombuffer(self.floors, dtype=np.float64), starts, boundaries,
                         lowest=True)
        if launches is not None and len(self.ids):
            placed = launches.windows_of(np.frombuffer(self.ids, dtype=np.int64))
            known = placed >= 0
            chunks = np.frombuffer(self.chunks, dtype=np.int32)[known]
            np.minimum.at(lowest, chunks, placed[known])
        return lowest

    def held(self, starts: list[float], boundaries: Boundaries | None,
             reaching: bool) -> np.ndarray:
        """Per window, the last chunk holding a straggler that may add to it (-1: none):
        a slice adds to its start's window, and, ``reaching`` (``--clip``, or context
        copies), to every later one it overlaps.

        >>> floors = ChunkFloors()
        >>> floors.straggler_chunks.extend([4, 2]); floors.straggler_starts.extend([5.0, 12.0])
        >>> floors.straggler_ends.extend([15.0, 12.0])
        >>> floors.held([-math.inf, 10.0, 20.0], None, True).tolist()
        [4, 4, -1]
        >>> floors.held([-math.inf, 10.0, 20.0], None, False).tolist()
        [4, 2, -1]
        """
        last = np.full(len(starts), -1, dtype=np.int64)
        chunks = np.frombuffer(self.straggler_chunks, dtype=np.int32)
        first = _placed(np.frombuffer(self.straggler_starts, dtype=np.float64), starts,
                        boundaries, lowest=True)
        final = _placed(np.frombuffer(self.straggler_ends if reaching
                                      else self.straggler_starts, dtype=np.float64),
                        starts, boundaries, lowest=False)
        for k in np.argsort(chunks, kind="stable").tolist():   # the later chunk wins
            last[first[k]:final[k] + 1] = chunks[k]
        return last


def _placed(times: np.ndarray, starts: list[float], boundaries: Boundaries | None, *,
            lowest: bool) -> np.ndarray:
    """The lowest (or highest) window each time can be placed in, by the windows'
    ``starts`` and by every thread's own ends. As doubles, a time and a window's edge
    can be equal where the numbers written are not (nanoseconds past 2^53: Paddle's
    epoch times), so a time at an edge counts as on either side of it.

    >>> edge = 2**60 + 256   # one below it is the same double: window 0's
    >>> times = np.array([float(edge - 1)])
    >>> _placed(times, [-math.inf, edge], None, lowest=True).tolist()
    [0]
    >>> _placed(times, [-math.inf, edge], None, lowest=False).tolist()
    [1]
    """
    side: Literal["left", "right"] = "left" if lowest else "right"
    pick = np.minimum if lowest else np.maximum
    placed = np.maximum(np.searchsorted(np.array(starts, dtype=np.float64), times, side) - 1,
                        0)
    if boundaries is not None:
        for ends in [boundaries.reference, *boundaries.own.values()]:
            own = np.searchsorted(np.array(ends, dtype=np.float64), times, side)
            placed = pick(placed, np.minimum(own, len(starts) - 1))
    return placed


class ReadyPieces:
    """Told of each chunk the routing pass has taken, tells ``publish`` each window that
    is complete (the rest at :meth:`finish`). ``lowest``: per chunk, the lowest window it
    adds to; ``held``: per window, the last chunk holding a straggler of it."""

    def __init__(self, events: array, lowest: np.ndarray, held: np.ndarray,
                 publish: Callable[[int], None]) -> None:
        count = len(held)
        # after chunk k: the lowest window any later chunk adds to
        after = np.minimum.accumulate(np.append(lowest, count)[::-1])[::-1][1:]
        self.events, self.after, self.held = events, after.tolist(), held.tolist()
        self.count, self.publish = count, publish
        self.taken = 0    # chunks taken
        self.next = 0     # the first window not yet looked at
        self.waiting: list[int] = []   # windows looked at, held by a straggler to come
        self.published: list[int] = []   # windows told to ``publish``, in that order
        self.trusted = True

    def took(self, chunk_events: int) -> None:
        """The routing pass has taken a chunk of ``chunk_events`` events."""
        k = self.taken
        self.taken += 1
        if not self.trusted or k >= len(self.events) or self.events[k] != chunk_events:
            self.trusted = False   # not the chunks the first pass saw: wait for the end
            return
        self._publish_below(int(self.after[k]), k)

    def finish(self) -> None:
        """The routing pass has ended: every window is complete."""
        self._publish_below(self.count, math.inf)

    def _publish_below(self, stop: int, taken: float) -> None:
        """Publish the windows below ``stop`` that no straggler after chunk ``taken`` holds."""
        waiting = self.waiting + list(range(self.next, max(self.next, stop)))
        self.next = max(self.next, stop)
        self.waiting = []
        for window in waiting:
            if self.held[window] <= taken:
                self.publish(window)
                self.published.append(window)
            else:
                self.waiting.append(window)

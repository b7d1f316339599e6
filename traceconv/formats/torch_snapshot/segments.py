"""Reserved memory of one device from the allocator's segment events, as address ranges.

A segment is one ``cudaMalloc`` (``segment_alloc`` / ``segment_free`` of the whole range)
or, with ``expandable_segments:True``, a range of virtual addresses whose pages are mapped
and unmapped in pieces: ``segment_map`` grows the segment at an address inside it, and one
``segment_unmap`` may cover several earlier maps or part of one. The dump-time ``segments``
list one segment per contiguous mapped range. So reserved bytes are the union of the
ranges mapped, never a sum of events, and a dump-time segment was reserved before the
history only where no event of the history explains it.

:class:`SegmentReplay` turns this into :attr:`Trace.reservations` that never overlap:

* backwards from the dump state, the ranges reserved before the history: a map or alloc
  takes its range out (it was not reserved before), an unmap or free puts it in;
* forwards from there: an unmap or free ends every reservation it covers, those it covers
  in part going on as their remainders; a map or alloc opens one. Adjacent expandable
  ranges form one reservation (a block may span them, as torch's own segments show), each
  change ending it and opening the grown or shrunk range; ``cudaMalloc`` segments stay
  apart even where adjacent (no block spans two);
* each dump-time segment names its reservation's pool (segment type, pool id, stream), and
  so that of every reservation it grew from or split off: an expandable segment keeps its
  pool while any of its pages stay mapped.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

from ...model import MemoryBlock
from ...model.builder import TraceBuilder
from ...numbers import INT64_MAX

OPEN = ("segment_alloc", "segment_map")
CLOSE = ("segment_free", "segment_unmap")
EXPANDABLE = ("segment_map", "segment_unmap")


@dataclass
class SegmentEvent:
    """One segment entry of the history: ``action`` on ``[addr, addr + size)`` at ``ns``."""

    ns: int | None
    action: str
    addr: int
    size: int
    stream: int


@dataclass
class DumpSegment:
    """One segment of the dump-time state; ``args``: what the reader tells of it."""

    address: int
    size: int
    expandable: bool
    stream: int
    args: dict[str, Any]


@dataclass
class _Range:
    """``[start, end)``; ``tag``: where it came from (backwards) or its open reservation
    and segment number (forwards)."""

    start: int
    end: int
    expandable: bool
    stream: int
    tag: Any = None


@dataclass
class _Held:
    """An open range's reservation (None: not added yet) and segment number."""

    block: MemoryBlock | None
    segment: int


@dataclass
class _Ranges:
    """Disjoint ranges in address order.

    >>> r = _Ranges()
    >>> r.add(_Range(0, 10, False, 0)); r.add(_Range(20, 30, False, 0))
    >>> [(x.start, x.end) for x in r.take(5, 25)], r.uncovered(0, 40)
    ([(0, 10), (20, 30)], [(0, 40)])
    """

    starts: list[int] = field(default_factory=list)
    items: list[_Range] = field(default_factory=list)

    def add(self, item: _Range) -> None:
        at = bisect.bisect_left(self.starts, item.start)
        self.starts.insert(at, item.start)
        self.items.insert(at, item)

    def take(self, start: int, end: int) -> list[_Range]:
        """Remove and return the ranges that overlap ``[start, end)``."""
        first = bisect.bisect_right(self.starts, start) - 1
        if first < 0 or self.items[first].end <= start:
            first += 1
        last = max(first, bisect.bisect_left(self.starts, end))
        taken = self.items[first:last]
        del self.starts[first:last], self.items[first:last]
        return taken

    def first(self, start: int) -> int:
        """The number of the first range that may overlap ``[start, ...)``."""
        return max(0, bisect.bisect_right(self.starts, start) - 1)

    def uncovered(self, start: int, end: int) -> list[tuple[int, int]]:
        """The parts of ``[start, end)`` no range covers, in order."""
        k = self.first(start)
        parts, cursor = [], start
        while k < len(self.items) and self.items[k].start < end:
            item, k = self.items[k], k + 1
            if item.end > cursor:
                if item.start > cursor:
                    parts.append((cursor, item.start))
                cursor = item.end
        if cursor < end:
            parts.append((cursor, end))
        return parts

    def at(self, start: int) -> _Range | None:
        """The range starting at ``start``, if there is one."""
        k = bisect.bisect_left(self.starts, start)
        return self.items[k] if k < len(self.items) and self.starts[k] == start else None

    def ending_at(self, end: int) -> _Range | None:
        """The range ending at ``end``, if there is one."""
        k = bisect.bisect_left(self.starts, end) - 1
        return self.items[k] if k >= 0 and self.items[k].end == end else None


SMALL_SEGMENT = 2 << 20   # bytes of every segment of torch's small pool


class SegmentReplay:
    """The reservations of ``device`` from its segment events and dump-time segments (see
    the module docstring); ``before_history`` / ``freed_before_history``: how many dump-time
    segments and close events hold memory reserved before the history; ``lost_closes``:
    opens of a range still reserved (the history lost its free or unmap).

    A page mapped before the history, a second page mapped beside it, then one unmap of
    both (nothing left at dump):

    >>> from traceconv.model.builder import TraceBuilder
    >>> trace = TraceBuilder()
    >>> maps = [SegmentEvent(1, "segment_map", 4096, 4096, 0),
    ...         SegmentEvent(2, "segment_unmap", 0, 8192, 0)]
    >>> replay = SegmentReplay(trace, "cuda:0")
    >>> replay.run(maps, dump=[])
    >>> [(r.address, r.size, r.alloc_ns, r.free_ns) for r in trace.reservations]
    [(0, 4096, None, 1), (0, 8192, 1, 2)]
    >>> replay.before_history, replay.freed_before_history
    (0, 1)
    """

    def __init__(self, trace: TraceBuilder, device: str) -> None:
        self.trace = trace
        self.device = device
        # reserved before the history: in dump-time segment k ("dump", k), unmapped or
        # freed by event i ("close", i)
        self.early: set[tuple[str, int]] = set()
        self._parent: list[int] = []   # segment numbers, joined (union-find) as ranges join
        self.lost_closes = 0
        self._segment_of: list[tuple[MemoryBlock, int, bool]] = []
        self.pools_from_size = 0   # cudaMalloc segments no dump names: pool told by size
        self._open = _Ranges()

    def run(self, events: list[SegmentEvent], dump: list[DumpSegment]) -> None:
        """Add the reservations to the trace (dump-time segment ``k`` is segment number
        ``k``; the pool of each reservation is that of its segment)."""
        events = [event for event in events if event.size]   # (an empty range: nothing)
        self._parent = list(range(len(dump)))
        self._start(self._before_history(events, dump))
        for event in events:
            start, end = event.addr, event.addr + event.size
            closed = self._close(start, end, event.ns)
            if event.action in OPEN:
                self.lost_closes += closed
                self._map(start, end, event.action in EXPANDABLE, event.ns, event.stream)
        self._name_pools(dump)

    def _before_history(self, events: list[SegmentEvent],
                        dump: list[DumpSegment]) -> list[_Range]:
        """The ranges reserved when the history starts: the dump state, events undone."""
        reserved = _Ranges()
        for number, segment in enumerate(dump):
            for start, end in reserved.uncovered(segment.address,
                                                 segment.address + segment.size):
                reserved.add(_Range(start, end, segment.expandable, segment.stream,
                                    ("dump", number)))
        for index in range(len(events) - 1, -1, -1):
            event = events[index]
            start, end = event.addr, event.addr + event.size
            if event.action in OPEN:
                for item in reserved.take(start, end):
                    _keep_outside(reserved, item, start, end)
            else:
                for part in reserved.uncovered(start, end):
                    reserved.add(_Range(*part, event.action in EXPANDABLE, event.stream,
                                        ("close", index)))
        self.early = {item.tag for item in reserved.items}
        return reserved.items

    def _start(self, ranges: list[_Range]) -> None:
        """Open the ranges reserved before the history (adjacent expandable ones as one);
        their reservations are added when first changed, or at the end in the order of the
        dump-time segments (the order the history would have given them)."""
        for item in ranges:
            kind, number = item.tag
            segment = number if kind == "dump" else self._new_segment()
            last = self._open.items[-1] if self._open.items else None
            if last is not None and _joins(last, item.start, item.end, item.expandable):
                last.end = item.end
                last.tag = _Held(None, self._join(last.tag.segment, segment))
            else:
                self._open.add(_Range(item.start, item.end, item.expandable, item.stream,
                                      _Held(None, segment)))

    def _map(self, start: int, end: int, expandable: bool, ns: int | None,
             stream: int) -> None:
        segment = self._new_segment()
        if expandable:   # the range grows the expandable segment it touches
            before, after = self._open.ending_at(start), self._open.at(end)
            for neighbour in (before, after):
                if neighbour is not None and _joins(neighbour, start, end, True):
                    self._open.take(neighbour.start, neighbour.end)
                    self._block(neighbour).free_ns = ns
                    start, end = min(start, neighbour.start), max(end, neighbour.end)
                    segment = self._join(segment, neighbour.tag.segment)
        self._add(_Range(start, end, expandable, stream, _Held(None, segment)), ns)

    def _close(self, start: int, end: int, ns: int | None) -> bool:
        """End what is reserved in ``[start, end)`` at ``ns``; whether anything was."""
        taken = self._open.take(start, end)
        for item in taken:
            self._block(item).free_ns = ns
            for rest in ((item.start, start), (end, item.end)):   # what it covers in part
                if rest[0] < rest[1]:
                    self._add(_Range(*rest, item.expandable, item.stream,
                                     _Held(None, item.tag.segment)), ns)
        return bool(taken)

    def _add(self, item: _Range, ns: int | None) -> None:
        """Open ``item`` at ``ns``."""
        self._block(item, ns)
        self._open.add(item)

    def _block(self, item: _Range, ns: int | None = None) -> MemoryBlock:
        """The reservation of ``item``, added (from ``ns``) if it has none yet."""
        held = item.tag
        if held.block is None:
            block = MemoryBlock(item.start, item.end - item.start, ns, None,
                                device=self.device, name=f"segment {item.start:#x}",
                                category="segment", args={"stream": item.stream})
            row = self.trace.add_reservation(block)   # (None: left out by the builder)
            held.block = block if row is None else self.trace.reservations[row]
            if row is not None:
                self._segment_of.append((held.block, held.segment, item.expandable))
        return held.block

    def _name_pools(self, dump: list[DumpSegment]) -> None:
        """Each dump-time segment's args on its reservations, and its pool on every
        reservation of the same segment before; a dump-time segment that no replayed
        range covers whole is reserved (in the parts not covered) before the history."""
        pools: dict[int, dict[str, Any]] = {}
        for number, segment in enumerate(dump):
            end = segment.address + segment.size
            for start, stop in self._open.uncovered(segment.address, end):
                self.early.add(("dump", number))   # (a history at odds with the dump)
                self._add(_Range(start, stop, segment.expandable, segment.stream,
                                 _Held(None, number)), None)
            k = self._open.first(segment.address)
            while k < len(self._open.items) and self._open.items[k].start < end:
                item, k = self._open.items[k], k + 1
                if item.end <= segment.address:
                    continue
                block = self._block(item)
                block.args.update(segment.args)
                self._join(item.tag.segment, number)
                if (item.start, item.end) != (segment.address, end):
                    block.args["allocated_size"] = None   # (torch's sum is the segment's)
            pools.setdefault(self._root(number), {
                key: segment.args[key] for key in ("segment_type", "pool")
                if key in segment.args} | {"stream": segment.stream})
        for item in self._open.items:
            self._block(item)
        for block, number, expandable in self._segment_of:
            pool = pools.get(self._root(number))
            if pool and "segment_type" not in block.args:
                block.args.update(pool)
            elif not pool and not expandable and "segment_type" not in block.args:
                # freed before the dump: torch's small pool takes whole 2 MiB segments
                # (kSmallBuffer), its large pool 10 MiB or more (rounded to 2 MiB, at least
                # kLargeBuffer for smaller requests), so the size tells the pool
                block.args["segment_type"] = "small" if block.size == SMALL_SEGMENT else "large"
                self.pools_from_size += 1

    @property
    def before_history(self) -> int:
        """Dump-time segments that hold memory reserved before the history."""
        return sum(kind == "dump" for kind, _ in self.early)

    @property
    def freed_before_history(self) -> int:
        """Unmaps and frees of memory reserved before the history."""
        return len(self.early) - self.before_history

    def _new_segment(self) -> int:
        self._parent.append(len(self._parent))
        return len(self._parent) - 1

    def _root(self, number: int) -> int:
        while self._parent[number] != number:
            self._parent[number] = number = self._parent[self._parent[number]]
        return number

    def _join(self, a: int, b: int) -> int:
        a, b = self._root(a), self._root(b)
        self._parent[max(a, b)] = min(a, b)   # (a dump-time segment stays the root)
        return min(a, b)


def _joins(item: _Range, start: int, end: int, expandable: bool) -> bool:
    """Whether ``[start, end)`` and ``item`` are adjacent expandable ranges that make one
    range a block can hold (int64 bytes).

    >>> _joins(_Range(0, 4096, True, 0), 4096, 8192, True)
    True
    >>> _joins(_Range(0, 4096, False, 0), 4096, 8192, False)   # two cudaMallocs
    False
    """
    return (item.expandable and expandable and (item.end == start or end == item.start)
            and max(end, item.end) - min(start, item.start) <= INT64_MAX)


def _keep_outside(ranges: _Ranges, item: _Range, start: int, end: int) -> None:
    """Put back the parts of ``item`` outside ``[start, end)`` (same tag)."""
    if item.start < start:
        ranges.add(_Range(item.start, start, item.expandable, item.stream, item.tag))
    if end < item.end:
        ranges.add(_Range(end, item.end, item.expandable, item.stream, item.tag))

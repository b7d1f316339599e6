"""Begin and end events of one track (and, on an async track, its instants) made into
slices, as trace_processor's ``SliceTracker`` makes them: one stack per track.

In time order (ties in file order):

- a begin goes on top of the stack; an instant too, as a slice of no length;
- an end closes the latest begin still open on the stack; an async end (``by_name``:
  Chrome's ``e``, a Perfetto legacy ``e``) the latest of its name and category, where the
  end gives them (an end of no name or no category closes one of any). Its args are merged
  into the slice it closes (the end's win, as the Chrome format says). An end that closes
  nothing is counted by the caller. The slice closed leaves the stack at once only from its
  top: one ended below begins still open stays, and the first event of the track after its
  end *cuts* those begins at its end (their own ends come later, closing another begin of
  their name or nothing), counted by the caller as cut short;
- before each event, the slices ended before its time leave the stack (at its time too,
  save an instant under an instant of that time).

A begin never ended is added with no length, for the builder to end
(:meth:`~traceconv.model.builder.TraceBuilder.not_ended`).

>>> from traceconv.model.builder import TraceBuilder
>>> b = TraceBuilder(); t = b.add_track("objects", process=b.add_process("p"))
>>> spans = [Span(0, 0, True, "Load", "net", {"id": 1}), Span(1, 1, True, "Frame", "net", None),
...          Span(2, 2, False, "Load", "net", {"ok": True}), Span(3, 3, False, "Idle", "", None),
...          Span(4, 4, None, "Mark", "net", None)]
>>> paired = add_paired(b, t, spans, by_name=True)
>>> [(s.name, s.start, s.dur, s.args) for s in b.iter_slices()]
[('Load', 0, 2, {'id': 1, 'ok': True}), ('Frame', 1, 1, None)]
>>> paired.cut_short, paired.unmatched_ends, [(i.name, i.ts) for i in b.iter_instants()]
(1, 1, [('Mark', 4)])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from ..model.builder import TraceBuilder


class Span(NamedTuple):
    """One begin, end or instant event (a plain tuple of these fields will do:
    :func:`add_paired` reads them by place, and a reader of many makes tuples, which is
    quicker)."""

    ts: int
    seq: int            # its place in the file (the order of events at one time)
    begins: bool | None  # True: a begin; False: an end; None: an instant
    name: str
    category: str
    args: dict | None


@dataclass
class Paired:
    """What :func:`add_paired` made: the slice rows never ended, the ends that closed
    nothing, the begins cut short at the end of one below them, and (when asked for) the
    row of each event by its ``seq``: the slice of a begin and of the end that closed it,
    the instant of an instant."""

    unclosed: list[int] = field(default_factory=list)
    unmatched_ends: int = 0
    cut_short: int = 0
    rows: dict[int, int] | None = None


class _Entry:
    """A begin or instant pushed on the stack: its event, its end (None while open), the
    end event that closed it, its place on the stack and among all the track's begins and
    instants, and whether it is in the stack's top run (ended, above every open begin)."""

    __slots__ = ("span", "end", "closer", "place", "number", "on_top")

    def __init__(self, span: tuple, end: int | None, place: int, number: int) -> None:
        self.span, self.end, self.place = span, end, place
        self.closer: tuple | None = None
        self.number, self.on_top = number, False

    def no_length(self) -> bool:
        return self.end == self.span[0]


class SliceStack:
    """The stack of one track, with trace_processor's rules in a time of their own per
    event, however many begins stay open or events share a time (trace_processor walks the
    whole stack at each event). The stack is, from the top down: a *top run* of ended
    slices above every open begin, then open begins among which lie slices ended below one
    of them, all at the time of the last event (an event at a later time cuts those; one
    at that time leaves them). An event leaves, of the top run, as many of its slices as
    are instants of its time when it is an instant too, none otherwise; the top run keeps
    a count of its slices of no length by time for that. An end finds its begin among the
    open ones filed under its name and category (each begin is filed under both, either and
    neither).

    >>> stack = SliceStack(by_name=True)
    >>> for span in [(0, 0, True, "Load", "net"), (1, 1, True, "Frame", "net"),
    ...              (2, 2, False, "Load", ""), (3, 3, True, "Idle", "net")]:
    ...     stack.add(span)
    >>> [(e.span[3], e.end) for e in stack.entries], stack.cut_short
    ([('Load', 2), ('Frame', 2), ('Idle', None)], 1)
    """

    def __init__(self, by_name: bool, unnamed_begins_any: bool = False) -> None:
        self.by_name = by_name
        self.unnamed_begins_any = unnamed_begins_any
        self.entries: list[_Entry] = []
        self.cut_short = 0
        self.unmatched_ends = 0
        self._stack: list[_Entry] = []
        self._begins: list[_Entry] = []          # open begins (and some closed since)
        self._lowest_ended: int | None = None    # place of the lowest slice ended below
        self._no_length_on_top: dict[int, int] = {}   # end time -> top run's, of no length
        self._open: dict[tuple, list[_Entry]] = {}   # (name, category), None: any

    def add(self, span: tuple) -> None:
        """One event, in time order (ties in file order)."""
        ts, begins = span[0], span[2]
        self._leave(ts, begins is None)
        if begins is False:
            self._end(span)
            return
        entry = _Entry(span, None if begins else ts, len(self._stack), len(self.entries))
        self.entries.append(entry)
        self._stack.append(entry)
        if begins:
            self._begins.append(entry)
            name, category = span[3], span[4]
            for key in (((name, category), (name, None), (None, category), (None, None))
                        if self.by_name else ((None, None),)):
                self._open.setdefault(key, []).append(entry)
        else:
            self._join_top_run(entry)

    def _highest_open(self) -> int:
        """The place of the highest open begin; -1: none."""
        begins = self._begins
        while begins and begins[-1].end is not None:   # (closed or cut since)
            begins.pop()
        return begins[-1].place if begins else -1

    def _join_top_run(self, entry: _Entry) -> None:
        entry.on_top = True
        if entry.no_length():
            assert entry.end is not None
            self._no_length_on_top[entry.end] = self._no_length_on_top.get(entry.end, 0) + 1

    def _pop(self) -> None:
        entry = self._stack.pop()
        if entry.on_top and entry.no_length():
            assert entry.end is not None
            self._no_length_on_top[entry.end] -= 1

    def _leave(self, ts: int, instant: bool) -> None:
        """The ended slices that leave the stack before an event at ``ts``. As
        trace_processor walks it from the top down: each slice of the top run lets the
        stack's top go, unless it is of no length, at ``ts``, and the event an instant;
        a slice ended below an open begin, once ``ts`` is past its end, cuts what is above
        it (an open begin ends where the nearest ended slice below it ends)."""
        stack = self._stack
        if stack and stack[-1].end is not None:   # (a top run)
            top_run = len(stack) - 1 - self._highest_open()
            kept = self._no_length_on_top.get(ts, 0) if instant else 0
            for _ in range(top_run - kept):
                self._pop()
        lowest = self._lowest_ended
        if lowest is None:
            return
        end = stack[lowest].end
        assert end is not None
        if ts <= end:   # (all the slices ended below an open begin end at one time)
            return
        for entry in stack[lowest:]:
            if entry.end is None:
                self.cut_short += 1
                entry.end = end
            elif not entry.on_top:
                end = entry.end
        for _ in range(len(stack) - lowest):
            self._pop()
        self._lowest_ended = None

    def _latest_open(self, key: tuple) -> _Entry | None:
        """The latest begin still open of those filed under ``key``."""
        candidates = self._open.get(key)
        while candidates and candidates[-1].end is not None:   # (closed since)
            candidates.pop()
        return candidates[-1] if candidates else None

    def _end(self, span: tuple) -> None:
        if not self.by_name:
            entry = self._latest_open((None, None))
        else:
            name, category = span[3] or None, span[4] or None
            entry = self._latest_open((name, category))
            if name and self.unnamed_begins_any:
                unnamed = self._latest_open(("", category))
                if unnamed is not None and (entry is None or unnamed.number > entry.number):
                    entry = unnamed
        if entry is None:
            self.unmatched_ends += 1
            return
        entry.end, entry.closer = span[0], span
        stack = self._stack
        if entry.place < len(stack) - 1:   # (below an open begin: the top run is empty)
            lowest = self._lowest_ended
            self._lowest_ended = entry.place if lowest is None else min(lowest, entry.place)
            return
        stack.pop()
        below = self._highest_open()   # (what lay between it and the next open begin)
        for ended in stack[below + 1:]:
            self._join_top_run(ended)
        if self._lowest_ended is not None and self._lowest_ended > below:
            self._lowest_ended = None


def add_paired(trace: TraceBuilder, track: int, spans: Sequence[tuple], *, by_name: bool,
               unnamed_begins_any: bool = False, rows: bool = False) -> Paired:
    """Make ``spans`` (the begins, ends and instants of ``track``, :class:`Span` fields)
    into slices and instants, added in begin order: of two slices with the same times, the
    one begun first is the parent, as a viewer nests them. ``unnamed_begins_any``: a begin
    of no name is closed by an end of any name too (trace_processor's protobuf importer
    leaves such a begin unnamed; its JSON importer names it ``[No name]``, which only an end
    of no name closes). ``rows``: note each event's row (flows bind to them)."""
    stack = SliceStack(by_name, unnamed_begins_any)
    for span in sorted(spans, key=_time):
        stack.add(span)
    found = Paired(unmatched_ends=stack.unmatched_ends, cut_short=stack.cut_short,
                   rows={} if rows else None)
    for entry in stack.entries:
        ts, seq, begins, name, category, args = entry.span
        if begins is None:
            row = trace.add_instant(track, ts, name, category, args)
        else:
            end = entry.closer
            if end is not None and end[5]:
                args = {**(args or {}), **end[5]}
            # (from two times: their difference may pass int64, the builder's to keep)
            row = trace.add_interval(track, ts, ts if entry.end is None else entry.end,
                                     name, category, args)
            if entry.end is None:
                found.unclosed.append(row)
        if found.rows is not None:
            found.rows[seq] = row
            if entry.closer is not None:
                found.rows[entry.closer[1]] = row
    return found


def _time(span: tuple) -> tuple[int, int]:
    return span[0], span[1]

"""Which track each async event (begin, end, instant of an *object*) goes on, and its slices,
as trace_processor places them (its ``TrackCompressor``), for every reader that has them:
Chrome JSON's ``b``/``e``/``n``, Perfetto's legacy events of those phases.

An object (a Node resource, a Chromium operation, a memory dump) is named by an id
(:class:`ObjectId`) in an id *space*: the whole trace, or its process (a local id); the
scope (the category, or more: a Perfetto ``id_scope``) is part of its name. The object's
events nest on one track, and only its own: the event's name is no part of the key (a Node
resource's ``*_CALLBACK`` nests in the resource of its id; two resources of one name never
nest).

Tracks are grouped by the *root name* and the process (a local id) or the whole trace (a
global id), and in a protobuf trace by the scope too (``protobuf``: trace_processor keeps
two categories' objects of one name on tracks apart there, not in JSON). The root name is
the first name seen for the object; in a protobuf trace, for its id, whatever the scope
(trace_processor keys it by the id alone there; in JSON the category is part of the id it
hashes). Taken in time order, an object keeps the track it had; a new one takes the first
track of its group where nothing is open (the objects on it have ended), else a new track.
Each track is one row of a viewer, named after the first event placed on it, and holds
objects one after another. Begins, ends and instants make slices on their track as
trace_processor's slice stack makes them (:mod:`.begin_end`).

The events are held as columns (names and objects as small integer codes) until the build:
a trace may have hundreds of thousands. Placing them takes a time linear in their number
(the first track where nothing is open comes from a heap), however many objects stay
open.

>>> tracks = AsyncTracks()
>>> for ts, phase, name, oid in ((0, "b", "Timeout", "0x2"), (1, "b", "Timeout_CALLBACK", "0x2"),
...                              (2, "e", "Timeout_CALLBACK", "0x2"), (3, "b", "Timeout", "0x3"),
...                              (4, "e", "Timeout", "0x2"), (5, "b", "Timeout", "0x4")):
...     tracks.add(ts, phase, name, "node", 1, ObjectId("id", oid, {"id": oid}))
>>> [(tracks.event(i).phase, tracks.event(i).name, group, number)
...  for i, (group, number) in tracks.in_time_order()]
[('b', 'Timeout', (None, 'Timeout', None), 0), \
('b', 'Timeout_CALLBACK', (None, 'Timeout', None), 0), \
('e', 'Timeout_CALLBACK', (None, 'Timeout', None), 0), ('b', 'Timeout', (None, 'Timeout', None), 1), \
('e', 'Timeout', (None, 'Timeout', None), 0), ('b', 'Timeout', (None, 'Timeout', None), 0)]
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from ..model import TrackKind
from ..model.builder import TraceBuilder
from .begin_end import add_paired

LOCAL = "local"      # the id space of ids that name an object within its process
_PHASES = "ben"      # begin, end, instant: an event's phase is its place here
_BEGIN, _END, _INSTANT = range(3)
_BEGINS = (True, False, None)   # each phase as a Span has it


class ObjectId(NamedTuple):
    """An async event's id: its space (:data:`LOCAL`, or a global space: ``"global"``,
    Chrome's ``"id"``), its value (as ids are told apart), and the fields that wrote it,
    as written (they go into the event's args: the track is the object, its id stays
    readable)."""

    space: str
    value: Any
    fields: dict


class AsyncEvent(NamedTuple):
    """One begin (``b``), end (``e``) or instant (``n``) as read (``seq``: its place in
    the file; ``key``: its object, (scope, space, [process], id))."""

    ts: int
    seq: int
    phase: str
    name: str
    category: str
    args: dict | None
    process: int
    key: tuple


class _Codes:
    """Values (texts, objects' keys) numbered in the order first seen, so that an event
    holds small integers instead of references to objects of its own."""

    def __init__(self) -> None:
        self.values: list = []
        self._codes: dict = {}

    def code(self, value: Any) -> int:
        found = self._codes.get(value)
        if found is None:
            found = self._codes[value] = len(self.values)
            self.values.append(value)
        return found


@dataclass
class Placement:
    """Where :meth:`AsyncTracks.placement` put the events: their indices in time order, the
    track of each (by index), and each track's (group, number), in the order they were
    first used, with the process and the name of the event that first used it (the
    track's name, as trace_processor names it)."""

    order: np.ndarray
    track: array
    tracks: list[tuple[tuple, int]] = field(default_factory=list)
    process: list[int] = field(default_factory=list)
    names: list[str] = field(default_factory=list)


@dataclass
class _Group:
    """The tracks of one group: the object each holds now, its begins not yet ended, and
    (a heap) the numbers of those with none open: a new object takes the lowest."""

    tracks: list[int] = field(default_factory=list)   # each one's place in Placement.tracks
    holder: list[int] = field(default_factory=list)
    open: list[int] = field(default_factory=list)
    free: list[int] = field(default_factory=list)
    in_free: list[bool] = field(default_factory=list)

    def add_track(self, placed: int) -> int:
        """A new track (``placed``: its place among all), free; returns its number."""
        number = len(self.tracks)
        self.tracks.append(placed)
        self.holder.append(-1)
        self.open.append(0)
        self.in_free.append(False)
        self.freed(number)
        return number

    def first_free(self) -> int | None:
        free, open_, in_free = self.free, self.open, self.in_free
        while free and open_[free[0]]:   # (taken since it went on the heap)
            in_free[heapq.heappop(free)] = False
        return free[0] if free else None

    def freed(self, number: int) -> None:
        if not self.in_free[number]:
            self.in_free[number] = True
            heapq.heappush(self.free, number)


class AsyncTracks:
    """The async events of a trace, held as columns, and the track (group, number) of
    each."""

    def __init__(self, protobuf: bool = False) -> None:
        self.protobuf = protobuf
        self.without_id = 0
        self._texts = _Codes()
        self._objects = _Codes()        # keys: (scope, space, [process], id)
        self._ts = array("q")
        self._seq = array("q")
        self._phase = bytearray()
        self._holds = bytearray()       # how each counts for its object's hold on its track
        self._name = array("l")
        self._category = array("l")
        self._process = array("q")
        self._object = array("l")
        self._args: list[dict | None] = []

    def __len__(self) -> int:
        return len(self._ts)

    def add(self, ts: int, phase: str, name: str, category: str, process: int,
            oid: ObjectId | None, args: dict | None = None, seq: int | None = None,
            scope: str | None = None, holds: str | None = None) -> None:
        """Keep one event of ``process`` (``seq``: its place in the file; by default, in
        the order added; ``scope``: the id's scope when more than the category; ``holds``:
        how it counts for its object's hold on its track, as a begin, an end or an
        instant, when not as its ``phase``: trace_processor counts a Perfetto ``T`` as an
        end, an ``F`` as an instant). The
        fields that wrote its id go into its args, in front; an arg of the same name the
        producer wrote wins. An event with no id is its name's object in its process
        (trace_processor drops it): counted, see :meth:`add_to`."""
        if oid is None:
            self.without_id += 1
            key: tuple = (category, "none", process, name)
        else:
            scope = category if scope is None else scope
            key = ((scope, oid.space, process, oid.value) if oid.space == LOCAL
                   else (scope, oid.space, oid.value))
            args = {**oid.fields, **(args or {})}
        self._seq.append(len(self._ts) if seq is None else seq)
        self._ts.append(ts)
        self._phase.append(_PHASES.index(phase))
        self._holds.append(_PHASES.index(phase if holds is None else holds))
        self._name.append(self._texts.code(name))
        self._category.append(self._texts.code(category))
        self._process.append(process)
        self._object.append(self._objects.code(key))
        self._args.append(args)

    def event(self, index: int) -> AsyncEvent:
        """The event added ``index``-th, as read."""
        texts = self._texts.values
        return AsyncEvent(self._ts[index], self._seq[index], _PHASES[self._phase[index]],
                          texts[self._name[index]], texts[self._category[index]],
                          self._args[index], self._process[index],
                          self._objects.values[self._object[index]])

    def placement(self) -> Placement:
        """Each event's track, taking the events in time order (file order at one time).
        A group is ``(process or None, root name, scope or None)``; its tracks are
        numbered from 0."""
        order = np.lexsort((np.frombuffer(self._seq, dtype=np.int64),
                            np.frombuffer(self._ts, dtype=np.int64)))
        placed = Placement(order, array("q", bytes(8 * len(self))))
        keys = self._objects.values
        group_of = [-1] * len(keys)       # object -> its group (fixed by its first event)
        number_of = [-1] * len(keys)      # object -> its track's number in the group now
        group_codes = _Codes()
        groups: list[_Group] = []
        roots: dict[tuple, int] = {}      # an id (in a protobuf trace, of any scope) -> name
        texts, names, phases, objects = (self._texts.values, self._name, self._holds,
                                         self._object)
        for i in order.tolist():
            obj = objects[i]
            g = group_of[obj]
            if g < 0:
                key = keys[obj]
                local = key[1] in (LOCAL, "none")
                root = roots.setdefault(key[1:] if self.protobuf else key, names[i])
                g = group_of[obj] = group_codes.code(
                    (self._process[i] if local else None, texts[root],
                     key[0] if self.protobuf else None))
                if g == len(groups):
                    groups.append(_Group())
            group = groups[g]
            number = number_of[obj]
            if number < 0 or group.holder[number] != obj:   # (its track was taken over)
                free = group.first_free()
                number = group.add_track(len(placed.tracks)) if free is None else free
                if free is None:
                    placed.tracks.append((group_codes.values[g], number))
                    placed.process.append(self._process[i])
                    placed.names.append(texts[names[i]])
                number_of[obj] = number
                group.holder[number] = obj
            phase = phases[i]
            if phase == _BEGIN:
                group.open[number] += 1
            elif phase == _END and group.open[number]:
                group.open[number] -= 1
                if not group.open[number]:
                    group.freed(number)
            placed.track[i] = group.tracks[number]
        return placed

    def in_time_order(self) -> Iterator[tuple[int, tuple[tuple, int]]]:
        """Each event (its index) in time order (file order at one time) with its track:
        ``(group, number)``, as :meth:`placement` places them."""
        placed = self.placement()
        for i in placed.order.tolist():
            yield i, placed.tracks[placed.track[i]]

    def add_to(self, trace: TraceBuilder, *, without_id: str, end_without_begin: str,
               not_ended: str, cut_short: str) -> dict[int, int]:
        """Put the events into ``trace``: each track made (an async track in the process of
        its first event), instants, and begins and ends paired into slices; counted under
        the reader's codes: events with no id, ends that closed nothing, begins cut short at
        the end of one below them (:mod:`.begin_end`), and slices never ended (handed to the
        builder). Returns the row of each event by its ``seq``: the
        slice of a begin or an end, the instant of an instant.

        >>> from traceconv.model.builder import TraceBuilder
        >>> b = TraceBuilder(); p = b.add_process("p"); tracks = AsyncTracks()
        >>> tracks.add(5, "b", "Dump", "memory", p, ObjectId(LOCAL, 1, {"local_id": 1}), seq=0)
        >>> tracks.add(9, "e", "Dump", "memory", p, ObjectId(LOCAL, 1, {"local_id": 1}),
        ...            {"ok": True}, seq=1)
        >>> tracks.add(7, "n", "Mark", "memory", p, None, seq=2)
        >>> tracks.add_to(b, without_id="chrome.async_without_id",
        ...               end_without_begin="chrome.end_without_begin",
        ...               not_ended="chrome.begin_without_end", cut_short="chrome.async_cut_short")
        {0: 0, 1: 0, 2: 0}
        >>> s = b.slice(0); (b.tracks[s.track].name, s.start, s.dur, s.args)
        ('Dump', 5, 4, {'local_id': 1, 'ok': True})
        >>> b.diagnostics.count("chrome.async_without_id")
        1
        """
        placed = self.placement()
        made = [trace.add_track(name, process=process, kind=TrackKind.ASYNC)
                for name, process in zip(placed.names, placed.process, strict=True)]
        texts, ts, seq, args = self._texts.values, self._ts, self._seq, self._args
        rows: dict[int, int] = {}
        unclosed: list[int] = []
        unmatched = cut_short_count = 0
        for events in self._events_per_track(placed):
            spans = [(ts[i], seq[i], _BEGINS[self._phase[i]], texts[self._name[i]],
                      texts[self._category[i]], args[i]) for i in events]
            paired = add_paired(trace, made[placed.track[events[0]]], spans, by_name=True,
                                unnamed_begins_any=self.protobuf, rows=True)
            rows.update(paired.rows or {})
            unclosed += paired.unclosed
            unmatched += paired.unmatched_ends
            cut_short_count += paired.cut_short
        trace.diagnostics.add(end_without_begin, count=unmatched)
        trace.diagnostics.add(cut_short, count=cut_short_count)
        trace.not_ended(unclosed, not_ended)
        trace.diagnostics.add(without_id, count=self.without_id)
        return rows

    @staticmethod
    def _events_per_track(placed: Placement) -> Iterator[list[int]]:
        """The events of each track, in time order, a track after another in the order of
        their first event."""
        events = placed.order
        if not len(events):
            return
        track = np.frombuffer(placed.track, dtype=np.int64)[events]
        _, first, inverse = np.unique(track, return_index=True, return_inverse=True)
        rank = np.empty(len(first), dtype=np.int64)
        rank[np.argsort(first)] = np.arange(len(first))   # (first places are distinct)
        ranks = rank[inverse.ravel()]
        along = np.argsort(ranks, kind="stable")
        for run in np.split(events[along], np.flatnonzero(np.diff(ranks[along])) + 1):
            yield run.tolist()

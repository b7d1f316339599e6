"""Which track each async event (begin, end, instant of an *object*) goes on, and its slices,
as trace_processor places them (its ``TrackCompressor``), for every reader that has them:
Chrome JSON's ``b``/``e``/``n``, Perfetto's legacy events of those phases.

An object (a Node resource, a Chromium operation, a memory dump) is named by an id
(:class:`ObjectId`) in an id *space*: the whole trace, or its process (a local id); the
scope (the category, or more: a Perfetto ``id_scope``) is part of its name. The object's
events nest on one track, and only its own: the event's name is no part of the key (a Node
resource's ``*_CALLBACK`` nests in the resource of its id; two resources of one name never
nest).

Tracks are grouped by the *root name* (the first name seen for the object) and the process
(a local id) or the whole trace (a global id), and in a protobuf trace by the scope too
(``separate_scopes``: trace_processor keeps two categories' objects of one name on tracks
apart there, not in JSON). Taken in time order, an object keeps the
track it had; a new one takes the first track of its group where nothing is open (the
objects on it have ended), else a new track. Each track is one row of a viewer, named by its
root name, and holds objects one after another. Begins and ends pair on their track by name
(:mod:`.begin_end`).

>>> tracks = AsyncTracks()
>>> for ts, phase, name, oid in ((0, "b", "Timeout", "0x2"), (1, "b", "Timeout_CALLBACK", "0x2"),
...                              (2, "e", "Timeout_CALLBACK", "0x2"), (3, "b", "Timeout", "0x3"),
...                              (4, "e", "Timeout", "0x2"), (5, "b", "Timeout", "0x4")):
...     tracks.add(ts, phase, name, "node", 1, ObjectId("id", oid, {"id": oid}))
>>> [(e.phase, e.name, group, number) for e, (group, number) in tracks.in_time_order()]
[('b', 'Timeout', (None, 'Timeout', None), 0), \
('b', 'Timeout_CALLBACK', (None, 'Timeout', None), 0), \
('e', 'Timeout_CALLBACK', (None, 'Timeout', None), 0), ('b', 'Timeout', (None, 'Timeout', None), 1), \
('e', 'Timeout', (None, 'Timeout', None), 0), ('b', 'Timeout', (None, 'Timeout', None), 0)]
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..model import TrackKind
from ..model.builder import TraceBuilder
from .begin_end import Span, add_paired

LOCAL = "local"      # the id space of ids that name an object within its process


class ObjectId(NamedTuple):
    """An async event's id: its space (:data:`LOCAL`, or a global space: ``"global"``,
    Chrome's ``"id"``), its value (as ids are told apart), and the fields that wrote it,
    as written (they go into the event's args: the track is the object, its id stays
    readable)."""

    space: str
    value: Any
    fields: dict


@dataclass(slots=True)
class AsyncEvent:
    """One begin (``b``), end (``e``) or instant (``n``) as read (``seq``: its place in
    the file)."""

    ts: int
    seq: int
    phase: str
    name: str
    category: str
    args: dict | None
    process: int
    key: tuple           # the object: (scope, space, [process], id)
    local: bool          # its id is local to its process


@dataclass(slots=True)
class _Track:
    key: tuple           # the object on the track now
    open: int = 0        # its begins not yet ended


@dataclass
class AsyncTracks:
    """The async events of a trace, and the track (group, number) of each."""

    separate_scopes: bool = False
    events: list[AsyncEvent] = field(default_factory=list)
    without_id: int = 0

    def add(self, ts: int, phase: str, name: str, category: str, process: int,
            oid: ObjectId | None, args: dict | None = None, seq: int | None = None,
            scope: str | None = None) -> None:
        """Keep one event of ``process`` (``seq``: its place in the file; by default, in
        the order added; ``scope``: the id's scope when more than the category). The
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
        self.events.append(AsyncEvent(ts, len(self.events) if seq is None else seq, phase,
                                      name, category, args, process, key,
                                      key[1] in (LOCAL, "none")))

    def in_time_order(self) -> Iterator[tuple[AsyncEvent, tuple[tuple, int]]]:
        """Each event in time order (file order at one time) with its track: ``(group,
        number)``, the group ``(process or None, root name, scope or None)``."""
        groups: dict[tuple, list[_Track]] = {}
        root: dict[tuple, str] = {}        # object -> the first name seen for it
        placed: dict[tuple, tuple[tuple, int]] = {}   # object -> its track now
        for e in sorted(self.events, key=lambda e: (e.ts, e.seq)):
            name = root.setdefault(e.key, e.name)
            group = (e.process if e.local else None, name,
                     e.key[0] if self.separate_scopes else None)
            tracks = groups.setdefault(group, [])
            where = placed.get(e.key)
            if where is None or tracks[where[1]].key != e.key:   # (its track was taken over)
                number = next((i for i, t in enumerate(tracks) if t.open == 0), len(tracks))
                if number == len(tracks):
                    tracks.append(_Track(e.key))
                tracks[number].key = e.key
                where = placed[e.key] = (group, number)
            track = tracks[where[1]]
            if e.phase == "b":
                track.open += 1
            elif e.phase == "e" and track.open:
                track.open -= 1
            yield e, where

    def add_to(self, trace: TraceBuilder, *, without_id: str, end_without_begin: str,
               not_ended: str) -> dict[int, int]:
        """Put the events into ``trace``: each track made (an async track in the process of
        its first event), instants, and begins and ends paired into slices; counted under
        the reader's codes: events with no id, ends that closed nothing, and slices never
        ended (handed to the builder). Returns the row of each event by its ``seq``: the
        slice of a begin or an end, the instant of an instant.

        >>> from traceconv.model.builder import TraceBuilder
        >>> b = TraceBuilder(); p = b.add_process("p"); tracks = AsyncTracks()
        >>> tracks.add(5, "b", "Dump", "memory", p, ObjectId(LOCAL, 1, {"local_id": 1}), seq=0)
        >>> tracks.add(9, "e", "Dump", "memory", p, ObjectId(LOCAL, 1, {"local_id": 1}),
        ...            {"ok": True}, seq=1)
        >>> tracks.add(7, "n", "Mark", "memory", p, None, seq=2)
        >>> tracks.add_to(b, without_id="chrome.async_without_id",
        ...               end_without_begin="chrome.end_without_begin",
        ...               not_ended="chrome.begin_without_end")
        {2: 0, 0: 0, 1: 0}
        >>> s = b.slice(0); (b.tracks[s.track].name, s.start, s.dur, s.args)
        ('Dump', 5, 4, {'local_id': 1, 'ok': True})
        >>> b.diagnostics.count("chrome.async_without_id")
        1
        """
        made: dict[tuple, int] = {}
        rows: dict[int, int] = {}
        spans: dict[int, list[Span]] = {}
        for e, where in self.in_time_order():
            t = made.get(where)
            if t is None:
                t = made[where] = trace.add_track(where[0][1], process=e.process,
                                                  kind=TrackKind.ASYNC)
            if e.phase == "n":
                rows[e.seq] = trace.add_instant(t, e.ts, e.name, e.category, e.args)
            else:
                spans.setdefault(t, []).append(
                    Span(e.ts, e.seq, e.phase == "b", e.name, e.category, e.args))
        unclosed: list[int] = []
        unmatched = 0
        for t, track_spans in spans.items():
            paired = add_paired(trace, t, track_spans, by_name=True, rows=True)
            rows.update(paired.rows or {})
            unclosed += paired.unclosed
            unmatched += paired.unmatched_ends
        trace.diagnostics.add(end_without_begin, count=unmatched)
        trace.not_ended(unclosed, not_ended)
        trace.diagnostics.add(without_id, count=self.without_id)
        return rows

"""Legacy async events of a Perfetto trace (``TrackEvent.legacy_event`` with phase ``b``,
``e`` or ``n``: Chrome's ``GlobalMemoryDump`` and other ``TRACE_EVENT_NESTABLE_ASYNC_*``
events; and the old ``S``, ``T``/``p``, ``F`` of ``TRACE_EVENT_ASYNC_*``: a begin, a step (an
instant) and an end whose id is scoped by the event's name, not its category; trace_processor
counts a ``T`` as an end and an ``F`` as an instant for the object's hold on its track) on
their objects' tracks, as trace_processor's track event parser places them.

An event's object is named by its id: ``unscoped_id`` or ``global_id`` (one id space for
the whole trace: trace_processor reads both as one source id) or ``local_id`` (within the
event's process, the process of its track or, with none, of its sequence's thread); the
id's scope is the category, or the category, ``:`` and ``id_scope`` when that is set. The
tracks, their names and the pairing of begins and ends are the rule every reader shares
(:mod:`traceconv.formats.async_tracks`); this module only reads the ids and hands the
events over once their times, tracks and args are final.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ...model.builder import TraceBuilder
from ..async_tracks import LOCAL, AsyncTracks, ObjectId
from .event_kinds import ASYNC, HOLDS, OLD_ASYNC

# the fields an id is written in: a local id (in its process), then the two that
# trace_processor reads as one id space for the whole trace
ID_FIELDS = ("local_id", "global_id", "unscoped_id")


class LegacyIds:
    """The ids of legacy async events, as columns (a trace may have hundreds of thousands):
    per event (its index), the field that wrote its id (its place in :data:`ID_FIELDS`;
    -1: none), its value, and its ``id_scope`` (its place in :attr:`scopes`; -1: unset).

    >>> from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TrackEvent
    >>> ids = LegacyIds()
    >>> ids.add(4, TrackEvent.LegacyEvent(phase=ord("b"), local_id=1), str)
    >>> ids.add(9, TrackEvent.LegacyEvent(phase=ord("e"), unscoped_id=7, id_scope="gpu"), str)
    >>> ids.add(12, TrackEvent.LegacyEvent(phase=ord("n")), str)
    >>> ids.places(np.array([12, 4])).tolist()
    [2, 0]
    >>> ids.object_id(0), ids.object_id(1), ids.object_id(2)
    ((ObjectId(space='local', value=1, fields={'local_id': 1}), None), \
(ObjectId(space='global', value=7, fields={'unscoped_id': 7, 'id_scope': 'gpu'}), 'gpu'), \
(None, None))
    """

    def __init__(self) -> None:
        self.event = array("q")
        self.field = array("b")
        self.value = array("Q")
        self.scope = array("l")
        self.scopes: list[str] = []
        self._scope_codes: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.event)

    def add(self, event: int, message: Any, text: Callable[[str], str]) -> None:
        """Keep the id of event ``event``, a ``TrackEvent.LegacyEvent`` message (``text``:
        how its strings are kept)."""
        which = message.WhichOneof("id")
        scope = -1
        if which is not None and message.HasField("id_scope"):   # (no id: no scope read)
            scope_text = text(message.id_scope)
            scope = self._scope_codes.setdefault(scope_text, len(self.scopes))
            if scope == len(self.scopes):
                self.scopes.append(scope_text)
        self.event.append(event)
        self.field.append(-1 if which is None else ID_FIELDS.index(which))
        self.value.append(0 if which is None else getattr(message, which))
        self.scope.append(scope)

    def renumber(self, start: int, renumber: np.ndarray) -> None:
        """The events of the ids kept from the ``start``-th on given as ``renumber`` has
        them (a reader numbers its events once it knows which it keeps)."""
        if start < len(self):
            kept = np.frombuffer(self.event, dtype=np.int64)[start:]
            self.event[start:] = array("q", renumber[kept].tobytes())

    def places(self, events: np.ndarray) -> np.ndarray:
        """The place of each event's id here (each of ``events`` has one)."""
        event = np.frombuffer(self.event, dtype=np.int64)
        order = np.argsort(event, kind="stable")
        return order[np.searchsorted(event[order], events)]

    def object_id(self, at: int) -> tuple[ObjectId | None, str | None]:
        """The id kept ``at``-th (None: the event has none) and its ``id_scope`` (None:
        unset)."""
        field, scope = self.field[at], self.scope[at]
        scope_text = None if scope < 0 else self.scopes[scope]
        if field < 0:
            return None, None
        name, value = ID_FIELDS[field], self.value[at]
        fields: dict[str, Any] = {name: value}
        if scope_text is not None:
            fields["id_scope"] = scope_text
        return ObjectId(LOCAL if field == 0 else "global", value, fields), scope_text


def add_legacy_async(trace: TraceBuilder, events: np.ndarray, ids: LegacyIds,
                     kind: np.ndarray, ts: np.ndarray, track: np.ndarray, name: np.ndarray,
                     category: np.ndarray, args: Iterable[dict | None]
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Add the legacy async events ``events`` (their kind, time, track, name and category
    string ids in the columns given, indexed by event; ``args``: theirs, in order, taken one
    at a time) to ``trace``. Returns the events that made or closed a slice and those
    slices' rows, then the instants' events and rows."""
    objects = AsyncTracks(protobuf=True)
    strings = trace.strings.strings
    for event, place, event_args in zip(events.tolist(), ids.places(events).tolist(), args,
                                        strict=True):
        oid, id_scope = ids.object_id(place)
        text, event_kind = strings[category[event]], int(kind[event])
        event_name = strings[name[event]]
        objects.add(int(ts[event]), ASYNC[event_kind], event_name, text,
                    trace.tracks[int(track[event])].process, oid, event_args, event,
                    f"{text}:{id_scope}" if id_scope is not None
                    else event_name if event_kind in OLD_ASYNC else None, HOLDS[event_kind])
    rows = objects.add_to(trace, without_id="perfetto.async_without_id",
                          end_without_begin="perfetto.end_without_begin",
                          not_ended="perfetto.slice_not_ended",
                          cut_short="perfetto.async_cut_short")
    placed = np.array(list(rows), dtype=np.int64)
    made = np.array(list(rows.values()), dtype=np.int64)
    instant = np.isin(kind[placed], [k for k, phase in ASYNC.items() if phase == "n"])
    return placed[~instant], made[~instant], placed[instant], made[instant]

"""Legacy async events of a Perfetto trace (``TrackEvent.legacy_event`` with phase ``b``,
``e`` or ``n``: Chrome's ``GlobalMemoryDump`` and other ``TRACE_EVENT_NESTABLE_ASYNC_*``
events) on their objects' tracks, as trace_processor's track event parser places them.

An event's object is named by its id: ``unscoped_id`` or ``global_id`` (one id space for
the whole trace: trace_processor reads both as one source id) or ``local_id`` (within the
event's process, the process of its track or, with none, of its sequence's thread); the
id's scope is the category, or the category, ``:`` and ``id_scope`` when that is set. The
tracks, their names and the pairing of begins and ends are the rule every reader shares
(:mod:`traceconv.formats.async_tracks`); this module only reads the ids and hands the
events over once their times, tracks and args are final.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ...model.builder import TraceBuilder
from ..async_tracks import LOCAL, AsyncTracks, ObjectId
from .event_kinds import ASYNC, ASYNC_INSTANT


class LegacyId(NamedTuple):
    """A legacy async event's id (None: it has none) and its ``id_scope`` (None: unset)."""

    oid: ObjectId | None
    id_scope: str | None


def legacy_id(event: Any, text: Callable[[str], str]) -> LegacyId:
    """The id of a ``TrackEvent.LegacyEvent`` message (``text``: how its strings are kept).

    >>> from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TrackEvent
    >>> legacy_id(TrackEvent.LegacyEvent(phase=ord("b"), local_id=1), str)
    LegacyId(oid=ObjectId(space='local', value=1, fields={'local_id': 1}), id_scope=None)
    >>> legacy_id(TrackEvent.LegacyEvent(phase=ord("e"), unscoped_id=7, id_scope="gpu"), str)
    LegacyId(oid=ObjectId(space='global', value=7, fields={'unscoped_id': 7, 'id_scope': 'gpu'}), \
id_scope='gpu')
    """
    which = event.WhichOneof("id")
    if which is None:
        return LegacyId(None, None)
    value = getattr(event, which)
    fields: dict[str, Any] = {which: value}
    scope = None
    if event.HasField("id_scope"):
        scope = fields["id_scope"] = text(event.id_scope)
    return LegacyId(ObjectId(LOCAL if which == "local_id" else "global", value, fields), scope)


def add_legacy_async(trace: TraceBuilder, events: np.ndarray, ids: dict[int, LegacyId],
                     kind: np.ndarray, ts: np.ndarray, track: np.ndarray, name: np.ndarray,
                     category: np.ndarray, args: list[dict | None]
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Add the legacy async events ``events`` (their kind, time, track, name and category
    string ids in the columns given, indexed by event; ``args``: theirs, in order) to
    ``trace``. Returns the events that made or closed a slice and those slices' rows, then
    the instants' events and rows."""
    objects = AsyncTracks(separate_scopes=True)
    strings = trace.strings.strings
    for event, event_args in zip(events.tolist(), args, strict=True):
        legacy = ids[event]
        text = strings[category[event]]
        objects.add(int(ts[event]), ASYNC[int(kind[event])], strings[name[event]], text,
                    trace.tracks[int(track[event])].process, legacy.oid, event_args, event,
                    None if legacy.id_scope is None else f"{text}:{legacy.id_scope}")
    rows = objects.add_to(trace, without_id="perfetto.async_without_id",
                          end_without_begin="perfetto.end_without_begin",
                          not_ended="perfetto.slice_not_ended")
    placed = np.array(list(rows), dtype=np.int64)
    made = np.array(list(rows.values()), dtype=np.int64)
    instant = kind[placed] == ASYNC_INSTANT
    return placed[~instant], made[~instant], placed[instant], made[instant]

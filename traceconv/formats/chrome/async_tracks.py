"""Which track each async event (``b``/``e``/``n``) of a Chrome trace goes on, as Perfetto's
trace_processor places them (its JSON importer and ``TrackCompressor``).

An async event names an *object* (a Node resource, a Chromium operation) by its id: ``id``
and ``id2.global`` name one in the whole trace (two id spaces), ``id2.local`` one in its
process, and the category is part of the name (:func:`async_id`). The object's events nest
on one track, and only its own: the event's name is no part of the key (a Node resource's
``*_CALLBACK`` nests in the resource of its id; two resources of one name never nest).

Tracks are grouped by the *root name* (the first name seen for the object) and the process
(a local id) or the whole trace (a global id). Taken in time order, an object keeps the
track it had; a new one takes the first track of its group where nothing is open (the
objects on it have ended), else a new track. Each track is one row of a viewer, named by its
root name, and holds objects one after another.

>>> tracks = AsyncTracks()
>>> for ts, phase, name, oid in ((0, "b", "Timeout", "0x2"), (1, "b", "Timeout_CALLBACK", "0x2"),
...                              (2, "e", "Timeout_CALLBACK", "0x2"), (3, "b", "Timeout", "0x3"),
...                              (4, "e", "Timeout", "0x2"), (5, "b", "Timeout", "0x4")):
...     tracks.add(ts, phase, name, "node", {"id": oid}, process=1)
>>> [(e.phase, e.name, group, number) for e, (group, number) in tracks.in_time_order()]
[('b', 'Timeout', (None, 'Timeout'), 0), ('b', 'Timeout_CALLBACK', (None, 'Timeout'), 0), \
('e', 'Timeout_CALLBACK', (None, 'Timeout'), 0), ('b', 'Timeout', (None, 'Timeout'), 1), \
('e', 'Timeout', (None, 'Timeout'), 0), ('b', 'Timeout', (None, 'Timeout'), 0)]
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson


def _id_key(value: Any) -> Any:
    """An id as trace_processor tells ids apart: by type and value (``"5"`` and ``5`` are
    two ids, as are ``"0x2"`` and ``2``)."""
    return value if isinstance(value, str | int | float) else orjson.dumps(value).decode()


def async_id(event: dict, process: int) -> tuple[str | None, Any, tuple | None]:
    """Which field of an async event names its object, the value as written, and the
    object's key without the category. ``id`` (it wins), ``id2.global`` and ``id2.local``
    are three id spaces, as trace_processor keys them: the first two across the whole
    trace, ``id2.local`` in ``process``. Nothing when the event has no id (trace_processor
    drops such events).

    >>> async_id({"id": "0x2"}, 7), async_id({"id2": {"local": "0xa6"}}, 7)
    (('id', '0x2', ('id', '0x2')), ('id2', {'local': '0xa6'}, ('local', 7, '0xa6')))
    >>> async_id({"id": 5, "id2": {"local": "0x1"}}, 7), async_id({"id": ""}, 7)
    (('id', 5, ('id', 5)), (None, None, None))
    """
    own = event.get("id")
    if own is not None and own != "":
        return "id", own, ("id", _id_key(own))
    two = event.get("id2")
    if isinstance(two, dict):
        for scope in ("global", "local"):
            value = two.get(scope)
            if value is not None and value != "":
                key = ("global",) if scope == "global" else ("local", process)
                return "id2", two, (*key, _id_key(value))
    return None, None, None


@dataclass(slots=True)
class AsyncEvent:
    """One ``b``, ``e`` or ``n`` event as read (``seq``: its place in the file)."""

    ts: int
    seq: int
    phase: str
    name: str
    category: str
    args: dict | None
    process: int
    key: tuple           # the object: (category, scope..., id)
    local: bool          # its id is local to its process


@dataclass(slots=True)
class _Track:
    key: tuple           # the object on the track now
    open: int = 0        # its begins not yet ended


@dataclass
class AsyncTracks:
    """The async events of a trace, and the track (group, number) of each."""

    events: list[AsyncEvent] = field(default_factory=list)
    without_id: int = 0

    def add(self, ts: int, phase: str, name: str, category: str, event: dict, process: int,
            args: dict | None = None, seq: int | None = None) -> None:
        """Keep one event (``seq``: its place in the file; by default, in the order added).
        The field that names its object goes into its args, under its own name (the track
        is the object: its id stays readable); an arg of that name the producer wrote wins."""
        which, value, key = async_id(event, process)
        if key is None:   # (its object: its name in its process)
            self.without_id += 1
            key = ("none", process, name)
        else:
            args = {which: value, **(args or {})}
        self.events.append(AsyncEvent(ts, len(self.events) if seq is None else seq, phase,
                                      name, category, args, process, (category, *key),
                                      key[0] in ("local", "none")))

    def in_time_order(self) -> Iterator[tuple[AsyncEvent, tuple[tuple, int]]]:
        """Each event in time order (file order at one time) with its track: ``(group,
        number)``, the group ``(process or None, root name)``."""
        groups: dict[tuple, list[_Track]] = {}
        root: dict[tuple, str] = {}        # object -> the first name seen for it
        placed: dict[tuple, tuple[tuple, int]] = {}   # object -> its track now
        for e in sorted(self.events, key=lambda e: (e.ts, e.seq)):
            name = root.setdefault(e.key, e.name)
            group = (e.process if e.local else None, name)
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

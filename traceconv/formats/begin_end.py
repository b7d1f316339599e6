"""Begin and end events of one track paired into slices, as trace_processor pairs them.

In time order (ties in file order) an end closes the latest begin still open on its track;
an async end (``by_name``: Chrome's ``e``, a Perfetto legacy ``e``) the latest of its name
and category, since an object's track holds several names (trace_processor's
``SliceTracker::End``). The end's args are merged into the slice it closes (the end's win,
as the Chrome format says). An end that closes nothing is counted by the caller; a begin never
ended is added with no length, for the builder to end
(:meth:`~traceconv.model.builder.TraceBuilder.not_ended`).

>>> from traceconv.model.builder import TraceBuilder
>>> b = TraceBuilder(); t = b.add_track("objects", process=b.add_process("p"))
>>> spans = [Span(0, 0, True, "Load", "net", {"id": 1}), Span(1, 1, True, "Frame", "net", None),
...          Span(2, 2, False, "Load", "net", {"ok": True}), Span(3, 3, False, "Idle", "", None)]
>>> paired = add_paired(b, t, spans, by_name=True)
>>> [(s.name, s.start, s.dur, s.args) for s in b.iter_slices()]
[('Load', 0, 2, {'id': 1, 'ok': True}), ('Frame', 1, 0, None)]
>>> paired.unclosed, paired.unmatched_ends
([1], 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from ..model.builder import TraceBuilder


class Span(NamedTuple):
    """One begin or end event (a plain tuple of these fields will do: :func:`add_paired`
    reads them by place, and a reader of many makes tuples, which is quicker)."""

    ts: int
    seq: int            # its place in the file (the order of events at one time)
    begins: bool
    name: str
    category: str
    args: dict | None


@dataclass
class Paired:
    """What :func:`add_paired` made: the slice rows never ended, the ends that closed
    nothing, and (when asked for) the slice row of each begin and end by its ``seq``."""

    unclosed: list[int] = field(default_factory=list)
    unmatched_ends: int = 0
    rows: dict[int, int] | None = None


class _OpenBegins:
    """The begins not yet ended on a track, in the order they began, looked up as an end
    names them: the latest whose name and category match the end's (equal, or one of the
    two not given). Each begin is filed under its name and category, its name, its
    category, and with all, so that an end looks at the latest of at most four files, not
    at every begin still open: pairing takes a time linear in the events, however many
    begins stay open (a closed begin leaves its files when it comes to their top).

    >>> begins = _OpenBegins()
    >>> for span in [(0, 0, True, "Load", "net"), (1, 1, True, "", "net"),
    ...              (2, 2, True, "Frame", "")]:
    ...     begins.push(span)
    >>> begins.close("Load", "gpu"), begins.close("Load", "net")[0], begins.close("", "")[0]
    (None, 1, 2)
    >>> [span[0] for span in begins.still_open()]
    [0]
    """

    def __init__(self) -> None:
        self.begins: list[tuple] = []
        self.closed = bytearray()
        self.files: dict[tuple, list[int]] = {}   # (name, category) (None: any) -> places

    def push(self, span: tuple) -> None:
        place = len(self.begins)
        self.begins.append(span)
        self.closed.append(False)
        name, category = span[3], span[4]
        for key in ((name, category), (name, None), (None, category), (None, None)):
            self.files.setdefault(key, []).append(place)

    def close(self, name: str, category: str) -> tuple | None:
        """The latest open begin that an end of ``name`` and ``category`` closes, closed;
        None where none does."""
        names = (name, "") if name else (None,)
        categories = (category, "") if category else (None,)
        return self._close_latest_of([(n, c) for n in names for c in categories])

    def close_latest(self) -> tuple | None:
        """The latest open begin, closed (None: none is open)."""
        return self._close_latest_of([(None, None)])

    def _close_latest_of(self, keys: list[tuple]) -> tuple | None:
        latest = -1
        for key in keys:
            places = self.files.get(key)
            while places and self.closed[places[-1]]:
                places.pop()
            if places and places[-1] > latest:
                latest = places[-1]
        if latest < 0:
            return None
        self.closed[latest] = True
        return self.begins[latest]

    def still_open(self) -> list[tuple]:
        """The begins never closed, in the order they began."""
        return [span for span, closed in zip(self.begins, self.closed, strict=True)
                if not closed]


def add_paired(trace: TraceBuilder, track: int, spans: Sequence[tuple], *, by_name: bool,
               rows: bool = False) -> Paired:
    """Pair ``spans`` (the begins and ends of ``track``, :class:`Span` fields) and add
    their slices in begin order: of two slices with the same times, the one begun first
    is the parent, as a viewer nests them. ``rows``: note each event's slice row (flows
    bind to them)."""
    spans = sorted(spans, key=_time)
    found = Paired(rows={} if rows else None)
    open_begins = _OpenBegins()
    pairs: list[tuple[tuple, tuple | None]] = []
    for span in spans:
        if span[2]:   # (begins)
            open_begins.push(span)
            continue
        begin = open_begins.close(span[3], span[4]) if by_name else open_begins.close_latest()
        if begin is None:
            found.unmatched_ends += 1
            continue
        pairs.append((begin, span))
    pairs += [(begin, None) for begin in open_begins.still_open()]
    pairs.sort(key=lambda pair: _time(pair[0]))
    for begin, end in pairs:
        ts, seq, _, name, category, args = begin
        if end is not None and end[5]:
            args = {**(args or {}), **end[5]}
        # (from two times: their difference may pass int64, the builder's to keep)
        row = trace.add_interval(track, ts, ts if end is None else end[0],
                                 name or (end[3] if end else ""),
                                 category or (end[4] if end else ""), args)
        if end is None:
            found.unclosed.append(row)
        if found.rows is not None:
            found.rows[seq] = row
            if end is not None:
                found.rows[end[1]] = row
    return found


def _time(span: tuple) -> tuple[int, int]:
    return span[0], span[1]

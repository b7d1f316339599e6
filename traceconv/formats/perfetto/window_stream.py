"""One ``.pftrace`` written from a trace that arrives in time windows, each a trace of its own.

An input too big to hold is read one piece at a time (:mod:`traceconv.streaming`): each
piece is a complete trace of one time window, as ``split`` cuts them (a slice whole in
the window where it starts, device work with the step that launched it, the memory blocks
still alive copied in at the window's start). :class:`WindowStream` writes the pieces one
after the other as the one trace :func:`.writer.write` makes of the whole input:

* processes and tracks are matched across pieces by what they are (name, kind, pid, tid,
  parent), in one track list that grows as pieces bring new ones: uuids stay put, and the
  descriptors a piece adds come before its events;
* the nesting repair goes on from the slices still open at a cut
  (:class:`~traceconv.model.nesting_windows.WindowedNesting`), and the END of each of
  those is written in the window where it falls, ordered among that window's events as
  the whole trace's window-by-window write orders it;
* flow ids go on from piece to piece;
* a memory block alive across a cut is one block: the copy the later piece holds is
  joined to it, and the sample its live-bytes counter gets at that piece's start (the level
  carried across, unchanged) is not written again;
* reading diagnostics are summed, and the trace attribute that carries the model
  (processes, tracks, flows' labels, memory blocks, diagnostics) is written once, last.
"""

from __future__ import annotations

import copy
import dataclasses
from array import array
from typing import Any, BinaryIO

import numpy as np

from ...errors import TraceconvError
from ...gcpause import paused_gc
from ...model import Diagnostics, Trace, Track, TrackKind
from ...model.block_table import CODED
from ...model.memory import LIVE_BYTES_DESCRIPTION
from ...model.nesting import clamped_ends, track_view
from ...model.nesting_windows import WindowedNesting
from .descriptors import TrackIds, assign_ids, descriptor_payloads
from .ordering import window_event_order
from .wire import take_nul_replaced
from .writer import (
    CHUNK_SEQUENCE,
    SEQ_DESCRIPTORS,
    SEQ_EVENTS,
    TRACK_DESCRIPTOR,
    _EventEncoder,
    _preamble_packets,
    _write_model,
    bytes_field,
    frame,
    uint_field,
)
from .writer import SEQUENCE_ID as _SEQUENCE_ID

_SPLIT_KEY = "traceconvSplit"   # the envelope key ``split`` gives its pieces
_NONE = np.zeros(0, dtype=np.int64)
# a lane's uuid is that of track LANE_IDS + its number: past the whole's tracks, whatever
# pieces add later (uuids hold 2^24 ids), so that a reader folds it into its home
LANE_IDS = 1 << 23


class WindowStream:
    """Writes pieces (:meth:`add`, in time order) to the binary stream ``out`` as one trace;
    :meth:`finish` writes the model attribute and returns what the writer counted.

    >>> import os, tempfile, traceconv
    >>> path = os.path.join(tempfile.mkdtemp(), "t.pftrace")
    >>> out = open(path, "wb"); stream = WindowStream(out, "t.json")
    >>> for start, end in ((0, 50), (50, None)):
    ...     piece = traceconv.Trace(); p = piece.add_process("python", pid=7)
    ...     main = piece.add_track("main", process=p, tid=7)
    ...     _ = piece.add_slice(main, start, 40, "step")
    ...     stream.add(piece, start, end)
    >>> written = stream.finish(); out.close(); back = traceconv.load(path)
    >>> [(s.start, s.dur, s.name) for s in back.iter_slices()], len(back.tracks)
    ([(0, 40, 'step'), (50, 40, 'step')], 1)
    """

    def __init__(self, out: BinaryIO, source_file: str) -> None:
        self.out = out
        self.source_file = source_file
        # what the pieces share and the attribute describes: processes, tracks (lanes
        # too), flows' labels, memory blocks, reading diagnostics
        self.whole: Trace | None = None
        self.processes: dict[tuple[Any, ...], int] = {}
        self.tracks: dict[tuple[Any, ...], int] = {}
        self.nesting: WindowedNesting | None = None
        # lanes the nesting repair made, apart from the whole's tracks (which the model
        # attribute lists: a reader folds a lane back into its home), with uuids of their own
        self.lanes: list[Track] = []
        self.processes_described = 0
        self.described: set[int] = set()   # track uuids whose descriptors are written
        self.sequence = SEQ_EVENTS
        self.offset = 0
        self.reversed: list[int] = []
        self.written = Diagnostics()   # what the writer repaired or left out
        self.alive: dict[tuple[Any, Any], int] = {}   # (device, address) -> block row
        self.levels: dict[int, float] = {}   # live-bytes track -> its last value written
        take_nul_replaced()

    def add(self, piece: Trace, start: int | None, until: int | None,
            copies: np.ndarray = _NONE, context: np.ndarray = _NONE,
            reading: Diagnostics | None = None) -> None:
        """Write ``piece``, the trace of the window [``start``, ``until``) (``None``: open;
        the window after it starts at ``until``); ``copies``: its instant rows that copy an
        earlier piece's (the allocations carried in), ``context``: its slice rows that copy
        an earlier piece's (slices open at its start): written there, not again;
        ``reading``: the piece's reading diagnostics to count (default: all of them)."""
        first = self.whole is None
        whole = self.whole = self.whole or self._whole_from(piece)
        view = self._view(piece)
        real = len(whole.tracks)
        if self.nesting is None:
            self.nesting = WindowedNesting(view)
        else:
            self.nesting.go_on_with(view)
        ghosts = self.nesting.still_open()
        own = np.setdiff1d(np.arange(len(view.slices)), context)
        instants = np.setdiff1d(np.arange(len(view.instants)), copies)
        with paused_gc():
            self.nesting.place(own, instants, until)
        self.written.extend(view.diagnostics)
        view.metadata = dataclasses.replace(view.metadata, diagnostics=Diagnostics())
        view.slices = _with_ghosts(view.slices, *ghosts)
        view.flows = self._flows_among(view.flows, context)
        self.lanes += view.tracks[real + len(self.lanes):]   # (made in this piece)
        ids = self._ids(view)
        self._shift(piece, first)
        self._describe(view, ids)
        counters = self._counter_rows(view, start)
        with paused_gc():
            encoder = _EventEncoder(view, ids, self.offset, whole=False,
                                    flow_base=len(whole.flows))
            encoder.use(*_window_order(view, own, len(piece.slices), until, instants,
                                       counters))
            for lo, hi in encoder.chunks(CHUNK_SEQUENCE):
                for part in encoder.pieces(lo, hi, self.sequence):
                    self.out.write(part)
                self.sequence += 1
            self.reversed += encoder.open_flows.reversed_ids(view.diagnostics)
        self.written.extend(view.diagnostics)
        whole.diagnostics.extend(piece.diagnostics if reading is None else reading)
        _add_flow_labels(whole, piece.strings.strings, view.flows)
        self._join_memory(piece, start)
        whole.stats.extend(piece.stats)

    def note(self, code: str, count: int) -> None:
        """Count ``count`` under the reading diagnostic ``code`` (what cutting the input
        cost, in the model attribute)."""
        if self.whole is not None:
            self.whole.diagnostics.add(code, count=count)

    def finish(self) -> Diagnostics:
        """Write the model attribute; return the writer's diagnostics (as :func:`.writer.write`)."""
        whole = self.whole
        if whole is None:
            raise TraceconvError(f"{self.source_file}: no events to write")
        ids = self._ids(whole, count_into=self.written)
        _write_model(whole, ids, self.out, sorted(self.reversed))
        replaced = take_nul_replaced()
        self.written.add("perfetto.nul_replaced", count=len(replaced),
                         example=repr(min(replaced)) if replaced else None)
        return self.written

    # -- the pieces as one trace -----------------------------------------------------------

    def _whole_from(self, piece: Trace) -> Trace:
        """The trace the pieces add to: the first piece's metadata (named by the input, not
        the piece), nothing else yet."""
        meta = piece.metadata
        attributes = {k: v for k, v in meta.attributes.items() if k != _SPLIT_KEY}
        whole = Trace(dataclasses.replace(meta, source_file=self.source_file,
                                          attributes=attributes, diagnostics=Diagnostics()))
        return whole

    def _shift(self, piece: Trace, first: bool) -> None:
        """With the first piece, the trace attributes and the clock, and the shift that makes
        every time at least 0 (the earliest events are the first piece's)."""
        assert self.whole is not None
        bounds = piece.time_range
        if not first:
            if bounds is not None and bounds[0] + self.offset < 0:
                raise TraceconvError(f"{self.source_file}: a piece starts before the time the "
                                     "first one was shifted by (events before the first step)")
            return
        self.offset = max(0, -int(bounds[0])) if bounds is not None else 0
        self.out.write(b"".join(frame(p) for p in _preamble_packets(
            self.whole, self.offset, None if bounds is None else bounds[0])))
        if self.offset:
            self.written.add("perfetto.time_shifted", example=f"shifted by {self.offset} ns")

    def _view(self, piece: Trace) -> Trace:
        """A view of ``piece`` on the whole trace's track list: its slices', instants' and
        counters' tracks renumbered (its own copies), its processes and tracks added to
        the whole where new."""
        assert self.whole is not None
        processes = [self._process_id(p) for p in piece.processes]
        tracks = np.zeros(len(piece.tracks), dtype=np.int32)
        for track in piece.tracks:   # (a lane's home comes first in a trace's list)
            parent = None if track.parent is None else int(tracks[track.parent])
            tracks[track.id] = self._track_id(track, processes[track.process], parent)
        view = track_view(piece)
        real = len(self.whole.tracks)
        view.processes = self.whole.processes
        view.tracks = [*self.whole.tracks, *(dataclasses.replace(lane, id=real + k)
                                             for k, lane in enumerate(self.lanes))]
        view.counters = copy.copy(piece.counters)
        view.counters.track = copy.copy(piece.counters.track)
        for table in (view.slices, view.instants, view.counters):
            column = np.frombuffer(table.track, dtype=np.int32)
            if len(column):
                column[:] = tracks[column]
        return view

    def _process_id(self, process: Any) -> int:
        assert self.whole is not None
        key = (process.name, process.kind, process.pid, tuple(process.labels))
        found = self.processes.get(key)
        if found is None:
            found = self.processes[key] = self.whole.add_process(
                process.name, kind=process.kind, pid=process.pid,
                sort_index=process.sort_index, labels=list(process.labels))
        return found

    def _track_id(self, track: Any, process: int, parent: int | None) -> int:
        assert self.whole is not None
        key = (process, track.name, track.kind, track.tid, parent, track.unit)
        found = self.tracks.get(key)
        if found is None:
            found = self.tracks[key] = self.whole.add_track(
                track.name, process=process, kind=track.kind, tid=track.tid,
                sort_index=track.sort_index, unit=track.unit, description=track.description,
                parent=parent)
        return found

    def _ids(self, trace: Trace, count_into: Diagnostics | None = None) -> TrackIds:
        """The uuids, pids and tids of ``trace`` (the whole, or a piece's view: the whole's
        tracks, then the lanes, each lane with the uuid of its place in :attr:`lanes`,
        past every track's); what choosing them counts goes to ``count_into``, once, at
        the end."""
        assert self.whole is not None
        quiet = trace.derived()
        quiet.metadata = dataclasses.replace(self.whole.metadata, diagnostics=Diagnostics())
        ids = assign_ids(quiet)
        real = len(self.whole.tracks)
        for k in range(len(trace.tracks) - real):
            ids.track_uuid[real + k] = ids.base + 2 * (LANE_IDS + k) + 2
        if count_into is not None:
            count_into.extend(quiet.diagnostics)
        return ids

    def _describe(self, view: Trace, ids: TrackIds) -> None:
        """The descriptors of the processes and tracks not described yet."""
        payloads = descriptor_payloads(view, ids, processes_from=self.processes_described,
                                       described=self.described)
        tail = uint_field(_SEQUENCE_ID, SEQ_DESCRIPTORS)
        self.out.write(b"".join(frame(bytes_field(TRACK_DESCRIPTOR, p) + tail)
                                for p in payloads))
        self.processes_described = len(view.processes)
        self.described.update(ids.track_uuid)

    def _flows_among(self, flows: Any, context: np.ndarray) -> Any:
        """``flows`` but those bound to a slice copied in for context (in the whole trace
        bound to the slice itself, written with an earlier piece: counted as cut)."""
        if not len(context) or not len(flows):
            return flows
        source, target = flows.numpy_view("source"), flows.numpy_view("target")
        lost = np.isin(source, context) | np.isin(target, context)
        if not lost.any():
            return flows
        self.note("stream.flows_cut", int(lost.sum()))
        kept = copy.copy(flows)
        for name, typecode in (("source", "q"), ("target", "q"), ("category", "i"),
                               ("name", "i")):
            values = flows.numpy_view(name)[~lost]
            setattr(kept, name, array(typecode, values.astype(typecode).tobytes()))
        return kept

    def _counter_rows(self, view: Trace, start: int | None) -> np.ndarray:
        """The piece's counter samples but those its live-bytes counters got at its start
        for the blocks carried in: the level the track already has."""
        assert self.whole is not None
        counters = view.counters
        rows = np.arange(len(counters))
        tracks, values = counters.numpy_view("track"), counters.numpy_view("value")
        live = np.array([t.kind is TrackKind.COUNTER and t.description == LIVE_BYTES_DESCRIPTION
                         for t in self.whole.tracks], dtype=bool)
        keep = np.ones(len(rows), dtype=bool)
        if start is not None and len(rows):
            at_start = np.flatnonzero(live[tracks] & (counters.numpy_view("ts") == start))
            for row in at_start.tolist():
                track = int(tracks[row])
                if track in self.levels and self.levels[track] == values[row]:
                    keep[row] = False
        for at in np.flatnonzero(live[tracks]).tolist():   # (the last value of each)
            self.levels[int(tracks[at])] = float(values[at])
        self.written.add("stream.carried_level_not_repeated", count=int((~keep).sum()))
        return rows[keep]

    def _join_memory(self, piece: Trace, start: int | None) -> None:
        """Add the piece's memory blocks to the whole's, a block carried in from an earlier
        piece (allocated at this one's start while alive at the cut) joined to that one."""
        assert self.whole is not None
        blocks, memory = piece.memory, self.whole.memory
        if not len(blocks):
            return
        devices, device_codes = blocks.coded("device")
        addresses = blocks.numbers("address").tolist()
        alloc, alloc_known = blocks.numbers("alloc_ns"), blocks.known("alloc_ns")
        free, free_known = blocks.numbers("free_ns"), blocks.known("free_ns")
        keys = [(devices[c], a) for c, a in zip(device_codes.tolist(), addresses, strict=True)]
        new = np.ones(len(blocks), dtype=bool)
        if start is not None and self.alive:
            # a copy carried in (allocated at the start), or a free the piece could not
            # pair (its allocation is an earlier piece's): the block alive at the cut
            joining = np.flatnonzero(~alloc_known | (alloc == start))
            joining = joining[np.lexsort((~free_known[joining], free[joining]))]
            for row in joining.tolist():
                row_of_whole = self.alive.pop(keys[row], None)
                if row_of_whole is None:
                    continue
                new[row] = False
                if free_known[row]:
                    memory.set(row_of_whole, "free_ns", int(free[row]))
                else:
                    self.alive[keys[row]] = row_of_whole
        picked = np.flatnonzero(new)
        first = len(memory)
        numbers = {name: blocks.numbers(name)[picked] for name in ("address", "size")}
        for name, times, known in (("alloc_ns", alloc, alloc_known),
                                   ("free_ns", free, free_known)):
            numbers[name] = np.ma.array(times[picked], mask=~known[picked])
        coded = {}
        for name in CODED:
            distinct, codes = blocks.coded(name)
            coded[name] = (distinct, codes[picked])
        args = blocks.column("args")
        memory.extend_columns(numbers, coded, [args[row] for row in picked.tolist()])
        for k, row in enumerate(picked.tolist()):
            if not free_known[row]:
                self.alive[keys[row]] = first + k
        self.whole.diagnostics.add("stream.memory_blocks_joined",
                                   count=int(len(blocks) - len(picked)))


def _with_ghosts(slices: Any, tracks: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> Any:
    """``slices`` (a view's own table) and after its rows one per slice carried open into
    this window (its track as placed, start and duration): rows whose END only is written
    here, so that it is ordered among this window's events."""
    if not len(tracks):
        return slices
    table = copy.copy(slices)
    for name, typecode, extra in (("track", "i", tracks), ("start", "q", starts),
                                  ("dur", "q", ends - starts),
                                  ("name", "i", np.zeros(len(tracks))),
                                  ("category", "i", np.zeros(len(tracks)))):
        column = array(typecode, getattr(slices, name))
        column.frombytes(np.asarray(extra, dtype=column.typecode).tobytes())
        setattr(table, name, column)
    return table


def _window_order(view: Trace, own: np.ndarray, piece_rows: int, until: int | None,
                  instants: np.ndarray, counters: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The window's events in write order: the BEGINs of the piece's own slices ``own``
    and the ENDs that fall before ``until`` (own slices and those carried in, the rows
    after the piece's ``piece_rows``), the instants ``instants`` and the counter samples ``counters``."""
    slices = view.slices
    rows = np.arange(len(slices))
    start = slices.numpy_view("start")
    ends = clamped_ends(start, slices.numpy_view("dur"))
    with_begin = np.zeros(len(rows), dtype=bool)
    with_begin[own] = True
    with_end = np.ones(len(rows), dtype=bool) if until is None else ends < until
    carried = rows >= piece_rows
    wanted = with_begin | (with_end & (with_begin | carried))
    return window_event_order(view, rows[wanted], with_begin[wanted], with_end[wanted],
                              instants, counters)


def _add_flow_labels(whole: Trace, strings: list[str], flows: Any) -> None:
    """The piece's flows ``flows`` (its string table ``strings``), as labels (category and
    name) only: the attribute lists every flow's, in id order."""
    if not len(flows):
        return
    intern = whole.strings.intern
    for column in ("category", "name"):
        used, at = np.unique(flows.numpy_view(column), return_inverse=True)
        mapped = np.array([intern(strings[i]) for i in used.tolist()], dtype=np.int32)
        getattr(whole.flows, column).frombytes(mapped[at].tobytes())
    for column in ("source", "target"):
        getattr(whole.flows, column).frombytes(np.full(len(flows), -1, np.int64).tobytes())


"""The TrackEvent protobuf writer: hand-encoded packets, streamed in chunks.

Layout of the file (all packets are ``Trace.packet``, field 1):

* sequence 1: trace attributes, a ClockSnapshot linking BOOTTIME to REALTIME when the
  trace clock is the Unix epoch (so per-rank files line up when opened together), and
  every TrackDescriptor. Descriptors get their own sequence because trace_processor ties
  a sequence that carries a thread descriptor to that thread.
* sequences 2, 3, ...: the events in time order, about half a million per sequence. The
  first packet of each clears the incremental state and interns the event names and
  categories the sequence uses; argument names are interned just before the first event
  that uses them; every later packet says it needs the incremental state. Sequences are
  cut only between distinct timestamps, and since each has its own interning, they can be
  encoded by several forked processes at once (``workers=N``).

Packets are built many at a time, not one by one: per kind of event and per argument key
set, every number in them (timestamp, lengths, track uuid, name and category iids, numeric
arguments) is packed with numpy (:func:`~.wire.pack_rows`), and text or list arguments
(:mod:`.annotation_columns`) and flow ids are joined on.

Timestamps are the model's integer ns on the default clock (BOOTTIME); a trace with
negative times is shifted to start at 0 (recorded in diagnostics and trace attributes).

A trace of more than :data:`WINDOW_SLICES` slices is written window by window
(:func:`_write_windows`): the same packets in the same layout, except that each time window's
events make sequences of their own, and only one window's event arrays are alive at a time.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import BinaryIO

import numpy as np

from ...gcpause import paused_gc
from ...model import Diagnostics, Trace, TrackKind
from ...model.nesting import Timeline, clamped_ends, nested_view_timeline, track_view
from ...model.nesting_windows import WindowedNesting
from ...version import __version__
from . import model_attribute
from .annotation_columns import ColumnEncoder
from .annotations import ArgEncoder
from .descriptors import TrackIds, assign_ids, descriptor_payloads
from .flow_fields import FlowFields
from .ordering import BEGIN, COUNTER, END, INSTANT, event_order, window_event_order
from .wire import (
    LENGTH,
    Part,
    add_nul_replaced,
    bytes_field,
    pack_rows,
    part_sizes,
    string_field,
    tag,
    take_nul_replaced,
    uint_field,
    varint,
    varint_size_column,
)

SEQ_DESCRIPTORS, SEQ_EVENTS = 1, 2
CHUNK_EVENTS = 1 << 16        # events between argument-name interning packets
CHUNK_SEQUENCE = 1 << 19      # events per packet sequence (each has its own interning)
WINDOW_SLICES = 1 << 17       # above: a trace is written window by window, of about this many
WINDOW_BLOCK = 1 << 20        # times given their window number together (int64 temporaries)
BOOTTIME, REALTIME = 6, 1
# TracePacket fields.
TIMESTAMP, CLOCK_SNAPSHOT, SEQUENCE_ID, TRACK_EVENT, INTERNED_DATA, SEQUENCE_FLAGS = (
    8, 6, 10, 11, 12, 13)
TRACK_DESCRIPTOR, TRACE_ATTRIBUTES = 60, 126
CLEARED, NEEDS = 1, 2
# TrackEvent types.
TYPE_BEGIN, TYPE_END, TYPE_INSTANT, TYPE_COUNTER = 1, 2, 3, 4

_FLOW_ID, _TERMINATING_FLOW_ID = b"\xf9\x02", b"\x81\x03"       # fields 47, 48 (fixed64)
_INT_COUNTER, _DOUBLE_COUNTER = b"\xf0\x01", b"\xe1\x02"        # fields 30, 44


def frame(packet: bytes) -> bytes:
    """One TracePacket framed as a ``Trace.packet`` entry.

    >>> frame(b"\\x50\\x01")
    b'\\n\\x02P\\x01'
    """
    return b"\x0a" + varint(len(packet)) + packet


def write(trace: Trace, out: BinaryIO, *, workers: int = 1,
          window_slices: int = WINDOW_SLICES) -> Diagnostics:
    """Write ``trace`` as a Perfetto TrackEvent protobuf trace to the binary stream ``out``;
    returns what the writer repaired or left out (``trace`` itself is not changed).

    Partially overlapping and too-deep slices are written on lane tracks of a view
    (:func:`~traceconv.model.nesting.nested_view`), so every slice arrives. Option
    ``workers`` (int, default 1): forked processes that encode the event sequences in
    parallel (Linux; it trades memory for time, see :func:`_worker_count`). A trace of more
    than ``window_slices`` slices is written window by window (:func:`_write_windows`):
    the same trace, in a fraction of the memory (``workers`` is then 1).

    >>> import io; buf = io.BytesIO()
    >>> trace = Trace(); p = trace.add_process("python", pid=7)
    >>> _ = trace.add_slice(trace.add_track("main", process=p, tid=7), 0, 5, "step")
    >>> len(write(trace, buf)), buf.getvalue()[:1]
    (0, b'\\n')
    """
    take_nul_replaced()   # (what an earlier, failed write left is not this one's)
    diagnostics = (_write_windows(trace, out, window_slices) if len(trace.slices) > window_slices
                   else _write_whole(trace, out, workers))
    replaced = take_nul_replaced()
    diagnostics.add("perfetto.nul_replaced", count=len(replaced),
                    example=repr(min(replaced)) if replaced else None)
    return diagnostics


def _write_whole(trace: Trace, out: BinaryIO, workers: int) -> Diagnostics:
    """:func:`write` with all events in memory at once."""
    view, timeline = nested_view_timeline(trace)
    ids = assign_ids(view)
    offset = _time_offset(view)
    out.write(b"".join(frame(p) for p in _header_packets(view, ids, offset)))
    with paused_gc():
        encoder = _EventEncoder(view, ids, offset, timeline)
        del timeline   # (the events are in the encoder's order: the sort's columns go)
        _write_events(encoder, out, _worker_count(workers))
        reversed_flows = encoder.open_flows.reversed_ids(view.diagnostics)
        del encoder    # (its per-event arrays go before the model attribute is made)
    _write_model(trace, ids, out, reversed_flows)
    return view.diagnostics


def _write_model(trace: Trace, ids: TrackIds, out: BinaryIO, reversed_flows: list[int]
                 ) -> None:
    """The trace attribute that says what Perfetto has no words for (``reversed_flows``:
    the ids of the flows whose target came first in the file): its text grows with
    the memory blocks, so it is made twice, a piece at a time, instead of held: once for
    its size (the packet's length comes first), once to write."""
    size = sum(map(len, model_attribute.encode(trace, ids.base, reversed_flows)))
    key = string_field(1, model_attribute.ATTRIBUTE)
    value = b"\x1a" + varint(size)   # (string field 3: the text)
    entry = b"\x0a" + varint(len(key) + len(value) + size)   # TraceAttributes.attribute
    attributes = tag(TRACE_ATTRIBUTES, LENGTH)
    body = len(entry) + len(key) + len(value) + size
    tail = uint_field(SEQUENCE_ID, SEQ_DESCRIPTORS)
    packet = len(attributes) + len(varint(body)) + body + len(tail)
    out.write(b"\x0a" + varint(packet) + attributes + varint(body) + entry + key + value)
    for piece in model_attribute.encode(trace, ids.base, reversed_flows):
        out.write(piece)
    out.write(tail)


def _write_windows(trace: Trace, out: BinaryIO, window_slices: int) -> Diagnostics:
    """:func:`write`, one time window of about ``window_slices`` slice starts after the
    other: the nesting repair places each window's slices and instants carrying only the
    slices still open (:class:`~traceconv.model.nesting_windows.WindowedNesting`), then each
    window's events (BEGINs of the slices starting in it, ENDs of those ending in it,
    instants, counter samples) are put in order (:func:`~.ordering.window_event_order`)
    and encoded as sequences of their own. Per slice, only its two window numbers are held
    (8 bytes); the rest is one window's."""
    view = track_view(trace)
    slices = view.slices
    starts = slices.numpy_view("start")
    cuts = _window_cuts(starts, window_slices)
    begin_window = _window_of(cuts, starts)
    instant_window = _window_of(cuts, view.instants.numpy_view("ts"))
    nesting = WindowedNesting(view)
    with paused_gc():
        for k in range(len(cuts) + 1):
            nesting.place(np.flatnonzero(begin_window == k), np.flatnonzero(instant_window == k),
                          until=int(cuts[k]) if k < len(cuts) else None)
    ids = assign_ids(view)
    offset = _time_offset(view)
    out.write(b"".join(frame(p) for p in _header_packets(view, ids, offset)))
    end_window = _window_of(cuts, starts, slices.numpy_view("dur"))
    counter_window = _window_of(cuts, view.counters.numpy_view("ts"))
    sequence = SEQ_EVENTS
    with paused_gc():
        encoder = _EventEncoder(view, ids, offset, whole=False)
        for k in range(len(cuts) + 1):
            begins, ends = begin_window == k, end_window == k
            rows = np.flatnonzero(begins | ends)
            encoder.use(*window_event_order(view, rows, begins[rows], ends[rows],
                                            np.flatnonzero(instant_window == k),
                                            np.flatnonzero(counter_window == k)))
            del begins, ends, rows
            for lo, hi in encoder.chunks(CHUNK_SEQUENCE):
                for piece in encoder.pieces(lo, hi, sequence):
                    out.write(piece)
                sequence += 1
        reversed_flows = encoder.open_flows.reversed_ids(view.diagnostics)
        del encoder
    _write_model(trace, ids, out, reversed_flows)
    return view.diagnostics


def _window_cuts(starts: np.ndarray, window_slices: int) -> np.ndarray:
    """Times that cut the slice starts into windows of about ``window_slices`` each
    (quantiles of a sample; equal starts stay in one window).

    >>> _window_cuts(np.arange(10), 4).tolist(), _window_cuts(np.zeros(10, np.int64), 4).tolist()
    ([3, 6], [])
    """
    windows = -(-len(starts) // max(window_slices, 1))
    if windows <= 1:
        return np.zeros(0, dtype=np.int64)
    sample = np.sort(starts[::max(1, len(starts) // (64 * windows))])
    cuts = sample[(np.arange(1, windows) * len(sample)) // windows]
    return np.unique(cuts[cuts > sample[0]])


def _window_of(cuts: np.ndarray, times: np.ndarray, dur: np.ndarray | None = None
               ) -> np.ndarray:
    """Per time (per slice end, ``times + dur``, when ``dur`` is given), the number of its
    window, as int32, made a block at a time (a trace of 10^7 slices: no int64 arrays of
    them all).

    >>> _window_of(np.array([10, 20]), np.array([5, 10, 25])).tolist()
    [0, 1, 2]
    >>> _window_of(np.array([10, 20]), np.array([5, 10]), np.array([5, 10])).tolist()
    [1, 2]
    """
    found = np.empty(len(times), dtype=np.int32)
    for lo in range(0, len(times), WINDOW_BLOCK):
        part = slice(lo, lo + WINDOW_BLOCK)
        at = times[part] if dur is None else clamped_ends(times[part], dur[part])
        found[part] = np.searchsorted(cuts, at, "right")
    return found


def _worker_count(requested: object) -> int:
    """Processes that encode events: ``workers=`` when given, else 1.

    Not more by default: a forked worker touches the reference counts of the args dicts it
    encodes, so copy-on-write duplicates those pages. On the 1 M-event Kineto trace two
    workers cost 12.5 CPU-s against 6.8 in one process (2 cores, both busy), and each worker
    can grow towards the parent's size."""
    return 1 if requested is None else max(1, int(requested))  # type: ignore[call-overload]


_SHARED: _EventEncoder | None = None   # what forked workers encode from


def _encode_shared(job: tuple[int, int, int]) -> tuple[bytes, set[str]]:
    """A worker's sequence, and the strings in it written with a NUL replaced."""
    assert _SHARED is not None
    return _SHARED.encode(*job), take_nul_replaced()


def _write_events(encoder: _EventEncoder, out: BinaryIO, workers: int) -> None:
    """Chunks become sequences 2, 3, ... encoded in order, or by forked workers that
    inherit the encoder (no pickling of the trace) and hand back bytes in order."""
    global _SHARED
    size = CHUNK_SEQUENCE if workers == 1 else max(
        CHUNK_EVENTS, min(CHUNK_SEQUENCE, -(-len(encoder.ts) // (4 * workers))))
    jobs = [(lo, hi, SEQ_EVENTS + k) for k, (lo, hi) in enumerate(encoder.chunks(size))]
    if workers == 1 or len(jobs) == 1 or "fork" not in multiprocessing.get_all_start_methods():
        for job in jobs:
            for piece in encoder.pieces(*job):
                out.write(piece)
        return
    _SHARED = encoder
    try:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(min(workers, len(jobs)), mp_context=context) as pool:
            for data, texts in pool.map(_encode_shared, jobs):
                out.write(data)
                add_nul_replaced(texts)   # (a worker's own count dies with it)
    finally:
        _SHARED = None


def _time_offset(trace: Trace) -> int:
    """What to add to every timestamp so that none is negative (proto timestamps are uint64)."""
    bounds = trace.time_range
    if bounds is None or bounds[0] >= 0:
        return 0
    trace.diagnostics.add("perfetto.time_shifted", example=f"shifted by {-bounds[0]} ns")
    return -bounds[0]


def _header_packets(trace: Trace, ids: TrackIds, offset: int) -> list[bytes]:
    seq = uint_field(SEQUENCE_ID, SEQ_DESCRIPTORS)
    bounds = trace.time_range
    return [*_preamble_packets(trace, offset, None if bounds is None else bounds[0]),
            *(bytes_field(TRACK_DESCRIPTOR, d) + seq for d in descriptor_payloads(trace, ids))]


def _preamble_packets(trace: Trace, offset: int, first_ts: int | None) -> list[bytes]:
    """The trace attributes, and a ClockSnapshot at ``first_ts`` (the earliest event's
    time) when the trace clock is the Unix epoch."""
    seq = uint_field(SEQUENCE_ID, SEQ_DESCRIPTORS)
    packets = [bytes_field(TRACE_ATTRIBUTES, _attributes(trace, offset)) + seq]
    if trace.metadata.clock == "unix epoch" and first_ts is not None:
        t0 = first_ts + offset
        clocks = b"".join(bytes_field(1, uint_field(1, clock) + uint_field(2, t0))
                          for clock in (BOOTTIME, REALTIME))
        packets.append(uint_field(TIMESTAMP, t0) + bytes_field(CLOCK_SNAPSHOT, clocks) + seq)
    return packets


def _attributes(trace: Trace, offset: int) -> bytes:
    """TraceAttributes: where the trace came from (shown as ``trace_attribute.*`` metadata)."""
    meta = trace.metadata
    values: dict[str, object] = {
        "source_format": meta.source_format, "source_version": meta.source_version,
        "source_file": meta.source_file, "framework": meta.framework, "rank": meta.rank,
        "clock": meta.clock, "converter": f"traceconv {__version__}",
        "time_shift_ns": offset or None}
    entries = []
    for key, value in values.items():
        if value is None or value == "":
            continue
        body = string_field(1, key) + (uint_field(2, value) if isinstance(value, int)
                                       else string_field(3, str(value)))
        entries.append(bytes_field(1, body))
    return b"".join(entries)


def _framed(fields: list[Part], rest: list[list[bytes]], stamps: np.ndarray,
            tail: bytes) -> list[list[bytes]]:
    """One framed TracePacket per row: timestamp, ``tail`` (sequence id and flags), then
    the TrackEvent made of ``fields`` (:func:`~.wire.pack_rows` parts) and ``rest`` (per-row
    bytes). As columns: a row's packet is its bytes in each column, one after the other
    (they are joined once, with the whole chunk, not row by row)."""
    rows = len(stamps)
    field_sizes = [part_sizes(part) for part in fields]   # each once, for both uses
    size = np.zeros(rows, dtype=np.int64)
    for part_size in field_sizes:
        size += part_size
    for piece in rest:
        size += np.fromiter(map(len, piece), dtype=np.int64, count=rows)
    stamp_sizes, size_sizes = varint_size_column(stamps), varint_size_column(size)
    body = size + (1 + len(tail) + 1) + stamp_sizes + size_sizes
    packed = pack_rows([b"\x0a", body.astype(np.uint64), bytes([TIMESTAMP << 3]), stamps,
                        tail + b"\x5a", size.astype(np.uint64), *fields], rows,
                       [1, varint_size_column(body), 1, stamp_sizes, len(tail) + 1, size_sizes,
                        *field_sizes])
    return [packed, *rest]


def _in_event_order(packets: list[tuple[np.ndarray, list[list[bytes]]]],
                    events: int) -> list[bytes]:
    """The pieces of ``packets`` ((event positions, columns of pieces) per group), each
    event's pieces at its place: a slot per piece, after the pieces of earlier events.

    >>> _in_event_order([(np.array([2, 0]), [[b"c", b"a"], [b"C", b"A"]]),
    ...                  (np.array([1]), [[b"b"]])], 3)
    [b'a', b'A', b'b', b'c', b'C']
    """
    pieces = np.zeros(events, dtype=np.int64)
    for at, columns in packets:
        pieces[at] = len(columns)
    first = np.cumsum(pieces) - pieces
    ordered = np.empty(int(pieces.sum()), dtype=object)
    for at, columns in packets:
        slots = first[at]
        for k, column in enumerate(columns):
            ordered[slots + k if k else slots] = column
    return ordered.tolist()


class _EventEncoder:
    """What every chunk of events needs, computed once; worker processes inherit it."""

    def __init__(self, trace: Trace, ids: TrackIds, offset: int,
                 timeline: Timeline | None = None, *, whole: bool = True,
                 flow_base: int = 0) -> None:
        self.trace = trace
        self.flow_base = flow_base   # (flow ids are flow row + 1 + this)
        counter = [t.kind is TrackKind.COUNTER for t in trace.tracks]
        # TrackEvent type and track_uuid; slices and instants only on slice tracks,
        # counter values only on counter tracks
        self.type_field = {kind: b"\x48" + varint(code) + b"\x58" for kind, code in (
            (BEGIN, TYPE_BEGIN), (END, TYPE_END), (INSTANT, TYPE_INSTANT),
            (COUNTER, TYPE_COUNTER))}
        self.uuid = np.array(ids.track_uuid, dtype=np.uint64)
        self.is_counter = np.array(counter, dtype=bool)
        self.columns = {kind: table.numpy_view("track") for kind, table in (
            (BEGIN, trace.slices), (INSTANT, trace.instants), (COUNTER, trace.counters))}
        self.offset = offset
        self.misplaced = self._count_misplaced()
        self.ts = self.codes = np.zeros(0, dtype=np.int64)
        self.flows = self._flow_fields()
        if whole:   # (else the events come window by window: use())
            self.use(*event_order(trace, timeline))
        values = trace.counters.numpy_view("value")
        self.counter_values = values
        self.counter_integral = (np.isfinite(values) & (values == np.round(values))
                                 & (np.abs(values) < 2**62))
        self.names = {kind: table.numpy_view("name") for kind, table in (
            (BEGIN, trace.slices), (INSTANT, trace.instants))}
        self.categories = {kind: table.numpy_view("category") for kind, table in (
            (BEGIN, trace.slices), (INSTANT, trace.instants))}
        args = self.arg_encoder = ArgEncoder()   # one for both tables: iids fixed per file
        self.args = {BEGIN: ColumnEncoder(trace.slices.args, args),
                     INSTANT: ColumnEncoder(trace.instants.args, args)}

    def use(self, ts: np.ndarray, codes: np.ndarray) -> None:
        """Encode the events ``codes`` at times ``ts`` (write order) from now on."""
        self.ts, self.codes = self._written(ts, codes) if self.misplaced else (ts, codes)
        self.ts += self.offset
        self.open_flows.place(self.codes)

    def _written(self, ts: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The events that can be written: slices and instants on slice tracks, counter
        values on counter tracks (the others are counted by :meth:`_count_misplaced`)."""
        if not len(codes):
            return ts, codes
        kinds, rows = codes & 3, codes >> 2
        keep = np.zeros(len(codes), dtype=bool)
        for kind, table_kind, wanted in ((BEGIN, BEGIN, False), (END, BEGIN, False),
                                         (INSTANT, INSTANT, False), (COUNTER, COUNTER, True)):
            at = kinds == kind
            keep[at] = self.is_counter[self.columns[table_kind][rows[at]]] == wanted
        return ts[keep], codes[keep]

    def chunks(self, size: int) -> list[tuple[int, int]]:
        """Event ranges of about ``size``, cut only where the timestamp changes, so that
        events that tie stay in one sequence (and so in file order for trace_processor)."""
        n = len(self.ts)
        cuts = [0]
        while cuts[-1] + size < n:
            at = cuts[-1] + size
            at += int(np.searchsorted(self.ts[at:], self.ts[at - 1], "right"))
            if at >= n:
                break
            cuts.append(at)
        return list(zip(cuts, [*cuts[1:], n], strict=True)) if n else []

    def encode(self, lo: int, hi: int, seq: int) -> bytes:
        """Events ``lo:hi`` as one packet sequence ``seq`` (its own interning)."""
        return b"".join(self.pieces(lo, hi, seq))

    def pieces(self, lo: int, hi: int, seq: int) -> Iterator[bytes]:
        """:meth:`encode`, CHUNK_EVENTS at a time (what is written is not held)."""
        tail = uint_field(SEQUENCE_ID, seq) + uint_field(SEQUENCE_FLAGS, NEEDS)
        yield b"".join(self._interned_event_strings(self.codes[lo:hi], seq))
        interned: set[tuple[int, str]] = set()   # argument names of this sequence
        for sub in range(lo, hi, CHUNK_EVENTS):
            end = min(hi, sub + CHUNK_EVENTS)
            packets = self._packets(self.codes[sub:end], self.ts[sub:end], tail)
            # names interned just before the first events that use them
            new = [n for n in self.args[BEGIN].take_names() + self.args[INSTANT].take_names()
                   if n not in interned]
            interned.update(new)
            yield b"".join(frame(_interned(3, items) + tail)
                           for items in _batches(sorted(set(new)), 4096))
            yield b"".join(packets)

    def _packets(self, codes: np.ndarray, stamps: np.ndarray, tail: bytes) -> list[bytes]:
        """The framed TracePackets of the events ``codes`` at ``stamps``, in that order, as
        pieces to join: what is a number (times, lengths, uuids, ids, numeric args) packed
        with numpy, kind by kind and key set by key set, the rest (text and list args,
        flows) following as pieces of their own."""
        kinds, rows = codes & 3, codes >> 2
        stamps = stamps.astype(np.uint64)
        packets: list[tuple[np.ndarray, list[list[bytes]]]] = []   # (events, columns)
        for kind in (BEGIN, INSTANT, END, COUNTER):
            at = np.flatnonzero(kinds == kind)
            if not len(at):
                continue
            picked = rows[at]
            if kind == END:
                track = self.columns[BEGIN][picked]
                packets.append((at, _framed([self.type_field[kind], self.uuid[track]], [],
                                            stamps[at], tail)))
                continue
            if kind == COUNTER:
                for subset, value in self._counter_value_parts(picked):
                    track = self.columns[COUNTER][picked[subset]]
                    packets.append((at[subset], _framed(
                        [self.type_field[kind], self.uuid[track], *value], [],
                        stamps[at[subset]], tail)))
                continue
            names, categories = self.names[kind], self.categories[kind]
            for group, lead, rest in self.args[kind].parts(picked):
                chosen = picked[group]
                # uint64 for pack_rows, per group (not whole columns up front)
                name = names[chosen].astype(np.uint64)
                category = categories[chosen].astype(np.uint64)
                fields = [self.type_field[kind], self.uuid[self.columns[kind][chosen]],
                          (b"\x50", name, name != 0), (b"\x18", category, category != 0), *lead]
                flows = self.flows.of(chosen) if kind == BEGIN else None
                if isinstance(flows, np.ndarray) and not rest:
                    fields.append(flows)   # the same number in every row: packed with numpy
                elif flows is not None:
                    rest = [*rest, flows if isinstance(flows, list) else
                            flows.view(f"V{flows.shape[1]}").ravel().tolist()]
                packets.append((at[group], _framed(fields, rest, stamps[at[group]], tail)))
        return _in_event_order(packets, len(codes))

    def _count_misplaced(self) -> int:
        """Slices/instants on counter tracks and values on other tracks cannot be shown:
        how many there are (0 in a well-made trace: then no event needs leaving out)."""
        trace, is_counter = self.trace, self.is_counter
        if not len(is_counter):
            return 0
        wrong = {
            "perfetto.slice_on_counter_track":
                int(is_counter[trace.slices.numpy_view("track")].sum()),
            "perfetto.instant_on_counter_track":
                int(is_counter[trace.instants.numpy_view("track")].sum()),
            "perfetto.counter_on_slice_track":
                int((~is_counter[trace.counters.numpy_view("track")]).sum()),
        }
        for code, count in wrong.items():
            trace.diagnostics.add(code, count=count)
        return sum(wrong.values())

    def _interned_event_strings(self, codes: np.ndarray, seq: int) -> list[bytes]:
        """The first packet(s) of a sequence: clear the state, intern the names and
        categories its events use."""
        trace = self.trace
        strings = trace.strings.strings
        kinds, rows = codes & 3, codes >> 2
        begins, instants = rows[kinds == BEGIN], rows[kinds == INSTANT]
        used = {}
        for column in ("name", "category"):   # string ids, so marks instead of a sort
            marked = np.zeros(len(strings), dtype=bool)
            marked[trace.slices.numpy_view(column)[begins]] = True
            marked[trace.instants.numpy_view(column)[instants]] = True
            used[column] = np.flatnonzero(marked)
        entries = [(2, [(i, strings[i]) for i in used["name"].tolist() if i]),
                   (1, [(i, strings[i]) for i in used["category"].tolist() if i])]
        packets: list[bytes] = []
        for field, items in entries:
            packets += (_interned(field, batch) for batch in _batches(items, 4096))
        seq_field = uint_field(SEQUENCE_ID, seq)
        flags = [uint_field(SEQUENCE_FLAGS, CLEARED | NEEDS), uint_field(SEQUENCE_FLAGS, NEEDS)]
        return [frame(p + seq_field + flags[i > 0]) for i, p in enumerate(packets or [b""])]

    def _flow_fields(self) -> FlowFields:
        """flow_ids on the source slice's BEGIN, terminating_flow_ids on the target's: per
        slice row, its fields in flow order (all computed with numpy)."""
        trace = self.trace
        source, target = trace.flows.numpy_view("source"), trace.flows.numpy_view("target")
        n = len(trace.slices)
        linked = (source >= 0) & (source < n) & (target >= 0) & (target < n) & (source != target)
        tracks = self.columns[BEGIN]
        linked[linked] &= ~(self.is_counter[tracks[source[linked]]]
                            | self.is_counter[tracks[target[linked]]])
        kept = np.flatnonzero(linked)
        dropped = len(source) - len(kept)
        source, target = source[kept], target[kept]
        starts = trace.slices.numpy_view("start")
        # trace_processor takes the earliest event as the source; a flow that runs
        # backwards in time cannot terminate before it starts, so it stays open
        forward = starts[target] > starts[source]
        self.open_flows = _OpenFlows(kept[~forward] + self.flow_base, source[~forward],
                                     target[~forward], starts)
        # two fields per flow (tag + fixed64 id), ordered by slice row, then flow order
        rows = np.concatenate([source, target])
        tags = np.concatenate([np.zeros(len(kept), bool), forward])   # True: terminating
        fields = np.empty((len(rows), 10), dtype=np.uint8)
        fields[:, :2] = np.where(tags[:, None], np.frombuffer(_TERMINATING_FLOW_ID, np.uint8),
                                 np.frombuffer(_FLOW_ID, np.uint8))
        fields[:, 2:] = np.tile(kept.astype("<u8") + (1 + self.flow_base), 2
                                ).view(np.uint8).reshape(-1, 8)
        order = np.lexsort((np.tile(np.arange(len(kept)), 2), rows))
        trace.diagnostics.add("perfetto.flow_dropped", count=dropped)
        return FlowFields(fields[order], rows[order], n)

    def _counter_value_parts(self, rows: np.ndarray) -> list[tuple[np.ndarray, list[Part]]]:
        """The counter value fields of counter rows ``rows``, as :func:`~.wire.pack_rows`
        parts: per subset of ``rows`` (positions), ``counter_value`` for integral samples,
        ``double_counter_value`` for the others."""
        values, integral = self.counter_values[rows], self.counter_integral[rows]
        whole, fraction = np.flatnonzero(integral), np.flatnonzero(~integral)
        doubles = values[fraction].astype("<f8").view(np.uint8).reshape(len(fraction), 8)
        subsets = [(whole, [_INT_COUNTER, values[whole].astype(np.int64).astype(np.uint64)]),
                   (fraction, [_DOUBLE_COUNTER, doubles])]
        return [(subset, parts) for subset, parts in subsets if len(subset)]


class _OpenFlows:
    """The flows written without a terminating id (their target starts no later than their
    source), and which of them trace_processor reads reversed, taking the endpoint it meets
    first for the source: those whose target starts earlier, and those whose two ends start
    at one time when the target's BEGIN comes first in the file, found as the events are
    put in write order (:meth:`place`, per window when the trace is written window by
    window; the ends of a tie are in one window).

    >>> flows = _OpenFlows(np.array([0, 1, 2]), np.array([5, 6, 8]), np.array([4, 7, 9]),
    ...                    np.array([0, 0, 0, 0, 1, 2, 3, 3, 3, 3]))
    >>> flows.place(np.array([7, 6, 8, 9]) * 4)   # BEGINs of slices 7, 6, 8 and 9
    >>> flows.reversed_ids(Diagnostics())   # (row 0: 4 starts first; row 1: 7 comes first)
    [1, 2]
    """

    def __init__(self, rows: np.ndarray, source: np.ndarray, target: np.ndarray,
                 starts: np.ndarray) -> None:
        tie = starts[target] == starts[source]
        self.reversed = [rows[~tie]]
        self.ties = (rows[tie], source[tie], target[tie])

    def place(self, codes: np.ndarray) -> None:
        """Note the ties whose two BEGINs are among the events ``codes`` (write order)."""
        rows, source, target = self.ties
        if not len(rows):
            return
        at = np.flatnonzero((codes & 3) == BEGIN)
        if not len(at):
            return
        begun = codes[at] >> 2
        order = np.argsort(begun, kind="stable")
        begun, at = begun[order], at[order]

        def position(ends: np.ndarray) -> np.ndarray:   # (-1: not among these events)
            k = np.minimum(np.searchsorted(begun, ends), len(begun) - 1)
            return np.where(begun[k] == ends, at[k], -1)

        first, then = position(source), position(target)
        both = (first >= 0) & (then >= 0)
        self.reversed.append(rows[both & (then < first)])
        self.ties = (rows[~both], source[~both], target[~both])

    def reversed_ids(self, diagnostics: Diagnostics) -> list[int]:
        """The flow ids (row + 1) of the flows read reversed, counted in ``diagnostics``."""
        ids = (np.sort(np.concatenate(self.reversed)) + 1).tolist()
        diagnostics.add("perfetto.flow_backwards", count=len(ids))
        return ids


def _batches(items: list[tuple[int, str]], size: int) -> list[list[tuple[int, str]]]:
    return [items[lo:lo + size] for lo in range(0, len(items), size)]


def _interned(field: int, items: list[tuple[int, str]]) -> bytes:
    """An ``interned_data`` field with (iid, name) entries in table ``field``."""
    body = b"".join(bytes_field(field, uint_field(1, iid) + string_field(2, name))
                    for iid, name in items)
    return bytes_field(INTERNED_DATA, body)


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

Timestamps are the model's integer ns on the default clock (BOOTTIME); a trace with
negative times is shifted to start at 0 (recorded in diagnostics and trace attributes).
"""

from __future__ import annotations

import multiprocessing
import struct
from concurrent.futures import ProcessPoolExecutor
from typing import BinaryIO

import numpy as np

from ... import __version__
from ...analysis.nesting import nested_view
from ...gcpause import paused_gc
from ...model import Diagnostics, Trace, TrackKind
from .annotations import ArgEncoder
from .descriptors import TrackIds, assign_ids, descriptor_payloads
from .ordering import BEGIN, COUNTER, END, INSTANT, event_order
from .wire import bytes_field, string_field, uint_field, varint

SEQ_DESCRIPTORS, SEQ_EVENTS = 1, 2
CHUNK_EVENTS = 1 << 16        # events between argument-name interning packets
CHUNK_SEQUENCE = 1 << 19      # events per packet sequence (each has its own interning)
BOOTTIME, REALTIME = 6, 1
# TracePacket fields.
TIMESTAMP, CLOCK_SNAPSHOT, SEQUENCE_ID, TRACK_EVENT, INTERNED_DATA, SEQUENCE_FLAGS = (
    8, 6, 10, 11, 12, 13)
TRACK_DESCRIPTOR, TRACE_ATTRIBUTES = 60, 126
CLEARED, NEEDS = 1, 2
# TrackEvent types.
TYPE_BEGIN, TYPE_END, TYPE_INSTANT, TYPE_COUNTER = 1, 2, 3, 4

_PACKET_HEADER = [b"\x0a" + varint(n) for n in range(1 << 14)]   # Trace.packet + length
_EVENT_HEADER = [b"\x5a" + varint(n) for n in range(1 << 14)]    # TracePacket.track_event
_FLOW_ID, _TERMINATING_FLOW_ID = b"\xf9\x02", b"\x81\x03"       # fields 47, 48 (fixed64)
_INT_COUNTER, _DOUBLE_COUNTER = b"\xf0\x01", b"\xe1\x02"        # fields 30, 44
_FIXED64 = struct.Struct("<Q").pack
_DOUBLE = struct.Struct("<d").pack


def frame(packet: bytes) -> bytes:
    """One TracePacket framed as a ``Trace.packet`` entry.

    >>> frame(b"\\x50\\x01")
    b'\\n\\x02P\\x01'
    """
    return b"\x0a" + varint(len(packet)) + packet


def write(trace: Trace, out: BinaryIO, *, workers: int = 1) -> Diagnostics:
    """Write ``trace`` as a Perfetto TrackEvent protobuf trace to the binary stream ``out``;
    returns what the writer repaired or left out (``trace`` itself is not changed).

    Partially overlapping and too-deep slices are written on lane tracks of a view
    (:func:`~traceconv.analysis.nesting.nested_view`), so every slice arrives. Option
    ``workers`` (int, default 1): forked processes that encode the event sequences in
    parallel (Linux; it trades memory for time, see :func:`_worker_count`).

    >>> import io; buf = io.BytesIO()
    >>> trace = Trace(); p = trace.add_process("python", pid=7)
    >>> _ = trace.add_slice(trace.add_track("main", process=p, tid=7), 0, 5, "step")
    >>> len(write(trace, buf)), buf.getvalue()[:1]
    (0, b'\\n')
    """
    view = nested_view(trace)
    ids = assign_ids(view)
    offset = _time_offset(view)
    out.write(b"".join(frame(p) for p in _header_packets(view, ids, offset)))
    with paused_gc():
        encoder = _EventEncoder(view, ids, offset)
        _write_events(encoder, out, _worker_count(workers))
    return view.diagnostics


def _worker_count(requested: object) -> int:
    """Processes that encode events: ``workers=`` when given, else 1.

    Not more by default: a forked worker touches the reference counts of the args dicts it
    encodes, so copy-on-write duplicates those pages. On the 1 M-event Kineto trace two
    workers cost 12.5 CPU-s against 6.8 in one process (2 cores, both busy), and each worker
    can grow towards the parent's size."""
    return 1 if requested is None else max(1, int(requested))  # type: ignore[call-overload]


_SHARED: _EventEncoder | None = None   # what forked workers encode from


def _encode_shared(job: tuple[int, int, int]) -> bytes:
    assert _SHARED is not None
    return _SHARED.encode(*job)


def _write_events(encoder: _EventEncoder, out: BinaryIO, workers: int) -> None:
    """Chunks become sequences 2, 3, ... encoded in order, or by forked workers that
    inherit the encoder (no pickling of the trace) and hand back bytes in order."""
    global _SHARED
    size = CHUNK_SEQUENCE if workers == 1 else max(
        CHUNK_EVENTS, min(CHUNK_SEQUENCE, -(-len(encoder.ts) // (4 * workers))))
    jobs = [(lo, hi, SEQ_EVENTS + k) for k, (lo, hi) in enumerate(encoder.chunks(size))]
    if workers == 1 or len(jobs) == 1 or "fork" not in multiprocessing.get_all_start_methods():
        for job in jobs:
            out.write(encoder.encode(*job))
        return
    _SHARED = encoder
    try:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(min(workers, len(jobs)), mp_context=context) as pool:
            for data in pool.map(_encode_shared, jobs):
                out.write(data)
    finally:
        _SHARED = None


def _time_offset(trace: Trace) -> int:
    """What to add to every timestamp so that none is negative (proto timestamps are uint64)."""
    bounds = trace.time_range
    if bounds is None or bounds[0] >= 0:
        return 0
    trace.diagnostics.add("perfetto.time_shifted", "the trace has negative timestamps; all "
                          "times were shifted so that the first is 0", kind="repaired",
                          example=f"shifted by {-bounds[0]} ns")
    return -bounds[0]


def _header_packets(trace: Trace, ids: TrackIds, offset: int) -> list[bytes]:
    seq = uint_field(SEQUENCE_ID, SEQ_DESCRIPTORS)
    packets = [bytes_field(TRACE_ATTRIBUTES, _attributes(trace, offset)) + seq]
    bounds = trace.time_range
    if trace.metadata.clock == "unix epoch" and bounds is not None:
        t0 = bounds[0] + offset
        clocks = b"".join(bytes_field(1, uint_field(1, clock) + uint_field(2, t0))
                          for clock in (BOOTTIME, REALTIME))
        packets.append(uint_field(TIMESTAMP, t0) + bytes_field(CLOCK_SNAPSHOT, clocks) + seq)
    packets += [bytes_field(TRACK_DESCRIPTOR, d) + seq for d in descriptor_payloads(trace, ids)]
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


def _timestamp_fields(ts: np.ndarray) -> list[bytes]:
    """``TracePacket.timestamp`` fields for all timestamps at once (numpy varints)."""
    if not len(ts):
        return []
    values = ts.astype(np.uint64)
    sizes = np.ones(len(values), dtype=np.int64)
    for k in range(1, 10):
        sizes += values >= np.uint64(1 << (7 * k))
    matrix = np.zeros((len(values), 11), dtype=np.uint8)
    matrix[:, 0] = TIMESTAMP << 3
    for k in range(10):
        byte = ((values >> np.uint64(7 * k)) & np.uint64(0x7F)).astype(np.uint8)
        matrix[:, k + 1] = byte | np.where(k < sizes - 1, 0x80, 0).astype(np.uint8)
    keep = np.arange(11) <= sizes[:, None]
    blob = matrix[keep].tobytes()
    ends = np.cumsum(sizes + 1).tolist()
    starts = [0, *ends[:-1]] if ends else []   # a trace may hold no events (stats only)
    return [blob[a:b] for a, b in zip(starts, ends, strict=True)]


class _EventEncoder:
    """What every chunk of events needs, computed once; worker processes inherit it."""

    def __init__(self, trace: Trace, ids: TrackIds, offset: int) -> None:
        self.trace = trace
        counter = [t.kind is TrackKind.COUNTER for t in trace.tracks]
        uuid = [varint(u) for u in ids.track_uuid]
        kinds = (TYPE_BEGIN, TYPE_END, TYPE_INSTANT, TYPE_COUNTER)
        prefix = {k: [b"\x48" + varint(k) + b"\x58" + u for u in uuid] for k in kinds}
        # slices and instants only on slice tracks, counter values only on counter tracks
        self.begin = [None if c else p for c, p in zip(counter, prefix[TYPE_BEGIN], strict=True)]
        self.instant = [None if c else p
                        for c, p in zip(counter, prefix[TYPE_INSTANT], strict=True)]
        self.counter = [p if c else None
                        for c, p in zip(counter, prefix[TYPE_COUNTER], strict=True)]
        self.end_prefix = prefix[TYPE_END]
        self.is_counter = np.array(counter, dtype=bool)
        self._count_misplaced()
        self.ts, self.codes = event_order(trace)
        self.ts += offset
        self.flows = self._flow_fields()
        self.counter_values = self._counter_value_fields()
        self.names = [b"\x50" + varint(i) if i else b"" for i in range(len(trace.strings))]
        self.categories = [b"\x18" + varint(i) if i else b""
                           for i in range(len(trace.strings))]

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
        trace, codes = self.trace, self.codes[lo:hi]
        args = ArgEncoder()
        tail = uint_field(SEQUENCE_ID, seq) + uint_field(SEQUENCE_FLAGS, NEEDS)
        stamps = _timestamp_fields(self.ts[lo:hi])
        s, inst = trace.slices, trace.instants
        s_track, c_track = s.track, trace.counters.track
        # BEGINs and instants differ only in their columns, prefixes and flows
        # args are read from their compact form (key set + values): no dict per event
        named = {BEGIN: (s.track, s.name, s.category, s.args.key_set, s.args.start,
                         [(keys, len(keys)) for keys in s.args.key_sets], s.args.values,
                         self.begin, self.flows),
                 INSTANT: (inst.track, inst.name, inst.category, inst.args.key_set,
                           inst.args.start, [(keys, len(keys)) for keys in inst.args.key_sets],
                           inst.args.values, self.instant, {})}
        end = [_EVENT_HEADER[len(p)] + p + tail for p in self.end_prefix]
        begin, counter = self.begin, self.counter
        names, categories, counter_values = self.names, self.categories, self.counter_values
        encode_args = args.encode_items
        packet_header, event_header = _PACKET_HEADER, _EVENT_HEADER
        out = self._interned_event_strings(codes, seq)
        code_list = codes.tolist()
        for sub in range(0, len(code_list), CHUNK_EVENTS):
            parts: list[bytes] = []
            append = parts.append
            for stamp, code in zip(stamps[sub:sub + CHUNK_EVENTS],
                                   code_list[sub:sub + CHUNK_EVENTS], strict=True):
                row, kind = code >> 2, code & 3
                if kind == END:
                    if begin[s_track[row]] is None:
                        continue
                    body = stamp + end[s_track[row]]
                else:
                    if kind == COUNTER:
                        prefix = counter[c_track[row]]
                        if prefix is None:
                            continue
                        event = prefix + counter_values[row]
                    else:
                        (tracks, name_ids, cat_ids, key_set_ids, starts, key_sets, values,
                         prefixes, links) = named[kind]
                        prefix = prefixes[tracks[row]]
                        if prefix is None:
                            continue
                        key_set = key_set_ids[row]
                        encoded = b""
                        if key_set >= 0:
                            keys, n = key_sets[key_set]
                            if n:
                                first = starts[row]
                                encoded = encode_args(zip(keys, values[first:first + n], strict=True))
                        event = b"".join((prefix, names[name_ids[row]], categories[cat_ids[row]],
                                          encoded, links.get(row, b"")))
                    size = len(event)
                    body = b"".join((stamp, event_header[size] if size < 16384 else
                                     b"\x5a" + varint(size), event, tail))
                size = len(body)
                append(packet_header[size] if size < 16384 else b"\x0a" + varint(size))
                append(body)
            new_names = args.take_new_names()
            if new_names:
                out.append(frame(_interned(3, new_names) + tail))
            out.append(b"".join(parts))
        return b"".join(out)

    def _count_misplaced(self) -> None:
        """Slices/instants on counter tracks and values on other tracks cannot be shown."""
        trace, is_counter = self.trace, self.is_counter
        if not len(is_counter):
            return
        wrong = {
            "perfetto.slice_on_counter_track": int(is_counter[trace.slices.numpy("track")].sum()),
            "perfetto.instant_on_counter_track":
                int(is_counter[trace.instants.numpy("track")].sum()),
            "perfetto.counter_on_slice_track":
                int((~is_counter[trace.counters.numpy("track")]).sum()),
        }
        for code, count in wrong.items():
            trace.diagnostics.add(code, "events on a track of the wrong kind were not written "
                                  "(Perfetto would drop or misdraw them)", kind="dropped",
                                  count=count)

    def _interned_event_strings(self, codes: np.ndarray, seq: int) -> list[bytes]:
        """The first packet(s) of a sequence: clear the state, intern the names and
        categories its events use."""
        trace = self.trace
        strings = trace.strings.strings
        kinds, rows = codes & 3, codes >> 2
        begins, instants = rows[kinds == BEGIN], rows[kinds == INSTANT]
        used = {column: np.unique(np.concatenate([trace.slices.numpy(column)[begins],
                                                  trace.instants.numpy(column)[instants]]))
                for column in ("name", "category")}
        entries = [(2, [(i, strings[i]) for i in used["name"].tolist() if i]),
                   (1, [(i, strings[i]) for i in used["category"].tolist() if i])]
        packets: list[bytes] = []
        for field, items in entries:
            for lo in range(0, len(items), 4096):
                packets.append(_interned(field, items[lo:lo + 4096]))
        seq_field = uint_field(SEQUENCE_ID, seq)
        flags = [uint_field(SEQUENCE_FLAGS, CLEARED | NEEDS), uint_field(SEQUENCE_FLAGS, NEEDS)]
        return [frame(p + seq_field + flags[i > 0]) for i, p in enumerate(packets or [b""])]

    def _flow_fields(self) -> dict[int, bytes]:
        """flow_ids on the source slice's BEGIN, terminating_flow_ids on the target's."""
        trace = self.trace
        flows = trace.flows
        n = len(trace.slices)
        fields: dict[int, list[bytes]] = {}
        starts, tracks, begin = trace.slices.start, trace.slices.track, self.begin
        dropped = backwards = 0
        for index, (src, dst) in enumerate(zip(flows.source, flows.target, strict=True)):
            if (not (0 <= src < n and 0 <= dst < n) or src == dst
                    or begin[tracks[src]] is None or begin[tracks[dst]] is None):
                dropped += 1
                continue
            flow_id = _FIXED64(index + 1)
            # trace_processor takes the earliest event as the source; a flow that runs
            # backwards in time cannot terminate before it starts, so it stays open
            forward = starts[dst] > starts[src]
            backwards += not forward
            fields.setdefault(src, []).append(_FLOW_ID + flow_id)
            fields.setdefault(dst, []).append((_TERMINATING_FLOW_ID if forward else _FLOW_ID)
                                              + flow_id)
        trace.diagnostics.add("perfetto.flow_dropped", "flows that link a slice to itself, to "
                              "a missing slice or to one not written were not written",
                              kind="dropped",
                              count=dropped)
        trace.diagnostics.add("perfetto.flow_backwards", "flows whose target starts no later "
                              "than their source: Perfetto draws them from the earlier slice",
                              kind="note", count=backwards)
        return {row: b"".join(parts) for row, parts in fields.items()}

    def _counter_value_fields(self) -> list[bytes]:
        """``counter_value`` for integral samples, ``double_counter_value`` otherwise."""
        values = self.trace.counters.numpy("value")
        integral = np.isfinite(values) & (values == np.round(values)) & (np.abs(values) < 2**62)
        return [_INT_COUNTER + varint(int(v)) if whole else _DOUBLE_COUNTER + _DOUBLE(v)
                for v, whole in zip(values.tolist(), integral.tolist(), strict=True)]


def _interned(field: int, items: list[tuple[int, str]]) -> bytes:
    """An ``interned_data`` field with (iid, name) entries in table ``field``."""
    body = b"".join(bytes_field(field, uint_field(1, iid) + string_field(2, name))
                    for iid, name in items)
    return bytes_field(INTERNED_DATA, body)


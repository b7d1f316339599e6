"""The ``.pftrace`` reader: Perfetto TrackEvent protobuf into the model, streamed in blocks.

The file is read 4 MiB at a time and cut into packets (``Trace.packet`` fields); the
fields of a block's packets, of their TrackEvents and of their debug annotations are
decoded for the whole block at once with numpy (:mod:`..protowire.columns`). What is rare and
stateful goes packet by packet, in file order: interned data, sequence flags and defaults,
track descriptors, clock snapshots, trace attributes.

Incremental state is kept per trusted packet sequence as trace_processor keeps it: a packet
with ``SEQ_INCREMENTAL_STATE_CLEARED`` starts a new generation of interned names,
categories, argument names and string values (and drops the sequence's defaults); a packet
that needs the state before its sequence ever cleared it is skipped, as trace_processor
skips it (counted). Timestamps on another clock are moved onto the trace clock (BOOTTIME
unless a ClockSnapshot names another) through the ClockSnapshots; on an incremental clock
(the Perfetto SDK's delta timestamps) they add up from the latest snapshot's reading.

At the end, events are replayed in trace_processor's order (by timestamp, ties in file
order): BEGIN/END pairs per track become slices, flow ids become links, counter values
take their track's multiplier (and, for incremental counters, each sequence's running
sum), and typed TrackEvent fields become args in front of the debug annotations (:mod:`.typed_fields`:
their bytes are kept while the blocks are read, and decoded once the trace's extension
descriptors are all known). Events with a timestamp at or above 2^63 (negative as int64,
as rocprofv3 writes a few) are dropped, as trace_processor drops them, and counted. Every kind of packet not modelled (ftrace,
system info, profiles, ...) is counted in the diagnostics under its field name.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Any, BinaryIO

import numpy as np
from google.protobuf.message import DecodeError
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import (
    ClockSnapshot,
    InternedData,
    TraceAttributes,
    TracePacket,
    TracePacketDefaults,
    TrackDescriptor,
)

from ...errors import InputError
from ...io import Source
from ...model import Metadata, Trace
from ...model.block_record import add_blocks
from ...model.builder import TraceBuilder
from ...model.graph_record import restore_graph
from ...model.metadata_record import carry_diagnostics, restore_metadata
from ...model.stats_record import restore_stats
from ...model.typed_arrays import extend_typed
from .._proto import Utf8Repair
from ..protowire.columns import (
    FieldRows,
    Fields,
    WireError,
    as_int64,
    decode_fields,
    in_message_order,
    padded,
)
from . import model_attribute
from .android_log import ANDROID_LOG
from .annotation_bytes import name_and_number
from .annotation_values import (
    COMPOSITE,
    NAME,
    NAME_IID,
    SCALARS,
    SPELLED,
    SPELLED_MARK,
    STRING,
    STRING_IID,
    decode_annotation,
    holds_proto,
)
from .arg_store import OBJECT, TEXT, ArgValues
from .byte_ranges import distinct_ranges
from .dotted_names import DottedNames, NestedGroup
from .event_kinds import ASYNC, COMPLETE, COUNTER, KEPT, LEGACY_PHASES, TYPES
from .frame_timeline import FRAME_TIMELINE_EVENT
from .framing import frame_block, whole_packet
from .ftrace import FTRACE_EVENTS, PROCESS_STATS, PROCESS_TREE, SystemPackets
from .legacy_async import LegacyIds
from .packet_defaults import PacketDefaults, SequenceThreads
from .sys_stats import SYS_STATS
from .track_tree import TrackMap, build_tracks, merge_descriptor
from .typed_fields import READ, Collected, Decoder, Interned, Schema, extension_files, merge
from .wire import FIXED64, LENGTH, VARINT

READ_BYTES = 1 << 20   # (a block of small events: its temporaries take about 45 times its size)
BOOTTIME = 6
INT64_LIMIT = np.uint64(1 << 63)
# TracePacket fields that describe the packet rather than carry its data.
TIMESTAMP, SEQUENCE_ID, TRACK_EVENT, INTERNED, FLAGS = 8, 10, 11, 12, 13
CLOCK_SNAPSHOT, CLEARED_OLD, CLOCK_ID, DEFAULTS, DESCRIPTOR, ATTRIBUTES = 6, 41, 58, 59, 60, 126
EXTENSION_DESCRIPTOR = 72
HEADER_FIELDS = np.array([3, TIMESTAMP, SEQUENCE_ID, INTERNED, FLAGS, CLEARED_OLD, 42, CLOCK_ID,
                          DEFAULTS, 79, 87, 98])
STATEFUL = (DESCRIPTOR, CLOCK_SNAPSHOT, ATTRIBUTES, EXTENSION_DESCRIPTOR)
# packets trace_processor reads before their timestamp (a clock snapshot, the config, trace
# stats, sync markers, compressed bundles, descriptors of extensions, service events, remote
# clock syncs): their timestamp is no step of an incremental clock
UNTIMED = (CLOCK_SNAPSHOT, 33, 35, 36, 50, 72, 69, 107)
SYSTEM = (FTRACE_EVENTS, PROCESS_TREE, PROCESS_STATS, SYS_STATS,   # (see .system_model)
          FRAME_TIMELINE_EVENT, ANDROID_LOG)
CLEARED, NEEDS = 1, 2
# TrackEvent fields and types.
CATEGORY_IIDS, ANNOTATIONS, LEGACY, TYPE, NAME_IID_FIELD, TRACK_UUID = 3, 4, 6, 9, 10, 11
EXTRA_VALUES, CATEGORIES, NAME_FIELD, COUNTER_VALUE, EXTRA_TRACKS = 12, 22, 23, 30, 31
FLOW_OLD, TERMINATING_OLD, DOUBLE_VALUE, EXTRA_DOUBLE_TRACKS, EXTRA_DOUBLE_VALUES = (
    36, 42, 44, 45, 46)
FLOW, TERMINATING = 47, 48
_PACKET_FIELDS = {f.number: f.name for f in TracePacket.DESCRIPTOR.fields}
_PROTO_VALUE_TAG = b"\x72"   # DebugAnnotation.proto_value (14, length-delimited)
VALUE_FIELDS = np.array(sorted(SCALARS | COMPOSITE))
_UINT64 = (1 << 64) - 1
_INTERNED_TABLES = {1: "event_categories", 2: "event_names", 3: "debug_annotation_names",
                    27: "debug_annotation_value_type_names",
                    29: "debug_annotation_string_values"}


class _Interned:
    """The interned strings of every (sequence, generation), looked up many at a time; each
    string is also given a dense id (its place in :attr:`texts`)."""

    def __init__(self) -> None:
        self.entries: dict[str, dict[int, str]] = {t: {} for t in _INTERNED_TABLES.values()}
        self._sorted: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self.texts: list[str] = [""]
        self._ids: dict[str, int] = {"": 0}

    @staticmethod
    def key(generation: int, iid: int) -> int:
        return (generation << 64) | iid   # (iids have 64 bits: 2**32 + 5 is not 5)

    def add(self, table: str, generation: int, iid: int, value: str) -> None:
        self.entries[table][self.key(generation, iid)] = value
        self._sorted.pop(table, None)

    def text_id(self, text: str) -> int:
        found = self._ids.get(text)
        if found is None:
            found = self._ids[text] = len(self.texts)
            self.texts.append(text)
        return found

    def lookup(self, table: str, generation: np.ndarray, iid: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
        """The text ids of (generation, iid) pairs (0, the empty text, where unknown) and
        which are known."""
        if table not in self._sorted:
            items = sorted(self.entries[table].items())
            iids = np.array([k & _UINT64 for k, _ in items], dtype=np.uint64)
            # an iid has 64 bits and a generation more: the key searched is the generation
            # and the iid's rank among the distinct iids (both fit 32 bits)
            distinct = np.unique(iids)
            keys = (np.array([k >> 64 for k, _ in items], dtype=np.uint64) << np.uint64(32)) \
                | np.searchsorted(distinct, iids).astype(np.uint64)
            self._sorted[table] = (keys, distinct, np.array(
                [self.text_id(v) for _, v in items] + [0], dtype=np.int64))
        keys, distinct, ids = self._sorted[table]
        iid = iid.astype(np.uint64)
        rank = np.searchsorted(distinct, iid)
        found = rank < len(distinct)
        found[found] = distinct[rank[found]] == iid[found]
        wanted = (generation.astype(np.uint64) << np.uint64(32)) | rank.astype(np.uint64)
        at = np.searchsorted(keys, wanted)
        known = found & (at < len(keys))
        known[known] = keys[at[known]] == wanted[known]
        at[~known] = len(keys)
        return ids[at], known

    def strings(self, table: str, generation: np.ndarray, iid: np.ndarray) -> list[str]:
        texts = self.texts
        return [texts[i] for i in self.lookup(table, generation, iid)[0].tolist()]


class _Events:
    """The track events kept so far, one entry per event, as typed columns."""

    def __init__(self) -> None:
        self.ts = array("Q")
        self.clock = array("q")
        self.packet = array("q")        # the packet's place in the file (delta clocks)
        self.track = array("Q")
        self.type = array("b")
        self.name = array("i")
        self.category = array("i")
        # (of only the events that have one: few do)
        self.duration = array("q")      # per legacy complete event, in event order
        self.value = array("d")         # per counter event, in event order
        self.generation = array("q")    # ... and its sequence's incremental state then
        # args: per event its key set (-1: none) and where its values start in values
        self.arg_set = array("i")
        self.arg_start = array("q")
        self.values = ArgValues()
        self.key_sets: list[tuple[str, ...]] = []
        self.key_set_ids: dict[tuple[str, ...], int] = {}
        self.flows: list[np.ndarray] = []   # (event, id, terminating) triples per block
        self.async_ids = LegacyIds()    # per legacy async event

    def __len__(self) -> int:
        return len(self.type)

    def positions(self, events: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The key-set numbers of ``events`` (-1 for none) and the places of their values
        in :attr:`values`, one event after another.

        >>> events = _Events(); events.key_sets.append(("a", "b"))
        >>> events.arg_set.extend([0, -1, 0]); events.arg_start.extend([4, 0, 0])
        >>> [column.tolist() for column in events.positions(np.array([2, 1, 0]))]
        [[0, -1, 0], [0, 1, 4, 5]]
        """
        arg_set = np.frombuffer(self.arg_set, dtype=np.int32) if len(self.arg_set) else \
            np.zeros(0, dtype=np.int32)
        arg_start = np.frombuffer(self.arg_start, dtype=np.int64) if len(self.arg_start) \
            else np.zeros(0, dtype=np.int64)
        widths = np.array([len(k) for k in self.key_sets] + [0], dtype=np.int64)
        sets = arg_set[events].astype(np.int64)
        sizes = widths[np.where(sets >= 0, sets, len(self.key_sets))]
        firsts = np.repeat(arg_start[events] - np.cumsum(sizes) + sizes, sizes)
        return sets, firsts + np.arange(int(sizes.sum()))

    def release(self, *columns: str) -> None:
        """Empty ``columns``, which the model step is done with: their memory is free
        again before the args' values are made (the read's peak). The model step is the
        events' last use.

        >>> events = _Events(); events.ts.append(5); events.release("ts"); len(events.ts)
        0
        """
        for name in columns:
            setattr(self, name, array(getattr(self, name).typecode))


class _Steps:
    """Timestamps of packets other than track events, on sequence-scoped clocks."""

    def __init__(self) -> None:
        self.packet, self.ts, self.clock = array("q"), array("q"), array("q")

    def on(self, clock: int) -> tuple[np.ndarray, np.ndarray]:
        """The packets and timestamps on ``clock`` (a clock key), in file order."""
        keys = np.frombuffer(self.clock, dtype=np.int64) if len(self.clock) else \
            np.zeros(0, np.int64)
        rows = np.flatnonzero(keys == clock)
        return (np.frombuffer(self.packet, dtype=np.int64)[rows] if len(rows) else rows,
                np.frombuffer(self.ts, dtype=np.int64)[rows] if len(rows) else rows)


class PftraceReader:
    """Feed it a stream (:meth:`feed`), then :meth:`finish` gives the trace."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.trace = TraceBuilder(Metadata(source_format="perfetto", clock="perfetto trace clock"))
        self.diagnostics = self.trace.diagnostics
        self.text = Utf8Repair(self.diagnostics, "perfetto")   # names and texts: str, counted
        self.interned = _Interned()
        self.generations: dict[tuple[int, int], int] = {}   # (sequence, clears) -> id
        self.cleared: dict[int, int] = {}                    # sequence -> clears so far
        self.defaults = PacketDefaults()
        self.threads = SequenceThreads()
        self.descriptors: dict[int, TrackDescriptor] = {}
        self.snapshots: list[dict[int, int]] = []
        self.trace_clock = BOOTTIME
        # incremental (delta) clocks: clock key -> (packet, base reading in ns, ns per unit)
        self.incremental_clocks: dict[int, list[tuple[int, int, int]]] = {}
        # packets other than track events with a timestamp on a sequence's own clock: on an
        # incremental one each is a step too (Chrome puts one on each track descriptor)
        self.steps = _Steps()
        self.attributes: dict[str, Any] = {}
        self.events = _Events()
        self.packets = 0
        # per generation: annotation bytes -> the object index of its dict, array or JSON value
        self.annotation_cache: dict[int, dict[bytes, int]] = {}
        self.model_ids: list[int] = []   # interned text id -> the trace's string id
        self.dotted = DottedNames()   # (from the model attribute)
        self.nested_objects: list[int] = []   # object indexes of marked groups
        # object indexes (and generations) of annotation values holding a proto value
        self.proto_objects: list[tuple[int, int]] = []
        self.group_names: set[str] = set()    # and the names they came under
        self.system = SystemPackets(text=self.text)
        # typed TrackEvent fields (:mod:`.typed_fields`): decoded at the end, when the
        # trace's extension descriptors (Chrome writes them last) are all known
        self.typed = Collected()
        self.typed_interned = Interned()
        self.extension_files: list[Any] = []
        self.packet_kinds: dict[str, int] = {}   # packets per data field name, as met

    # -- reading --------------------------------------------------------------------------

    def feed(self, stream: BinaryIO) -> None:
        pending = b""
        consumed = 0   # file offset of pending[0]
        while True:
            block = stream.read(READ_BYTES)
            data = pending + block if pending else block
            framed = frame_block(data)   # the C parser finds the packets; else walk here
            if framed is None:
                walked = self._frame(data, consumed)
                framed = (np.array(walked[0], dtype=np.int64),
                          np.array(walked[1], dtype=np.int64), walked[2])
            starts, ends, cut = framed
            if len(starts):
                self._block(data, starts, ends, consumed)
            pending, consumed = data[cut:], consumed + cut
            if len(pending) > READ_BYTES // 2:   # (one packet longer than a block or so)
                pending = whole_packet(stream, pending, READ_BYTES)
            if not block:
                if pending:
                    self.diagnostics.add("perfetto.truncated", example=f"byte offset {consumed}")
                return

    def _frame(self, data: bytes, consumed: int) -> tuple[list[int], list[int], int]:
        """Where each complete packet of ``data`` lies, and where the first incomplete one
        starts. Raises InputError on a field other than ``Trace.packet``."""
        starts: list[int] = []
        ends: list[int] = []
        pos, size = 0, len(data)
        while pos < size:
            if data[pos] != 0x0A:
                raise InputError("not a Perfetto trace: expected a Trace.packet field",
                                 file=self.name, location=f"byte offset {consumed + pos}")
            cursor, length, shift = pos + 1, 0, 0
            while cursor < size:
                byte = data[cursor]
                length |= (byte & 0x7F) << shift
                cursor += 1
                if byte < 0x80:
                    break
                shift += 7
                if shift > 63:
                    raise InputError("not a Perfetto trace: a packet length runs over 10 "
                                     "bytes", file=self.name,
                                     location=f"byte offset {consumed + pos}")
            else:
                break
            if cursor + length > size:
                break
            starts.append(cursor)
            ends.append(cursor + length)
            pos = cursor + length
        return starts, ends, pos

    def _block(self, data: bytes, starts: np.ndarray, ends: np.ndarray, consumed: int) -> None:
        buf = padded(data)
        try:
            fields = decode_fields(buf, starts, ends)
        except WireError as exc:
            raise InputError(f"not a Perfetto trace: {exc}", file=self.name,
                             location=f"byte offset {consumed + exc.offset}") from None
        count = len(starts)
        first = self.packets
        self.packets += count
        sequence = fields.last_per_message(SEQUENCE_ID, VARINT, count)[0].astype(np.int64)
        flags = fields.last_per_message(FLAGS, VARINT, count)[0]
        cleared = ((flags & np.uint64(CLEARED)) != 0) | (
            fields.last_per_message(CLEARED_OLD, VARINT, count)[0] != 0)
        generation, valid = self._generations(sequence, cleared)
        needs = (flags & np.uint64(NEEDS)) != 0
        skipped = needs & ~valid
        self.diagnostics.add("perfetto.needs_incremental_state", count=int(skipped.sum()))
        content = fields.where_not_in(HEADER_FIELDS)
        kind = np.zeros(count, dtype=np.int64)
        kind[content.msg] = content.field
        kind[skipped] = -1
        self._count_unmodelled(kind)
        # the stateful packets, in file order
        interned = fields.where(INTERNED, LENGTH)
        defaults = fields.where(DEFAULTS, LENGTH)
        stateful = np.flatnonzero(np.isin(content.field, STATEFUL + SYSTEM))
        todo = sorted([(int(m), 0, int(o), int(n)) for m, o, n in zip(
            interned.msg, interned.offset, interned.length, strict=True)]
            + [(int(m), 1, int(o), int(n)) for m, o, n in zip(
                defaults.msg, defaults.offset, defaults.length, strict=True)]
            + [(int(content.msg[r]), 2, int(content.offset[r]), int(content.length[r]))
               for r in stateful.tolist()])
        bundles: list[tuple[int, int]] = []   # ftrace bundles, decoded together below
        packet_ts = fields.last_per_message(TIMESTAMP, VARINT, count)[0]
        packet_clock = fields.last_per_message(CLOCK_ID, VARINT, count)[0]
        for packet, what, offset, length in todo:
            if skipped[packet]:
                continue
            payload = data[offset:offset + length]
            try:
                if what == 0:
                    self._intern(int(generation[packet]), payload)
                elif what == 1:
                    self._defaults(int(generation[packet]), first + packet, payload)
                elif kind[packet] == FTRACE_EVENTS:
                    bundles.append((offset, offset + length))
                elif kind[packet] in SYSTEM:
                    self.system.add(int(kind[packet]), payload, int(packet_ts[packet]),
                                    int(packet_clock[packet]))
                else:
                    self._stateful(int(kind[packet]), payload, int(sequence[packet]),
                                   first + packet, bool(valid[packet]))
            except (DecodeError, WireError):
                self.diagnostics.add("perfetto.packet_decode",
                                     example=f"byte offset {consumed + offset}")
        if bundles:
            span = np.array(bundles, dtype=np.int64)
            damaged = self.system.add_bundles(data, buf, span[:, 0], span[:, 1])
            self.diagnostics.add("perfetto.packet_decode", count=damaged,
                                 example="an ftrace bundle" if damaged else None)
        ts, has_ts = fields.last_per_message(TIMESTAMP, VARINT, count)
        clock, has_clock = fields.last_per_message(CLOCK_ID, VARINT, count)
        self._steps(first, kind, ts, has_ts, clock, has_clock, sequence, generation)
        events = np.flatnonzero(kind == TRACK_EVENT)
        if len(events):
            rows = fields.where(TRACK_EVENT, LENGTH)
            body = np.zeros(count, dtype=np.int64)
            size = np.zeros(count, dtype=np.int64)
            body[rows.msg], size[rows.msg] = rows.offset, rows.length
            missing = ~has_ts[events]
            self.diagnostics.add("perfetto.event_without_timestamp", count=int(missing.sum()))
            events = events[~missing]
            self._track_events(data, buf, body[events], size[events], first + events,
                               ts[events], np.where(has_clock[events], clock[events], 0),
                               sequence[events], generation[events], consumed)
        self.defaults.end_block()
        self.threads.end_block()

    def _steps(self, first: int, kind: np.ndarray, ts: np.ndarray, has_ts: np.ndarray,
               clock: np.ndarray, has_clock: np.ndarray, sequence: np.ndarray,
               generation: np.ndarray) -> None:
        """Note the timestamps of packets that are not track events on a sequence's own
        clock (their own or the sequence's default), which step an incremental clock as
        the events do (as trace_processor reads them)."""
        rows = np.flatnonzero(has_ts & (kind != TRACK_EVENT) & (kind >= 0)
                              & ~np.isin(kind, UNTIMED))
        if not len(rows):
            return
        _, default_clock = self.defaults.of(first + rows, generation[rows])
        own = np.where(has_clock[rows], clock[rows], default_clock).astype(np.int64)
        on_sequence = own >= 64
        rows, own = rows[on_sequence], own[on_sequence]
        extend_typed(self.steps.packet, first + rows)
        extend_typed(self.steps.ts, ts[rows].astype(np.int64))
        extend_typed(self.steps.clock, (sequence[rows] << 32) | own)

    def _generations(self, sequence: np.ndarray, cleared: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
        """Per packet: the id of its (sequence, generation), and whether its sequence has
        had its state cleared at least once by then."""
        order = np.argsort(sequence, kind="stable")
        seq_sorted = sequence[order]
        count = np.cumsum(cleared[order].astype(np.int64))
        first = np.r_[True, seq_sorted[1:] != seq_sorted[:-1]]
        group = np.maximum.accumulate(np.where(first, np.arange(len(order)), 0))
        count -= (count - cleared[order])[group]
        heads = seq_sorted[first].tolist()
        carry = np.array([self.cleared.get(s, 0) for s in heads], dtype=np.int64)
        count += np.repeat(carry, np.diff(np.r_[np.flatnonzero(first), len(order)]))
        clears = np.empty(len(order), dtype=np.int64)
        clears[order] = count
        last = np.r_[np.flatnonzero(first)[1:], len(order)] - 1
        for s, c in zip(heads, count[last].tolist(), strict=True):
            self.cleared[s] = c
        pairs = sequence.astype(np.int64) * (1 << 32) + clears
        unique, inverse = np.unique(pairs, return_inverse=True)
        ids = np.array([self.generations.setdefault((int(p) >> 32, int(p) & 0xFFFFFFFF),
                                                    len(self.generations))
                        for p in unique.tolist()], dtype=np.int64)
        return ids[inverse.ravel()], clears > 0

    def _count_unmodelled(self, kind: np.ndarray) -> None:
        modelled = {0, -1, TRACK_EVENT, *STATEFUL, *SYSTEM}
        found, counts = np.unique(kind, return_counts=True)
        for number, count in zip(found.tolist(), counts.tolist(), strict=True):
            name = _PACKET_FIELDS.get(number, f"field {number}") if number >= 0 else \
                "packets needing incremental state never set"
            if number:
                self.packet_kinds[name] = self.packet_kinds.get(name, 0) + count
            if number not in modelled:
                self.diagnostics.add(f"perfetto.not_modelled.{name}", count=count)

    def _intern(self, generation: int, payload: bytes) -> None:
        interned = InternedData.FromString(payload)
        add = self.interned.add
        for number, table in _INTERNED_TABLES.items():
            for entry in getattr(interned, table):
                add(table, generation, entry.iid,
                    self.text(entry.str if number == 29 else entry.name))
        self.typed_interned.add(generation, interned, self.text)

    def _defaults(self, generation: int, packet: int, payload: bytes) -> None:
        defaults = TracePacketDefaults.FromString(payload)
        event = defaults.track_event_defaults
        track = event.track_uuid if event.HasField("track_uuid") else None
        clock = defaults.timestamp_clock_id if defaults.HasField("timestamp_clock_id") else None
        self.defaults.add(generation, packet, track, clock,
                          (tuple(event.extra_counter_track_uuids),
                           tuple(event.extra_double_counter_track_uuids)))

    def _stateful(self, kind: int, payload: bytes, sequence: int, packet: int,
                  valid: bool) -> None:
        """A stateful packet (``valid``: its sequence's incremental state is, having been
        cleared once)."""
        if kind == DESCRIPTOR:
            desc = TrackDescriptor.FromString(payload)
            if desc.HasField("uuid"):
                self.descriptors[desc.uuid] = merge_descriptor(
                    self.descriptors.get(desc.uuid), desc)
                # (the sequence's thread: trace_processor notes it only once the state
                # is valid)
                if valid and desc.thread.HasField("pid") and desc.thread.HasField("tid"):
                    self.threads.add(sequence, packet, desc.uuid)
        elif kind == EXTENSION_DESCRIPTOR:
            self.extension_files.extend(extension_files(payload))
        elif kind == CLOCK_SNAPSHOT:
            snapshot = ClockSnapshot.FromString(payload)
            clocks = {}
            for clock in snapshot.clocks:
                key = clock.clock_id if clock.clock_id < 64 else (sequence << 32) | clock.clock_id
                unit = clock.unit_multiplier_ns or 1
                reading = clock.timestamp * unit
                if reading >= 1 << 63 or unit >= 1 << 63:   # (uint64 fields: never negative)
                    self.diagnostics.add("perfetto.clock_beyond_int64", count=1,
                                         example=f"clock {clock.clock_id}: {clock.timestamp}"
                                         f" x {unit} ns")
                    continue
                clocks[key] = reading
                if clock.is_incremental:
                    self.incremental_clocks.setdefault(key, []).append((packet, reading, unit))
            self.snapshots.append(clocks)
            if snapshot.HasField("primary_trace_clock"):
                self.trace_clock = snapshot.primary_trace_clock
        else:
            for attribute in TraceAttributes.FromString(payload).attribute:
                self.attributes[self.text(attribute.key)] = (
                    attribute.long_value if attribute.HasField("long_value")
                    else self.text(attribute.string_value))

    # -- track events ---------------------------------------------------------------------

    def _track_events(self, data: bytes, buf: np.ndarray, body: np.ndarray, size: np.ndarray,
                      packet: np.ndarray, ts: np.ndarray, clock: np.ndarray,
                      sequence: np.ndarray, generation: np.ndarray, consumed: int) -> None:
        try:
            fields = decode_fields(buf, body, body + size)
        except WireError as exc:
            raise InputError(f"a TrackEvent is not wire format: {exc}", file=self.name,
                             location=f"byte offset {consumed + exc.offset}") from None
        count = len(body)
        kind, has_type = fields.last_per_message(TYPE, VARINT, count)
        kind = kind.astype(np.int64)
        kind[~np.isin(kind, TYPES)] = 0   # (no type of ours: the legacy phase may give one)
        track, has_track = fields.last_per_message(TRACK_UUID, VARINT, count)
        default_track, default_clock = self.defaults.of(packet, generation)
        track = np.where(has_track, track, default_track)
        # an event of no track (none given, or 0 with a legacy phase: Chrome's async events)
        # is on its sequence's thread, as trace_processor falls back to it
        fallback = np.flatnonzero((track == 0) & (~has_track | ~has_type))
        if len(fallback):
            track[fallback] = self.threads.of(packet[fallback], sequence[fallback])
        clock = np.where(clock > 0, clock, np.where(default_clock > 0, default_clock,
                                                    self.trace_clock)).astype(np.int64)
        duration = np.zeros(count, dtype=np.int64)
        async_start = len(self.events.async_ids)
        self._legacy(data, fields, kind, duration)
        names = self._names(data, fields, generation, count)
        categories = self._categories(data, fields, generation, count)
        values = self._counter_values(fields, count)
        kind[(kind == COUNTER) & np.isnan(values)] = 0
        unknown = ~np.isin(kind, KEPT)
        self.diagnostics.add("perfetto.event_type", count=int(unknown.sum()))
        base = len(self.events)
        keep = np.flatnonzero(~unknown)
        renumber = np.full(count, -1, dtype=np.int64)
        renumber[keep] = base + np.arange(len(keep))
        events = self.events
        clock_key = np.where(clock >= 64, (sequence << 32) | clock, clock)
        dropped = np.flatnonzero(unknown & (clock >= 64))   # (still a step of its clock)
        extend_typed(self.steps.packet, packet[dropped])
        extend_typed(self.steps.ts, ts[dropped].astype(np.int64))
        extend_typed(self.steps.clock, clock_key[dropped])
        for column, values_kept in ((events.ts, ts[keep]), (events.clock, clock_key[keep]),
                                    (events.packet, packet[keep]),
                                    (events.track, track[keep]), (events.type, kind[keep]),
                                    (events.name, names[keep]), (events.category,
                                                                 categories[keep]),
                                    (events.duration, duration[keep][kind[keep] == COMPLETE]),
                                    (events.value, values[keep][kind[keep] == COUNTER]),
                                    (events.generation,
                                     generation[keep][kind[keep] == COUNTER])):
            extend_typed(column, values_kept)
        self._args(data, buf, fields, generation, count, keep, consumed)
        events.async_ids.renumber(async_start, renumber)
        typed = fields.where_not_in(READ)   # (most events have none: one pass, no Python)
        if typed.rows:
            self.typed.add(data, typed, renumber, generation)
        self._flows(fields, renumber)
        self._extra_counters(fields, ts, clock_key, packet, generation)

    def _legacy(self, data: bytes, fields: Fields, kind: np.ndarray, duration: np.ndarray
                ) -> None:
        """Legacy events (TrackEvent.legacy_event): the phase gives the type, and 'X' its
        duration (µs); the ids of the async ones ('b', 'e', 'n') are kept by their message
        (renumbered once the events kept are known)."""
        legacy = fields.where(LEGACY, LENGTH)
        ids = self.events.async_ids
        for msg, offset, length in zip(legacy.msg.tolist(), legacy.offset.tolist(),
                                       legacy.length.tolist(), strict=True):
            if kind[msg]:
                continue
            event = TracePacket().track_event.LegacyEvent.FromString(data[offset:offset + length])
            kind[msg] = LEGACY_PHASES.get(event.phase, 0)
            duration[msg] = event.duration_us * 1000
            if kind[msg] in ASYNC:
                ids.add(msg, event, self.text)

    def _model_strings(self, ids: np.ndarray) -> np.ndarray:
        """Interned text ids as the trace's string ids."""
        model = self.model_ids
        texts = self.interned.texts
        if len(model) < len(texts):
            intern = self.trace.strings.intern
            model.extend(intern(t) for t in texts[len(model):])
        return np.asarray(model, dtype=np.int64)[ids]

    def _names(self, data: bytes, fields: Fields, generation: np.ndarray, count: int
               ) -> np.ndarray:
        """Each event's name as a model string id (interned name, or inline)."""
        out = np.zeros(count, dtype=np.int64)
        iids = fields.where(NAME_IID_FIELD, VARINT)
        if iids.rows:
            found, known = self.interned.lookup("event_names", generation[iids.msg], iids.value)
            out[iids.msg] = self._model_strings(found)
            self.diagnostics.add("perfetto.unknown_name_iid", count=int((~known).sum()))
        inline = fields.where(NAME_FIELD, LENGTH)
        intern = self.trace.strings.intern
        for msg, offset, length in zip(inline.msg.tolist(), inline.offset.tolist(),
                                       inline.length.tolist(), strict=True):
            out[msg] = intern(self.text.decode(data[offset:offset + length]))
        return out

    def _categories(self, data: bytes, fields: Fields, generation: np.ndarray, count: int
                    ) -> np.ndarray:
        """Each event's categories (joined with "," when several), as a string id."""
        out = np.zeros(count, dtype=np.int64)
        iids = in_message_order(fields.where(CATEGORY_IIDS, VARINT))
        inline = in_message_order(fields.where(CATEGORIES, LENGTH))
        if not iids.rows and not inline.rows:
            return out
        found, _ = self.interned.lookup("event_categories", generation[iids.msg], iids.value)
        repeated = iids.msg[1:] == iids.msg[:-1]
        if not repeated.any() and not inline.rows:
            out[iids.msg] = self._model_strings(found)
            return out
        texts = self.interned.texts
        names: dict[int, list[str]] = {}
        for msg, text_id in zip(iids.msg.tolist(), found.tolist(), strict=True):
            names.setdefault(msg, []).append(texts[text_id])
        for msg, offset, length in zip(inline.msg.tolist(), inline.offset.tolist(),
                                       inline.length.tolist(), strict=True):
            names.setdefault(msg, []).append(self.text.decode(data[offset:offset + length]))
        intern = self.trace.strings.intern
        for msg, parts in names.items():
            out[msg] = intern(",".join(parts))
        return out

    def _counter_values(self, fields: Fields, count: int) -> np.ndarray:
        values = np.full(count, np.nan)
        ints = fields.where(COUNTER_VALUE, VARINT)
        values[ints.msg] = as_int64(ints.value).astype(np.float64)
        doubles = fields.where(DOUBLE_VALUE, FIXED64)
        values[doubles.msg] = doubles.value.view(np.float64)
        return values

    def _args(self, data: bytes, buf: np.ndarray, fields: Fields, generation: np.ndarray,
              count: int, keep: np.ndarray, consumed: int) -> None:
        """Store the kept events' debug annotations: per event its key set and where its
        values start (see :class:`_Events`)."""
        events = self.events
        arg_set = np.full(count, -1, dtype=np.int32)
        arg_start = np.zeros(count, dtype=np.int64)
        owner, offset, length = fields.payloads(ANNOTATIONS)
        if len(owner):
            names, kind, bits = self._annotations(data, buf, owner, offset, offset + length,
                                                  generation, consumed)
            first = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
            sizes = np.diff(np.r_[first, len(owner)])
            with_args = owner[first]
            arg_set[with_args] = self._key_sets(names, first, sizes)
            arg_start[with_args] = len(events.values) + first
            events.values.add(kind, bits)
        extend_typed(events.arg_set, arg_set[keep])
        extend_typed(events.arg_start, arg_start[keep])

    def _key_sets(self, names: np.ndarray, first: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        """The key-set id of each event whose annotations' name ids are
        ``names[first[i]:first[i] + sizes[i]]``: rows of names hashed, the distinct rows
        compared in full (so a hash collision cannot join two key sets)."""
        width = int(sizes.max())
        if width > 64:   # events with very many arguments: one lookup each
            cuts = np.r_[first, len(names)].tolist()
            listed = names.tolist()
            return np.array([self._key_set_id(listed[lo:hi]) for lo, hi in zip(
                cuts[:-1], cuts[1:], strict=True)], dtype=np.int32)
        matrix = np.full((len(first), width), -1, dtype=np.int64)
        place = np.arange(len(names)) - np.repeat(first, sizes)
        matrix[np.repeat(np.arange(len(first)), sizes), place] = names
        digest = np.zeros(len(first), dtype=np.uint64)
        for column in range(width):
            digest = digest * np.uint64(1_000_003) + (matrix[:, column] + 2).astype(np.uint64)
        _, head, inverse = np.unique(digest, return_index=True, return_inverse=True)
        inverse = inverse.ravel()
        same = (matrix == matrix[head[inverse]]).all(axis=1)
        by_group = np.array([self._key_set_id(matrix[row].tolist()) for row in head.tolist()],
                            dtype=np.int32)
        ids = by_group[inverse]
        for k in np.flatnonzero(~same).tolist():   # a hash collision: those one by one
            ids[k] = self._key_set_id(matrix[k].tolist())
        return ids

    def _key_set_id(self, names: list[int]) -> int:
        texts = self.interned.texts
        return self._key_set_of(tuple(texts[i] for i in names if i >= 0))

    def _key_set_of(self, keys: tuple[str, ...]) -> int:
        events = self.events
        found = events.key_set_ids.get(keys)
        if found is None:
            found = events.key_set_ids[keys] = len(events.key_sets)
            events.key_sets.append(keys)
        return found

    def _annotations(self, data: bytes, buf: np.ndarray, owner: np.ndarray, starts: np.ndarray,
                     ends: np.ndarray, generation: np.ndarray,
                     consumed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Name ids (into the interned texts), value kinds and value bits (see
        :mod:`.arg_store`) of the debug annotations ``buf[starts[i]:ends[i]]`` of events
        ``owner`` (TrackEvent field 4).

        Most annotations are an interned name and one number (as traceconv's writer and
        the Perfetto SDK write them): those are read straight from their bytes
        (:func:`.annotation_bytes.name_and_number`); of the others, mostly shapes and
        dtype lists repeated throughout, each distinct one is decoded field by field
        once (:func:`.byte_ranges.distinct_ranges`) and its values shared, as the
        composite cache shares them."""
        count = len(owner)
        gen = generation[owner]
        names = np.zeros(count, dtype=np.int64)
        kind = np.zeros(count, dtype=np.uint8)
        bits = np.zeros(count, dtype=np.uint64)
        simple, iid, simple_kind, simple_bits = name_and_number(buf, starts, ends)
        if len(simple):
            names[simple] = self.interned.lookup("debug_annotation_names", gen[simple], iid)[0]
            kind[simple], bits[simple] = simple_kind, simple_bits
        rest = np.ones(count, dtype=bool)
        rest[simple] = False
        rest_rows = np.flatnonzero(rest)
        if len(rest_rows):   # each distinct one decoded once (in the order they come)
            first, inverse = distinct_ranges(buf, starts[rest_rows], ends[rest_rows],
                                             gen[rest_rows])
            distinct = rest_rows[first]
            found = self._annotation_fields(data, buf, starts[distinct], ends[distinct],
                                            gen[distinct], consumed)
            names[rest_rows], kind[rest_rows], bits[rest_rows] = (
                column[inverse] for column in found)
        texts = np.flatnonzero(kind == STRING_IID)
        if len(texts):
            bits[texts] = self.interned.lookup("debug_annotation_string_values", gen[texts],
                                               bits[texts])[0]
            kind[texts] = TEXT
        return names, kind, bits

    def _annotation_fields(self, data: bytes, buf: np.ndarray, starts: np.ndarray,
                           ends: np.ndarray, gen: np.ndarray, consumed: int
                           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`_annotations` of any annotations, field by field (interned string
        values left as STRING_IID)."""
        try:
            fields = decode_fields(buf, starts, ends)
        except WireError as exc:
            raise InputError(f"a debug annotation is not wire format: {exc}", file=self.name,
                             location=f"byte offset {consumed + exc.offset}") from None
        count = len(starts)
        names = np.zeros(count, dtype=np.int64)
        iids = fields.where(NAME_IID, VARINT)
        if iids.rows:
            names[iids.msg] = self.interned.lookup("debug_annotation_names", gen[iids.msg],
                                                   iids.value)[0]
        inline = fields.where(NAME, LENGTH)
        for msg, offset, length in zip(inline.msg.tolist(), inline.offset.tolist(),
                                       inline.length.tolist(), strict=True):
            names[msg] = self.interned.text_id(self.text.decode(data[offset:offset + length]))
        # the last value field of each annotation says how to read it (as protobuf merges)
        valued = fields.where_in(VALUE_FIELDS)
        kind = np.zeros(count, dtype=np.uint8)
        bits = np.zeros(count, dtype=np.uint64)
        kind[valued.msg] = valued.field
        bits[valued.msg] = valued.value
        strings = np.flatnonzero(kind == STRING)
        if len(strings):
            last = np.zeros(count, dtype=np.int64)
            last[valued.msg] = np.arange(valued.rows)
            bits[strings] = self._objects(self._inline_strings(
                data, valued.offset[last[strings]], valued.length[last[strings]]))
            kind[strings] = OBJECT
        marks = fields.where(SPELLED_MARK, VARINT)   # traceconv's spelled null, [] and {}
        composite = np.isin(kind, list(COMPOSITE))
        marks_kept = ~composite[marks.msg]   # (a composite value wins over a mark)
        if marks_kept.any():
            at = marks.msg[marks_kept]
            bits[at] = self._objects([SPELLED.get(int(v), str)()
                                      for v in marks.value[marks_kept].tolist()])
            kind[at] = OBJECT
        composite_rows = np.flatnonzero(composite)
        for one in np.unique(gen[composite_rows]).tolist():
            picked = composite_rows[gen[composite_rows] == one]
            bits[picked] = self._composites(data, starts[picked], ends[picked], one)
        kind[composite_rows] = OBJECT
        return names, kind, bits

    def _objects(self, values: list[Any]) -> np.ndarray:
        """Keep ``values`` in the store's object list; their indexes there."""
        objects = self.events.values.objects
        first = len(objects)
        objects.extend(values)
        return np.arange(first, len(objects), dtype=np.uint64)

    def _inline_strings(self, data: bytes, offsets: np.ndarray, lengths: np.ndarray
                        ) -> list[str]:
        """Inline string values; a text repeated within the block is one object."""
        seen: dict[bytes, str] = {}
        out = []
        for start, size in zip(offsets.tolist(), lengths.tolist(), strict=True):
            raw = data[start:start + size]
            if raw in seen:
                out.append(seen[raw])
            else:
                out.append(seen.setdefault(raw, self.text.decode(raw)))
        return out

    def _composites(self, data: bytes, starts: np.ndarray, ends: np.ndarray, generation: int
                    ) -> np.ndarray:
        """Object indexes of the values of dict, array, nested and JSON annotations, each
        distinct one decoded once (a trace repeats its shapes and dtype lists)."""
        cache = self.annotation_cache.setdefault(generation, {})
        if len(cache) > 1 << 16:
            cache.clear()
        texts = list(map(data.__getitem__, map(slice, starts.tolist(), ends.tolist())))
        found: list[int | None] = list(map(cache.get, texts))
        if None in found:
            strings, names = self._string_lookup(generation), self._name_lookup(generation)
            types = self._type_lookup(generation)
            objects = self.events.values.objects
            for k, text in enumerate(texts):
                if found[k] is None:
                    index = cache.get(text)
                    if index is None:
                        try:
                            name, value = decode_annotation(text, strings, names,
                                                            self.text.decode, types)
                        except ValueError:   # a damaged nested value: no value, counted
                            self.diagnostics.add("perfetto.annotation_decode")
                            value = None
                        index = cache[text] = len(objects)
                        objects.append(value)
                        if type(value) is NestedGroup:
                            self.nested_objects.append(index)
                            self.group_names.add(name or "")
                        elif _PROTO_VALUE_TAG in text and holds_proto(value):
                            self.proto_objects.append((index, generation))
                    found[k] = index
        return np.array(found, dtype=np.uint64)

    def _string_lookup(self, generation: int) -> Callable[[int], str]:
        entries = self.interned.entries["debug_annotation_string_values"]
        return lambda iid: entries.get(_Interned.key(generation, iid), "")

    def _name_lookup(self, generation: int) -> Callable[[int], str]:
        entries = self.interned.entries["debug_annotation_names"]
        return lambda iid: entries.get(_Interned.key(generation, iid), "")

    def _type_lookup(self, generation: int) -> Callable[[int], str]:
        entries = self.interned.entries["debug_annotation_value_type_names"]
        return lambda iid: entries.get(_Interned.key(generation, iid), "")

    def _flows(self, fields: Fields, renumber: np.ndarray) -> None:
        parts = []
        for number, wire, ends in ((FLOW, FIXED64, False), (FLOW_OLD, VARINT, False),
                                   (TERMINATING, FIXED64, True),
                                   (TERMINATING_OLD, VARINT, True)):
            rows = fields.where(number, wire)
            if rows.rows:
                parts.append(np.stack([renumber[rows.msg], rows.value.view(np.int64),
                                       np.full(rows.rows, int(ends))], axis=1))
        if parts:
            flows = np.concatenate(parts)
            self.events.flows.append(flows[flows[:, 0] >= 0])

    def _extra_counters(self, fields: Fields, ts: np.ndarray, clock: np.ndarray,
                        packet: np.ndarray, generation: np.ndarray) -> None:
        """Counter values carried by another event (extra_counter_values), on the tracks
        it names (extra_counter_track_uuids) or, naming none, its sequence's defaults."""
        for side, (tracks_field, values_field, wire) in enumerate((
                (EXTRA_TRACKS, EXTRA_VALUES, VARINT),
                (EXTRA_DOUBLE_TRACKS, EXTRA_DOUBLE_VALUES, FIXED64))):
            values = in_message_order(fields.where(values_field, wire))
            if not values.rows:
                continue
            uuids = in_message_order(fields.where(tracks_field, VARINT))
            numbers = (as_int64(values.value).astype(np.float64) if wire == VARINT
                       else values.value.view(np.float64))
            msg = values.msg
            if uuids.rows == values.rows and (uuids.msg == msg).all():
                tracks = uuids.value   # (every event names a track for each of its values)
            else:
                tracks, kept = self._extra_tracks(msg, uuids, packet, generation, side)
                self.diagnostics.add("perfetto.extra_counter_values",
                                     count=int(values.rows - kept.sum()))
                msg, numbers = msg[kept], numbers[kept]
            events, rows = self.events, len(msg)
            for column, picked in ((events.ts, ts[msg]), (events.clock, clock[msg]),
                                   (events.packet, packet[msg]), (events.track, tracks),
                                   (events.type, np.full(rows, COUNTER)),
                                   (events.name, np.zeros(rows, np.int64)),
                                   (events.category, np.zeros(rows, np.int64)),
                                   (events.value, numbers),
                                   (events.generation, generation[msg])):
                extend_typed(column, picked)
            extend_typed(events.arg_set, np.full(rows, -1, dtype=np.int32))
            extend_typed(events.arg_start, np.zeros(rows, dtype=np.int64))

    def _extra_tracks(self, msg: np.ndarray, uuids: FieldRows, packet: np.ndarray,
                      generation: np.ndarray, side: int) -> tuple[np.ndarray, np.ndarray]:
        """The track of each extra value (``msg``: its event, in message order), the i-th
        value of an event on the i-th track the event names or, naming none, its sequence's
        defaults name; and which values have one. Event by event, as trace_processor pairs
        them: an event whose values and tracks do not pair up loses its own values only."""
        named: dict[int, list[int]] = {}
        for event, uuid in zip(uuids.msg.tolist(), uuids.value.tolist(), strict=True):
            named.setdefault(event, []).append(uuid)
        defaults = self.defaults.extras_of(packet[msg], generation[msg])
        starts = np.r_[0, np.flatnonzero(msg[1:] != msg[:-1]) + 1]
        counts = np.diff(np.r_[starts, len(msg)])
        kept = np.zeros(len(msg), dtype=bool)
        tracks: list[int] = []
        for start, count in zip(starts.tolist(), counts.tolist(), strict=True):
            given = (named.get(int(msg[start]))
                     or self.defaults.extra_tracks[int(defaults[start])][side])
            if len(given) == count:
                kept[start:start + count] = True
                tracks.extend(given)
        return np.array(tracks, dtype=np.uint64), kept

    # -- the model --------------------------------------------------------------------------

    def finish(self) -> Trace:
        from .model_events import build_events
        from .system_model import build_system

        trace = self.trace
        model = None
        text = self.attributes.get(model_attribute.ATTRIBUTE)
        if isinstance(text, str):
            model, problem = model_attribute.decode(
                text, flow_ids=sum(map(len, self.events.flows)),
                time_shift=self.attributes.get("time_shift_ns"))
            if model is None:
                self.diagnostics.add("perfetto.model_attribute_unreadable", example=problem)
        if model is not None:
            _restore_metadata(trace, model)
        else:
            trace.metadata.clock = "perfetto trace clock" if self.trace_clock == BOOTTIME \
                else f"perfetto clock {self.trace_clock}"
        producer = {k: v for k, v in self.attributes.items() if k != model_attribute.ATTRIBUTE}
        if producer:
            trace.metadata.attributes.setdefault("trace_attributes", producer)
        shift = model["shift"] if model is not None else 0
        events = self.events
        used = set(np.unique(np.frombuffer(events.track, dtype=np.uint64)).tolist()) \
            if len(events) else set()
        tracks: TrackMap = build_tracks(trace, self.descriptors, used, model)
        self._typed_args()
        build_events(self, tracks, shift, model)
        self.system.frames = self._on_trace_clock(self.system.frames)
        self.system.logs = self._on_trace_clock(self.system.logs)
        build_system(trace, self.system)
        if model is not None:   # (its slice places count in the slices now all in)
            restore_graph(trace, model.get("graph"))
        if not self.packets and self.diagnostics.count("perfetto.truncated"):
            # (a few bytes of any protobuf file frame no whole packet: a cut file, not a trace)
            raise InputError("not a Perfetto trace, or one cut before its first packet ends: "
                             "no whole packet in it", file=self.name, location="byte offset 0")
        if model is None and not trace.processes and self.packets:
            held = ", ".join(f"{n:,} {kind}" for kind, n in self.packet_kinds.items())
            raise InputError("nothing in this Perfetto trace could be modelled: it holds "
                             + (held or "no packet with data"), file=self.name)
        return trace

    def _typed_args(self) -> None:
        """The events' typed fields as args in front of their debug annotations, and the
        messages of proto-value annotations decoded (see :mod:`.typed_fields`); the fields
        that give nothing are counted."""
        if not len(self.typed) and not self.proto_objects:
            return
        decoder = Decoder(Schema.of(self.extension_files), self.typed_interned,
                          self.text.decode, lambda data, generation: decode_annotation(
                              data, self._string_lookup(generation),
                              self._name_lookup(generation), self.text.decode,
                              self._type_lookup(generation)))
        not_counter = np.frombuffer(self.events.type, dtype=np.int8) != COUNTER
        unread = merge(self.typed, decoder, self.events, self._key_set_of, not_counter)
        objects = self.events.values.objects
        missed: dict[int, list[str]] = {}
        for index, generation in self.proto_objects:   # (shared by their events: once)
            labels: list[str] = []
            objects[index] = decoder.resolved(objects[index], generation, labels)
            if labels:
                missed[index] = labels
        if missed:   # (counted once per event that holds the value)
            values = self.events.values
            _, positions = self.events.positions(np.arange(len(self.events)))
            bits = np.frombuffer(values.bits, dtype=np.uint64)[positions][
                np.frombuffer(values.kind, dtype=np.uint8)[positions] == OBJECT]
            held, uses = np.unique(bits[np.isin(bits, np.array(list(missed), np.uint64))],
                                   return_counts=True)
            for index, count in zip(held.tolist(), uses.tolist(), strict=True):
                for label in missed[index]:
                    unread[label] += count
        if unread:
            shown = [f"{label} ({n:,})" for label, n in unread.most_common(4)]
            self.diagnostics.add("perfetto.typed_field_not_read", count=sum(unread.values()),
                                 example=", ".join(shown) + (", ..." if len(unread) > 4 else ""))

    def _on_trace_clock(self, items: list[Any]) -> list[Any]:
        """FrameTimeline packets or log lines (``ts`` and ``clock`` fields) with their times on
        the trace clock (through the snapshots, as track events' are); those that cannot be
        placed are left out, counted."""
        from .model_events import to_trace_clock

        fits = [item for item in items if item.ts < 1 << 63 and item.clock < 64]
        self.diagnostics.add("perfetto.timestamp_beyond_int64",
                             count=sum(item.ts >= 1 << 63 for item in items))
        self.diagnostics.add("perfetto.clock_without_snapshot",
                             count=sum(item.ts < 1 << 63 and item.clock >= 64 for item in items))
        ts = np.array([item.ts for item in fits], dtype=np.int64)
        clock = np.array([item.clock or self.trace_clock for item in fits], dtype=np.int64)
        placed = to_trace_clock(self, ts, clock).tolist()
        return [item._replace(ts=t) for item, t, ok in zip(fits, ts.tolist(), placed,
                                                            strict=True) if ok]

    def clock_offsets(self) -> dict[int, list[tuple[int, int]]]:
        """Per clock: (its reading, the trace clock's reading) at each snapshot with both."""
        out: dict[int, list[tuple[int, int]]] = {}
        for snapshot in self.snapshots:
            if self.trace_clock not in snapshot:
                continue
            for clock, reading in snapshot.items():
                out.setdefault(clock, []).append((reading, snapshot[self.trace_clock]))
        return out


def _restore_metadata(trace: Trace, model: dict[str, Any]) -> None:
    """What traceconv's writer kept of the model: metadata, diagnostics, op statistics and
    memory blocks."""
    meta, saved = trace.metadata, model.get("metadata", {})
    restore_metadata(meta, saved)
    meta.attributes.update(saved.get("attributes") or {})
    carry_diagnostics(trace.diagnostics, model.get("diagnostics"))
    restore_stats(trace, model.get("stats"))
    add_blocks(trace.memory, model.get("memory"))
    add_blocks(trace.reservations, model.get("reservations"))


def read(source: Source) -> Trace:
    """Read a Perfetto protobuf trace (``.pftrace``, gzip or not) into the model.

    >>> trace = read(Source("samples/perfetto/rocprofv3_hip_taylor.pftrace"))  # doctest: +SKIP
    >>> trace.counts()["slices"]                                              # doctest: +SKIP
    867
    """
    reader = PftraceReader(source.name)
    with source.open() as stream:
        reader.feed(stream)
    return reader.finish()

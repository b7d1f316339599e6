"""Offline validation of a Perfetto protobuf trace: what trace_processor would drop or misdraw.

trace_processor accepts many broken traces silently (an END with no BEGIN, a slice on a
counter track, an undeclared track uuid give no stat at all), so this replays the file the
way it does and reports each problem with a count and an example:

* framing: the file is a sequence of ``Trace.packet`` fields that decode;
* sequences: track events have a ``trusted_packet_sequence_id`` and a timestamp on BOOTTIME
  or on a clock some ClockSnapshot declares; NEEDS_INCREMENTAL_STATE only after
  INCREMENTAL_STATE_CLEARED; interned names, categories and argument names resolve
  (tables reset on CLEARED; iid 0 is invalid);
* descriptors: a uuid each, redeclared only identically, processes with a pid, threads
  with pid and tid, parents that exist, no cycles, nesting at most 100 deep;
* events, stably sorted by timestamp as trace_processor does: per track its slice stack
  (:class:`..slice_stack.SliceStack`, the Chrome checker's replay) at most 512 deep with
  nothing left open, a legacy ``X`` (``legacy_event.phase``, with ``duration_us``) that
  partially overlaps an open slice dropped, counter values only on counter tracks, slices
  and instants never there, tracks declared; legacy async phases (``b``, ``e``, ``S``...)
  are not replayed, and said so;
* flows: a terminating id was started before; an id seen once draws no arrow;
* names: no NUL inside a slice, track, process or thread name (trace_processor cuts there).

Packets are decoded one at a time with the generated classes while the file streams, and
only a few integers per event are kept for the replay.

>>> report = validate(Source("out.pftrace"))      # doctest: +SKIP
>>> report.ok, report.counts["slices"]             # doctest: +SKIP
(True, 4)
"""

from __future__ import annotations

import io
from array import array
from collections.abc import Iterator
from typing import BinaryIO

import numpy as np
from google.protobuf.message import DecodeError
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import (
    TracePacket,
    TrackDescriptor,
    TrackEvent,
)

from ...gcpause import paused_gc
from ...io import Source
from ...model.check_report import CheckReport
from ..slice_stack import NO_TEXT, SliceStack
from .event_kinds import COMPLETE, LEGACY_PHASES
from .nested_args import without_nested_annotations
from .reader import UNTIMED

MAX_DEPTH = 512          # trace_processor's SliceTracker::kMaxDepth
MAX_TRACK_NESTING = 100
BOOTTIME = 6
READ_BYTES = 4 << 20
CLEARED = TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
NEEDS = TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
BEGIN, END = TrackEvent.TYPE_SLICE_BEGIN, TrackEvent.TYPE_SLICE_END
INSTANT, COUNTER = TrackEvent.TYPE_INSTANT, TrackEvent.TYPE_COUNTER
_INTERNED = (("event_names", "name"), ("event_categories", "category"),
             ("debug_annotation_names", "annotation name"))


def iter_packets(stream: BinaryIO, report: CheckReport) -> Iterator[tuple[int, bytes]]:
    """(byte offset, payload) of each ``Trace.packet`` in ``stream``, read in 4 MiB blocks.

    >>> import io
    >>> list(iter_packets(io.BytesIO(b"\\x0a\\x02\\x50\\x01"), CheckReport("perfetto")))
    [(0, b'P\\x01')]
    """
    buffer = b""
    consumed = 0          # file offset of buffer[0]
    while True:
        block = stream.read(READ_BYTES)
        buffer = buffer + block if buffer else block
        pos, size = 0, len(buffer)
        while pos < size:
            if buffer[pos] != 0x0A:
                report.error("bad_framing", "the file is not a sequence of Trace.packet "
                             "fields (wrong tag)", example=f"byte offset {consumed + pos}")
                return
            length, shift, cursor = 0, 0, pos + 1
            while cursor < size and buffer[cursor] & 0x80:
                length |= (buffer[cursor] & 0x7F) << shift
                shift += 7
                cursor += 1
            if cursor >= size:
                break
            length |= buffer[cursor] << shift
            cursor += 1
            if cursor + length > size:
                break
            yield consumed + pos, buffer[cursor:cursor + length]
            pos = cursor + length
        buffer = buffer[pos:]
        consumed += pos
        if not block:
            if buffer:
                report.error("truncated", "the file ends inside a packet",
                             example=f"byte offset {consumed}")
            return


def _decode(payload: bytes) -> TracePacket | None:
    """The packet, or None when it is not a TracePacket.

    Debug annotations nested beyond the protobuf runtime's recursion limit (100) decode
    again without their nested values: trace_processor loads them at any depth.
    """
    try:
        return TracePacket.FromString(payload)
    except DecodeError:
        pass
    try:
        return TracePacket.FromString(without_nested_annotations(payload))
    except (DecodeError, ValueError):
        return None


class _Sequence:
    """Incremental state of one trusted packet sequence."""

    __slots__ = ("default_clock", "default_track", "tables", "valid")

    def __init__(self) -> None:
        self.valid = False
        self.tables: dict[str, set[int]] = {field: set() for field, _ in _INTERNED}
        self.default_track: int | None = None
        self.default_clock = 0

    def clear(self) -> None:
        self.valid = True
        for table in self.tables.values():
            table.clear()
        self.default_track = None
        self.default_clock = 0


# packets trace_processor reads before their timestamp (the reader's list): no clock step
_UNTIMED = frozenset(TracePacket.DESCRIPTOR.fields_by_number[number].name for number in UNTIMED)


class _Clocks:
    """Packet timestamps as trace_processor reads them: on the packet's clock (its own, else
    its sequence's default, else BOOTTIME), deltas summed on an incremental clock (every
    timed packet of the sequence a step), moved to BOOTTIME by the last ClockSnapshot. The
    replay only orders events, so a clock no snapshot names keeps its readings."""

    def __init__(self) -> None:
        self.offset: dict[int, int] = {}                 # clock key -> ns to add for BOOTTIME
        self.running: dict[int, list[int]] = {}          # incremental: key -> [reading, unit]
        self.used: dict[int, int] = {}                   # clock id -> first byte offset

    @staticmethod
    def key(clock: int, seq_id: int) -> int:
        return clock if clock < 64 else (seq_id << 32) | clock

    def snapshot(self, packet: TracePacket, seq_id: int) -> None:
        clocks = packet.clock_snapshot.clocks
        boot = next((c.timestamp for c in clocks if c.clock_id == BOOTTIME), None)
        for c in clocks:
            unit = c.unit_multiplier_ns or 1
            key = self.key(c.clock_id, seq_id)
            if c.is_incremental:
                self.running[key] = [c.timestamp * unit, unit]
            if boot is not None:
                self.offset[key] = boot - c.timestamp * unit

    def reading(self, packet: TracePacket, seq: _Sequence, seq_id: int, offset: int) -> int:
        """The packet's time in ns (its raw timestamp when nothing converts it)."""
        clock = packet.timestamp_clock_id or seq.default_clock or BOOTTIME
        if clock != BOOTTIME:
            self.used.setdefault(clock, offset)
        key = self.key(clock, seq_id)
        value = packet.timestamp
        running = self.running.get(key)
        if running is not None:
            running[0] += value * running[1]
            value = running[0]
        return value + self.offset.get(key, 0)


def _identity(desc: TrackDescriptor) -> bytes:
    """What makes a descriptor the same track for trace_processor: its parent, process and
    thread ids and counter settings (a later one may rename it: Chrome names its threads
    once it knows them).

    >>> a = TrackDescriptor(uuid=1, name="a"); a.thread.pid, a.thread.tid = 5, 6
    >>> b = TrackDescriptor(uuid=1, name="b"); b.thread.pid, b.thread.tid = 5, 6
    >>> _identity(a) == _identity(b), _identity(a) == _identity(TrackDescriptor(uuid=1))
    (True, False)
    """
    same = TrackDescriptor(uuid=desc.uuid, parent_uuid=desc.parent_uuid)
    if desc.HasField("process"):
        same.process.pid = desc.process.pid
    if desc.HasField("thread"):
        same.thread.pid, same.thread.tid = desc.thread.pid, desc.thread.tid
    if desc.HasField("counter"):
        same.counter.CopyFrom(desc.counter)
    return same.SerializeToString(deterministic=True)


class PftraceValidator:
    """Streams packets in, then :meth:`finish` replays the events and returns the report."""

    def __init__(self) -> None:
        self.report = CheckReport("perfetto")
        self.packets = 0
        self.sequences: dict[int, _Sequence] = {}
        self.descriptors: dict[int, bytes] = {}
        self.parents: dict[int, int] = {}
        self.counter_tracks: set[int] = set()
        self.snapshot_clocks: set[int] = {BOOTTIME}
        self.clocks = _Clocks()
        # the replay columns: timestamp, track uuid, event type, duration (a legacy X's;
        # -1 for others), index into flow lists
        self.ts = array("q")
        self.track = array("Q")
        self.type = array("b")
        self.dur = array("q")
        self.flows: dict[int, tuple[list[int], list[int]]] = {}

    def feed(self, stream: BinaryIO) -> None:
        with paused_gc():
            for offset, payload in iter_packets(stream, self.report):
                self.packets += 1
                packet = _decode(payload)
                if packet is None:
                    self.report.error("packet_decode", "a packet does not decode as TracePacket",
                                      example=f"byte offset {offset}")
                    continue
                self._packet(packet, offset)

    def _packet(self, packet: TracePacket, offset: int) -> None:
        report = self.report
        seq_id = packet.trusted_packet_sequence_id
        seq = self.sequences.get(seq_id)
        if seq is None:
            seq = self.sequences[seq_id] = _Sequence()
        flags = packet.sequence_flags
        if flags & CLEARED or (not flags and packet.incremental_state_cleared):
            seq.clear()
        elif flags & NEEDS and not seq.valid:
            report.error("needs_incremental_state_before_cleared", "a packet needs incremental "
                         "state before its sequence cleared it: trace_processor skips it",
                         example=f"sequence {seq_id}, byte offset {offset}")
            return
        if packet.HasField("interned_data"):
            self._intern(packet, seq, offset)
        if packet.HasField("trace_packet_defaults"):
            packet_defaults = packet.trace_packet_defaults
            defaults = packet_defaults.track_event_defaults
            seq.default_track = defaults.track_uuid if defaults.HasField("track_uuid") else None
            seq.default_clock = packet_defaults.timestamp_clock_id
        data = packet.WhichOneof("data")
        if data == "clock_snapshot":
            self.snapshot_clocks.update(c.clock_id for c in packet.clock_snapshot.clocks)
            self.clocks.snapshot(packet, seq_id)
        elif data == "track_event":
            self._event(packet, seq, seq_id, offset)
        elif packet.HasField("timestamp") and data not in _UNTIMED:
            self.clocks.reading(packet, seq, seq_id, offset)   # (a step of its clock)
        if data == "track_descriptor":
            self._descriptor(packet.track_descriptor, offset)

    def _intern(self, packet: TracePacket, seq: _Sequence, offset: int) -> None:
        interned = packet.interned_data
        for field, _ in _INTERNED:
            table = seq.tables[field]
            for entry in getattr(interned, field):
                if not entry.iid:
                    self.report.error("interned_iid_zero", "an interned entry has iid 0 "
                                      "(reserved for 'unset')", example=f"byte offset {offset}")
                table.add(entry.iid)
        for entry in interned.event_names:
            self._name(entry.name, offset)

    def _name(self, name: str | bytes, offset: int) -> None:
        """Flag a slice or track name with a NUL: trace_processor keeps only what precedes it.
        (A name that is not UTF-8 comes back from protobuf as bytes.)"""
        if isinstance(name, bytes):
            name = name.decode("utf-8", "replace")
        if "\0" in name:
            self.report.error("name_with_nul", "a name holds a NUL character: trace_processor "
                              "cuts the name there", example=f"{name!r} at byte offset {offset}")

    def _event(self, packet: TracePacket, seq: _Sequence, seq_id: int, offset: int) -> None:
        report, event = self.report, packet.track_event
        if not seq_id:
            report.error("track_event_missing_sequence_id", "a track event has no "
                         "trusted_packet_sequence_id: trace_processor drops it",
                         example=f"byte offset {offset}")
            return
        if not packet.HasField("timestamp"):
            report.error("track_event_missing_timestamp", "a track event has no timestamp",
                         example=f"byte offset {offset}")
            return
        time = self.clocks.reading(packet, seq, seq_id, offset)
        tables = seq.tables
        self._name(event.name, offset)
        name_iid = event.name_iid
        if name_iid and name_iid not in tables["event_names"]:
            report.error("unknown_name_iid", "an event's name_iid was never interned on its "
                         "sequence: the slice has no name", example=f"iid {name_iid}, "
                         f"byte offset {offset}")
        for iid in event.category_iids:
            if iid not in tables["event_categories"]:
                report.error("unknown_category_iid", "a category iid was never interned",
                             example=f"iid {iid}, byte offset {offset}")
        annotations = event.debug_annotations
        if annotations:
            unknown = {a.name_iid for a in annotations} - tables["debug_annotation_names"]
            unknown.discard(0)   # an inline name
            if unknown:
                report.error("unknown_annotation_name_iid", "an argument name iid was never "
                             "interned", example=f"iid {min(unknown)}, byte offset {offset}")
        kind = event.type
        if kind == COUNTER and not (event.HasField("counter_value")
                                    or event.HasField("double_counter_value")):
            report.error("counter_without_value", "a counter event has no value",
                         example=f"byte offset {offset}")
            return
        dur = -1
        if not kind and event.HasField("legacy_event"):
            phase = event.legacy_event.phase
            kind = LEGACY_PHASES.get(phase, 0)
            if kind == COMPLETE:
                dur = event.legacy_event.duration_us * 1000
            elif kind not in (BEGIN, END, INSTANT):   # (its time was a step all the same)
                report.warning("legacy_async_not_replayed", "track events of a legacy async "
                               "phase (b, e, n, S, T, p, F): not replayed, so the counts "
                               "leave them out", example=f"phase {chr(phase)!r}")
                return
        if kind not in (BEGIN, END, INSTANT, COUNTER, COMPLETE):   # (a step all the same)
            report.warning("unsupported_event_type", "a track event with a type other than "
                           "BEGIN/END/INSTANT/COUNTER (nor a legacy phase)",
                           example=f"type {kind}")
            return
        track = (event.track_uuid if event.HasField("track_uuid")
                 else seq.default_track or 0)
        flow_ids, terminating = event.flow_ids, event.terminating_flow_ids
        if flow_ids or terminating:
            self.flows[len(self.ts)] = (list(flow_ids), list(terminating))
        self.ts.append(max(min(time, (1 << 63) - 1), -(1 << 63)))   # (uint64 on the wire)
        self.track.append(track)
        self.type.append(kind)
        self.dur.append(dur)

    def _descriptor(self, desc: TrackDescriptor, offset: int) -> None:
        report = self.report
        if not desc.HasField("uuid"):
            report.error("descriptor_without_uuid", "a TrackDescriptor has no uuid",
                         example=f"byte offset {offset}")
            return
        identity = _identity(desc)
        known = self.descriptors.get(desc.uuid)
        if known is not None:
            if known != identity:
                report.error("conflicting_descriptor", "a track uuid is declared twice as "
                             "another track (parent, pid, tid or counter): trace_processor "
                             "keeps the first", example=f"uuid {desc.uuid}")
            return
        self.descriptors[desc.uuid] = identity
        for name in (desc.name, desc.static_name, desc.process.process_name,
                     desc.thread.thread_name):
            self._name(name, offset)
        if desc.HasField("process") and not desc.process.HasField("pid"):
            report.error("process_without_pid", "a ProcessDescriptor has no pid",
                         example=f"uuid {desc.uuid}")
        if desc.HasField("thread") and not (desc.thread.HasField("pid")
                                            and desc.thread.HasField("tid")):
            report.error("thread_without_pid_tid", "a ThreadDescriptor lacks pid or tid",
                         example=f"uuid {desc.uuid}")
        if desc.HasField("counter"):
            self.counter_tracks.add(desc.uuid)
        if desc.parent_uuid:
            self.parents[desc.uuid] = desc.parent_uuid

    def finish(self) -> CheckReport:
        """Check what needs the whole file (parents, clocks, replay) and count."""
        if self.packets == 0:
            self.report.error("empty_trace", "the file holds no packets: trace_processor "
                              "loads an empty trace", example="0 bytes of packets")
        with paused_gc():
            self._check_tracks()
            for clock, offset in self.clocks.used.items():
                if clock not in self.snapshot_clocks:
                    self.report.error("clock_without_snapshot", "events use a clock that no "
                                      "ClockSnapshot declares: trace_processor drops them",
                                      example=f"clock {clock}, byte offset {offset}")
            counts = self._replay()
        tracks = len(self.descriptors) - (0 in self.descriptors)   # uuid 0: the root, no track
        self.report.counts = {"packets": self.packets, "tracks": tracks,
                              **counts}
        return self.report

    def _check_tracks(self) -> None:
        report, parents = self.report, self.parents
        for uuid, parent in parents.items():
            if parent not in self.descriptors:
                report.error("parent_uuid_not_declared", "a track's parent_uuid is not "
                             "declared: trace_processor drops the track's events",
                             example=f"uuid {uuid} -> parent {parent}")
        for uuid in parents:
            seen, node = {uuid}, uuid
            while node in parents:
                node = parents[node]
                if node in seen:
                    report.error("descriptor_cycle", "track parents form a cycle",
                                 example=f"uuid {uuid}")
                    break
                seen.add(node)
                if len(seen) > MAX_TRACK_NESTING:
                    report.warning("track_nesting_too_deep", f"tracks nest more than "
                                   f"{MAX_TRACK_NESTING} levels deep", example=f"uuid {uuid}")
                    break

    def _replay(self) -> dict[str, int]:
        """Per-track stacks in trace_processor's order: stable by timestamp, then file order."""
        report = self.report
        ts = np.frombuffer(self.ts, dtype=np.int64) if len(self.ts) else np.zeros(0, np.int64)
        order = np.argsort(ts, kind="stable").tolist()
        tracks, types, stamps = self.track.tolist(), self.type.tolist(), self.ts.tolist()
        durations = self.dur.tolist()
        declared, counter_tracks = self.descriptors, self.counter_tracks
        stacks: dict[int, SliceStack] = {}
        slices = instants = values = 0
        seen_undeclared: set[int] = set()
        flow_events = self.flows
        flow_order: list[tuple[list[int], list[int], int]] = []
        for index in order:
            track, kind = tracks[index], types[index]
            if track not in declared and track not in seen_undeclared:
                seen_undeclared.add(track)
                report.warning("undeclared_track_uuid", "events on a track uuid that no "
                               "TrackDescriptor declares: they land on an unnamed track",
                               example=f"uuid {track}")
            is_counter = track in counter_tracks
            if kind == COUNTER:
                if is_counter:
                    values += 1
                else:
                    report.error("counter_on_non_counter_track", "a counter value on a track "
                                 "without a CounterDescriptor: trace_processor drops it",
                                 example=f"uuid {track} at {stamps[index]}")
                continue
            if is_counter:
                report.error("slice_on_counter_track", "a slice or instant on a counter track",
                             example=f"uuid {track} at {stamps[index]}")
                continue
            stack = stacks.get(track) or stacks.setdefault(track, SliceStack())
            dur = durations[index] if kind == COMPLETE else 0 if kind == INSTANT else None
            if not stack.close_before(stamps[index], dur):
                report.error("overlapping_slice", "a legacy X event partially overlaps an "
                             "open slice on its track: the v52 trace_processor drops it "
                             "(newer ones spill it to an overflow track)",
                             example=f"uuid {track} at {stamps[index]}")
                continue
            if kind == END:
                if stack.end(stamps[index], NO_TEXT, NO_TEXT) is None:
                    report.error("end_without_begin", "an END with no open BEGIN on its track: "
                                 "trace_processor drops it silently",
                                 example=f"uuid {track} at {stamps[index]}")
            else:   # (a BEGIN too deep stays on the stack, for the END that closes it)
                if len(stack.stack) >= MAX_DEPTH:   # an instant is a 0-length slice
                    self._too_deep(track, stamps[index])
                elif kind == INSTANT:
                    instants += 1
                else:
                    slices += 1
                stack.push(stamps[index], dur, NO_TEXT, NO_TEXT)
            if index in flow_events:
                flow_order.append((*flow_events[index], stamps[index]))
        misplaced = sum(stack.misplaced for stack in stacks.values())
        if misplaced:
            report.warning("slice_ended_by_parent", "slices still open when the legacy X slice "
                           "enclosing them ended: trace_processor ends them there (its "
                           "misplaced_end_event)", count=misplaced)
        unfinished = sum(stack.unterminated for stack in stacks.values())
        if unfinished:
            report.warning("unterminated_slice", "slices never end (shown as 'Did not end'; "
                           "often an END placed before a later BEGIN)", count=unfinished)
        return {"slices": slices, "instants": instants, "counter_values": values,
                "flows": self._flows(flow_order)}

    def _too_deep(self, track: int, ts: int) -> None:
        self.report.error("slice_depth_over_512", "a slice would be deeper than 512: "
                          "trace_processor drops it", example=f"uuid {track} at {ts}")

    def _flows(self, events: list[tuple[list[int], list[int], int]]) -> int:
        report = self.report
        open_ids: dict[int, int] = {}   # id -> events seen so far
        links = 0
        for ids, terminating, stamp in events:
            for flow_id in ids:
                links += open_ids.get(flow_id, 0) > 0
                open_ids[flow_id] = open_ids.get(flow_id, 0) + 1
            for flow_id in terminating:
                if flow_id in open_ids:
                    links += 1
                    del open_ids[flow_id]
                else:
                    report.warning("terminating_flow_without_start", "a terminating flow id "
                                   "was never started before: no arrow",
                                   example=f"id {flow_id} at {stamp}")
        single = sum(1 for seen in open_ids.values() if seen == 1)
        if single:
            report.warning("flow_with_single_endpoint", "flow ids seen on one event only: no "
                           "arrow is drawn", count=single)
        return links


def validate(source: Source) -> CheckReport:
    """Validate a ``.pftrace`` (gzip or not) and return the report."""
    validator = PftraceValidator()
    with source.open() as stream:
        validator.feed(stream)
    return validator.finish()


def validate_bytes(data: bytes) -> CheckReport:
    """Validate an in-memory trace (tests, or a trace just written).

    >>> validate_bytes(b"").as_dict()["counts"]["packets"]
    0
    """
    validator = PftraceValidator()
    validator.feed(io.BytesIO(data))
    return validator.finish()

"""Legacy async events in Perfetto protobuf (``TrackEvent.legacy_event`` with phase ``b``,
``e`` or ``n``): async slices on their objects' tracks, as trace_processor imports them.

Chrome writes its ``GlobalMemoryDump`` so (``tests/data/perfetto/PROVENANCE.md``): two
begins and one end with ``local_id`` 1 and 2, on ``track_uuid: 0`` (the sequence's thread,
``MemoryInfra`` of the browser). They were left out, counted as ``perfetto.event_type``.
Expected values: the real trace_processor on the input (and on traceconv's output), and a
generated trace's events as written.
"""

from __future__ import annotations

import io
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace as TraceProto
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket, TrackEvent

import traceconv
from traceconv.formats.perfetto import write
from traceconv.model import TrackKind

CHROMIUM = Path(__file__).parent / "data" / "perfetto" / "chromium150_headless_startup_cut.pftrace"
LEGACY_SQL = """select s.ts, s.dur, s.name, s.arg_set_id, t.name track, p.pid
                from slice s join track t on s.track_id = t.id
                left join process p on p.upid = extract_arg(t.dimension_arg_set_id, 'upid')
                where t.type like 'legacy_async%' order by s.ts"""


def async_slices(trace: traceconv.Trace) -> list[tuple]:
    """The slices on async tracks: (start, dur or None when never ended, name, track name,
    pid, args less the ``unfinished`` mark), by start."""
    out = []
    for s in trace.iter_slices():
        track = trace.tracks[s.track]
        if track.kind is TrackKind.ASYNC:
            args = dict(s.args or {})
            open_ = args.pop("unfinished", False)
            out.append((s.start, None if open_ else s.dur, s.name, track.name,
                        trace.processes[track.process].pid, args))
    return sorted(out, key=lambda row: row[0])


@pytest.mark.integration
def test_chrome_memory_dumps_are_trace_processors_slices(trace_processor):
    trace_processor.load(CHROMIUM.read_bytes())
    expected = []
    for r in trace_processor.query(LEGACY_SQL):
        args = {a.key.removeprefix("debug."): a.display_value for a in trace_processor.query(
            f"select key, display_value from args where arg_set_id = {r.arg_set_id}")}
        source_id = int(args.pop("legacy_trace_source_id"))
        args.pop("legacy_event.passthrough_utid")
        expected.append((r.ts, None if r.dur == -1 else r.dur, r.name, r.track, r.pid,
                         source_id, args))
    assert [row[1] for row in expected] == [358_000, None]   # (one never ends)
    trace = traceconv.load(CHROMIUM)
    ours = [(start, dur, name, track, pid, args.pop("local_id"),
             {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in args.items()})
            for start, dur, name, track, pid, args in async_slices(trace)
            if name == "GlobalMemoryDump"]
    assert ours == expected
    assert len({trace.slice(row).track for row in range(len(trace.slices))
                if trace.slice(row).name == "GlobalMemoryDump"}) == 1
    assert not trace.diagnostics.count("perfetto.event_type")


@pytest.mark.integration
def test_written_memory_dumps_read_the_same_in_trace_processor(trace_processor):
    """traceconv's output: the same two slices, on one track of that name in the same
    process; the one never ended ends at the trace's last timestamp, marked."""
    trace_processor.load(CHROMIUM.read_bytes())
    expected = [(r.ts, r.dur, r.name, r.pid) for r in trace_processor.query(LEGACY_SQL)]
    out = io.BytesIO()
    write(traceconv.load(CHROMIUM), out)
    trace_processor.load(out.getvalue())
    got = [(r.ts, r.dur, r.name, r.pid, r.unfinished) for r in trace_processor.query(
        "select s.ts, s.dur, s.name, p.pid, extract_arg(s.arg_set_id, 'debug.unfinished') "
        "unfinished from slice s join process_track t on s.track_id = t.id "
        "join process p using (upid) where t.name = 'GlobalMemoryDump' order by s.ts")]
    last = trace_processor.query("select max(ts + dur) t from slice")[0].t
    assert [(ts, dur if dur != -1 else last - ts, name, pid, None if dur != -1 else 1)
            for ts, dur, name, pid in expected] == got


# -- generated legacy async events, trace_processor the referee --------------------------------


def _packet(trace: TraceProto, ts: int, sequence: int):
    packet = trace.packet.add()
    packet.timestamp, packet.trusted_packet_sequence_id = ts, sequence
    return packet


@st.composite
def legacy_trace(draw) -> bytes:
    """Two processes, each a thread on its own sequence; objects of a few names with local,
    global and unscoped ids, some with an ``id_scope``, nested spans, ends that close
    nothing, spans never ended, instants; thread slices between them. Each object has an
    id of its own and its events come one object after another (ends out of nesting
    order, or an id used again by a later object, are not placed as trace_processor
    places them yet). Events with no id, which trace_processor drops, are
    tested apart."""
    trace = TraceProto()
    for pid in (1, 2):
        # (a sequence's thread counts once its incremental state is valid: cleared)
        first = _packet(trace, 1, pid)
        first.sequence_flags = TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
        descriptor = first.track_descriptor
        descriptor.uuid, descriptor.process.pid = 100 + pid, pid
        thread = _packet(trace, 1, pid).track_descriptor
        thread.uuid, thread.parent_uuid = 200 + pid, 100 + pid
        thread.thread.pid, thread.thread.tid = pid, 10 + pid
    events = []
    for number in range(draw(st.integers(1, 10))):
        pid = draw(st.sampled_from([1, 2]))
        name = draw(st.sampled_from(["Dump", "Load", "Task"]))
        space = draw(st.sampled_from(["local_id", "global_id", "unscoped_id"]))
        ident = {space: number + 1}
        scope = draw(st.sampled_from([None, None, "frame"]))
        head = (pid, draw(st.sampled_from(["a", "b"])), ident, scope)
        names = [name] + draw(st.lists(st.sampled_from([name, name + "Step"]), max_size=2))
        events += [(*head, "b", inner, number) for inner in names]
        if draw(st.booleans()):
            events.append((*head, "n", name + "!", number))
        ends = names[1:] if draw(st.booleans()) else names
        events += [(*head, "e", inner, number) for inner in reversed(ends)]
        if draw(st.booleans()):
            events.append((*head, "e", "Stray", number))
    order = range(len(events))
    for ts, index in enumerate(order, start=2):
        pid, category, ident, scope, phase, name, number = events[index]
        event = _packet(trace, ts * 1_000, pid).track_event
        event.name, event.track_uuid = name, 0
        event.categories.append(category)
        event.legacy_event.phase = ord(phase)
        for field, value in ident.items():
            setattr(event.legacy_event, field, value)
        if scope:
            event.legacy_event.id_scope = scope
        annotation = event.debug_annotations.add()
        annotation.name, annotation.int_value = f"arg_{phase}", number
        if ts % 3 == 0:   # a thread slice between them
            for kind, at in ((TrackEvent.TYPE_SLICE_BEGIN, 1), (TrackEvent.TYPE_SLICE_END, 2)):
                work = _packet(trace, ts * 1_000 + at * 100, pid).track_event
                work.type, work.track_uuid, work.name = kind, 200 + pid, f"work {ts}"
    # (last: an instant after every span, which a span never ended reaches, as it stays
    # open in trace_processor)
    last = _packet(trace, (len(order) + 5) * 1_000, 1).track_event
    last.type, last.track_uuid, last.name = TrackEvent.TYPE_INSTANT, 201, "last"
    return trace.SerializeToString()


def tp_slices(trace_processor, data: bytes, legacy: bool) -> dict[int, list[tuple]]:
    """trace_processor's slices of no thread, per track: their (time, name, length or None
    when never ended, generated args) by time; a never-ended one is dur -1 in the input
    (``legacy``) and marked ``unfinished`` in traceconv's output. (Track names are left
    out: where an object's first event is an end that closes nothing, trace_processor
    names its track after that end, traceconv after the object's first begin.)"""
    trace_processor.load(data)
    per_track: dict[int, list[tuple]] = defaultdict(list)
    for r in trace_processor.query(
            "select track_id, ts, name, dur, arg_set_id from slice where track_id not in "
            "(select id from thread_track) order by track_id, ts, depth"):
        args = {a.key.removeprefix("debug."): a.display_value for a in trace_processor.query(
            f"select key, display_value from args where arg_set_id = {r.arg_set_id} and "
            "key glob 'debug.arg_*'")}
        unfinished = r.dur == -1 if legacy else bool(trace_processor.query(
            f"select 1 from args where arg_set_id = {r.arg_set_id} and "
            "key = 'debug.unfinished'"))
        per_track[r.track_id].append((r.ts, r.name, None if unfinished else r.dur,
                                      tuple(sorted(args.items()))))
    return per_track


def model_slices(trace: traceconv.Trace) -> Counter:
    """The model's async tracks as :func:`tp_slices` has them (a track: its slices and
    instants, by time), counted."""
    per_track: dict[int, list[tuple]] = defaultdict(list)
    events = [(s.track, s.start, s.name, s.dur, s.args) for s in trace.iter_slices()]
    events += [(i.track, i.ts, i.name, 0, i.args) for i in trace.iter_instants()]
    for track, start, name, dur, args in sorted(events, key=lambda e: e[:2]):
        if trace.tracks[track].kind is TrackKind.ASYNC:
            args = args or {}
            generated = tuple(sorted((k, str(v)) for k, v in args.items() if k.startswith("arg_")))
            per_track[track].append((start, name, None if args.get("unfinished") else dur,
                                     generated))
    return Counter(tuple(rows) for rows in per_track.values())


@pytest.mark.integration
@pytest.mark.slow
@settings(derandomize=True, max_examples=30, deadline=None)
@given(legacy_trace())
def test_generated_legacy_async_events_land_as_trace_processor_places_them(
        trace_processor, tmp_path_factory, data):
    """The model: trace_processor's tracks, each with its slices; traceconv's output: every
    slice again (a slice that partly overlaps another of its object's track is moved to a
    lane track there, as the writer repairs every overlap)."""
    expected = tp_slices(trace_processor, data, legacy=True)
    path = tmp_path_factory.mktemp("legacy") / "trace.pftrace"
    path.write_bytes(data)
    trace = traceconv.load(path)
    assert model_slices(trace) == Counter(tuple(rows) for rows in expected.values())
    assert not trace.diagnostics.count("perfetto.event_type")
    out = io.BytesIO()
    write(trace, out)
    written = tp_slices(trace_processor, out.getvalue(), legacy=False)
    assert Counter(row for rows in written.values() for row in rows) == Counter(
        row for rows in expected.values() for row in rows)


def test_ids_go_into_the_args_and_events_with_none_are_counted(tmp_path: Path):
    """Three events: a begin and its end with ``global_id`` 5 in scope ``gpu``, and an
    instant with no id (trace_processor drops it: kept here on a track of its name,
    counted)."""
    trace = TraceProto()
    first = _packet(trace, 1, 1)
    first.sequence_flags = TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
    thread = first.track_descriptor
    thread.uuid, thread.thread.pid, thread.thread.tid = 7, 40, 41
    for ts, phase, ident in ((10, "b", 5), (30, "e", 5), (20, "n", None)):
        event = _packet(trace, ts, 1).track_event
        event.name = "Upload"
        event.categories.append("gpu")
        event.legacy_event.phase = ord(phase)
        if ident is not None:
            event.legacy_event.global_id = ident
            event.legacy_event.id_scope = "copy"
    path = tmp_path / "legacy.pftrace"
    path.write_bytes(trace.SerializeToString())
    loaded = traceconv.load(path)
    assert async_slices(loaded) == [
        (10, 20, "Upload", "Upload", 40, {"global_id": 5, "id_scope": "copy"})]
    instants = [(i.ts, i.name, loaded.tracks[i.track].kind) for i in loaded.iter_instants()]
    assert instants == [(20, "Upload", TrackKind.ASYNC)]
    assert loaded.diagnostics.count("perfetto.async_without_id") == 1

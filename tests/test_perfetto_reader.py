"""The .pftrace reader (issue 24): a real rocprofv3 file, traceconv's own files read back to
the model they came from, and generated traces with interning, state resets and nested
tracks.

Expected values come from outside the reader: trace_processor's counts for the rocprofv3
file (the corpus README, and the live wasm build in the integration test), a walk of the
raw packets with the ``perfetto`` package's generated classes, the model the JSON reader
made, and the generator's own bookkeeping.
"""

from __future__ import annotations

import gzip
import io
import math
import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import (
    CounterDescriptor,
    TracePacket,
    TrackEvent,
)
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import (
    Trace as ProtoTrace,
)
from perfetto.trace_builder.proto_builder import TraceProtoBuilder

import traceconv
from tests.protobuf_runtime import perfetto_text_trace
from traceconv.errors import TraceconvError
from traceconv.formats.perfetto import write

ROOT = Path(__file__).resolve().parent.parent
ROCPROF = ROOT / "samples" / "perfetto" / "rocprofv3_hip_taylor.pftrace"
INT64 = 1 << 63


def raw_packets(path: Path) -> list[TracePacket]:
    return list(ProtoTrace.FromString(path.read_bytes()).packet)


# -- a real rocprofv3 file ------------------------------------------------------------------

def test_rocprofv3_counts_are_trace_processors():
    # 867 slices, 62 counter values, 76 flows: what trace_processor loads (corpus README)
    trace = traceconv.load(ROCPROF)
    counts = trace.counts()
    assert (counts["slices"], counts["counter_samples"], counts["flows"]) == (867, 62, 76)
    assert trace.metadata.source_format == "perfetto"
    # the two counter events at 2^64 - 5000 (-5000 as int64) are left out, and counted
    assert trace.diagnostics.count("perfetto.timestamp_beyond_int64") == 2
    # what the reader does not model is counted under the packet's field name
    assert trace.diagnostics.count("perfetto.not_modelled.service_event") == 69
    assert trace.diagnostics.count("perfetto.not_modelled.system_info") == 1


def test_rocprofv3_against_a_raw_walk():
    packets = raw_packets(ROCPROF)
    events = [p for p in packets if p.HasField("track_event")]
    begins = Counter(p.track_event.name_iid for p in events
                     if p.track_event.type == TrackEvent.TYPE_SLICE_BEGIN)
    counters = [p for p in events if p.track_event.type == TrackEvent.TYPE_COUNTER]
    late = [p for p in counters if p.timestamp >= INT64]
    trace = traceconv.load(ROCPROF)
    assert len(trace.slices) == sum(begins.values())
    assert len(trace.counters) == len(counters) - len(late) and len(late) == 2
    # counter values are in KiB units on the wire (unit_multiplier 1024): bytes in the model
    wire_total = sum(p.track_event.counter_value for p in counters if p.timestamp < INT64)
    assert sum(trace.counters.value) == wire_total * 1024
    names = {t.name for t in trace.tracks}
    assert {"a.out", "COMPUTE AGENT [4] QUEUE [0] (GPU)"} <= names
    kernels = [s for s in trace.iter_slices() if s.category == "kernel_dispatch"]
    gpu = {trace.tracks[s.track].process for s in kernels}
    assert kernels and {trace.processes[p].kind.value for p in gpu} == {"device"}


@pytest.mark.integration
def test_rocprofv3_against_trace_processor(trace_processor):
    tp = trace_processor
    tp.load(ROCPROF.read_bytes())
    trace = traceconv.load(ROCPROF)
    assert tp.query("select count(*) n from slice")[0].n == len(trace.slices)
    assert tp.query("select count(*) n from counter")[0].n == len(trace.counters)
    assert tp.query("select count(*) n from flow")[0].n == len(trace.flows)
    by_name = {r.name: r.n for r in tp.query("select name, count(*) n from slice group by name")}
    assert by_name == Counter(s.name for s in trace.iter_slices())
    durations = sorted(r.dur for r in tp.query("select dur from slice"))
    assert durations == sorted(trace.slices.dur)
    values = sorted(r.value for r in tp.query("select value from counter"))
    assert values == sorted(trace.counters.value)


CHROMIUM = Path(__file__).parent / "data" / "perfetto" / "chromium150_headless_startup_cut.pftrace"


@pytest.mark.integration
def test_chromium_incremental_clock_steps_as_trace_processor_reads_it(trace_processor):
    """Chromium writes each timestamp as a delta on a sequence's incremental clock, and its
    track descriptors (and events of kinds not read) are steps of that clock too: every
    slice starts where trace_processor puts it (before: 2,379 of 4,523 did not)."""
    tp = trace_processor
    tp.load(CHROMIUM.read_bytes())
    trace = traceconv.load(CHROMIUM)
    theirs = Counter((r.name, r.ts) for r in tp.query("select name, ts from slice"))
    ours = Counter((s.name, s.start) for s in trace.iter_slices())
    ours.update((i.name, i.ts) for i in trace.iter_instants())   # (slices of no length there)
    assert ours == theirs and sum(ours.values()) > 4_000
    # its thread-time counters: values carried by slice events on tracks the sequence's
    # defaults name, incremental, from 0 again after each clear of the sequence's state
    values = Counter((r.ts, round(r.value, 6)) for r in tp.query("select ts, value from counter"))
    assert Counter((c.ts, round(c.value, 6)) for c in trace.iter_counter_samples()) == values
    assert sum(values.values()) > 8_000
    assert not trace.diagnostics.count("perfetto.event_type")   # (legacy async events read)


def test_commands_work_on_rocprofv3(tmp_path: Path):
    from click.testing import CliRunner

    from traceconv.cli import app

    runner = CliRunner()
    for args in (["info", str(ROCPROF)], ["summary", str(ROCPROF)], ["advise", str(ROCPROF)],
                 ["report", str(ROCPROF), "-o", str(tmp_path / "r.html")]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, (args, result.output)
    assert "hipLaunchKernel" in (tmp_path / "r.html").read_text()


# -- detection -------------------------------------------------------------------------------

def test_detected_by_content_under_any_name(tmp_path: Path):
    for name in ("trace.pb", "trace.perfetto-trace", "trace.bin", "trace.pftrace.gz"):
        path = tmp_path / name
        data = ROCPROF.read_bytes()
        path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
        assert traceconv.load(path).counts()["slices"] == 867, name
    # a Paddle NodeTreesProto, also .pb, is still Paddle's
    paddle = ROOT / "samples" / "paddle" / "small_3.3.1.paddle_trace.pb"
    assert traceconv.load(paddle).metadata.source_format == "paddle-pb"


@pytest.mark.parametrize("data", [b"\x0a\x05\x08", b"\x12\x00", b"\x0a\x03\xff\xff\xff"])
def test_broken_input_is_one_clear_error(tmp_path: Path, data: bytes):
    path = tmp_path / "broken.pftrace"
    path.write_bytes(data)
    try:
        trace = traceconv.load(path)
    except TraceconvError as exc:
        assert "broken.pftrace" in str(exc) or exc.file
    else:   # a cut packet is what a killed profiler leaves: read what there is, say so
        assert trace.diagnostics.count("perfetto.truncated") == 1


# -- traceconv's own files read back to the model they came from -----------------------------

def _written(value):
    """What the writer's documented value mapping makes of a JSON value (annotations.py):
    ints beyond int64 become their decimal text, tuples lists, other objects their text."""
    if isinstance(value, bool) or value is None or isinstance(value, str | float):
        return value
    if isinstance(value, int):
        return value if -INT64 <= value < INT64 else str(value)
    if isinstance(value, list | tuple):
        return [_written(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _written(v) for k, v in value.items()}
    return str(value)


def _args(args):
    return repr(None if args is None else {str(k): _written(v) for k, v in sorted(
        args.items(), key=lambda item: str(item[0]))})


def timeline(trace) -> dict:
    """Everything a timeline holds, independent of row order."""
    place = [(trace.processes[t.process].name, trace.processes[t.process].kind.value, t.name,
              t.kind.value, t.tid, t.unit) for t in trace.tracks]
    slices = [(place[s.track], s.start, s.dur, s.name, s.category, _args(s.args))
              for s in trace.iter_slices()]
    flows = sorted(tuple(sorted([slices[f.source][:5], slices[f.target][:5]]))
                   + (f.category, f.name) for f in trace.iter_flows())
    return {
        "processes": sorted((p.name, p.kind.value, p.pid, tuple(p.labels))
                            for p in trace.processes),
        "slices": sorted(slices),
        "instants": sorted((place[i.track], i.ts, i.name, i.category, _args(i.args))
                           for i in trace.iter_instants()),
        "counters": sorted((place[c.track], c.ts, c.value if not math.isnan(c.value) else "nan")
                           for c in trace.iter_counter_samples()),
        "flows": flows,
        "memory": [repr(b) for b in trace.memory],
        "span": trace.span_ns,
    }


def round_trip(trace) -> traceconv.Trace:
    out = io.BytesIO()
    write(trace, out)
    from traceconv.formats.perfetto.reader import PftraceReader

    reader = PftraceReader("memory")
    reader.feed(io.BytesIO(out.getvalue()))
    return reader.finish()


def _bundled() -> list[Path]:
    found = []
    for path in sorted((ROOT / "samples").rglob("*.json*")):
        if "snapshot" in path.name or "memory_timeline" in path.name or "_et." in path.name:
            continue
        found.append(path)
    return found


@pytest.mark.slow
@pytest.mark.parametrize("path", _bundled(), ids=lambda p: p.name)
def test_own_pftrace_reads_back_to_the_json_model(path: Path):
    try:
        source = traceconv.load(path)
    except TraceconvError:
        pytest.skip("not a timeline this test reads")
    back = round_trip(source)
    expected, got = timeline(source), timeline(back)
    dropped = sum(d.count for d in source.diagnostics
                  if d.code.startswith("perfetto.flow_dropped"))
    assert not dropped
    for key in expected:
        assert got[key] == expected[key], key
    assert back.metadata.framework == source.metadata.framework
    assert back.metadata.attributes.get("converted_from") == source.metadata.source_format


ANSWERS = [ROOT / "samples" / "torch" / name for name in (
    "cnn_step5.pt.trace.json", "streams_graph_nccl_cuda.pt.trace.json.gz",
    "resnet18_train_cuda.pt.trace.json.gz")]   # (all three have memory for memflow)


@pytest.mark.slow
@pytest.mark.parametrize("path", ANSWERS, ids=lambda p: p.name)
def test_analyses_answer_the_same_on_the_pftrace(path: Path, tmp_path: Path):
    import orjson
    from click.testing import CliRunner

    from traceconv.cli import app

    pftrace = tmp_path / "same.pftrace"
    traceconv.convert(path, pftrace)
    runner = CliRunner()

    def answer(*args: str) -> str:
        result = runner.invoke(app, list(args))
        assert result.exit_code == 0, result.output
        return result.stdout

    for command in ("summary", "advise"):
        a, b = (orjson.loads(answer(command, str(p), "--json")) for p in (path, pftrace))
        if command == "summary":   # rows of equal time may come in another order
            for found in (a, b):
                found["ops"].sort(key=lambda row: (row["name"], row["kind"]))
        assert a == b, command
    diff = orjson.loads(answer("diff", str(path), str(pftrace), "--json"))
    assert diff["total_delta_ns"] == 0 and all(r["delta_ns"] == 0 for r in diff["rows"])
    for name, source in (("a", path), ("b", pftrace)):
        answer("memflow", str(source), "-o", str(tmp_path / f"{name}.svg"))
        answer("report", str(source), "-o", str(tmp_path / f"{name}.html"), "--title", "same")
    for kind in ("svg", "html"):   # the same but for the input's name (and, in the report's
        pages = [(tmp_path / f"{n}.{kind}").read_text() for n in "ab"]   # header, format)
        for word in (path.name, "same.pftrace", "perfetto", "chrome"):
            pages = [page.replace(word, "") for page in pages]
        assert pages[0] == pages[1], kind


# -- generated traces: interning, incremental-state resets, nested tracks --------------------

class Generated:
    """A trace built with the perfetto package's TraceProtoBuilder, and what it holds."""

    def __init__(self, seed: int, resets: int, nested: bool) -> None:
        rng = random.Random(seed)
        self.builder = TraceProtoBuilder()
        self.slices: Counter = Counter()
        self.instants: Counter = Counter()
        self.counters: list[tuple[str, int, float]] = []
        self.flows = 0
        seq = 7
        self.tracks = {100: "main", 101: "worker"}
        self._descriptor(1, process=(42, "python"))
        self._descriptor(100, thread=(42, 43, "main"), parent=1)
        self._descriptor(101, thread=(42, 44, "worker"), parent=1)
        if nested:   # a group with a stream, and a lane inside the stream
            self._descriptor(200, name="GPU 0")
            self._descriptor(201, name="stream 7", parent=200)
            self._descriptor(202, name="stream 7 lane", parent=201)
            self.tracks.update({201: "stream 7", 202: "stream 7 lane"})
        self._descriptor(300, name="memory", parent=1, counter=True)
        names = [f"op{k}" for k in range(6)]
        t = 1_000
        flow_open: list[int] = []
        for generation in range(resets + 1):
            # each generation interns the names under other iids
            iids = {name: 1 + (k * (generation + 3)) % 17 for k, name in enumerate(names)}
            first = True
            for _ in range(rng.randint(1, 12)):
                track = rng.choice(sorted(self.tracks))
                name = rng.choice(names)
                depth = rng.randint(1, 3)
                stack = []
                for level in range(depth):
                    packet = self._event(seq, t, track, TrackEvent.TYPE_SLICE_BEGIN,
                                         iids[name], first, iids, generation)
                    first = False
                    ann = packet.track_event.debug_annotations.add()
                    ann.name = "level"
                    ann.int_value = level
                    nested_arg = packet.track_event.debug_annotations.add()
                    nested_arg.name = "shape"
                    for size in (level, 2):
                        nested_arg.array_values.add().int_value = size
                    if level == 0 and rng.random() < 0.5:
                        if flow_open:
                            packet.track_event.terminating_flow_ids.append(flow_open.pop())
                            self.flows += 1
                        else:
                            fid = rng.randint(1, 2**63)
                            packet.track_event.flow_ids.append(fid)
                            flow_open.append(fid)
                    stack.append((t, name, level))
                    t += rng.randint(1, 50)
                if rng.random() < 0.5:
                    self._event(seq, t, track, TrackEvent.TYPE_INSTANT, iids["op0"], False,
                                iids, generation)
                    self.instants[(self.tracks[track], t, "op0")] += 1
                while stack:
                    start, sname, level = stack.pop()
                    t += rng.randint(0, 20)
                    self._event(seq, t, track, TrackEvent.TYPE_SLICE_END, None, False, iids,
                                generation)
                    self.slices[(self.tracks[track], start, t - start, sname,
                                 f"cat{generation}", repr({"level": level,
                                                           "shape": [level, 2]}))] += 1
                value = rng.randint(0, 1 << 20)
                packet = self._packet(seq, t, False)
                packet.track_event.type = TrackEvent.TYPE_COUNTER
                packet.track_event.track_uuid = 300
                packet.track_event.counter_value = value
                self.counters.append(("memory", t, float(value)))
                t += 10

    def _descriptor(self, uuid: int, *, process=None, thread=None, name=None, parent=None,
                    counter=False) -> None:
        packet = self.builder.add_packet()
        packet.trusted_packet_sequence_id = 1
        d = packet.track_descriptor
        d.uuid = uuid
        if parent is not None:
            d.parent_uuid = parent
        if process:
            d.process.pid, d.process.process_name = process
        if thread:
            d.thread.pid, d.thread.tid, d.thread.thread_name = thread
        if name:
            d.name = name
        if counter:
            d.counter.unit = CounterDescriptor.UNIT_SIZE_BYTES

    def _packet(self, seq: int, ts: int, first: bool) -> TracePacket:
        packet = self.builder.add_packet()
        packet.trusted_packet_sequence_id = seq
        packet.timestamp = ts
        packet.sequence_flags = (TracePacket.SEQ_INCREMENTAL_STATE_CLEARED if first
                                 else TracePacket.SEQ_NEEDS_INCREMENTAL_STATE)
        return packet

    def _event(self, seq, ts, track, kind, name_iid, first, iids, generation) -> TracePacket:
        packet = self._packet(seq, ts, first)
        if first:   # a new generation: every name interned again
            for name, iid in iids.items():
                entry = packet.interned_data.event_names.add()
                entry.iid, entry.name = iid, name
            cat = packet.interned_data.event_categories.add()
            cat.iid, cat.name = 1, f"cat{generation}"
        event = packet.track_event
        event.type = kind
        event.track_uuid = track
        if name_iid is not None:
            event.name_iid = name_iid
            event.category_iids.append(1)
        return packet


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32), resets=st.integers(0, 3), nested=st.booleans())
def test_generated_traces(seed: int, resets: int, nested: bool, tmp_path_factory):
    made = Generated(seed, resets, nested)
    path = tmp_path_factory.mktemp("gen") / "generated.pftrace"
    path.write_bytes(made.builder.serialize())
    trace = traceconv.load(path)
    names = [t.name for t in trace.tracks]
    got = Counter((names[s.track], s.start, s.dur, s.name, s.category, repr(s.args))
                  for s in trace.iter_slices())
    assert got == made.slices
    assert Counter((names[i.track], i.ts, i.name) for i in trace.iter_instants()) == made.instants
    assert sorted((names[c.track], c.ts, c.value) for c in trace.iter_counter_samples()) == \
        sorted(made.counters)
    assert len(trace.flows) == made.flows
    assert [d.code for d in trace.diagnostics if d.kind == "dropped"] == []
    if nested:
        lane = [t for t in trace.tracks if t.name == "stream 7 lane"]
        assert not lane or trace.processes[lane[0].process].name == "GPU 0"


# -- hand-built packets: one rule each (expected values worked out by hand) -------------------

def _load(builder: TraceProtoBuilder, tmp_path: Path) -> traceconv.Trace:
    path = tmp_path / "hand.pftrace"
    path.write_bytes(builder.serialize())
    return traceconv.load(path)


def _load_text(textproto: Path, tmp_path: Path) -> traceconv.Trace:
    """A trace written as protobuf text (Perfetto's diff tests), loaded from its binary."""
    path = tmp_path / textproto.with_suffix(".pftrace").name
    path.write_bytes(perfetto_text_trace(textproto))
    return traceconv.load(path)


def _thread(builder: TraceProtoBuilder, uuid: int = 100) -> None:
    packet = builder.add_packet()
    packet.trusted_packet_sequence_id = 1
    packet.track_descriptor.uuid = uuid
    packet.track_descriptor.thread.pid, packet.track_descriptor.thread.tid = 7, 8
    packet.track_descriptor.thread.thread_name = "main"


def _event(builder: TraceProtoBuilder, ts: int, kind: int, name: str = "", *, track=100,
           flags=TracePacket.SEQ_NEEDS_INCREMENTAL_STATE, seq=2) -> TracePacket:
    packet = builder.add_packet()
    packet.trusted_packet_sequence_id = seq
    packet.timestamp = ts
    packet.sequence_flags = flags
    if kind:
        packet.track_event.type = kind
    if track is not None:
        packet.track_event.track_uuid = track
    if name:
        packet.track_event.name = name
    return packet


def test_legacy_complete_event(tmp_path: Path):
    builder = TraceProtoBuilder()
    _thread(builder)
    packet = _event(builder, 1_000, 0, "X event", flags=TracePacket.SEQ_INCREMENTAL_STATE_CLEARED)
    packet.track_event.legacy_event.phase = ord("X")
    packet.track_event.legacy_event.duration_us = 5
    trace = _load(builder, tmp_path)
    assert [(s.name, s.start, s.dur) for s in trace.iter_slices()] == [("X event", 1_000, 5_000)]


@pytest.mark.integration
def test_legacy_mark_is_an_instant_as_trace_processor_has_it(tmp_path: Path, trace_processor):
    """Chrome writes its page-load milestones (navigationStart, firstContentfulPaint) as
    legacy 'R' marks: an instant each, where and as trace_processor has them (a slice of
    no length on the thread)."""
    builder = TraceProtoBuilder()
    _thread(builder)
    for ts, name in ((1_000, "navigationStart"), (4_000, "firstContentfulPaint")):
        packet = _event(builder, ts, 0, name, flags=TracePacket.SEQ_INCREMENTAL_STATE_CLEARED)
        packet.track_event.legacy_event.phase = ord("R")
    path = tmp_path / "marks.pftrace"
    path.write_bytes(builder.serialize())
    trace_processor.load(path.read_bytes())
    theirs = [(r.name, r.ts, r.dur) for r in trace_processor.query(
        "select name, ts, dur from slice order by ts")]
    trace = traceconv.load(path)
    assert [(i.name, i.ts, 0) for i in trace.iter_instants()] == theirs == [
        ("navigationStart", 1_000, 0), ("firstContentfulPaint", 4_000, 0)]
    assert trace.diagnostics.count("perfetto.event_type") == 0


@pytest.mark.integration
@pytest.mark.parametrize("order", [(0, 1, 0, 2), (1, 0, 2, 0), (1, 0), (2, 1), (0, 0)])
def test_a_process_declared_again_keeps_the_name_trace_processor_shows(
        tmp_path: Path, trace_processor, order: tuple[int, ...]):
    """Chrome declares a process several times: with its command line as the name, and
    as a Chrome process of a type ("Renderer", later "WebUI Top Renderer"), in any order.
    The name is the one trace_processor shows for every order: the first declared (the
    order of a real Chromium recording among them)."""
    names = ["/usr/lib/chromium/chromium --type=renderer", "Renderer", "WebUI Top Renderer"]
    builder = TraceProtoBuilder()
    for which in order:
        packet = builder.add_packet()
        packet.trusted_packet_sequence_id = 1
        desc = packet.track_descriptor
        desc.uuid, desc.process.pid, desc.process.process_name = 9, 4242, names[which]
        if which:
            desc.chrome_process.process_type = 2 if which == 1 else 42
    _event(builder, 1_000, TrackEvent.TYPE_INSTANT, "x", track=9,
           flags=TracePacket.SEQ_INCREMENTAL_STATE_CLEARED)
    path = tmp_path / "named.pftrace"
    path.write_bytes(builder.serialize())
    trace_processor.load(path.read_bytes())
    (theirs,) = [r.name for r in trace_processor.query("select name from process where pid = 4242")]
    assert [p.name for p in traceconv.load(path).processes if p.pid == 4242] == [theirs]


def test_events_under_an_undeclared_parent_are_left_out_and_counted(tmp_path: Path):
    """A track whose parent uuid no descriptor declares: trace_processor cannot place it
    and drops its events (Chromium writes 30 such in a startup trace); so here, counted."""
    builder = TraceProtoBuilder()
    _thread(builder)
    orphan = builder.add_packet()
    orphan.trusted_packet_sequence_id = 1
    orphan.track_descriptor.uuid, orphan.track_descriptor.parent_uuid = 200, 999
    for track, name in ((100, "kept"), (200, "orphan")):
        _event(builder, 1_000, TrackEvent.TYPE_INSTANT, name, track=track,
               flags=TracePacket.SEQ_INCREMENTAL_STATE_CLEARED)
    trace = _load(builder, tmp_path)
    assert [i.name for i in trace.iter_instants()] == ["kept"]
    assert trace.diagnostics.count("perfetto.track_parent_not_declared") == 1


def test_an_instant_that_carries_a_flow_is_a_slice_of_no_length(tmp_path: Path):
    """Chromium posts a task with an instant (`SequenceManager PostTask`) whose flow ends at
    the task that runs it: trace_processor keeps every instant as a slice of no length and
    links it (5,834 such flows in a real startup trace, all dropped before). So here: the
    instant is a zero-length slice, linked; an instant without a flow stays an instant."""
    builder = TraceProtoBuilder()
    _thread(builder)
    cleared = TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
    post = _event(builder, 1_000, TrackEvent.TYPE_INSTANT, "PostTask", flags=cleared)
    post.track_event.flow_ids.append(9)
    _event(builder, 1_500, TrackEvent.TYPE_INSTANT, "mark")
    run = _event(builder, 2_000, TrackEvent.TYPE_SLICE_BEGIN, "RunTask")
    run.track_event.terminating_flow_ids.append(9)
    _event(builder, 3_000, TrackEvent.TYPE_SLICE_END, "")
    trace = _load(builder, tmp_path)
    assert sorted((s.name, s.start, s.dur) for s in trace.iter_slices()) == [
        ("PostTask", 1_000, 0), ("RunTask", 2_000, 1_000)]
    assert [i.name for i in trace.iter_instants()] == ["mark"]
    assert [(trace.slice(f.source).name, trace.slice(f.target).name)
            for f in trace.iter_flows()] == [("PostTask", "RunTask")]
    assert not trace.diagnostics.count("perfetto.flow_endpoint_not_slice")


def test_other_clocks_move_onto_the_trace_clock(tmp_path: Path):
    builder = TraceProtoBuilder()
    _thread(builder)
    snapshot = builder.add_packet()
    snapshot.trusted_packet_sequence_id = 1
    for clock_id, reading in ((6, 1_000), (1, 5_000)):   # BOOTTIME 1000 = REALTIME 5000
        clock = snapshot.clock_snapshot.clocks.add()
        clock.clock_id, clock.timestamp = clock_id, reading
    packet = _event(builder, 5_500, TrackEvent.TYPE_INSTANT, "on realtime",
                    flags=TracePacket.SEQ_INCREMENTAL_STATE_CLEARED)
    packet.timestamp_clock_id = 1
    packet = _event(builder, 700, TrackEvent.TYPE_INSTANT, "on a clock no snapshot has")
    packet.timestamp_clock_id = 4
    trace = _load(builder, tmp_path)
    assert [(i.name, i.ts) for i in trace.iter_instants()] == [("on realtime", 1_500)]
    assert trace.diagnostics.count("perfetto.clock_without_snapshot") == 1


@pytest.mark.parametrize("uuid", [100, 2**63, 2**64 - 1])   # (fuzz: past int64)
def test_sequence_defaults_give_the_track(tmp_path: Path, uuid: int):
    builder = TraceProtoBuilder()
    _thread(builder, uuid)
    first = _event(builder, 10, TrackEvent.TYPE_SLICE_BEGIN, "a", track=None,
                   flags=TracePacket.SEQ_INCREMENTAL_STATE_CLEARED)
    first.trace_packet_defaults.track_event_defaults.track_uuid = uuid
    _event(builder, 20, TrackEvent.TYPE_SLICE_END, track=None)
    trace = _load(builder, tmp_path)
    (only,) = trace.iter_slices()
    assert (trace.tracks[only.track].name, only.start, only.dur) == ("main", 10, 10)


def test_unpaired_ends_and_begins_and_stateless_packets(tmp_path: Path):
    builder = TraceProtoBuilder()
    _thread(builder)
    _event(builder, 5, TrackEvent.TYPE_INSTANT, "before any clear")   # needs state: skipped
    _event(builder, 10, TrackEvent.TYPE_SLICE_END, flags=TracePacket.SEQ_INCREMENTAL_STATE_CLEARED)
    _event(builder, 20, TrackEvent.TYPE_SLICE_BEGIN, "outer")
    _event(builder, 30, TrackEvent.TYPE_SLICE_BEGIN, "inner")
    _event(builder, 40, TrackEvent.TYPE_SLICE_END)
    _event(builder, 90, TrackEvent.TYPE_INSTANT, "last")
    trace = _load(builder, tmp_path)
    assert sorted((s.name, s.start, s.dur) for s in trace.iter_slices()) == [
        ("inner", 30, 10), ("outer", 20, 70)]   # outer never ends: up to the last timestamp
    assert [i.name for i in trace.iter_instants()] == ["last"]
    diagnostics = trace.diagnostics
    assert diagnostics.count("perfetto.needs_incremental_state") == 1
    assert diagnostics.count("perfetto.end_without_begin") == 1
    assert diagnostics.count("perfetto.slice_not_ended") == 1


def test_incremental_counter_and_unit_multiplier(tmp_path: Path):
    builder = TraceProtoBuilder()
    counter = builder.add_packet()
    counter.trusted_packet_sequence_id = 1
    counter.track_descriptor.uuid = 300
    counter.track_descriptor.name = "bytes sent"
    counter.track_descriptor.counter.is_incremental = True
    counter.track_descriptor.counter.unit_multiplier = 1024
    for k, delta in enumerate((1, 2, 3)):
        packet = _event(builder, 10 * (k + 1), TrackEvent.TYPE_COUNTER, track=300,
                        flags=TracePacket.SEQ_INCREMENTAL_STATE_CLEARED if not k else
                        TracePacket.SEQ_NEEDS_INCREMENTAL_STATE)
        packet.track_event.counter_value = delta
    trace = _load(builder, tmp_path)
    assert [(c.ts, c.value) for c in trace.iter_counter_samples()] == [
        (10, 1024.0), (20, 3072.0), (30, 6144.0)]


# Perfetto's own diff test (test/trace_processor/diff_tests/parser/track_event/
# incremental_counter_sequences.textproto, its expected rows in tests.py): two sequences
# write deltas to one incremental counter track, interleaved; each sums its own.
INCREMENTAL_SEQUENCES = (ROOT / "tests" / "data" / "perfetto"
                         / "perfetto_incremental_counter_sequences.textproto")


def test_incremental_counters_sum_per_sequence_however_they_interleave(tmp_path: Path):
    trace = _load_text(INCREMENTAL_SEQUENCES, tmp_path)
    assert [(c.ts, c.value) for c in trace.iter_counter_samples()] == [
        (100, 100.0), (150, 50.0), (200, 110.0), (250, 55.0)]


# Perfetto's diff test of TrackEvent counters (track_event_counters.textproto, cut: its
# one Chrome extension field and its comments left out): extra counter values on the
# sequence's default tracks, on tracks an event names, int and double, next to events of
# each kind. The real trace_processor loads these 14 values (and 4 more from
# thread_time_absolute_us and thread_instruction_count_absolute, which the reader counts
# as perfetto.typed_field_not_read).
TRACK_EVENT_COUNTERS = (ROOT / "tests" / "data" / "perfetto"
                        / "perfetto_track_event_counters_cut.textproto")


def test_extra_counter_values_pair_event_by_event(tmp_path: Path):
    trace = _load_text(TRACK_EVENT_COUNTERS, tmp_path)
    assert sorted((c.ts, c.value) for c in trace.iter_counter_samples()) == sorted([
        (1000, 1e6), (1100, 1.01e6), (2000, 2e6), (2000, 2.01e6), (2200, 2.02e6),
        (2200, 2.03e6), (3000, 1024.0), (3100, 2048.0), (4000, 1024.0), (4000, 2.04e6),
        (4200, 3.1415926), (4300, 0.5), (4500, 2.71828), (4500, 4096.0)])
    assert "perfetto.extra_counter_values" not in trace.diagnostics


def test_incremental_clock_as_the_perfetto_sdk_writes_it(tmp_path: Path):
    builder = TraceProtoBuilder()
    _thread(builder)

    def snapshot(boottime: int, reading: int, first: bool) -> None:
        packet = builder.add_packet()
        packet.trusted_packet_sequence_id = 2
        packet.sequence_flags = (TracePacket.SEQ_INCREMENTAL_STATE_CLEARED if first
                                 else TracePacket.SEQ_NEEDS_INCREMENTAL_STATE)
        for clock_id, value in ((6, boottime), (64, reading)):
            clock = packet.clock_snapshot.clocks.add()
            clock.clock_id, clock.timestamp = clock_id, value
            if clock_id == 64:
                clock.is_incremental, clock.unit_multiplier_ns = True, 1000

    def instant(delta: int, name: str) -> None:
        packet = _event(builder, delta, TrackEvent.TYPE_INSTANT, name)
        packet.timestamp_clock_id = 64

    # clock 64 counts µs in deltas: 100 µs is BOOTTIME 1,000,000 ns (the live
    # trace_processor places these three at the same times)
    snapshot(1_000_000, 100, first=True)
    instant(5, "a")     # 105 µs -> 1,005,000
    instant(3, "b")     # 108 µs -> 1,008,000
    snapshot(2_000_000, 500, first=False)   # (a clock never goes back: 500 µs)
    instant(1, "c")     # 1 µs after the new base -> 2,001,000
    trace = _load(builder, tmp_path)
    assert [(i.name, i.ts) for i in trace.iter_instants()] == [
        ("a", 1_005_000), ("b", 1_008_000), ("c", 2_001_000)]


def test_extra_counter_values_ride_on_a_slice(tmp_path: Path):
    builder = TraceProtoBuilder()
    _thread(builder)
    for uuid, name in ((300, "instructions"), (301, "ipc")):
        packet = builder.add_packet()
        packet.trusted_packet_sequence_id = 1
        packet.track_descriptor.uuid = uuid
        packet.track_descriptor.name = name
        packet.track_descriptor.counter.SetInParent()
    begin = _event(builder, 50, TrackEvent.TYPE_SLICE_BEGIN, "work",
                   flags=TracePacket.SEQ_INCREMENTAL_STATE_CLEARED)
    begin.track_event.extra_counter_track_uuids.append(300)
    begin.track_event.extra_counter_values.append(7)
    begin.track_event.extra_double_counter_track_uuids.append(301)
    begin.track_event.extra_double_counter_values.append(2.5)
    end = _event(builder, 80, TrackEvent.TYPE_SLICE_END)
    end.track_event.extra_counter_track_uuids.append(300)
    end.track_event.extra_counter_values.append(9)
    trace = _load(builder, tmp_path)
    names = [t.name for t in trace.tracks]
    assert sorted((names[c.track], c.ts, c.value) for c in trace.iter_counter_samples()) == [
        ("instructions", 50, 7.0), ("instructions", 80, 9.0), ("ipc", 50, 2.5)]
    assert [(s.name, s.start, s.dur) for s in trace.iter_slices()] == [("work", 50, 30)]


def test_debug_annotations_without_any_value(tmp_path: Path):
    """Found by the fuzzer (protobuf_wire mutator): annotations that name no value at all,
    alone in their block, made the scalar pass index an empty column."""
    builder = TraceProtoBuilder()
    _thread(builder)
    packet = _event(builder, 1_000, TrackEvent.TYPE_INSTANT, "mark",
                    flags=TracePacket.SEQ_INCREMENTAL_STATE_CLEARED)
    packet.track_event.debug_annotations.add().name = "empty"
    trace = _load(builder, tmp_path)
    assert [(i.name, i.args) for i in trace.iter_instants()] == [("mark", {"empty": None})]


def test_names_that_are_not_utf8_are_repaired_and_counted(tmp_path: Path):
    """The protobuf decoder hands a string field of invalid UTF-8 over as bytes: interned
    event and argument names (the fuzzer's two crash classes: a Chrome write, the dotted-name
    check) and a thread's name become text with U+FFFD, counted, and every writer works."""
    trace = traceconv.load(ROOT / "samples" / "torch" / "cnn_step5.pt.trace.json")
    out = io.BytesIO()
    write(trace, out)
    data = out.getvalue()
    spoiled = {b"aten::conv2d": b"aten\xff:conv2d", b"Input Dims": b"Input\xfeDims",
               b"converter": b"conve\xffter"}   # (a trace attribute's key)
    for good, bad in spoiled.items():
        assert data.count(good) == 1 and len(good) == len(bad)   # each interned once
        data = data.replace(good, bad)
    # a file of another producer (no model attribute): the thread's name from its descriptor
    builder = TraceProtoBuilder()
    packet = builder.add_packet()
    packet.track_descriptor.uuid = 9
    packet.track_descriptor.thread.pid, packet.track_descriptor.thread.tid = 4, 5
    packet.track_descriptor.thread.thread_name = "workerQ"
    packet = builder.add_packet()
    packet.trusted_packet_sequence_id, packet.timestamp = 7, 10
    packet.track_event.type, packet.track_event.track_uuid = TrackEvent.TYPE_INSTANT, 9
    packet.track_event.name = "tick"
    foreign = builder.serialize().replace(b"workerQ", b"worker\xff")
    for name, content in (("spoiled.pftrace", data), ("foreign.pftrace", foreign)):
        (tmp_path / name).write_bytes(content)
    read, other = (traceconv.load(tmp_path / n) for n in ("spoiled.pftrace", "foreign.pftrace"))
    assert traceconv.validate(read) == [] and traceconv.validate(other) == []
    names = {s.name for s in read.iter_slices()}
    assert "aten\ufffd:conv2d" in names and "aten::conv2d" not in names
    assert any("Input\ufffdDims" in (s.args or {}) for s in read.iter_slices())
    assert "conve\ufffdter" in read.metadata.attributes["trace_attributes"]
    assert read.diagnostics.count("perfetto.invalid_utf8") == 3   # one per distinct text
    assert "worker\ufffd" in {t.name for t in other.tracks}
    assert other.diagnostics.count("perfetto.invalid_utf8") == 1
    for fmt, suffix in (("chrome", "json"), ("perfetto", "pftrace")):
        traceconv.convert(tmp_path / "spoiled.pftrace", tmp_path / f"again.{suffix}", to=fmt)



def test_strings_inside_list_and_dict_arguments_are_counted_too(tmp_path: Path):
    """Inline strings of composite annotations (a list of input types) that are not UTF-8
    are repaired and counted, as interned names are (they were repaired silently)."""
    trace = traceconv.load(ROOT / "samples" / "torch" / "cnn_step5.pt.trace.json")
    out = io.BytesIO()
    write(trace, out)
    path = tmp_path / "spoiled.pftrace"
    path.write_bytes(out.getvalue().replace(b"float", b"fl\xffat"))
    read = traceconv.load(path)
    types = [s.args["Input type"] for s in read.iter_slices()
             if s.args and "Input type" in s.args]
    assert types and all("float" not in t for t in types)
    assert "fl\ufffdat" in types[0]
    assert read.diagnostics.count("perfetto.invalid_utf8") > 0


RETROBUS = Path(__file__).parent / "data" / "perfetto" / "retrobus0.3.1_interned.pftrace"


def test_interned_strings_are_text_not_a_repair():
    """An interned string is a ``bytes`` field (``InternedString.str``): plain UTF-8 there is
    read as text, not counted as repaired (retrobus-perfetto interns every name and string
    argument). The names are those of the packets, read with the protobuf classes."""
    trace = traceconv.load(RETROBUS)
    assert trace.diagnostics.count("perfetto.invalid_utf8") == 0
    interned = {e.name for p in raw_packets(RETROBUS)
                for e in p.interned_data.event_names}
    assert {s.name for s in trace.iter_slices()} <= interned
    events = [p.track_event for p in raw_packets(RETROBUS) if p.HasField("track_event")]
    begins = sum(e.type == e.TYPE_SLICE_BEGIN for e in events)
    flowing = sum(e.type == e.TYPE_INSTANT and bool(e.flow_ids or e.terminating_flow_ids)
                  for e in events)   # (an instant carrying a flow is a slice of no length)
    assert (len(trace.slices), len(trace.instants)) == (begins + flowing, 40)


@pytest.mark.integration
def test_interned_string_arguments_as_trace_processor_reads_them(trace_processor):
    trace_processor.load(RETROBUS.read_bytes())
    theirs = Counter(r.v for r in trace_processor.query(
        "select display_value v from args where key = 'debug.mode'"))
    ours = Counter(s.args["mode"] for s in traceconv.load(RETROBUS).iter_slices()
                   if s.args and "mode" in s.args)
    assert ours == theirs == Counter({"IM2": 40})


@pytest.mark.integration
def test_per_thread_counters_stay_apart_in_chrome_json(trace_processor, tmp_path: Path):
    """Chrome's thread-time counters: one track per thread, each named ``thread_time`` in
    its process. Written as Chrome JSON (``C`` events have no thread), each keeps a name of
    its own, so trace_processor loads as many counter tracks, each with the same values, as
    it loads from the original; the unit (ns) comes from the counter's built-in type."""
    tp = trace_processor
    tp.load(CHROMIUM.read_bytes())
    query = ("select t.id, count(*) n, sum(c.value) total from counter c "
             "join counter_track t on c.track_id = t.id group by t.id")
    original = sorted((r.n, r.total) for r in tp.query(query))
    out = tmp_path / "out.json"
    traceconv.convert(CHROMIUM, out, to="chrome")
    tp.load(out.read_bytes())
    assert sorted((r.n, r.total) for r in tp.query(query)) == original
    assert len(original) == 14   # (in the input: 14 thread-time tracks hold values)
    trace = traceconv.load(CHROMIUM)
    assert {t.unit for t in trace.tracks if t.name == "thread_time"} == {"ns"}


@pytest.mark.parametrize("size", [2, 3, 20])
def test_a_file_cut_inside_its_first_packet_is_one_error(tmp_path: Path, size: int):
    """The first bytes of a real trace (or of any protobuf file, which a Perfetto packet's
    tag may begin) frame no whole packet: one line naming the file and byte 0, exit 1, not
    an empty trace with one packet left out (found by a hostile-input round)."""
    from click.testing import CliRunner

    from traceconv.cli import app

    path = tmp_path / "cut.pftrace"
    path.write_bytes(RETROBUS.read_bytes()[:size])
    first = raw_packets(RETROBUS)[0].ByteSize()
    assert size < first + 2   # (inside the first packet: its tag, its length, its bytes)
    result = CliRunner().invoke(app, ["convert", str(path), "-o", str(tmp_path / "o.json")])
    assert result.exit_code == 1 and not (tmp_path / "o.json").exists()
    (line,) = result.output.strip().splitlines()
    assert line.startswith(f"traceconv: error: {path}:byte offset 0: ")

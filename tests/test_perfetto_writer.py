"""The Perfetto writer, checked by decoding its bytes with the official generated classes."""

from __future__ import annotations

import gzip
import io
import json

import pytest
from click.testing import CliRunner
from google.protobuf.unknown_fields import UnknownFieldSet
from hypothesis import given, settings
from hypothesis import strategies as st
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import (
    BuiltinClock,
    CounterDescriptor,
    TracePacket,
    TrackEvent,
)
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import (
    Trace as PbTrace,
)

import traceconv
from traceconv.cli import app
from traceconv.formats.perfetto import write
from traceconv.formats.perfetto.descriptors import SYNTHETIC_ID_BASE, SYNTHETIC_PID_BASE
from traceconv.formats.perfetto.validate import validate_bytes
from traceconv.model import ProcessKind, Trace, TrackKind

BEGIN, END = TrackEvent.TYPE_SLICE_BEGIN, TrackEvent.TYPE_SLICE_END
INSTANT, COUNTER = TrackEvent.TYPE_INSTANT, TrackEvent.TYPE_COUNTER


def encode(trace: Trace) -> bytes:
    out = io.BytesIO()
    write(trace, out)
    return out.getvalue()


def decode(data: bytes) -> list[TracePacket]:
    parsed = PbTrace()
    parsed.ParseFromString(data)
    return list(parsed.packet)


class Decoded:
    """The written packets, with descriptors by uuid and events resolved to names."""

    def __init__(self, trace: Trace) -> None:
        out = io.BytesIO()
        self.diagnostics = write(trace, out)
        self.data = out.getvalue()
        self.packets = decode(self.data)
        self.tracks = {p.track_descriptor.uuid: p.track_descriptor for p in self.packets
                       if p.HasField("track_descriptor")}
        self.by_name = {d.name or d.thread.thread_name or d.process.process_name: d
                        for d in self.tracks.values()}
        names, categories, arg_names = {}, {}, {}
        self.events = []
        for p in self.packets:
            for entry in p.interned_data.event_names:
                names[entry.iid] = entry.name
            for entry in p.interned_data.event_categories:
                categories[entry.iid] = entry.name
            for entry in p.interned_data.debug_annotation_names:
                arg_names[entry.iid] = entry.name
            if p.HasField("track_event"):
                e = p.track_event
                self.events.append((p.timestamp, e.type, self.track_name(e.track_uuid),
                                    names.get(e.name_iid), [categories[c] for c in e.category_iids],
                                    e))
        self.arg_names = arg_names

    def track_name(self, uuid: int) -> str:
        d = self.tracks[uuid]
        return d.name or d.thread.thread_name

    def args(self, event: TrackEvent) -> dict:
        return {self.arg_names[a.name_iid]: a for a in event.debug_annotations}


def sample_trace() -> tuple[Trace, dict[str, int]]:
    trace = Trace()
    meta = trace.metadata
    meta.source_format, meta.source_file, meta.framework, meta.rank = (
        "chrome", "rank-0.pt.trace.json", "pytorch", 0)
    meta.clock = "unix epoch"
    host = trace.add_process("python train.py", pid=4242, sort_index=0)
    gpu = trace.add_process("GPU 0", kind=ProcessKind.DEVICE, pid=0)
    ids = {
        "main": trace.add_track("MainThread", process=host, tid=4242, sort_index=1),
        "loader": trace.add_track("DataLoader", process=host, sort_index=2),
        "stream": trace.add_track("stream 7", process=gpu, kind=TrackKind.STREAM, tid=7,
                                  description="CUDA stream 7 on device 0"),
        "mem": trace.add_track("allocated", process=gpu, kind=TrackKind.COUNTER, unit="bytes"),
        "util": trace.add_track("utilization", process=gpu, kind=TrackKind.COUNTER, unit="%"),
        "time": trace.add_track("queue wait", process=gpu, kind=TrackKind.COUNTER, unit="ns"),
    }
    t0 = 1_700_000_000_000_000_000
    main = ids["main"]
    ids["step"] = trace.add_slice(main, t0, 9_000, "ProfilerStep#1", "user_annotation",
                                  {"step": 1})
    ids["mm"] = trace.add_slice(main, t0 + 1_000, 4_000, "aten::matmul", "cpu_op", {
        "Input Dims": [[64, 128], [128, 256]], "dtype": "float32", "Comms Id": 2**64 - 5,
        "neg": -3, "ratio": 0.5, "flag": True, "none": None, "empty": {}, "nested": {"a": {"b": 1}},
        "raw": b"\xffok"})
    ids["launch"] = trace.add_slice(main, t0 + 2_000, 500, "cudaLaunchKernel", "cuda_runtime",
                                    {"correlation": 17})
    ids["kernel"] = trace.add_slice(ids["stream"], t0 + 3_000, 2_500, "sgemm_128x64_nn", "kernel")
    trace.add_flow(ids["launch"], ids["kernel"], "ac2g")
    trace.add_instant(ids["loader"], t0 + 500, "batch_ready", "data", {"batch_idx": 3})
    for ts, value in ((t0, 0), (t0 + 2_900, 33_554_432), (t0 + 6_000, 8_388_608)):
        trace.add_counter(ids["mem"], ts, value)
    trace.add_counter(ids["util"], t0, 12.5)
    trace.add_counter(ids["time"], t0, 7)
    return trace, ids


def test_descriptors_processes_threads_streams_counters():
    trace, _ = sample_trace()
    d = Decoded(trace)
    host, gpu = d.by_name["python train.py"], d.by_name["GPU 0"]
    assert host.process.pid == 4242
    # a device is a process with a made-up pid (beyond any real one), its streams threads:
    # the Perfetto UI draws a collapsed process as its threads' busy share
    assert gpu.process.pid >= SYNTHETIC_PID_BASE and gpu.process.process_name == "GPU 0"
    main, loader = d.by_name["MainThread"], d.by_name["DataLoader"]
    assert (main.thread.pid, main.thread.tid, main.parent_uuid) == (4242, 4242, host.uuid)
    assert loader.thread.tid >= SYNTHETIC_ID_BASE          # the model had no tid
    assert (main.sibling_order_rank, loader.sibling_order_rank) == (1, 2)
    assert host.child_ordering == host.EXPLICIT
    root = d.tracks[0]   # processes ordered by sort_index: explicit order on the root
    assert root.process_ordering == root.PROCESS_ORDERING_EXPLICIT
    assert host.sibling_order_rank == 0 and not gpu.HasField("sibling_order_rank")
    stream = d.by_name["stream 7"]
    assert stream.parent_uuid == gpu.uuid and stream.thread.pid == gpu.process.pid
    assert SYNTHETIC_ID_BASE <= stream.thread.tid < SYNTHETIC_PID_BASE   # never the pid
    assert stream.description == "CUDA stream 7 on device 0"
    assert d.by_name["allocated"].counter.unit == CounterDescriptor.UNIT_SIZE_BYTES
    assert d.by_name["queue wait"].counter.unit == CounterDescriptor.UNIT_TIME_NS
    assert d.by_name["utilization"].counter.unit_name == "%"
    assert len(d.tracks) == 1 + 2 + 6
    # every descriptor is on sequence 1, every event on sequence 2
    assert {p.trusted_packet_sequence_id for p in d.packets if p.HasField("track_descriptor")} \
        == {1}
    assert {p.trusted_packet_sequence_id for p in d.packets if p.HasField("track_event")} == {2}


def test_sequence_flags_and_interning():
    trace, _ = sample_trace()
    d = Decoded(trace)
    events_seq = [p for p in d.packets if p.trusted_packet_sequence_id == 2]
    assert events_seq[0].sequence_flags == 3    # CLEARED | NEEDS
    assert all(p.sequence_flags == 2 for p in events_seq[1:])
    interned_names = [e.name for p in events_seq for e in p.interned_data.event_names]
    assert sorted(interned_names) == sorted({"ProfilerStep#1", "aten::matmul",
                                             "cudaLaunchKernel", "sgemm_128x64_nn",
                                             "batch_ready"})
    assert all(name is not None for _, kind, _, name, _, _ in d.events if kind in (BEGIN,
                                                                                     INSTANT))
    assert not any(e.HasField("name") for *_, e in d.events)   # names only by iid
    report = validate_bytes(d.data)
    assert report.ok and not report.warnings
    assert report.counts == {"packets": len(d.packets), "tracks": 8, "slices": 4,
                             "instants": 1, "counter_values": 5, "flows": 1}


def test_begin_end_order_flows_and_counters():
    trace, _ = sample_trace()
    d = Decoded(trace)
    t0 = 1_700_000_000_000_000_000
    main = [(ts - t0, kind, name) for ts, kind, track, name, _, _ in d.events
            if track == "MainThread"]
    assert main == [(0, BEGIN, "ProfilerStep#1"), (1000, BEGIN, "aten::matmul"),
                    (2000, BEGIN, "cudaLaunchKernel"), (2500, END, None), (5000, END, None),
                    (9000, END, None)]
    stamps = [ts for ts, *_ in d.events]
    assert stamps == sorted(stamps)
    launch = next(e for _, _, _, name, _, e in d.events if name == "cudaLaunchKernel")
    kernel = next(e for _, _, _, name, _, e in d.events if name == "sgemm_128x64_nn")
    assert list(launch.flow_ids) == list(kernel.terminating_flow_ids) == [1]
    values = [(e.counter_value if e.HasField("counter_value") else e.double_counter_value)
              for _, kind, track, _, _, e in d.events if kind == COUNTER and track == "allocated"]
    assert values == [0, 33_554_432, 8_388_608]
    util = next(e for _, kind, track, _, _, e in d.events if track == "utilization")
    assert util.HasField("double_counter_value") and util.double_counter_value == 12.5


def test_args_become_debug_annotations():
    trace, _ = sample_trace()
    d = Decoded(trace)
    matmul = next(e for _, _, _, name, _, e in d.events if name == "aten::matmul")
    args = d.args(matmul)
    dims = args["Input Dims"].array_values
    assert [[v.int_value for v in row.array_values] for row in dims] == [[64, 128], [128, 256]]
    assert args["dtype"].string_value == "float32"
    assert args["Comms Id"].string_value == str(2**64 - 5)   # beyond int64: exact as text
    assert args["neg"].int_value == -3
    assert args["ratio"].double_value == 0.5
    assert args["flag"].bool_value is True
    # a null and an empty dict have no value (trace_processor shows no arg for them, as for
    # the JSON input's), only field 2047 (unknown to these protos) saying which: 0, 2
    for name, mark in (("none", 0), ("empty", 2)):
        annotation = args[name]
        assert annotation.WhichOneof("value") is None and not annotation.dict_entries
        assert [(f.field_number, f.data) for f in UnknownFieldSet(annotation)] == [(2047, mark)]
    inner = args["nested"].dict_entries[0]
    assert inner.name == "a" and inner.dict_entries[0].name == "b"
    assert inner.dict_entries[0].int_value == 1
    assert args["raw"].string_value == "\ufffdok"
    _, _, _, _, categories, _ = next(ev for ev in d.events if ev[3] == "aten::matmul")
    assert categories == ["cpu_op"]


def test_attributes_and_clock_snapshot():
    trace, _ = sample_trace()
    packets = Decoded(trace).packets
    attributes = {a.key: a.string_value or a.long_value
                  for p in packets if p.HasField("trace_attributes")
                  for a in p.trace_attributes.attribute}
    assert attributes["source_format"] == "chrome"
    assert attributes["source_file"] == "rank-0.pt.trace.json"
    assert attributes["framework"] == "pytorch"
    assert attributes["converter"] == f"traceconv {traceconv.__version__}"
    assert attributes["clock"] == "unix epoch"
    snapshots = [p.clock_snapshot for p in packets if p.HasField("clock_snapshot")]
    assert len(snapshots) == 1
    clocks = {c.clock_id: c.timestamp for c in snapshots[0].clocks}
    t0 = 1_700_000_000_000_000_000
    assert clocks == {BuiltinClock.BUILTIN_CLOCK_BOOTTIME: t0,
                      BuiltinClock.BUILTIN_CLOCK_REALTIME: t0}


def test_no_clock_snapshot_without_an_epoch_clock_and_negative_times_shift():
    trace = Trace()
    main = trace.add_track("main", process=trace.add_process("p", pid=3), tid=3)
    trace.add_slice(main, -50, 100, "early")
    d = Decoded(trace)
    assert not any(p.HasField("clock_snapshot") for p in d.packets)
    assert [(ts, kind) for ts, kind, *_ in d.events] == [(0, BEGIN), (100, END)]
    assert d.diagnostics.count("perfetto.time_shifted") == 1
    assert not len(trace.diagnostics)   # the writer's findings are its own


def test_slices_ending_past_int64_are_clamped_not_wrapped():
    trace = Trace()
    main = trace.add_track("main", process=trace.add_process("p", pid=3), tid=3)
    trace.add_slice(main, 2**63 - 100, 1000, "late")     # its end does not fit in int64
    trace.add_slice(main, 2**63 - 50, 10, "inner")
    d = Decoded(trace)
    assert [(ts - 2**63, kind) for ts, kind, *_ in d.events] == [
        (-100, BEGIN), (-50, BEGIN), (-40, END), (-1, END)]
    assert validate_bytes(d.data).ok


def test_partial_overlap_goes_to_a_lane_track_under_its_thread():
    trace = Trace()
    main = trace.add_track("MainThread", process=trace.add_process("p", pid=3), tid=3)
    trace.add_slice(main, 0, 100, "frame")
    trace.add_slice(main, 50, 100, "forward")
    d = Decoded(trace)
    lane = d.by_name["MainThread (overlap lane 1)"]
    assert lane.parent_uuid == d.by_name["MainThread"].uuid
    assert [(track, name) for _, kind, track, name, _, _ in d.events if kind == BEGIN] == [
        ("MainThread", "frame"), ("MainThread (overlap lane 1)", "forward")]
    assert validate_bytes(d.data).ok


def test_600_deep_nest_stays_within_512_levels():
    trace = Trace()
    main = trace.add_track("main", process=trace.add_process("p", pid=3), tid=3)
    for depth in range(600):
        trace.add_slice(main, depth, 10_000 - 2 * depth, f"f{depth}")
    report = validate_bytes(encode(trace))
    assert report.ok and report.counts["slices"] == 600


def test_misplaced_events_are_counted_not_written():
    trace = Trace()
    p = trace.add_process("p", pid=3)
    counter = trace.add_track("c", process=p, kind=TrackKind.COUNTER)
    main = trace.add_track("main", process=p, tid=3)
    wrong = trace.add_slice(counter, 0, 5, "wrong")
    trace.add_flow(trace.add_slice(main, 0, 2, "source"), wrong)
    trace.add_counter(main, 0, 1.0)
    d = Decoded(trace)
    report = validate_bytes(d.data)
    assert report.ok and not report.warnings
    assert report.counts["slices"] == 1 and report.counts["counter_values"] == 0
    assert d.diagnostics.count("perfetto.slice_on_counter_track") == 1
    assert d.diagnostics.count("perfetto.flow_dropped") == 1
    assert d.diagnostics.count("perfetto.counter_on_slice_track") == 1


def test_save_gz_through_the_api(tmp_path):
    trace, _ = sample_trace()
    target = tmp_path / "out.pftrace.gz"
    traceconv.save(trace, target)
    data = gzip.decompress(target.read_bytes())
    assert validate_bytes(data).counts["slices"] == 4


@pytest.mark.slow
@pytest.mark.parametrize("n_tracks", [1, 3])
def test_many_events_across_chunks(n_tracks):
    trace = Trace()
    p = trace.add_process("p", pid=3)
    tracks = [trace.add_track(f"t{i}", process=p, tid=10 + i) for i in range(n_tracks)]
    for k in range(40_000):
        trace.add_slice(tracks[k % n_tracks], k * 10, 5, f"op{k % 7}", "", {f"k{k % 3}": k})
    report = validate_bytes(encode(trace))
    assert report.ok and report.counts["slices"] == 40_000


slice_sets = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 300), st.integers(0, 120),
                                st.sampled_from(["a", "b", "c"])), max_size=50)


@settings(max_examples=150, deadline=None)
@given(slice_sets, st.lists(st.tuples(st.integers(0, 49), st.integers(0, 49)), max_size=8))
def test_any_slices_give_a_valid_trace_that_keeps_every_slice(rows, links):
    trace = Trace()
    p = trace.add_process("p", pid=3)
    tracks = [trace.add_track(f"t{i}", process=p, tid=10 + i) for i in range(3)]
    for track, start, dur, name in rows:
        trace.add_slice(tracks[track], start, dur, name, "cat", {"start": start})
    for src, dst in links:
        if src < len(rows) and dst < len(rows):
            trace.add_flow(src, dst)
    report = validate_bytes(encode(trace))
    assert report.ok, report.errors
    assert report.counts["slices"] == len(rows)
    assert not [w for w in report.warnings if w["code"] != "flow_with_single_endpoint"]


@pytest.mark.parametrize("workers", [1, 2])
def test_several_sequences_in_several_processes(monkeypatch, workers):
    """Small sequences force many chunks; ties at one timestamp never straddle two."""
    from traceconv.formats.perfetto import writer

    monkeypatch.setattr(writer, "CHUNK_SEQUENCE", 1000)
    monkeypatch.setattr(writer, "CHUNK_EVENTS", 300)
    trace = Trace()
    p = trace.add_process("p", pid=3)
    main = trace.add_track("main", process=p, tid=3)
    for k in range(3000):   # nested pairs that share timestamps: END/BEGIN ties everywhere
        trace.add_slice(main, k * 10, 10, f"outer{k % 5}", "", {"k": k, f"name{k % 4}": "v"})
        trace.add_slice(main, k * 10, 10, "inner")
    out = io.BytesIO()
    write(trace, out, workers=workers)
    packets = decode(out.getvalue())
    sequences = {p.trusted_packet_sequence_id for p in packets if p.HasField("track_event")}
    assert len(sequences) >= 6
    firsts = {}
    for packet in packets:
        firsts.setdefault(packet.trusted_packet_sequence_id, packet.sequence_flags)
    assert all(flags == 3 for seq, flags in firsts.items() if seq != 1)
    report = validate_bytes(out.getvalue())
    assert report.ok and not report.warnings and report.counts["slices"] == 6000


def test_cli_convert_to_gz_then_check(tmp_path, data):
    """The whole path a user takes: convert a real Kineto trace, then check the result."""
    source = data / "torch" / "rank-0.pt.trace.json.gz"
    target = tmp_path / "rank-0.pftrace.gz"
    runner = CliRunner()
    assert runner.invoke(app, [str(source), "-o", str(target)]).exit_code == 0
    result = runner.invoke(app, ["check", str(target), "--json"])
    assert result.exit_code == 0
    counts = json.loads(result.stdout)["counts"]
    model = traceconv.load(source).counts()
    assert (counts["slices"], counts["instants"], counts["flows"], counts["counter_values"]) == (
        model["slices"], model["instants"], model["flows"], model["counter_samples"])
    assert counts["slices"] == 411    # 409 the JSON importer keeps + 2 overlaps on a lane

"""TensorFlow 1.x step timelines (the ``tensorflow`` Chrome flavour): GPU records on stream
tracks of one device per TF device, the tracer's repeats (``stream:all``, ``memcpy``) in no
total. Expected values are plain ``json`` sums of the real files' ``dur`` per process
(tests/data/tensorflow)."""

from __future__ import annotations

import io
import json
import re
from collections import Counter

import pytest
from click.testing import CliRunner

import traceconv
from tests.conftest import DATA
from traceconv.analysis.op_summary import op_summary
from traceconv.cli import app
from traceconv.formats.perfetto import write
from traceconv.model.validate import validate

GPU = DATA / "tensorflow" / "gpu_timeline_01.json"
CPU = DATA / "tensorflow" / "cpu_timeline_01.json"
PER_STREAM = re.compile(r"/stream:\d+ Compute$")
REPEATS = re.compile(r"/(?:stream:all|memcpy) Compute$")


def microseconds_per_process(path) -> Counter:
    """Sum of the X events' ``dur`` (µs) per process name, read with plain json."""
    events = json.loads(path.read_text())["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "process_name"}
    sums: Counter = Counter()
    for e in events:
        if e["ph"] == "X":
            sums[names[e["pid"]]] += e["dur"]
    return sums


def load_written(trace_processor, path) -> None:
    """Load the Perfetto protobuf traceconv writes of ``path`` into ``trace_processor``."""
    out = io.BytesIO()
    write(traceconv.load(path), out)
    trace_processor.load(out.getvalue())


def totals(path) -> dict:
    result = CliRunner().invoke(app, ["summary", str(path), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_gpu_work_is_device_time_counted_once():
    per_process = microseconds_per_process(GPU)
    device = sum(us for name, us in per_process.items() if PER_STREAM.search(name))
    repeats = sum(us for name, us in per_process.items() if REPEATS.search(name))
    host = sum(us for name, us in per_process.items() if name.startswith("/job:"))
    assert (device, repeats, host) == (6820, 6820, 221665)   # (the probe's hand count)
    summary = totals(GPU)
    assert summary["self_device_ns_total"] == device * 1000
    assert summary["self_host_ns_total"] == host * 1000


def test_matmul_device_and_host_time():
    events = json.loads(GPU.read_text())["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M"}
    matmul = {names[e["pid"]]: e["dur"] for e in events
              if e["ph"] == "X" and e["name"] == "MatMul" and e["dur"] > 1}
    kernel = matmul["/gpu:0/stream:12 Compute"]
    host = matmul["/job:localhost/replica:0/task:0/gpu:0 Compute"]
    rows = {(r["name"], r["kind"]): r for r in totals(GPU)["ops"]}
    assert rows["MatMul", "kernel"]["self_device_ns"] == kernel * 1000 == 4_085_000
    assert rows["MatMul", "op"]["self_host_ns"] == host * 1000 == 115_421_000
    # the tracer's 1 µs "MatMul" record on /memcpy (and stream:7) is a copy, named by its op
    assert rows["MatMul", "memcpy"]["self_device_ns"] == 1000


def test_repeats_are_counted_and_drawn_as_device_ranges():
    trace = traceconv.load(GPU)
    assert trace.metadata.framework == "TensorFlow"
    assert trace.metadata.attributes["flavour"] == "tensorflow"
    assert validate(trace) == []
    events = json.loads(GPU.read_text())["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M"}
    repeated = sum(e["ph"] == "X" and bool(REPEATS.search(names[e["pid"]])) for e in events)
    assert trace.diagnostics.count("tensorflow.stream_view_repeated") == repeated == 9
    # one device, its tracer's processes its tracks (as Kineto, nsys and XPlane draw a GPU)
    tracer = {n.removesuffix(" Compute") for n in names.values()
              if PER_STREAM.search(n) or REPEATS.search(n)}
    device = [p for p in trace.processes if p.kind.value == "device"]
    assert [p.name for p in device] == ["/gpu:0"]
    tracks = {f"/gpu:0/{t.name}": t.kind.value for t in trace.tracks if t.process == device[0].id}
    assert tracks == dict.fromkeys(tracer, "stream")


def test_advise_judges_the_gpu_not_one_stream():
    result = CliRunner().invoke(app, ["advise", str(GPU), "--json"])
    idle = [f for f in json.loads(result.output)["findings"] if f["rule"] == "gpu-idle"]
    assert [f["where"]["device"] for f in idle] == ["/gpu:0"]
    events = json.loads(GPU.read_text())["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M"}
    work = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                  if e["ph"] == "X" and PER_STREAM.search(names[e["pid"]]))
    busy, reach = 0, work[0][0]   # the union of the streams' records, walked by hand
    for start, end in work:
        busy += max(0, end - max(start, reach))
        reach = max(reach, end)
    assert idle[0]["evidence"]["busy_ns"] == busy * 1000 == 6_820_000
    assert idle[0]["evidence"]["span_ns"] == (reach - work[0][0]) * 1000


def test_job_device_streams_are_tracks_of_one_device(tmp_path):
    """``/job:…/device:GPU:0`` naming: two streams (one on a second tracer thread) and
    stream:all make one device with a track each; a flow on a stream follows it there."""
    device = "/job:worker/replica:0/task:1/device:GPU:0"
    events = [
        {"ph": "M", "name": "process_name", "pid": pid, "args": {"name": f"{device}{part}"}}
        for pid, part in ((1, " Compute"), (2, "/stream:all Compute"),
                          (3, "/stream:5 Compute"), (4, "/stream:6 Compute"))] + [
        {"ph": "X", "pid": 1, "tid": 0, "cat": "Op", "name": "Add", "ts": 0, "dur": 9},
        {"ph": "X", "pid": 2, "tid": 0, "cat": "Op", "name": "Add", "ts": 10, "dur": 4},
        {"ph": "X", "pid": 3, "tid": 0, "cat": "Op", "name": "Add", "ts": 10, "dur": 4},
        {"ph": "X", "pid": 4, "tid": 2, "cat": "Op", "name": "Mul", "ts": 12, "dur": 3},
        {"ph": "s", "pid": 1, "tid": 0, "cat": "DataFlow", "name": "Add", "id": 1, "ts": 1},
        {"ph": "t", "pid": 3, "tid": 0, "cat": "DataFlow", "name": "Add", "id": 1, "ts": 11},
    ]
    path = tmp_path / "timeline.json"
    path.write_text(json.dumps({"traceEvents": events}))
    trace = traceconv.load(path)
    assert validate(trace) == []
    gpu = [p for p in trace.processes if p.kind.value == "device"]
    assert [p.name for p in gpu] == [device]
    assert sorted(t.name for t in trace.tracks if t.process == gpu[0].id) == [
        "stream:5", "stream:6 tid 2", "stream:all"]
    summary = {(r.name, r.kind): r.self_device_ns for r in op_summary(trace)}
    assert summary[("Add", "kernel")] == 4000 and summary[("Mul", "kernel")] == 3000
    assert trace.diagnostics.count("tensorflow.stream_view_repeated") == 1
    stream_5 = next(t.id for t in trace.tracks if t.name == "stream:5")
    [flow] = trace.iter_flows()
    assert trace.slices.track[flow.target] == stream_5


def test_cpu_run_has_no_device():
    trace = traceconv.load(CPU)
    assert trace.metadata.attributes["flavour"] == "tensorflow"
    assert all(p.kind.value == "host" for p in trace.processes)
    summary = totals(CPU)
    assert summary["self_device_ns_total"] is None   # ("no device time")
    assert summary["self_host_ns_total"] == sum(microseconds_per_process(CPU).values()) * 1000


def test_repeats_with_no_stream_beside_them_stay_work(tmp_path):
    """A timeline whose device has only stream:all and memcpy (no per-stream process)
    holds each record once: they are the device's work, a copy by its process."""
    events = [
        {"ph": "M", "name": "process_name", "pid": pid, "args": {"name": f"/device:GPU:0/{part}"}}
        for pid, part in ((1, "stream:all Compute"), (2, "memcpy Compute"))] + [
        {"ph": "X", "pid": 1, "tid": 0, "cat": "Op", "name": "MatMul", "ts": 0, "dur": 5},
        {"ph": "X", "pid": 2, "tid": 0, "cat": "Op", "name": "MatMul", "ts": 6, "dur": 2},
    ]
    path = tmp_path / "timeline.json"
    path.write_text(json.dumps({"traceEvents": events}))
    trace = traceconv.load(path)
    summary = {(r.name, r.kind): r.self_device_ns for r in op_summary(trace)}
    assert summary == {("MatMul", "kernel"): 5000, ("MatMul", "memcpy"): 2000}
    assert trace.diagnostics.count("tensorflow.stream_view_repeated") == 0


@pytest.mark.integration
def test_pftrace_in_trace_processor(trace_processor):
    load_written(trace_processor, GPU)
    rows = trace_processor.query(
        "select p.name as process, thread.name as thread, s.category as category, "
        "sum(s.dur) as ns from slice s "
        "join thread_track tt on s.track_id = tt.id join thread using (utid) "
        "join process p using (upid) group by 1, 2, 3")
    # (a GPU stream is a thread of its device: "/gpu:0" + "stream:12" was "/gpu:0/stream:12")
    shown: Counter = Counter()
    for r in rows:
        shown[r.process + ("/" + r.thread + " Compute" if r.process == "/gpu:0" else ""),
              r.category] += r.ns
    assert {process for process, _ in shown if process.startswith("/gpu:0")} == {
        "/gpu:0/stream:all Compute", "/gpu:0/stream:12 Compute", "/gpu:0/memcpy Compute",
        "/gpu:0/stream:7 Compute", "/gpu:0/stream:14 Compute"}
    per_process = microseconds_per_process(GPU)
    for (process, category), ns in shown.items():
        assert ns == per_process[process] * 1000
        if PER_STREAM.search(process):
            assert category in ("tf_device", "tf_device_memcpy")
        elif REPEATS.search(process):
            assert category == "tf_device_repeat"
        else:
            assert category == "Op"
    assert trace_processor.bad_stats() == []

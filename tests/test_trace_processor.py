"""Written traces loaded into the real Perfetto trace_processor (wasm v52, under Node).

Counts are compared with what the model holds, because trace_processor drops many broken
events without any stat (perfetto.md §2.4); the stats query must come back empty too.
"""

from __future__ import annotations

import io
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import traceconv
from tests.chrome_flow_mixes import check_flows, flow_mix, trace_processor_flows
from tests.test_perfetto_writer import sample_trace
from tests.tp_wasm.layout import LINUX_PID_MAX, processes
from traceconv.formats.chrome.checker import check_chrome, check_chrome_events
from traceconv.formats.perfetto import write
from traceconv.io import Source
from traceconv.model import Trace

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parent.parent


def pftrace(trace: Trace) -> bytes:
    out = io.BytesIO()
    write(trace, out)
    return out.getvalue()


def assert_loads_completely(tp, trace: Trace) -> None:
    """Every slice, instant, flow and counter value arrives; nothing unfinished or dropped."""
    tp.load(pftrace(trace))
    counts = trace.counts()
    row = tp.query("select count(*) n, sum(dur = -1) open, max(depth) deepest from slice")[0]
    assert row.n == counts["slices"] + counts["instants"]
    assert not row.open
    assert (row.deepest or 0) <= 511
    assert tp.query("select count(*) n from flow")[0].n == counts["flows"]
    assert tp.query("select count(*) n from counter")[0].n == counts["counter_samples"]
    assert tp.bad_stats() == []


def test_hand_built_trace(trace_processor):
    trace, _ = sample_trace()
    assert_loads_completely(trace_processor, trace)
    tp = trace_processor
    flows = tp.query("select s1.name src, s2.name dst from flow f join slice s1 "
                     "on f.slice_out = s1.id join slice s2 on f.slice_in = s2.id")
    assert [(f.src, f.dst) for f in flows] == [("cudaLaunchKernel", "sgemm_128x64_nn")]
    units = {r.name: r.unit for r in tp.query("select name, unit from counter_track")}
    assert units["allocated"] == "bytes"
    pids = {name: pid for pid, name, _ in processes(tp)}
    assert pids["python train.py"] == 4242
    assert pids["GPU 0"] > LINUX_PID_MAX   # a device is a process row, with a made-up pid
    threads = {r.name for r in tp.query("select name from thread where name is not null")}
    assert {"MainThread", "DataLoader", "stream 7"} <= threads
    args = {r.key: r.display_value for r in tp.query(
        "select a.key, a.display_value from slice s join args a using(arg_set_id) "
        "where s.name = 'aten::matmul'")}
    assert args["debug.dtype"] == "float32"
    assert args["debug.Input Dims[1][1]"] == "256"
    assert args["debug.Comms Id"] == str(2**64 - 5)
    kernel = tp.query("select th.name as stream, p.name as device from slice s "
                      "join thread_track tt on s.track_id = tt.id join thread th using (utid) "
                      "join process p using (upid) where s.name = 'sgemm_128x64_nn'")
    assert [(k.stream, k.device) for k in kernel] == [("stream 7", "GPU 0")]


def test_overlapping_and_deep_slices_all_arrive(trace_processor):
    trace = Trace()
    main = trace.add_track("MainThread", process=trace.add_process("p", pid=9), tid=9)
    for depth in range(600):
        trace.add_slice(main, depth, 100_000 - 2 * depth, f"frame {depth}")
    trace.add_slice(main, 50_000, 100_000, "forward")   # outlives every frame
    trace.add_instant(main, 700, "inside all 600 frames")
    assert_loads_completely(trace_processor, trace)
    lanes = trace_processor.query("select t.name, count(*) n from slice s join track t "
                                  "on s.track_id = t.id group by 1 order by 1")
    # frames 512..599 fit in lane 1; 'forward' overlaps them too, so it needs lane 2
    assert [(r.name, r.n) for r in lanes] == [(None, 512),   # the thread track itself
                                              ("MainThread (overlap lane 1)", 88 + 1),
                                              ("MainThread (overlap lane 2)", 1)]


@pytest.mark.parametrize("path", [
    "tests/data/torch/rank-0.pt.trace.json.gz",          # gloo DDP rank 0, 2 overlaps
    "tests/data/torch/event_sync_trace.json.gz",         # HTA fixture: CUDA event sync, flows
    "samples/torch/cnn_step5.pt.trace.json",             # CNN training, memory, 25 overlaps
])
def test_real_kineto_traces(trace_processor, path):
    trace = traceconv.load(ROOT / path)
    assert_loads_completely(trace_processor, trace)


def test_chrome_checker_agrees_with_the_json_importer(trace_processor):
    """What the checker predicts the JSON importer keeps is what trace_processor keeps."""
    path = ROOT / "tests/data/torch/rank-0.pt.trace.json.gz"
    report = check_chrome(Source(path))
    trace_processor.load(Source(path).read_bytes())
    kept = trace_processor.query("select count(*) n from slice")[0].n
    assert kept == report.counts["slices"] + report.counts["instants"]
    dropped = {r.name: r.value for r in trace_processor.query(
        "select name, value from stats where name = 'slice_drop_overlapping_complete_event'")}
    errors = {e["code"]: e["count"] for e in report.errors}
    assert dropped.get("slice_drop_overlapping_complete_event") == errors["overlapping_slice"]


# Kineto-like times: µs with 3 decimals on a large base. For many of them the double
# times 1000 lands exactly on a half, and rounding must match the importer's llround.
x_events = st.lists(st.tuples(st.integers(1, 2), st.integers(0, 60_000),
                              st.integers(0, 30_000)), min_size=1, max_size=25)
BASE_US = 4482801341000


def kineto_us(ns: int, base: int = 0) -> float:
    """``ns`` as Kineto prints µs: the decimal text with 3 decimals, parsed as a double."""
    return float(f"{base + ns // 1000}.{ns % 1000:03d}")


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(x_events)
def test_checker_predicts_the_json_importer_on_random_x_events(trace_processor, rows):
    """Random X events (overlaps, ties, zero lengths, rounding halves) on two threads: the
    checker's kept count and overlap count equal trace_processor's."""
    events = [{"ph": "X", "name": f"e{i}", "ts": kineto_us(ts, BASE_US), "dur": kineto_us(dur),
               "pid": 1, "tid": tid} for i, (tid, ts, dur) in enumerate(rows)]
    report = check_chrome_events(events)
    trace_processor.load(orjson.dumps({"traceEvents": events}))
    kept = trace_processor.query("select count(*) n from slice")[0].n
    assert kept == report.counts["slices"]
    dropped = trace_processor.query("select sum(value) n from stats "
                                    "where name = 'slice_drop_overlapping_complete_event'")[0].n
    errors = {e["code"]: e["count"] for e in report.errors}
    assert (dropped or 0) == errors.get("overlapping_slice", 0)


slice_events = st.lists(st.tuples(
    st.sampled_from("XXBEEi"), st.integers(1, 2), st.integers(0, 20), st.integers(0, 40),
    st.sampled_from([None, "a", "b"]), st.sampled_from([None, None, "x"]),
    st.sampled_from(["t", "t", "p", None])), min_size=1, max_size=30)


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(slice_events)
def test_checker_replays_the_importers_slice_stack(trace_processor, rows):
    """X, B, E and instant events mixed on two threads (E of other names and categories,
    B inside X, X ties): the checker's kept slices, overlap drops and slices ended by their
    parent X equal trace_processor's slice count on threads, ``slice_drop_overlapping_
    complete_event`` and ``misplaced_end_event``."""
    events, taken = [], set()
    for ph, tid, ts, dur, name, cat, scope in rows:
        # B and E each at a time of its own (odd), X and instants at even ones: where a B
        # or an E shares its time the importer's order is not fixed by the file (the
        # checker warns), so none does here
        ts = 2 * ts + (ph in "BE")
        while ph in "BE" and ts in taken:
            ts += 2
        taken.add(ts)
        event = {"ph": ph, "ts": ts, "pid": 1, "tid": tid}
        event.update({"name": name} if name else {}, **({"cat": cat} if cat else {}))
        event.update({"dur": dur} if ph == "X" else {"s": scope} if ph == "i" and scope
                     else {})
        events.append(event)
    report = check_chrome_events(events)
    trace_processor.load(orjson.dumps({"traceEvents": events}))
    kept = trace_processor.query("select count(*) n from slice join thread_track t "
                                 "on slice.track_id = t.id")[0].n
    stats = {r.name: r.value for r in trace_processor.query(
        "select name, value from stats where value > 0")}
    thread_instants = sum(e["ph"] == "i" and e.get("s", "t") == "t" for e in events)
    errors = {e["code"]: e["count"] for e in report.errors}
    warnings = {e["code"]: e["count"] for e in report.warnings}
    assert (report.counts["slices"] + thread_instants, errors.get("overlapping_slice", 0),
            warnings.get("slice_ended_by_parent", 0)) == (
        kept, stats.get("slice_drop_overlapping_complete_event", 0),
        stats.get("misplaced_end_event", 0))


def test_checker_draws_the_flows_the_json_importer_draws(trace_processor):
    """Seeded random mixes of v1 and v2 flow events and slices (tests/chrome_flow_mixes.py):
    the checker's arrows and its flow events dropped, by reason, equal trace_processor's
    ``flow`` rows and flow stats in every mix (before the flow tracker was replayed, the
    arrows differed in 984 of the first 2,000 seeds; after, in none)."""
    differ = []
    for seed in range(120):
        events = flow_mix(seed)
        trace_processor.load(orjson.dumps({"traceEvents": events}))
        expected = trace_processor_flows(trace_processor)
        if check_flows(check_chrome_events(events)) != expected:
            differ.append(seed)
    assert differ == []


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 400), st.integers(0, 150)),
                min_size=1, max_size=60))
def test_every_random_slice_reaches_trace_processor(trace_processor, rows):
    """Overlapping, tied and zero-length slices all arrive once written (lanes included)."""
    trace = Trace()
    host = trace.add_process("p", pid=5)
    tracks = [trace.add_track(f"t{i}", process=host, tid=6 + i) for i in range(2)]
    for track, start, dur in rows:
        trace.add_slice(tracks[track], start, dur, "s")
    assert_loads_completely(trace_processor, trace)

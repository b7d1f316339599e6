"""Paddle's old binary profile (profiler.proto): timeline, launch flows, memory blocks."""

from __future__ import annotations

import functools
import gc
import gzip
import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from protobuf_runtime import runtime_classes
from traced_peak import traced_peak

import traceconv
from traceconv.errors import TraceconvError
from traceconv.formats import paddle_profile
from traceconv.formats.paddle_profile.proto import MESSAGES
from traceconv.io import Source
from traceconv.model import ProcessKind

# the real protobuf runtime writes the test inputs
Profile = runtime_classes("paddle_profile_test", MESSAGES)["Profile"]

DATA = Path(__file__).parent / "data" / "paddle"


def timeline_events(name: str) -> list[dict]:
    """The events tools/timeline.py wrote for the same profile."""
    path = DATA / "timeline" / name
    raw = gzip.decompress(path.read_bytes()) if name.endswith(".gz") else path.read_bytes()
    return json.loads(raw)["traceEvents"]


def test_cpu_profile_matches_timeline_py_and_report():
    trace = traceconv.load(DATA / "legacy_CPU_OpDetail.profile")
    assert trace.metadata.source_format == "paddle-profile"
    slices = list(trace.iter_slices())
    timeline = [e for e in timeline_events("legacy_CPU_OpDetail.timeline.json.gz")
                if e["ph"] == "X"]
    assert len(slices) == len(timeline) == 925
    # timeline.py keeps ns in ts/dur: the same instants as our slices
    assert sorted((s.start, s.dur) for s in slices) == sorted(
        (e["ts"], int(e["dur"])) for e in timeline)
    names = Counter(s.name for s in slices)
    # the text report of the same run: Executor::Run 5 calls, conv2d 10, conv2d/compute 10
    assert names["Executor::Run"] == 5 and names["conv2d"] == 10
    assert sum(1 for s in slices if s.args["path"].endswith("/conv2d/compute")) == 10
    run = next(trace.iter_slices(name="Executor::Run"))
    assert run.args["block_depth"] == 0
    assert [t.name for t in trace.tracks] == ["thread 0"]


def test_gpu_profile_streams_flows_memory():
    trace = traceconv.load(DATA / "legacy_gpu_synthetic.profile")
    kinds = {p.name: p.kind for p in trace.processes}
    assert kinds["GPU 0"] is ProcessKind.DEVICE
    categories = Counter(s.category for s in trace.iter_slices())
    assert categories == {"cpu_op": 54, "cuda_runtime": 12, "kernel": 8, "memcpy": 4}
    copy = next(s for s in trace.iter_slices() if s.category == "memcpy")
    assert copy.args["bytes"] == 24576 and copy.args["detail_info"] == "MEMCPY_HtoD"
    assert len(trace.flows) == 12
    for flow in trace.iter_flows():
        src, dst = trace.slice(flow.source), trace.slice(flow.target)
        assert src.category == "cuda_runtime" and src.start <= dst.start
    assert len(trace.memory) == 6
    block = trace.memory[0]
    assert (block.size, block.device, block.name) == (4194304, "gpu:0", "conv2d")
    assert block.free_ns - block.alloc_ns == 14_950_000
    assert {trace.tracks[c.track].unit for c in trace.iter_counter_samples()} == {"bytes"}
    timeline = timeline_events("legacy_gpu_synthetic.timeline.json")
    assert len(trace.slices) == sum(e["ph"] == "X" for e in timeline)


def test_sniff_tells_profile_from_text_and_pb(tmp_path):
    head = (DATA / "legacy_CPU_OpDetail.profile").read_bytes()[:65536]
    assert paddle_profile.sniff(head, Source(DATA / "legacy_CPU_OpDetail.profile")) > 0.5
    assert paddle_profile.sniff(b"\n\x051.0.2\x10\x00", None) == 0  # type: ignore[arg-type]
    assert paddle_profile.sniff(b"Place: CPU\n", None) == 0  # type: ignore[arg-type]


def test_broken_profile_is_one_clean_error(tmp_path):
    path = tmp_path / "broken.profile"
    path.write_bytes((DATA / "legacy_CPU_OpDetail.profile").read_bytes()[:1001])
    with pytest.raises(TraceconvError):
        traceconv.load(path)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.text(max_size=20), st.integers(0, 2**63), st.integers(0, 2**20),
                          st.integers(-1, 3), st.integers(0, 4), st.integers(0, 1)),
                min_size=1, max_size=30))
def test_any_profile_message_reads(tmp_path_factory, records):
    profile = Profile()
    for name, start, dur, device, sub, kind in records:
        profile.events.add(name=name, start_ns=start, end_ns=start + dur, device_id=device,
                           sub_device_id=sub, type=kind)
    path = tmp_path_factory.mktemp("p") / "x.profile"
    path.write_bytes(profile.SerializeToString())
    trace = traceconv.load(path, format="paddle_profile")
    dropped = trace.diagnostics.count("paddle_profile.time_out_of_range")
    assert dropped == sum(start + dur >= 2**63 for _, start, dur, *_ in records)
    assert len(trace.slices) + dropped == len(records)


def test_events_are_read_by_start_then_longest_first_else_as_written(tmp_path):
    """The reader orders events by start, the longer first at one start, ties as written
    (from their times alone, without all events decoded): the expected order is Python's
    stable sort of the records written here."""
    records = [("a", 5, 9), ("b", 5, 6), ("c", 1, 2), ("d", 5, 9), ("e", 1, 4), ("f", 0, 0)]
    profile = Profile()
    for name, start, end in records:
        profile.events.add(name=name, start_ns=start, end_ns=end)
    path = tmp_path / "order.profile"
    path.write_bytes(profile.SerializeToString())
    trace = traceconv.load(path)
    expected = [name for name, _, _ in sorted(records, key=lambda r: (r[1], -r[2]))]
    assert [s.name for s in trace.iter_slices()] == expected == ["f", "e", "c", "a", "d", "b"]


@pytest.mark.slow
def test_a_profile_of_tiny_events_reads_in_memory_linear_in_its_size(tmp_path):
    """Each event of a start only is 4 bytes on the wire (``0a 02 10 01``): sorting them
    must not hold them all decoded (85x the file when it did): at most 45x, the same per
    byte at 1x and 4x the events."""
    peaks = []
    for events in (20_000, 80_000):
        # Profile.events: one named event, then `events` of start_ns = 1, by hand
        wire = b"\x0a\x06\x0a\x02op\x10\x01" + b"\x0a\x02\x10\x01" * events
        path = tmp_path / f"tiny{events}.profile"
        path.write_bytes(wire)
        if not peaks:   # the modules a read imports are not the file's cost
            traceconv.load(path)
        gc.collect()
        trace, peak = traced_peak(functools.partial(traceconv.load, path))
        assert len(trace.slices) == events + 1
        assert peak <= 45 * len(wire), (events, peak / len(wire))
        peaks.append(peak / len(wire))
        del trace
    assert peaks[1] <= peaks[0] * 1.3

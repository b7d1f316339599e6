"""The Paddle flavours of the Chrome reader: timeline.py output read as the binary profile it
came from, and the new profiler's allocator records, device names and metadata."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import traceconv
from traceconv.errors import TraceconvError
from traceconv.model import ProcessKind

DATA = Path(__file__).parent / "data" / "paddle"


def slice_key(trace):
    return sorted((s.start, s.dur, s.name, s.category, trace.tracks[s.track].name)
                  for s in trace.iter_slices())


def test_timeline_json_reads_as_its_binary_profile():
    for profile, timeline in (("legacy_CPU_OpDetail.profile", "legacy_CPU_OpDetail.timeline.json.gz"),
                              ("legacy_gpu_synthetic.profile", "legacy_gpu_synthetic.timeline.json")):
        binary = traceconv.load(DATA / profile)
        chrome = traceconv.load(DATA / "timeline" / timeline)
        assert chrome.metadata.attributes["flavour"] == "paddle-timeline"
        assert slice_key(chrome) == slice_key(binary)
        assert len(chrome.flows) == len(binary.flows)
        kinds = Counter(p.kind for p in chrome.processes)
        assert kinds[ProcessKind.DEVICE] == Counter(p.kind for p in binary.processes)[
            ProcessKind.DEVICE]
    gpu = traceconv.load(DATA / "timeline" / "legacy_gpu_synthetic.timeline.json")
    assert [p.name for p in gpu.processes] == ["trainer: host", "trainer: GPU 0", "trainer: memory"]
    (memory,) = [t for t in gpu.tracks if t.unit == "bytes"]
    # timeline.py's one running total over every place, 12 changes
    assert memory.name == "Memory all places"
    assert sum(1 for c in gpu.iter_counter_samples() if c.track == memory.id) == 12
    run = next(gpu.iter_slices(name="conv2d"))
    assert run.args["path"].endswith("/conv2d") and run.args["block_depth"] == 2


def test_multi_trainer_timeline():
    trace = traceconv.load(DATA / "timeline" / "multi_trainer.timeline.json.gz")
    assert [p.name for p in trace.processes] == ["trainer0: host", "trainer1: host"]
    assert [len(list(trace.iter_slices(track=t.id))) for t in trace.tracks] == [740, 740]


def test_new_profiler_memory_devices_and_metadata():
    trace = traceconv.load(DATA / "new_gpu_synthetic.paddle_trace.json")
    meta = trace.metadata
    assert meta.source_version == "schemaVersion 1.0.2"
    assert meta.attributes["paddle.span_index"] == "0"
    assert meta.attributes["paddle.device_properties"][0]["name"] == "Synthetic GPU"
    assert [p.name for p in trace.processes] == ["Process 4242 (CPU)", "Device 0 (GPU)"]
    assert trace.diagnostics.count("paddle.deivce_typo") == 1
    (block,) = trace.memory
    assert (block.address, block.size, block.device, block.alloc_ns, block.free_ns) == (
        140000000000000, 24576, "Place(gpu:0)", 1_700_000_000_000_120_000,
        1_700_000_000_004_900_000)
    assert block.owner_name == "conv2d dygraph"
    counters = {t.name: t for t in trace.tracks if t.unit == "bytes"}
    assert set(counters) == {"Place(gpu:0) allocated", "Place(gpu:0) reserved"}


def test_malformed_memory_record_is_counted(tmp_path):
    doc = json.loads((DATA / "new_gpu_synthetic.paddle_trace.json").read_text())
    memory = [e for e in doc["traceEvents"] if e.get("name") == "[memory]"]
    memory[0]["args"]["addr"] = "not an address"
    path = tmp_path / "bad.paddle_trace.json"
    path.write_text(json.dumps(doc))
    trace = traceconv.load(path)
    assert trace.diagnostics.count("paddle.memory_record_malformed") == 1
    assert len(trace.instants) == 2          # both records stay as instants
    (block,) = trace.memory                  # the free, of a block allocated "before"
    assert block.alloc_ns is None and trace.diagnostics.count("paddle.free_without_alloc") == 1


_values = st.one_of(st.none(), st.integers(-2**70, 2**70), st.text(max_size=6),
                    st.floats(allow_nan=True), st.lists(st.integers(), max_size=2),
                    st.sampled_from(["trainer:gpu:0", "trainer:cpu:block:1", "trainer:cuda_api",
                                     "memory usage on trainer:gpu:0", "Place(gpu:0)"]))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.fixed_dictionaries(
    {"ph": st.sampled_from(["X", "i", "M", "C"]), "ts": st.integers(0, 10**6),
     "pid": st.sampled_from([0, 1, 7, "7", [1]]),
     "tid": st.sampled_from(["7(C++)", "7(Python)", 3]),
     "name": st.sampled_from(["[memory]", "conv2d dygraph[1.000 ms]", "process_name",
                              "trainer:gpu:0", "Memory"]),
     "cat": st.sampled_from(["Allocate", "Free", "ReservedFree", "Operator", "Kernel", "x"])},
    optional={"dur": st.integers(0, 1000), "args": st.dictionaries(
        st.sampled_from(["addr", "increase_bytes", "place", "current_allocated", "name", "0"]),
        _values, max_size=4)}), max_size=30), st.booleans())
def test_paddle_flavours_never_traceback(tmp_path_factory, events, timeline):
    """Random Paddle-looking events (the new profiler's, or timeline.py's ns ones)."""
    if timeline:
        for e in events:
            e["ts"] += 1_795_339_921_628_442_047
    doc = {"traceEvents": events, **({} if timeline else {"span_indx": "0"})}
    path = tmp_path_factory.mktemp("f") / "x.json"
    path.write_text(json.dumps(doc, allow_nan=True))
    try:
        trace = traceconv.load(path)
    except TraceconvError:
        return
    assert len(trace.slices) + len(trace.instants) <= len(events)
    traceconv.save(trace, path.with_suffix(".pftrace"))

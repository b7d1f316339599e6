"""MegEngine's dynamic Profiler chrome_timeline.json through the Chrome reader's flavour."""

from __future__ import annotations

import pytest

import traceconv
from traceconv.model import ProcessKind, TrackKind

TRAIN = "megengine/train_chrome_timeline.json.gz"


@pytest.fixture(scope="module")
def train(data):
    return traceconv.load(data / TRAIN)


def test_flavour_and_processes(train):
    assert train.metadata.framework == "MegEngine"
    assert train.metadata.attributes["flavour"] == "megengine"
    kinds = {p.name: p.kind for p in train.processes}
    assert kinds == {"MegEngine host (pid 17997)": ProcessKind.HOST,
                     "MegEngine device (pid 17997)": ProcessKind.DEVICE}
    threads = {t.name: t.kind for t in train.tracks if t.kind != TrackKind.COUNTER}
    assert threads == {"interpreter": TrackKind.THREAD, "worker": TrackKind.THREAD,
                       "xpux:0": TrackKind.STREAM}


def test_device_lane_holds_kernels_and_copies(train):
    (stream,) = [t.id for t in train.tracks if t.name == "xpux:0"]
    names = [s.name for s in train.iter_slices(track=stream)]
    # 435 Kernel and 39 HostToDevice B/E pairs on tid 2 in the source
    assert len(names) == 435 + 39 and names.count("HostToDevice") == 39


def test_counters_have_units(train):
    units = {t.name: t.unit for t in train.tracks if t.kind == TrackKind.COUNTER}
    assert units["cpu0:0_alloc_mem"] == "bytes" and units["device_ahead_ms"] == "ms"
    assert units["gpu_usgae_ratio"] == "%" and units["nr_alive_tensor"] == "count"
    assert len(train.counters) == 5381  # every C event


def test_op_graph_from_input_output_slices(train):
    g = train.graph
    # 435 dispatched ops (OpDispatch s events), 897 Input + 498 Output slices on the worker
    assert train.op_count == 435 and g.number_of_edges() == 897 + 498
    conv = g.nodes["op/240"]
    assert (conv["name"], conv["type"]) == ("Convolution", "Convolution")
    assert set(g.successors("op/240")) == {"tensor/238"}
    assert g.nodes["tensor/238"]["shape"] == (4, 16, 32, 32)
    assert g.nodes["tensor/238"]["name"] == "step0[2].conv1.conv2d[1].Convolution:0"
    tracks = [train.tracks[train.slice(r).track].name for r in conv["slices"]]
    assert sorted(tracks) == ["interpreter", "worker", "xpux:0"]


def test_flows_bound(train):
    categories = {}
    for f in train.iter_flows():
        categories[f.category] = categories.get(f.category, 0) + 1
    assert categories["KernelLaunch"] == 435 and categories["OpDispatch"] == 435
    # (30 KernelLaunch finishes are stamped before their start, on the device's clock: still
    # start → finish). One TensorProp id is started twice before its finish: the first
    # start links nowhere, counted (not a start → start flow)
    assert train.diagnostics.count("chrome.flow_dangling") == 1
    assert categories["TensorProp"] == 3


def test_summary_of_a_timeline(train):
    from traceconv.analysis.summary import summarize
    (stream,) = [t.id for t in train.tracks if t.name == "xpux:0"]
    device = [s for s in train.iter_slices(track=stream)]  # kernels do not nest
    result = summarize(train, top=0)
    assert result.total_device_time == pytest.approx(sum(s.dur for s in device) / 1e9)
    conv = next(r for r in result.device_rows if r.name == "Convolution")
    assert conv.time == pytest.approx(sum(s.dur for s in device
                                          if s.name == "Convolution") / 1e9)
    assert len(result.device_rows) == len({s.name for s in device})


def test_traced_timeline_reads(data):
    trace = traceconv.load(data / "megengine/infer_traced_chrome_timeline.json")
    assert trace.metadata.attributes["flavour"] == "megengine"
    assert len(trace.slices) == 230


def test_an_op_seen_only_dispatched_makes_no_op_node(data, tmp_path):
    """(fuzz) the interpreter's ``OpDispatch`` slices join the op named by ``__name__``;
    one whose op has no slice of its own name makes no node (op_slices: an op is known by
    a slice of its name). The real trace keeps every op and all its slices."""
    import gzip

    import orjson

    events = orjson.loads(gzip.decompress((data / TRAIN).read_bytes()))
    ops = [e for e in events["traceEvents"]
           if isinstance(e.get("args"), dict) and "__id__" in e["args"]]
    lone = next(e["args"]["__id__"] for e in ops if e["name"] == "OpDispatch")
    kept = [e for e in events["traceEvents"]
            if not (isinstance(e.get("args"), dict) and e["args"].get("__id__") == lone
                    and e["name"] != "OpDispatch")]
    path = tmp_path / "dispatched.json"
    path.write_bytes(orjson.dumps(dict(events, traceEvents=kept)))
    whole, cut = traceconv.load(data / TRAIN), traceconv.load(path)
    assert traceconv.validate(cut) == []
    assert f"op/{lone}" in whole.graph and f"op/{lone}" not in cut.graph
    op_count = sum(1 for _, kind in whole.graph.nodes(data="kind") if kind == "op")
    assert sum(1 for _, kind in cut.graph.nodes(data="kind") if kind == "op") == op_count - 1

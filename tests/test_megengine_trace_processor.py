"""The real Perfetto trace_processor loads MegEngine exports with nothing dropped.

Perfetto protobuf and Chrome JSON of the ResNet-50-like static profile (422 executed oprs)
must show one ``opr`` slice per executed opr per place (host thread, device comp node),
the launch and dataflow flows, the live-bytes counter and the op args.
"""

from __future__ import annotations

import pytest

import traceconv
from tests.tp_wasm.layout import slices_per_track
from traceconv.analysis.dataflow import with_dataflow_flows

pytestmark = pytest.mark.integration
RESNET = "megengine/resnet50ish_lar_embed_profile.json.gz"
DEVICE = 'CompNode("cpu0:0" from "xpux:0")'


@pytest.fixture(scope="module")
def resnet(data):
    trace = with_dataflow_flows(traceconv.load(data / RESNET))
    return trace, trace.diagnostics.count("dataflow.flows")


@pytest.mark.parametrize("suffix", [".pftrace", ".json"])
def test_trace_processor_sees_every_op(trace_processor, resnet, tmp_path, suffix):
    trace, dataflow = resnet
    out = tmp_path / f"resnet{suffix}"
    traceconv.save(trace, out)
    trace_processor.load(out.read_bytes())
    assert trace_processor.bad_stats() == []
    per_process = {(r.process, r.cat): r.n for r in trace_processor.query(
        "select p.name as process, s.category as cat, count(*) as n from slice s "
        "join thread_track tt on s.track_id = tt.id join thread using(utid) "
        "join process p using(upid) group by 1, 2")}
    opr = {r.n for r in trace_processor.query("select count(*) as n from slice where category = 'opr'")}
    assert opr == {2 * 422}
    # both formats draw the device's comp node as a thread of a "MegEngine device" process
    assert per_process[("MegEngine host", "opr")] == 422
    assert per_process[("MegEngine device", "opr")] == 422
    assert trace_processor.query("select count(*) as n from flow")[0].n == 422 + dataflow
    (counter,) = trace_processor.query("select t.name as name, count(*) as n from counter c "
                          "join track t on c.track_id = t.id group by 1")
    assert counter.name.startswith(f"{DEVICE} live bytes") and counter.n == len(trace.counters)
    row = trace_processor.query("select arg_set_id from slice where name = 'stem.Convolution' "
                   "and category = 'opr' limit 1")[0]
    args = {a.key.split(".", 1)[1]: a.v for a in trace_processor.query(
        f"select key, display_value as v from args where arg_set_id = {row.arg_set_id}")}
    assert args["type"] == "ConvolutionForward" and args["computation"] == "9633792"
    assert args["param.format"] == "NCHW"


def test_device_slices_on_device_track(trace_processor, resnet, tmp_path):
    trace, _ = resnet
    out = tmp_path / "resnet.pftrace"
    traceconv.save(trace, out)
    trace_processor.load(out.read_bytes())
    # the comp node is a thread of the device process
    assert slices_per_track(trace_processor, "s.category = 'opr'").get(DEVICE) == 422


def test_every_shared_sample_converts_cleanly(trace_processor, shared_samples, tmp_path):
    folder = shared_samples / "megengine"
    files = sorted([*folder.glob("*.json"), *folder.glob("*.svg"), *folder.glob("*_info/*.json")])
    assert len(files) == 16
    for path in files:
        trace = traceconv.load(path)
        out = tmp_path / "sample.pftrace"
        traceconv.save(trace, out)
        trace_processor.load(out.read_bytes())
        assert trace_processor.bad_stats() == [], path.name
        instants = len(trace.instants)
        loaded = trace_processor.query("select count(*) as n from slice")[0].n
        assert loaded == len(trace.slices) + instants, path.name

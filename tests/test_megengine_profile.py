"""The MegEngine static-profile reader: timeline, op graph, memory blocks, errors, exports.

Expected numbers were read off the sample documents (``graph_exec``/``profiler``) and
MegEngine's notes in ``docs``; see the comments for where each comes from.
"""

from __future__ import annotations

import gzip
import io
import json
import random
import sys
from unittest.mock import patch

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import traceconv
from traceconv.errors import InputError
from traceconv.formats import dot, graphml
from traceconv.formats.megengine import profile
from traceconv.io import Source
from traceconv.model import ProcessKind, TrackKind

CONVNET = "megengine/convnet_lar_embed_profile.json.gz"
RESNET = "megengine/resnet50ish_lar_embed_profile.json.gz"
DEVICE = 'CompNode("cpu0:0" from "xpux:0")'
OFFSET = 4_369_000  # device → host clock shift of the convnet profile (test_device_clock_shift)


@pytest.fixture(scope="module")
def convnet(data):
    return traceconv.load(data / CONVNET, format="megengine")


@pytest.fixture(scope="module")
def resnet(data):
    return traceconv.load(data / RESNET, format="megengine")


def opr_slices(trace, kind):
    procs = {p.id for p in trace.processes if p.kind == kind}
    return [s for s in trace.iter_slices()
            if trace.tracks[s.track].process in procs and s.category == "opr"]


def test_resnet_counts(resnet):
    # comp_seq has 422 oprs; 799 vars; 794 mem_chunks of which 547 have size > 0.
    counts = resnet.counts()
    assert (counts["ops"], counts["tensors"], counts["memory_blocks"]) == (422, 799, 547)
    assert len(opr_slices(resnet, ProcessKind.DEVICE)) == 422
    assert len(opr_slices(resnet, ProcessKind.HOST)) == 422
    assert sum(f.category == "launch" for f in resnet.iter_flows()) == 422
    assert resnet.diagnostics["megengine.empty_chunk"].count == 794 - 547
    assert resnet.diagnostics["megengine.unexecuted_opr"].count == 1  # h2d[9]


def test_processes_and_clocks(convnet):
    kinds = {p.name: p.kind for p in convnet.processes}
    assert kinds["MegEngine device"] == ProcessKind.DEVICE
    assert kinds["MegEngine host"] == ProcessKind.HOST
    names = {t.name: t.kind for t in convnet.tracks}
    assert names[DEVICE] == TrackKind.STREAM and names["interpreter"] == TrackKind.THREAD
    assert "shifted" in convnet.metadata.attributes["megengine.clocks"]
    assert convnet.metadata.framework == "MegEngine"


def test_device_clock_shift(convnet, data):
    # the smallest shift that starts no opr on the device before the host dispatched it
    doc = _doc(data)["profiler"]
    gaps = [round(doc["host"][o]["interpreter"]["start"] * 1e9)
            - round(doc["device"][o][DEVICE]["start"] * 1e9) for o in doc["device"]]
    assert convnet.metadata.attributes["megengine.device_offset_ns"] == {DEVICE: max(gaps)}
    assert max(gaps) == OFFSET


def test_conv2_slice_and_args(convnet):
    # profiler.device["134"]: start 0.0854199999999999, kern = start, end 0.09017
    (conv2,) = [s for s in opr_slices(convnet, ProcessKind.DEVICE)
                if s.name == "conv2.Convolution"]
    assert (conv2.start, conv2.dur) == (85_420_000 + OFFSET, 4_750_000)
    args = conv2.args
    assert args["type"] == "ConvolutionForward" and args["id"] == "134"
    assert args["computation"] == 37_748_736 and args["memory"] == 804_864
    assert args["in_shapes"] == "{4,16,32,32} {32,16,3,3}"
    assert args["flops"] == pytest.approx(37_748_736 / 0.00475, rel=1e-9)
    assert args["param"]["format"] == "NCHW"


def test_wait_and_kernel_children(convnet):
    # conv2.ADD (137): start 0.0901729999999999, kern 0.090174, end 0.0901959999999999
    device = [s for s in convnet.iter_slices()
              if 90_173_000 + OFFSET <= s.start < 90_196_000 + OFFSET]
    assert sorted((s.name, s.start - OFFSET, s.dur) for s in device if s.category != "opr") == [
        ("kernel", 90_174_000, 22_000), ("wait", 90_173_000, 1_000)]


def test_op_graph(convnet):
    g = convnet.graph
    assert g.nodes["op/134"]["name"] == "conv2.Convolution"
    assert [u for u, _, _ in sorted(g.in_edges("op/134", data="index"), key=lambda e: e[2])] == [
        "tensor/133", "tensor/34"]
    assert set(g.successors("op/134")) == {"tensor/135", "tensor/136"}
    assert g.nodes["tensor/135"]["owner"] == "op/134"
    assert g.nodes["tensor/183"]["readonly_fwd_src"] == "tensor/168"  # the Reshape
    assert g.graph["execution_order"][0] == "op/117"
    assert nx.is_directed_acyclic_graph(g)


def test_memory_blocks(convnet):
    blocks = {b.args["chunk"]: b for b in convnet.memory}
    assert len(blocks) == 47  # non-empty chunks
    conv_out = blocks["chk135"]
    # allocated when conv2 starts, freed when its only reader conv2.ADD (137) ends
    assert (conv_out.address, conv_out.size) == (139960118571072, 524288)
    assert (conv_out.alloc_ns - OFFSET, conv_out.free_ns - OFFSET) == (85_420_000, 90_196_000)
    assert conv_out.owner_op == "op/134" and conv_out.owner_tensor == "tensor/135"
    assert conv_out.shape == (4, 32, 32, 32) and conv_out.dtype == "Float32"
    assert conv_out.category == "activation" and conv_out.device == DEVICE
    weights = [b for b in convnet.memory if b.category == "weight"]
    assert len(weights) == 20 and all(b.alloc_ns is None is b.free_ns for b in weights)
    counter = [t for t in convnet.tracks if t.kind == TrackKind.COUNTER]
    assert [t.unit for t in counter] == ["bytes"]


def test_readonly_forward_extends_lifetime(convnet):
    # chk168 is also the memory of the Reshape output 183, read by fc1.MatrixMul
    block = next(b for b in convnet.memory if b.args["chunk"] == "chk168")
    reader = next(n for n in convnet.graph.successors("tensor/183"))
    end = max(s.end_ns for s in convnet.graph.nodes[reader]["device_spans"].values())
    assert block.free_ns == end and block.args["vars"] == 2   # spans are on the trace clock


def test_sniff_tells_megengine_from_chrome(data):
    head = gzip.decompress((data / CONVNET).read_bytes())[:65536]
    assert profile.sniff(head, None) > 0.9
    assert profile.sniff(b'{"traceEvents":[{"name":"x","ph":"X"}]}', None) == 0.0


def _doc(data) -> dict:
    return json.loads(gzip.decompress((data / CONVNET).read_bytes()))


def _load(tmp_path, doc_or_text) -> traceconv.Trace:
    path = tmp_path / "bad_profile.json"
    text = doc_or_text if isinstance(doc_or_text, str) else json.dumps(doc_or_text)
    path.write_text(text)
    return traceconv.load(path, format="megengine")


def test_truncated_json_is_located(tmp_path, data):
    text = json.dumps(_doc(data), indent=1)
    cut = text[: len(text) // 2]
    with pytest.raises(InputError) as err:
        _load(tmp_path, cut)
    # (the data ends after the cut's last line: line:column just past its last character)
    last_line = cut.rsplit("\n", 1)[-1]
    assert err.value.location == f"{cut.count(chr(10)) + 1}:{len(last_line) + 1}"


def test_missing_graph_exec_is_located(tmp_path, data):
    doc = _doc(data)
    del doc["graph_exec"]
    with pytest.raises(InputError) as err:
        _load(tmp_path, doc)
    assert err.value.location == "$.graph_exec"


def test_bad_field_names_its_path(tmp_path, data):
    doc = _doc(data)
    doc["profiler"]["device"]["134"][DEVICE]["end"] = "soon"
    with pytest.raises(InputError) as err:
        _load(tmp_path, doc)
    assert err.value.location == "$.profiler.device.134['CompNode(\"cpu0:0\" from \"xpux:0\")'].end"


def test_chunk_of_unknown_var_is_counted(tmp_path, data):
    doc = _doc(data)
    doc["graph_exec"]["mem_chunk"]["chk9999"] = {
        "node_type": "mem_chunk", "id": "chk9999", "size": 64, "owner_var": "9999",
        "dev_ptr": 4096}
    trace = _load(tmp_path, doc)
    assert trace.diagnostics["megengine.chunk_unknown_owner"].count == 1
    assert len(trace.memory) == 48


def test_inf_and_nan_strings(tmp_path, data):
    doc = _doc(data)
    doc["profiler"]["host"]["134"]["interpreter"]["kern"] = "-inf"
    trace = _load(tmp_path, doc)
    assert trace.counts()["ops"] == 41


def test_graph_exports(convnet):
    out = io.BytesIO()
    graphml.write(convnet, out)
    back = nx.read_graphml(io.BytesIO(out.getvalue()))
    assert (back.number_of_nodes(), back.number_of_edges()) == (
        convnet.graph.number_of_nodes(), convnet.graph.number_of_edges())
    assert json.loads(back.nodes["op/134"]["out_shapes"]) == [[4, 32, 32, 32]]
    out = io.BytesIO()
    dot.write(convnet, out)
    text = out.getvalue().decode()
    assert text.count(" -> ") == convnet.graph.number_of_edges()
    assert '"op/134" [shape=box, label="conv2.Convolution\\nConvolutionForward"];' in text


def test_dataflow_flows(data):
    from traceconv.analysis.dataflow import with_dataflow_flows
    trace = with_dataflow_flows(traceconv.load(data / CONVNET, format="megengine"))
    added = trace.diagnostics.count("dataflow.flows")
    pairs = {(trace.slice(f.source).name, trace.slice(f.target).name)
             for f in trace.iter_flows() if f.category == "dataflow"}
    assert added == len(pairs) > 40
    assert ("conv2.Convolution", "conv2.ADD") in pairs


def test_resnet_loads_and_saves_as_graphml(data, tmp_path):
    # (how fast is measured in benchmarks/, not asserted here: timings flake on shared CI)
    trace = traceconv.load(data / RESNET, format="megengine")
    traceconv.save(trace, tmp_path / "out.graphml")
    assert (tmp_path / "out.graphml").stat().st_size > 0


def test_every_shared_profile_reads(shared_samples):
    expected_ops = {"convnet_lar_embed_profile.json": 41, "convnet_lar_profile.json": 41,
                    "convnet_static_profile.json": 65, "convnet_static_profile_pydump.json": 65,
                    "convnet_train_static_profile.json": 291,
                    "resnet50ish_lar_embed_profile.json": 422,
                    "resnet50ish_lar_profile.json": 422, "resnet50ish_static_profile.json": 643}
    for path in sorted((shared_samples / "megengine").glob("*_profile*.json")):
        trace = traceconv.load(path)
        assert trace.metadata.source_format == "megengine", path.name
        assert trace.counts()["ops"] == expected_ops.pop(path.name)
    assert not expected_ops


timing = st.fixed_dictionaries({
    "start": st.floats(0, 10, allow_nan=False),
    "kern": st.one_of(st.just(-1), st.floats(0, 10), st.sampled_from(["inf", "nan"])),
    "end": st.floats(0, 10, allow_nan=False)})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(timing, timing), min_size=1, max_size=6),
       st.lists(st.sampled_from([None, 0, 7, 10**12]), min_size=6, max_size=6))
def test_any_timing_reads_into_one_slice_per_place(pairs, comps):
    ops, device, host, footprint = {}, {}, {}, {}
    for i, (dev, hst) in enumerate(pairs):
        oid = str(i)
        ops[oid] = {"id": oid, "name": f"op{i}", "type": "Elemwise", "input": [],
                    "output": [], "waiting_spec": {}}
        device[oid], host[oid] = {"gpu0": dev}, {"main": hst}
        footprint[oid] = {"computation": comps[i], "memory": 16, "in_shapes": [[2]],
                          "out_shapes": [[2]], "param": [] if i % 2 else {}}
    doc = {"graph_exec": {"comp_seq": list(ops), "operator": ops, "var": {}, "mem_chunk": {}},
           "profiler": {"device": device, "host": host, "opr_footprint": footprint}}
    with patch.object(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(doc).encode()))):
        trace = profile.read(Source("-"))   # (standard input: read once, kept for each open)
    assert sum(s.category == "opr" for s in trace.iter_slices()) == 2 * len(pairs)
    assert trace.counts()["ops"] == len(pairs)


@pytest.mark.parametrize(("profile", "plan", "peak"), [
    (CONVNET, "megengine/convnet_static_mem_info/StaticMemoryInfo.json", 1_673_728),
    (RESNET, "megengine/resnet50ish_static_mem_info/StaticMemoryInfo.json.gz", 393_728)])
def test_activation_peak_equals_the_static_plan(data, profile, plan, peak):
    """Blocks from mem_chunk + comp_seq lifetimes reproduce the live peak of MegEngine's own
    plan (StaticMemoryInfo.json of the same model), and never overlap in address and time."""
    from traceconv.model.memory import live_bytes
    trace = traceconv.load(data / profile)
    planned = traceconv.load(data / plan)
    ours = [b for b in trace.memory if b.category != "weight"]
    theirs = [b for b in planned.memory if b.category != "weight"]
    assert live_bytes(ours).peak[1] == live_bytes(theirs).peak[1] == peak
    assert len(ours) == len(theirs)
    assert sum(b.category == "weight" for b in trace.memory) == sum(
        b.category == "weight" for b in planned.memory)
    ours.sort(key=lambda b: b.address)
    for i, a in enumerate(ours):
        for b in ours[i + 1:]:
            if b.address >= a.end_address:
                break
            assert not (a.alloc_ns < b.free_ns and b.alloc_ns < a.free_ns), (a.name, b.name)


def test_in_place_outputs_start_when_their_op_ends(convnet):
    # conv1.ADD (chk123) overwrites conv1.Convolution's output (chk120) in place
    blocks = {b.args["chunk"]: b for b in convnet.memory}
    assert blocks["chk123"].address == blocks["chk120"].address
    assert blocks["chk123"].alloc_ns == blocks["chk120"].free_ns
    assert convnet.diagnostics["megengine.in_place_output"].count == 8


@pytest.mark.parametrize("name", [CONVNET, RESNET, "megengine/convnet_static_profile.json.gz"])
@pytest.mark.parametrize("graph_only", [False, True])
def test_an_opr_listed_twice_in_comp_seq_runs_once(tmp_path, data, name, graph_only):
    """comp_seq lists each opr of a compiled sequence once, and the profiler keys one
    timing by opr id: repeats put in (fixed seed) are left out and counted, the opr kept
    where it is first listed (they were read as second slices with the same times, the
    op's order taken from its last place)."""
    with gzip.open(data / name) as f:
        doc = json.load(f)
    seq = doc["graph_exec"]["comp_seq"]
    rng = random.Random(1201)
    grown = list(seq)
    for opr_id in rng.sample(seq, 5):
        grown.insert(rng.randrange(len(grown) + 1), opr_id)
    doc["graph_exec"]["comp_seq"] = grown
    path = tmp_path / "repeated.json"
    path.write_text(json.dumps(doc["graph_exec"] if graph_only else doc))
    trace = traceconv.load(path, format="megengine")
    assert trace.diagnostics.count("megengine.repeated_opr") == len(grown) - len(set(grown)) == 5
    first_order = list(dict.fromkeys(grown))   # (plain Python: each opr where first listed)
    executed = [i for i in first_order if i in doc["graph_exec"]["operator"]]
    assert trace.graph.graph["execution_order"] == [f"op/{i}" for i in executed]
    assert [trace.graph.nodes[f"op/{i}"]["order"] for i in executed] == \
        [first_order.index(i) for i in executed]
    named = [s for s in trace.iter_slices() if s.category == "opr"]
    if graph_only:   # one slice a step of the program order
        assert len(named) == len(executed)
    else:            # one slice per place the profiler timed the opr
        places = sum(len(doc["profiler"][side].get(i, {})) for i in set(grown)
                     for side in ("host", "device"))
        assert len(named) == places

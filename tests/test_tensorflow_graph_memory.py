"""TensorFlow step timelines, what they hold beyond the time: the op graph written in each
op's ``args`` (``input0``, ``input1``...), the tensors of ``show_memory=True`` (objects
``N``/``O``/``D`` with their snapshots, the ``Allocators`` counters) and the GPU records
named after the op that launched them. Expected values are read from the real files with
plain ``json`` and ``re`` (tests/data/tensorflow, see PROVENANCE.md), or counted by hand."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest
from click.testing import CliRunner

import traceconv
from tests.conftest import DATA
from tests.test_tensorflow_timeline import load_written
from traceconv.cli import app
from traceconv.model.validate import validate

MEMORY = DATA / "tensorflow" / "cpu_memory_timeline.json"
GPU = DATA / "tensorflow" / "gpu_timeline_01.json"


def events(path) -> list[dict]:
    return json.loads(path.read_text())["traceEvents"]


def tensor_inputs(args: dict) -> list[str]:
    """An op's data inputs as TF's timeline lists them (``^name`` is a control input)."""
    keys = sorted((k for k in args if k.startswith("input")), key=lambda k: int(k[5:]))
    return [args[k] for k in keys if not args[k].startswith("^")]


def snapshot_field(event: dict, name: str) -> str | None:
    found = re.search(rf"{name}: (\S+)", event["args"]["snapshot"]["tensor_description"])
    return found.group(1) if found else None


def test_graph_edges_are_the_ops_inputs():
    ops = {e["args"]["name"]: e["args"] for e in events(MEMORY) if e["ph"] == "X"}
    trace = traceconv.load(MEMORY)
    assert validate(trace) == []
    graph = trace.graph
    for name, args in ops.items():
        node = f"op/{name}"
        assert graph.nodes[node]["type"] == args["op"]
        assert sorted(graph.nodes[p]["name"] for p in graph.predecessors(node)) == sorted(
            tensor_inputs(args))
    consumed = sum(len(tensor_inputs(args)) for args in ops.values())
    assert consumed == sum(1 for _, op in graph.in_edges([f"op/{n}" for n in ops])) == 14
    # the one control input (mul waits for the CheckNumerics of the assert) is no tensor
    assert graph.nodes["op/mul"]["tf_control_inputs"] == ["VerifyFinite/CheckNumerics"]
    # every tensor comes from the op it is named after: output 1 of the Split is split:1
    assert next(graph.predecessors("tensor/split:1")) == "op/split"
    assert trace.diagnostics.count("tensorflow.input_from_unrecorded_op") == 0


def test_tensors_are_memory_blocks_with_the_snapshots_sizes():
    all_events = events(MEMORY)
    created = {e["id"]: e for e in all_events if e["ph"] == "N"}
    snapshots = {e["id"]: e for e in all_events if e["ph"] == "O"}
    deleted = {e["id"]: e["ts"] for e in all_events if e["ph"] == "D"}
    expected = {e["name"]: (int(snapshot_field(snapshots[i], "ptr")),
                            int(snapshot_field(snapshots[i], "requested_bytes")),
                            e["ts"] * 1000, deleted[i] * 1000)
                for i, e in created.items()}
    trace = traceconv.load(MEMORY)
    blocks = {b.name: b for b in trace.memory}
    assert {name: (b.address, b.size, b.alloc_ns, b.free_ns) for name, b in blocks.items()
            } == expected
    assert len(blocks) == 14
    relu = blocks["Relu"]   # (a 64x16 float32 from the fused MatMul+BiasAdd+Relu)
    assert (relu.shape, relu.dtype, relu.pool, relu.owner_op) == ((64, 16), "float32",
                                                                  "mklcpu", "op/Relu")
    assert relu.device == "/job:localhost/replica:0/task:0/device:CPU:0"
    assert trace.graph.nodes[relu.owner_tensor]["bytes"] == 64 * 16 * 4
    assert trace.diagnostics.count("tensorflow.tensor_without_allocation") == 0
    assert trace.diagnostics.count("tensorflow.tensor_object_unpaired") == 0
    # the object events are read, none is dropped as an unknown phase
    assert not [d for d in trace.diagnostics if d.code.startswith("chrome.unsupported_phase")]


def test_blocks_peak_is_the_allocators_counter_peak():
    """TF's ``Allocators`` counter is its running sum of the tensors' requested bytes: the
    blocks' live bytes, swept here by hand (frees first at one time, as TF sorts), peak
    where it does."""
    counter = [e["args"]["mklcpu"] for e in events(MEMORY) if e["ph"] == "C"]
    trace = traceconv.load(MEMORY)
    steps = sorted([(b.alloc_ns, b.size) for b in trace.memory]
                   + [(b.free_ns, -b.size) for b in trace.memory])
    live, peak = 0, 0
    for _, change in steps:
        live += change
        peak = max(peak, live)
    assert peak == max(counter) == 14404
    [track] = [t for t in trace.tracks if t.name == "mklcpu"]
    assert track.unit == "bytes"


def test_info_counts_ops_tensors_blocks():
    result = CliRunner().invoke(app, ["info", str(MEMORY), "--json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    ops = [e for e in events(MEMORY) if e["ph"] == "X"]
    objects = [e for e in events(MEMORY) if e["ph"] == "N"]
    assert (info["ops"], info["tensors"], info["memory_blocks"]) == (
        len(ops), len(objects), len(objects)) == (15, 14, 14)


def test_gpu_records_are_linked_to_the_op_that_launched_them():
    all_events = events(GPU)
    names = {e["pid"]: e["args"]["name"] for e in all_events if e["ph"] == "M"}
    per_stream = [e for e in all_events if e["ph"] == "X"
                  and re.search(r"/stream:\d+ Compute$", names[e["pid"]])]
    host = {e["args"]["name"] for e in all_events if e["ph"] == "X"
            and names[e["pid"]].startswith("/job:")}
    launched = [e for e in per_stream if e["args"]["name"] in host]
    assert (len(per_stream), len(launched)) == (9, 8)   # edge_22_MatMul: a Send/Recv copy
    trace = traceconv.load(GPU)
    s = trace.slices
    links = [f for f in trace.iter_flows() if f.category == "launch"]
    assert Counter(s.args[f.source]["name"] for f in links) == Counter(
        e["args"]["name"] for e in launched)
    assert all(s.args[f.source]["name"] == s.args[f.target]["name"] for f in links)
    assert trace.diagnostics.count("tensorflow.device_record_without_op") == 1
    # the op's device time is its records': MatMul's kernel and its 1 µs copy on stream:7
    result = CliRunner().invoke(app, ["summary", str(GPU), "--json"])
    rows = {(r["name"], r["kind"]): r for r in json.loads(result.output)["ops"]}
    matmul = sum(e["dur"] for e in launched if e["args"]["name"] == "MatMul")
    assert rows["MatMul", "op"]["self_device_ns"] == matmul * 1000 == 4_086_000


SENDRECV = DATA / "tensorflow" / "gpu_sendrecv_excerpt.json"


def test_send_recv_input_is_the_tensor_sent_and_launches_by_device_name():
    """``/device:GPU:0`` records link to the executor ``/job:…/device:GPU:0``; an input
    renamed by a Send/Recv pair is the CPU ``_Arg`` op's tensor; ``^name`` is no edge."""
    all_events = events(SENDRECV)
    trace = traceconv.load(SENDRECV)
    assert validate(trace) == []
    graph = trace.graph
    assert sorted(graph.predecessors("op/MatMul_1")) == [
        "tensor/Variable_2/read", "tensor/_arg_Placeholder_2_0_0"]
    assert list(graph.predecessors("tensor/_arg_Placeholder_2_0_0")) == [
        "op/_arg_Placeholder_2_0_0"]
    noop = next(e["args"] for e in all_events if e.get("args", {}).get("name") == "GradientDescent_1")
    assert graph.nodes["op/GradientDescent_1"]["tf_control_inputs"] == [
        noop["input0"][1:], noop["input1"][1:]]
    assert graph.in_degree("op/GradientDescent_1") == 0
    # by hand: the stream:13 records of MatMul_1, its gradient and the update have an
    # executor op of their name; stream:14's copy edge_116__arg_... has none
    links = sorted(trace.slices.args[f.target]["name"] for f in trace.iter_flows()
                   if f.category == "launch")
    assert links == ["GradientDescent_1/update_Variable_2/ApplyGradientDescent",
                     "MatMul_1", "gradients_1/MatMul_1_grad/MatMul_1"]
    assert trace.diagnostics.count("tensorflow.device_record_without_op") == 1
    # the gradient's second input comes from an op the excerpt left out
    assert trace.diagnostics.count("tensorflow.input_from_unrecorded_op") == 1


@pytest.mark.integration
def test_launches_in_trace_processor(trace_processor):
    """Perfetto's own flow table joins each launching op to its record, by the names the
    file gives them."""
    load_written(trace_processor, GPU)
    rows = trace_processor.query(
        "select a.name as host, b.name as device, b.category as category from flow f "
        "join slice a on f.slice_out = a.id join slice b on f.slice_in = b.id "
        "where b.category like 'tf_device%'")
    all_events = events(GPU)
    names = {e["pid"]: e["args"]["name"] for e in all_events if e["ph"] == "M"}
    host = {e["args"]["name"] for e in all_events if e["ph"] == "X"
            and names[e["pid"]].startswith("/job:")}
    launched = Counter(e["name"] for e in all_events if e["ph"] == "X"
                       and re.search(r"/stream:\d+ Compute$", names[e["pid"]])
                       and e["args"]["name"] in host)
    assert Counter(r.device for r in rows) == launched
    assert all(r.host == r.device for r in rows)   # (op type as the name, on both sides)
    assert trace_processor.bad_stats() == []


def test_critical_path_walks_the_op_graph_by_executor_time():
    """The graph's path is a producer → consumer chain of executor ops, each timed by its
    own ``dur`` in the file (its host time: TF's first MatMul spends 115 ms there)."""
    result = CliRunner().invoke(app, ["critical-path", str(GPU), "--json"])
    path = json.loads(result.output)
    assert path["mode"] == "graph"
    ops = [entry["name"] for entry in path["path"] if entry["kind"] == "cpu"]
    assert ops == ["random_normal/shape", "random_normal/RandomStandardNormal",
                   "random_normal/mul", "random_normal", "MatMul"]   # (each the next's input)
    dur = {e["args"]["name"]: e["dur"] for e in events(GPU) if e["ph"] == "X"
           and e["pid"] == 3}   # (pid 3: /job:localhost/replica:0/task:0/gpu:0 Compute)
    assert path["breakdown"]["cpu"] == sum(dur[name] for name in ops) * 1000 == 221_003_000


def test_an_op_whose_args_name_another_type_still_reads(tmp_path):
    """Found by the fuzz run: an Op event whose ``args.op`` says another type than its name
    made an op node none of whose slices bore its name or type (the model's op_slices
    invariant: an internal error). The type is the event's name, as TF writes it."""
    data = json.loads((DATA / "tensorflow" / "cpu_timeline_01.json").read_text())
    op = next(e for e in data["traceEvents"] if e.get("cat") == "Op"
              and e["args"]["name"] == "random_normal/shape")
    op["args"]["op"] = "SomethingElse"
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    trace = traceconv.load(path)
    assert trace.graph.nodes["op/random_normal/shape"]["type"] == op["name"] == "Const"

"""The new Paddle profiler's protobuf export (NodeTreesProto)."""

from __future__ import annotations

import contextlib
import gzip
from collections import Counter
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from protobuf_runtime import runtime_classes

import traceconv
from traceconv.errors import TraceconvError
from traceconv.formats import paddle_pb, paddle_profile
from traceconv.formats.paddle_pb.proto import MESSAGES
from traceconv.io import Source
from traceconv.model import ProcessKind
from traceconv.model.graph import op_node

# the real protobuf runtime writes the test inputs
NodeTreesProto = runtime_classes("paddle_pb_test", MESSAGES)["NodeTreesProto"]

DATA = Path(__file__).parent / "data" / "paddle"


def test_pb_and_json_of_one_run_agree():
    trace = traceconv.load(DATA / "small_2.6.2.paddle_trace.pb.gz")
    assert trace.metadata.source_format == "paddle-pb"
    assert trace.metadata.source_version == "1.0.2"
    events = orjson.loads(gzip.decompress(
        (DATA / "small_2.6.2.paddle_trace.json.gz").read_bytes()))["traceEvents"]
    json_cats = Counter(e.get("cat") for e in events if e.get("ph") == "X")
    assert Counter(s.category for s in trace.iter_slices()) == json_cats
    assert len(trace.slices) == 2008
    assert len(trace.instants) == sum(e.get("ph") == "i" for e in events) == 928
    assert Counter(i.category for i in trace.iter_instants()) == {"Allocate": 464, "Free": 464}
    # 464 allocations; 24 frees of blocks allocated before profiling started
    assert len(trace.memory) == 488
    assert trace.diagnostics.count("paddle_pb.free_without_alloc") == 24
    assert trace.diagnostics.count("paddle_pb.root_nodes") == 2
    assert sum(b.alloc_ns is None for b in trace.memory) == 24
    names = [t.name for t in trace.tracks]
    assert names[0].startswith("MainThread (") and "Place(cpu) allocated" in names


def test_memory_blocks_belong_to_their_operator_in_pb_and_json():
    pb = traceconv.load(DATA / "small_2.6.2.paddle_trace.pb.gz")
    js = traceconv.load(DATA / "small_2.6.2.paddle_trace.json.gz")

    def by_place(trace):
        blocks = {}
        for b in trace.memory:
            blocks.setdefault((b.device, b.pool, b.address), []).append(b)
        return {k: sorted(v, key=lambda b: b.alloc_ns or b.free_ns) for k, v in blocks.items()}

    a, b = by_place(pb), by_place(js)
    pairs = [(x, y) for key in a for x, y in zip(a[key], b.get(key, []), strict=False)]
    assert len(pairs) == 488
    same = sum(x.owner_name == y.owner_name for x, y in pairs)
    # the JSON loses Python-side ops (another tid) and has µs times: 474 of 488 agree
    assert same == 474
    owners = Counter(x.owner_name for x, _ in pairs)
    assert owners["conv2d dygraph"] == 32 and "conv2d compute" not in owners


def test_enum_values_of_paddle_3_and_shapes():
    pir = traceconv.load(DATA / "pir_static_3.3.1.paddle_trace.pb.gz")
    cats = Counter(s.category for s in pir.iter_slices())
    assert cats["StaticKernelLaunch"] == 516 and cats["Operator"] == 516
    events = orjson.loads(gzip.decompress(
        (DATA / "pir_static_3.3.1.paddle_trace.json.gz").read_bytes()))["traceEvents"]
    assert len(pir.slices) == sum(e.get("ph") == "X" for e in events)
    dygraph = traceconv.load(DATA / "small_3.3.1.paddle_trace.pb.gz")
    assert Counter(s.category for s in dygraph.iter_slices())["DygraphKernelLaunch"] == 408
    shapes = traceconv.load(DATA / "static_shapes_3.3.1.paddle_trace.pb.gz")
    ops = [s for s in shapes.iter_slices() if s.args and "input_shapes" in s.args]
    assert len(ops) == 276 and all(s.category == "Operator" for s in ops)
    adam = next(s for s in ops if s.name == "adam" and s.args["input_shapes"])
    assert adam.start == 1795340077086231350    # > 2**53: kept exact as int
    assert adam.args["input_shapes"]["Grad"] == [[8, 3, 3, 3]]
    assert adam.args["input_shapes"]["LearningRate"] == [[]]
    assert adam.args["input_dtypes"]["Param"] == ["DENSE_TENSOR"]
    assert "paddle.optimizer.Adam" in adam.args["callstack"]
    # the op graph: one op node per Operator execution, its recorded inputs as tensors
    assert shapes.counts()["ops"] == 276 and shapes.counts()["tensors"] == 894
    graph = shapes.graph
    op = op_node(adam.index)
    assert graph.nodes[op]["type"] == "adam" and graph.nodes[op]["slices"] == [adam.index]
    inputs = {graph.nodes[t]["name"]: graph.nodes[t]["shape"] for t in graph.predecessors(op)}
    assert inputs["Grad"] == (8, 3, 3, 3) and inputs["LearningRate"] == ()
    assert dygraph.counts()["ops"] == 480 and dygraph.counts()["tensors"] == 0


def _gpu_message() -> bytes:
    message = NodeTreesProto(version="1.0.2", span_indx=0)
    message.extra_info.add(key="7", value="MainThread")
    tree = message.thread_trees.add(thread_id=7)
    root = tree.host_nodes.add(id=0, parentid=-1).host_trace_event
    root.name, root.type, root.end_ns = "root node", 7, 2**64 - 1
    op = tree.host_nodes.add(id=1, parentid=0)
    event = op.host_trace_event
    event.name, event.type, event.start_ns, event.end_ns = "matmul dygraph", 0, 1000, 9000
    event.process_id, event.thread_id = 5, 7
    runtime = op.runtime_nodes.add()
    call = runtime.runtime_trace_event
    call.name, call.start_ns, call.end_ns, call.correlation_id = "cudaLaunchKernel", 2000, 3000, 42
    kernel = runtime.device_nodes.add().device_event
    kernel.name, kernel.type, kernel.start_ns, kernel.end_ns = "gemm_kernel", 4, 4000, 8000
    kernel.device_id, kernel.stream_id, kernel.correlation_id = 0, 13, 42
    kernel.kernel_info.grid_x, kernel.kernel_info.occupancy = 128, 0.5
    copy = runtime.device_nodes.add().device_event
    copy.name, copy.type, copy.start_ns, copy.end_ns = "MEMCPY_HtoD", 5, 8100, 8200
    copy.device_id, copy.stream_id = 0, 13
    copy.memcpy_info.num_bytes = 4096
    mem = op.mem_nodes.add().mem_event
    mem.timestamp_ns, mem.type, mem.addr, mem.increase_bytes = 1500, 0, 0x7000, 4096
    mem.place, mem.current_allocated = "Place(gpu:0)", 4096
    return message.SerializeToString()


def test_gpu_shaped_tree(tmp_path):
    path = tmp_path / "gpu.paddle_trace.pb"
    path.write_bytes(_gpu_message())
    trace = traceconv.load(path)
    device = [p for p in trace.processes if p.kind is ProcessKind.DEVICE]
    assert [p.name for p in device] == ["GPU 0"]
    kernel = next(trace.iter_slices(name="gemm_kernel"))
    assert kernel.category == "Kernel" and kernel.args["grid_x"] == 128
    assert kernel.args["occupancy"] == 0.5
    assert next(trace.iter_slices(name="MEMCPY_HtoD")).args["num_bytes"] == 4096
    flows = [(trace.slice(f.source).name, trace.slice(f.target).name)
             for f in trace.iter_flows()]
    assert flows == [("cudaLaunchKernel", "gemm_kernel"), ("cudaLaunchKernel", "MEMCPY_HtoD")]
    (block,) = trace.memory
    assert (block.address, block.size, block.device, block.owner_name, block.free_ns) == (
        0x7000, 4096, "Place(gpu:0)", "matmul dygraph", None)


def test_sniffers_do_not_confuse_pb_and_profile():
    pb_head = gzip.decompress((DATA / "small_2.6.2.paddle_trace.pb.gz").read_bytes())[:65536]
    profile_head = (DATA / "legacy_CPU_OpDetail.profile").read_bytes()[:65536]
    assert paddle_pb.sniff(pb_head, None) > 0.5  # type: ignore[arg-type]
    assert paddle_pb.sniff(profile_head, None) == 0  # type: ignore[arg-type]
    assert paddle_profile.sniff(pb_head, Source("x.pb")) == 0
    source = Source(DATA / "small_2.6.2.paddle_trace.pb.gz")
    assert traceconv.registry.detect(source).name == "paddle-pb"


def test_truncated_pb_is_one_clean_error(tmp_path):
    path = tmp_path / "cut.paddle_trace.pb"
    path.write_bytes(_gpu_message()[:-7])
    with pytest.raises(TraceconvError):
        traceconv.load(path)


def test_times_beyond_int64_are_dropped_and_counted(tmp_path):
    message = NodeTreesProto.FromString(_gpu_message())
    node = message.thread_trees[0].host_nodes[1]
    node.host_trace_event.end_ns = 2**64 - 5          # uninitialised, as CUPTI leaves it
    path = tmp_path / "bad.paddle_trace.pb"
    path.write_bytes(message.SerializeToString())
    trace = traceconv.load(path)
    assert trace.diagnostics.count("paddle_pb.time_out_of_range") == 1
    assert [s.name for s in trace.iter_slices()] == ["cudaLaunchKernel", "gemm_kernel",
                                                      "MEMCPY_HtoD"]
    assert len(trace.memory) == 1 and trace.memory[0].owner_name is None


@settings(max_examples=40, deadline=None)
@given(st.binary(max_size=200))
def test_garbage_never_tracebacks(tmp_path_factory, blob):
    path = tmp_path_factory.mktemp("g") / "x.paddle_trace.pb"
    path.write_bytes(b"\x0a\x051.0.2" + blob)
    with contextlib.suppress(TraceconvError):
        traceconv.load(path, format="paddle_pb")

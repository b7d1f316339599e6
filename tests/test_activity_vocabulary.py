"""One vocabulary at read time (issue 21, part 3): readers state each slice's activity and
the typed metadata; analyses read those, never a vendor's categories or envelope keys."""

from __future__ import annotations

import ast
import gzip
import json
from collections import Counter
from pathlib import Path

import pytest

import traceconv
from traceconv.analysis.activity import Timeline, slice_activity
from traceconv.analysis.critical_path import critical_path
from traceconv.analysis.op_summary import op_summary
from traceconv.model import ProcessKind, Trace
from traceconv.model.activity import Activity, kind_of
from traceconv.vocabularies.common import COMMON

ROOT = Path(__file__).resolve().parent.parent
RESNET = ROOT / "samples" / "torch" / "resnet18_train_cuda.pt.trace.json.gz"
# Vendor words that used to be spelled out in analyses (four drifting copies of the launch
# categories, Kineto's envelope keys, MegEngine's times): only readers may say them now.
VENDOR_WORDS = {"cpu_op", "cuda_runtime", "cuda_driver", "xpu_runtime", "hip_runtime",
                "user_annotation", "python_function", "gpu_memcpy", "gpu_memset",
                "deviceProperties", "distributedInfo", "megengine_times", "Runtime"}


def _raw_categories(path: Path) -> Counter:
    """Categories of the complete events, straight from the JSON (independent of traceconv)."""
    with gzip.open(path, "rt") as f:
        events = json.load(f)["traceEvents"]
    return Counter(e.get("cat") for e in events if e.get("ph") == "X")


def _code_strings(path: Path) -> set[str]:
    """String constants of a module that are code, not docstrings (doctests may build
    traces with any producer's words)."""
    tree = ast.parse(path.read_text())
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    return {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
            and isinstance(node.value, str) and id(node) not in docstrings}


@pytest.mark.parametrize("package", ["analysis", "report"])
def test_analyses_name_no_vendor_words(package: str) -> None:
    found = {f"{path.relative_to(ROOT)}: {word}"
             for path in sorted((ROOT / "traceconv" / package).rglob("*.py"))
             for word in _code_strings(path) & VENDOR_WORDS}
    assert not found


def test_kineto_reader_states_every_activity() -> None:
    trace = traceconv.load(RESNET)
    column = trace.slices.numpy("activity")
    assert len(column) == len(trace.slices) and (column != Activity.UNKNOWN).all()
    raw = _raw_categories(RESNET)
    kinds = Counter(Activity(k).name for k in kind_of(column).tolist())
    # the profiler's one span ("Trace") is the recording, not work
    assert kinds["PYTHON"] == raw["python_function"]
    assert kinds["KERNEL"] == raw["kernel"]
    assert kinds["MEMSET"] == raw["gpu_memset"]
    assert kinds["RANGE"] == raw["gpu_user_annotation"]   # (a device annotation)
    assert kinds["PROFILER"] == raw["Trace"]
    assert kinds["LAUNCH"] + kinds["SYNC"] + kinds["RUNTIME"] == (
        raw["cuda_runtime"] + raw["cuda_driver"])
    assert kinds["ANNOTATION"] == raw["user_annotation"]


def test_kineto_reader_states_devices() -> None:
    with gzip.open(RESNET, "rt") as f:
        props = json.load(f)["deviceProperties"]
    meta = traceconv.load(RESNET).metadata
    assert [(d.name, d.memory_bytes, d.compute_major) for d in meta.devices] == [
        (p["name"], p["totalGlobalMem"], p["computeMajor"]) for p in props]


def _trace_with_own_words() -> tuple[Trace, dict[str, int]]:
    """A trace whose categories mean nothing to traceconv: only the activity column says
    what each slice is."""
    t = Trace()
    host = t.add_track("main", process=t.add_process("host"))
    gpu = t.add_track("queue", process=t.add_process("npu", kind=ProcessKind.DEVICE))
    rows = {
        "range": t.add_slice(host, 0, 100, "range", "mine", activity=Activity.ANNOTATION),
        "op": t.add_slice(host, 10, 50, "op", "mine", activity=Activity.HOST_OP),
        "launch": t.add_slice(host, 20, 5, "enqueue", "mine", activity=Activity.LAUNCH),
        "work": t.add_slice(gpu, 30, 40, "work", "mine", activity=Activity.KERNEL),
        "copy": t.add_slice(gpu, 80, 10, "move", "mine", activity=Activity.MEMCPY),
    }
    t.add_flow(rows["launch"], rows["work"])
    return t, rows


def test_op_summary_reads_the_activity_column() -> None:
    t, _ = _trace_with_own_words()
    kinds = {row.name: row.kind for row in op_summary(t)}
    assert kinds == {"range": "annotation", "op": "op", "enqueue": "runtime",
                     "work": "kernel", "move": "memcpy"}


def test_timeline_reads_the_activity_column() -> None:
    t, rows = _trace_with_own_words()
    tl = Timeline(t)
    assert Activity(tl.activity[rows["launch"]]) is Activity.LAUNCH
    assert tl.launch_of[rows["work"]] == rows["launch"]
    assert tl.device_work().tolist() == [rows["work"], rows["copy"]]


def test_unknown_rows_get_the_general_vocabulary() -> None:
    t = Trace()
    host = t.add_track("main", process=t.add_process("host"))
    t.add_slice(host, 0, 10, "cudaStreamSynchronize", "cuda_runtime")
    t.add_slice(host, 0, 10, "nccl:all_reduce", "user_annotation")
    values = slice_activity(t)
    assert [Activity(v & 15).name for v in values] == ["SYNC", "ANNOTATION"]
    assert values[1] & Activity.COMMUNICATION
    assert not len(t.slices.activity) or not any(t.slices.activity)   # the trace unchanged


# What each producer names a collective (NCCL kernels and calls, torch c10d / Gloo /
# record_param_comms, Paddle's c_ ops, XLA's HLO names) and shape work that merely says
# "broadcast" (torch, MIGraphX, a Paddle kernel): facts of the producers, listed by hand.
COLLECTIVES = ["ncclDevKernel_Broadcast_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
               "nccl:all_reduce", "c10d::broadcast_", "gloo:broadcast", "record_param_comms",
               "c_broadcast", "c_allreduce_sum", "c_reducescatter", "all-reduce.3",
               "all-gather-start", "reduce-scatter.1", "all-to-all", "collective-permute-done",
               "hcclAllReduce", "rcclAllGather"]
NOT_COLLECTIVES = ["aten::broadcast_tensors", "aten::broadcast_to", "multibroadcast",
                   "broadcast", "void phi::funcs::VectorizedBroadcastKernel<float, float>",
                   "broadcast_in_dim.7", "aten::all", "reduce_sum", "scatter_add"]


@pytest.mark.parametrize("name", COLLECTIVES + NOT_COLLECTIVES)
def test_a_collective_is_named_as_one(name: str) -> None:
    is_communication = bool(COMMON.classify("cpu_op", name, False) & Activity.COMMUNICATION)
    assert is_communication == (name in COLLECTIVES)


def test_shape_work_named_broadcast_is_not_communication(data: Path) -> None:
    """A single-process V100 step with no collective library (its one ``broadcast`` word is
    ``aten::broadcast_tensors``) has no communication, in the timeline or on the path."""
    trace = traceconv.load(data / "torch" / "kineto_tb_gpu_metrics_v100.json.gz")
    assert not Timeline(trace).has(Activity.COMMUNICATION)
    assert critical_path(trace).breakdown.get("communication", 0) == 0

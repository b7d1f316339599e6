"""What Perfetto shows for PyTorch, JAX and ONNX Runtime profiles: process names without
made-up pids, GPU model and rank from the Kineto envelope, argument keys as written (read
back from the real trace_processor), and the JAX / ONNX Runtime flavours."""

from __future__ import annotations

import gzip
import io
import json

import pytest
from click.testing import CliRunner

import traceconv
from tests.conftest import DATA
from tests.tp_wasm.layout import LINUX_PID_MAX, processes
from traceconv.cli import app
from traceconv.formats.perfetto import write

TORCH = DATA / "torch"
JAX = TORCH / "cuda_h100" / "jax_mlp_perfetto_trace.json.gz"
ORT = TORCH / "cuda_h100" / "ort_mobilenetv2_cpu_profile.json.gz"


def raw(path):
    return json.loads(gzip.decompress(path.read_bytes()))


def framework_of(path) -> str:
    """What ``traceconv info --json`` says the producer is."""
    result = CliRunner().invoke(app, ["info", str(path), "--json"])
    return json.loads(result.output)["source"]["framework"]


def pftrace(trace) -> bytes:
    out = io.BytesIO()
    write(trace, out)
    return out.getvalue()


@pytest.mark.integration
def test_pytorch_view_in_trace_processor(trace_processor):
    path = TORCH / "ddp_gloo_rank0.pt.trace.json.gz"
    envelope = raw(path)
    trace_processor.load(pftrace(traceconv.load(path)))
    shown = {name: (pid, labels) for pid, name, labels in processes(trace_processor)}
    model, info = envelope["deviceProperties"][0]["name"], envelope["distributedInfo"]
    rank = [f"rank {info['rank']}", f"world size {info['world_size']}",
            f"backend {info['backend']}"]
    assert shown["python3 (pid 1180)"] == (1180, ["CPU", *rank])
    # the device and the span groups are processes too, with made-up pids beyond any real one
    assert [pid for pid, _ in shown.values() if pid <= LINUX_PID_MAX] == [1180]
    assert shown["GPU 0"][1] == [model, *rank]
    assert shown["Spans"][1] == rank


@pytest.mark.integration
def test_argument_keys_kept_as_written(trace_processor):
    path = TORCH / "resnet18_train_cuda.pt.trace.json.gz"
    written = {k for e in raw(path)["traceEvents"] for k in (e.get("args") or {})}
    assert "est. achieved occupancy %" in written
    trace_processor.load(pftrace(traceconv.load(path)))
    keys = {r.key[len("debug."):] for r in trace_processor.query(
        "select distinct key from args where key like 'debug.%'")}
    assert "est. achieved occupancy %" in keys and "est_ achieved occupancy %" not in keys
    top_level = {k for k in keys if "[" not in k}   # list items read back as name[i]
    assert written - {"Input Dims", "Input type", "Input Strides", "Concrete Inputs"} \
        >= top_level - written   # nothing renamed
    assert trace_processor.bad_stats() == []


def test_jax_profile_is_detected():
    trace = traceconv.load(JAX)
    assert trace.metadata.framework == "JAX" and trace.metadata.attributes["flavour"] == "jax"
    events = raw(JAX)["traceEvents"]
    devices = {e["pid"] for e in events if e.get("ph") == "M" and e["name"] == "process_name"
               and e["args"]["name"].startswith("/device:")}
    device_events = sum(e.get("ph") == "X" and e["pid"] in devices for e in events)
    device_processes = {p.id for p in trace.processes if p.kind.value == "device"}
    on_device = sum(trace.tracks[t].process in device_processes for t in trace.slices.track)
    assert on_device == device_events > 0
    assert {p.name for p in trace.processes} == {"/device:GPU:0", "/host:CPU"}
    assert framework_of(JAX) == "JAX"


def test_onnxruntime_profile_is_detected():
    trace = traceconv.load(ORT)
    assert trace.metadata.framework == "ONNX Runtime"
    assert len(trace.slices) == len(raw(ORT))
    assert framework_of(ORT) == "ONNX Runtime"

"""The README's API tour, as a test: the public functions work as documented."""

from __future__ import annotations

from pathlib import Path

import pytest

import traceconv
import traceconv.formats.chrome  # noqa: F401 - the package must not hide list_formats()
from traceconv.model.memory import live_bytes

CNN = Path(__file__).parent.parent / "samples" / "torch" / "cnn_step5.pt.trace.json"


def test_api_tour(tmp_path: Path):
    trace = traceconv.load(CNN)
    assert (trace.counts()["slices"], trace.metadata.framework, trace.metadata.clock) == (
        2725, "PyTorch", "unix epoch")
    step = next(trace.iter_slices(name="ProfilerStep#4"))
    assert trace.tracks[step.track].name.startswith("thread ")
    assert trace.slices.numpy("dur").dtype.kind == "i"
    flow = next(trace.iter_flows())
    assert trace.slice(flow.source).start <= trace.slice(flow.target).start
    assert live_bytes(trace.memory).peak[1] == 2_625_264  # = PyTorch's max Total Allocated
    trace.save(tmp_path / "cnn.pftrace")
    back = traceconv.convert(CNN, tmp_path / "cnn.json.gz")
    assert (tmp_path / "cnn.json.gz").stat().st_size > 0 and len(back.slices) == 2725
    names = [f.name for f in traceconv.list_formats()]
    assert {"chrome", "perfetto", "megengine", "paddle-report", "migraphx", "svg"} <= set(names)
    assert traceconv.load(tmp_path / "cnn.json.gz", format="json").counts()["flows"] == 48


@pytest.mark.slow
def test_api_tour_pytorch_snapshot_and_execution_trace():
    torch_samples = CNN.parent
    snap = traceconv.load(torch_samples / "resnet18_train_snapshot.pickle.gz")
    assert (len(snap.memory), len(snap.reservations)) == (1524, 45)
    from traceconv.analysis.allocation_sites import top_allocation_sites
    assert top_allocation_sites(snap.memory, 1)[0].site == "resnet.py:268 _forward_impl"
    run = traceconv.combine([
        traceconv.load(torch_samples / "resnet18_train_cuda.pt.trace.json.gz"),
        traceconv.load(torch_samples / "resnet18_train_et.json.gz")])
    conv = run.graph.nodes["op/6"]
    assert (conv["name"], conv["host_ns"], conv["device_ns"], conv["kernels"]) == (
        "aten::conv2d", 322301, 329895, 4)


def test_reading_a_gzip_leaves_no_file_open():
    """Every stream a read opens is closed with it, the file under a gzip too (GzipFile does
    not close a file object it was given): none is left for the collector to close, with a
    ResourceWarning."""
    import gc
    import warnings

    path = Path(__file__).parent / "data" / "torch" / "resnet18_train_cuda.pt.trace.json.gz"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        trace = traceconv.load(path)
        gc.collect()
    assert [str(w.message) for w in caught if w.category is ResourceWarning] == []
    assert len(trace.memory) == 639   # (read whole: the blocks test_kineto_memory counts)

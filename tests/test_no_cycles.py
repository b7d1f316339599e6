"""Reading makes no garbage cycles.

The cyclic collector is paused while a reader runs (millions of objects, see
``traceconv/gcpause.py``), so what a reader drops must be freed by reference counting. An
object that points back at its owner (a reader keeping a bound method of itself) would stay
alive, with everything it holds, until the collector runs, and that first collection would
walk all of it: on a 0.7 M-event trace, 230,000 flow-point tuples and 0.16 s.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

import traceconv

SAMPLES = Path(__file__).parent.parent / "samples"
ONE_PER_READER = ["torch/cnn_step5.pt.trace.json", "torch/streams_graph_nccl_cuda.pt.trace.json.gz",
                  "torch/resnet18_train_snapshot.pickle.gz", "torch/resnet18_train_et.json.gz",
                  "torch/cnn_memory_timeline.raw.json.gz",
                  "megengine/convnet_lar_embed_profile.json",
                  "migraphx/synthetic_resnet_perf_rocm7.2.txt", "paddle/report_gpu_before.txt",
                  "paddle/small_3.3.1.paddle_trace.pb", "paddle/summary_small_2.6.2.txt",
                  "paddle/legacy_gpu_synthetic.profile"]


@pytest.mark.slow
@pytest.mark.parametrize("name", ONE_PER_READER)
def test_reading_leaves_no_garbage_cycle(name: str) -> None:
    path = SAMPLES / name
    traceconv.load(path)   # the first read imports the reader (modules make cycles)
    gc.disable()
    try:
        gc.collect()
        trace = traceconv.load(path)
        assert gc.collect() == 0   # nothing unreachable: all freed by reference counting
    finally:
        gc.enable()
    assert any(trace.counts().values())   # (it read something)

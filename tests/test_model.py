"""The model's building and query API."""

from traceconv.analysis.merge import merge
from traceconv.model import MemoryBlock, Metadata, ProcessKind, Trace, TrackKind, add_op
from traceconv.model.memory import add_live_bytes_counters, live_bytes


def small_trace(rank: int = 0) -> Trace:
    trace = Trace(Metadata(source_format="test", rank=rank, clock="unix epoch"))
    host = trace.add_process("python", pid=100 + rank)
    main = trace.add_track("MainThread", process=host, tid=100 + rank)
    gpu = trace.add_process("GPU 0", kind=ProcessKind.DEVICE)
    stream = trace.add_track("stream 7", process=gpu, kind=TrackKind.STREAM, tid=7)
    op = trace.add_slice(main, 1_000, 5_000, "aten::mm", "cpu_op", {"External id": 1})
    launch = trace.add_slice(main, 2_000, 500, "cudaLaunchKernel", "cuda_runtime")
    kernel = trace.add_slice(stream, 3_000, 1_000, "sgemm", "kernel")
    trace.add_flow(launch, kernel, "ac2g")
    trace.add_instant(main, 1_500, "[memory]", "cpu_instant_event", {"Bytes": 64})
    add_op(trace.graph, 1, "aten::mm", "mm", slices=[op])
    trace.add_memory_block(MemoryBlock(0x1000, 64, 1_500, 4_000, device="cpu"))
    return trace


def test_counts_and_queries():
    trace = small_trace()
    assert trace.counts() == {"tracks": 2, "slices": 3, "instants": 1, "counter_samples": 0,
                              "flows": 1, "ops": 1, "tensors": 0, "memory_blocks": 1,
                              "stat_rows": 0, "span_ns": 5_000}
    assert [s.name for s in trace.iter_slices(track=1)] == ["sgemm"]
    assert [s.index for s in trace.iter_slices(name="cudaLaunchKernel")] == [1]
    assert list(trace.iter_slices(name="missing")) == []
    flow = next(trace.iter_flows())
    assert (trace.slice(flow.source).name, trace.slice(flow.target).name) == (
        "cudaLaunchKernel", "sgemm")
    assert trace.slice(0).end == 6_000


def test_live_bytes_counters():
    trace = small_trace()
    trace.add_memory_block(MemoryBlock(0x2000, 100, 2_000, None, device="cpu"))
    (track,) = add_live_bytes_counters(trace)
    assert trace.tracks[track].unit == "bytes"
    samples = [(c.ts, c.value) for c in trace.iter_counter_samples()]
    assert samples == [(1_500, 64), (2_000, 164), (4_000, 100)]
    assert live_bytes(trace.memory).peak == (2_000, 164)


def test_merge_prefixes_ranks_and_remaps_rows():
    merged = merge([small_trace(0), small_trace(1)])
    assert [p.name for p in merged.processes] == [
        "rank 0: python", "rank 0: GPU 0", "rank 1: python", "rank 1: GPU 0"]
    assert merged.counts()["slices"] == 6 and merged.counts()["ops"] == 2
    flows = list(merged.iter_flows())
    assert [(f.source, f.target) for f in flows] == [(1, 2), (4, 5)]
    assert merged.slice(5).track == 3 and merged.tracks[3].process == 3
    assert {b.device for b in merged.memory} == {"rank 0: cpu", "rank 1: cpu"}

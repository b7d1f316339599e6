"""Time the Perfetto writer on a synthetic Kineto-shaped trace (default: 1 M events).

    python benchmarks/perfetto_writer.py [--slices 750000] [--instants 250000] [--workers N]

Per thread: steps of nested ops (depth up to 6) with Kineto-like args, a few partially
overlapping annotations, memory instants, and host→device flows to a GPU stream.
"""

from __future__ import annotations

import argparse
import io
import resource
import time

import numpy as np

from traceconv.formats.perfetto import write
from traceconv.model import ProcessKind, Trace, TrackKind
from traceconv.model.nesting import repair_nesting


def synthetic(slices: int, instants: int, flows: int, seed: int = 0) -> Trace:
    """A trace shaped like a 500-step CPU Kineto profile."""
    rng = np.random.default_rng(seed)
    trace = Trace()
    trace.metadata.clock = "unix epoch"
    host = trace.add_process("python", pid=4242)
    threads = [trace.add_track(f"thread {i}", process=host, tid=4242 + i) for i in range(4)]
    gpu = trace.add_process("GPU 0", kind=ProcessKind.DEVICE)
    stream = trace.add_track("stream 7", process=gpu, kind=TrackKind.STREAM, tid=7)
    names = [f"aten::op_{i}" for i in range(400)]
    t = 1_700_000_000_000_000_000
    rows = []
    per_thread = slices // len(threads)
    for track in threads:
        now, made = t, 0
        while made < per_thread:
            # a binary-ish tree of nested calls: parent [now, now + width)
            width = 64_000
            stack = [(now, width, 0)]
            while stack and made < per_thread:
                start, dur, depth = stack.pop()
                name = names[int(rng.integers(400))]
                rows.append(trace.add_slice(track, start, dur, name, "cpu_op", {
                    "External id": made, "Record function id": 0, "Ev Idx": made,
                    "Sequence number": int(rng.integers(10_000)), "Fwd thread id": 1}))
                made += 1
                if depth < 6 and dur > 200:
                    half = dur // 2
                    stack += [(start + half + 10, half - 20, depth + 1),
                              (start + 10, half - 20, depth + 1)]
            now += width + 1000
        # a few Kineto-style annotations that outlive their enclosing frame
        for k in range(0, made, 2000):
            trace.add_slice(track, t + k * 200 + 15, 90_000, "ProfilerStep#1", "user_annotation")
    for k in range(instants):
        trace.add_instant(threads[k % 4], t + k * 3, "[memory]", "cpu_instant_event",
                          {"Total Allocated": k * 16, "Bytes": 512, "Addr": 94_000_000_000_000 + k,
                           "Device Type": 0, "Device Id": -1})
    for k in range(flows):
        src = rows[int(rng.integers(len(rows)))]
        kernel = trace.add_slice(stream, trace.slice(src).start + 5_000 + k * 7, 1_000,
                                 "sgemm", "kernel", {"correlation": k, "stream": 7})
        trace.add_flow(src, kernel, "ac2g")
    return trace


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the encoding workers)."""
    own, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                           resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slices", type=int, default=750_000)
    parser.add_argument("--instants", type=int, default=250_000)
    parser.add_argument("--flows", type=int, default=16_000)
    parser.add_argument("--workers", type=int, default=None, help="encoding processes")
    options = parser.parse_args()
    trace = synthetic(options.slices, options.instants, options.flows)
    counts = trace.counts()
    start = cpu_seconds()
    repair_nesting(trace)
    repaired = cpu_seconds() - start
    out = io.BytesIO()
    start, wall = cpu_seconds(), time.perf_counter()
    write(trace, out, workers=options.workers)
    elapsed, wall = cpu_seconds() - start, time.perf_counter() - wall
    events = 2 * counts["slices"] + counts["instants"] + counts["counter_samples"]
    print(f"{counts['slices']:,} slices, {counts['instants']:,} instants, "
          f"{counts['flows']:,} flows -> {len(out.getvalue()) / 1e6:.1f} MB")
    # CPU seconds (worker processes included): wall time on a shared machine says more
    # about the neighbours
    print(f"repair_nesting {repaired:.2f} s CPU; write {elapsed:.2f} s CPU ({wall:.2f} s wall, "
          f"workers={options.workers or 'auto'}), "
          f"{events / elapsed / 1e3:.0f} k packets per CPU second")
    print([(d.code, d.count) for d in trace.diagnostics])


if __name__ == "__main__":
    main()

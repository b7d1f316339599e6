"""Time the reading of a synthetic Linux system trace (Perfetto ftrace bundles).

    python benchmarks/perfetto_system_read.py [--events 100000] [--per-bundle 250]

Each bundle holds events of one CPU (eight CPUs in turn): four atrace ``print`` lines
(nested ``B``/``E`` pairs of four threads) for each ``sched_switch``. The trace is built
with the ``perfetto`` package's generated classes, then read with ``traceconv.load``.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

from perfetto.trace_builder.proto_builder import TraceProtoBuilder

import traceconv


def synthetic(events: int, per_bundle: int) -> bytes:
    """The bytes of a system trace of ``events`` ftrace events."""
    builder = TraceProtoBuilder()
    ts = 1_000
    for first in range(0, events, per_bundle):
        bundle = builder.add_packet().ftrace_events
        bundle.cpu = (first // per_bundle) % 8
        for k in range(first, min(first + per_bundle, events)):
            event = bundle.event.add()
            ts += 100
            event.timestamp, event.pid = ts, 100 + k % 4
            if k % 5 == 4:
                switch = event.sched_switch
                switch.prev_pid, switch.prev_comm, switch.prev_state = 100, "main", 1
                switch.next_pid, switch.next_comm = 101 + k % 3, "worker"
            else:
                event.print.buf = f"B|100|step {k}\n" if k % 2 == 0 else "E|100\n"
    return builder.serialize()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--per-bundle", type=int, default=250)
    args = parser.parse_args()
    data = synthetic(args.events, args.per_bundle)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "system.perfetto-trace"
        path.write_bytes(data)
        started = time.process_time()
        trace = traceconv.load(path)
        spent = time.process_time() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{args.events:,} ftrace events, {len(data):,} bytes: read in {spent:.2f} CPU-s "
          f"({spent / args.events * 1e6:.1f} µs an event); {len(trace.slices):,} slices; "
          f"peak RSS {peak:.0f} MB")


if __name__ == "__main__":
    main()

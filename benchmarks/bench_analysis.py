"""Benchmark: advise and critical-path on a large GPU-shaped PyTorch trace.

The target is at most 5 s per 1 M events for ``advise``. Loading is measured in the same run
as the baseline, so the ratio (analysis time / load time) stays meaningful on a busy machine.

    python benchmarks/bench_analysis.py                  # ../shared's 702 k-event MLP trace
    python benchmarks/bench_analysis.py trace.json.gz    # any trace
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = (ROOT.parent / "shared" / "samples" / "torch" / "cuda_h100"
          / "large_mlp_train_cuda.pt.trace.json.gz")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", nargs="?", default=str(CORPUS))
    args = parser.parse_args()
    if not Path(args.trace).exists():
        sys.exit(f"no trace at {args.trace} (pass one)")
    sys.path.insert(0, str(ROOT))
    import traceconv
    from traceconv.analysis.advise import advise

    t0 = time.perf_counter()
    trace = traceconv.load(args.trace)
    load_s = time.perf_counter() - t0
    events = len(trace.slices) + len(trace.instants) + len(trace.counters) + len(trace.flows)
    rows = [("load", load_s)]
    t0 = time.perf_counter()
    result = advise(trace)
    rows.append(("advise", time.perf_counter() - t0))
    try:
        from traceconv.analysis.critical_path import critical_path
    except ImportError:
        pass
    else:
        t0 = time.perf_counter()
        critical_path(trace)
        rows.append(("critical-path", time.perf_counter() - t0))
    print(f"{Path(args.trace).name}: {events:,} events, "
          f"{len(result.findings)} findings ({', '.join(result.rules_fired())})")
    for name, seconds in rows:
        print(f"  {name:14} {seconds:7.2f} s  {seconds / events * 1e6:6.2f} s per 1 M events  "
              f"{seconds / load_s:5.2f}x load")
    print(f"  peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB")


if __name__ == "__main__":
    main()

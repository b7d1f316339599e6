"""Kernel launch statistics (after HTA's ``get_cuda_kernel_launch_stats``), on the model.

For every device work item with a launch link (host runtime call → kernel, copy, memset,
collective): the **CPU duration** of the runtime call, the **GPU duration** of the work,
and the **launch delay** = start of the work − end of its runtime call, clipped at 0 (a work
item that starts before its call returns has no delay), as HTA defines it. Distributions use
nearest-rank percentiles, so every number is a measured duration in exact ns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .activity import DEVICE_WORK, Timeline

PERCENTILES = (50, 90, 95, 99)
# HTA's default cut-offs for "launch delay outliers" and "short kernels"
LONG_DELAY_NS = 100_000


def distribution(values: np.ndarray) -> dict[str, int]:
    """min, median, p90, p95, p99, max (nearest rank) and mean (floored) of int ns values.

    >>> distribution(np.array([5, 1, 3, 2, 4]))
    {'count': 5, 'min': 1, 'median': 3, 'p90': 5, 'p95': 5, 'p99': 5, 'max': 5, 'mean': 3, 'total': 15}
    """
    if not len(values):
        return {"count": 0}
    ordered = np.sort(values.astype(np.int64))
    n = len(ordered)

    def rank(p: int) -> int:
        # nearest rank: the smallest value with at least p % of the values at or below it
        return int(ordered[max(0, -(-p * n // 100) - 1)])

    out = {"count": n, "min": int(ordered[0]), "median": rank(50)}
    out.update({f"p{p}": rank(p) for p in PERCENTILES if p != 50})
    out.update({"max": int(ordered[-1]), "mean": int(ordered.sum() // n),
                "total": int(ordered.sum())})
    return out


@dataclass
class LaunchStats:
    """Per launched work item (parallel arrays, ns) and their distributions."""

    work: np.ndarray
    cpu_ns: np.ndarray
    gpu_ns: np.ndarray
    delay_ns: np.ndarray
    names: list[str]

    def as_dict(self, top: int = 10) -> dict:
        """``launch_stats`` of ``summary --launch-stats --json``."""
        short = self.gpu_ns < self.cpu_ns
        per_name: dict[str, list[int]] = {}
        for i, name in enumerate(self.names):
            per_name.setdefault(name, []).append(i)
        worst = sorted(per_name.items(), key=lambda kv: -int(self.delay_ns[kv[1]].sum()))[:top]
        return {
            "launches": int(len(self.work)),
            "cpu_ns": distribution(self.cpu_ns),
            "gpu_ns": distribution(self.gpu_ns),
            "delay_ns": distribution(self.delay_ns),
            "shorter_than_launch": int(short.sum()),
            "long_delay": {"threshold_ns": LONG_DELAY_NS,
                           "count": int((self.delay_ns > LONG_DELAY_NS).sum())},
            "by_name": [{"name": name, "launches": len(rows),
                         "delay_ns": distribution(self.delay_ns[rows]),
                         "gpu_ns": int(self.gpu_ns[rows].sum()),
                         "cpu_ns": int(self.cpu_ns[rows].sum())}
                        for name, rows in worst],
        }


def launch_stats(tl: Timeline) -> LaunchStats:
    """The launch statistics of a timeline's device work.

    >>> from traceconv.model import Trace, ProcessKind
    >>> t = Trace(); h = t.add_process("host"); g = t.add_process("GPU", kind=ProcessKind.DEVICE)
    >>> main = t.add_track("main", process=h); s = t.add_track("stream 7", process=g)
    >>> for start, dur, k_start in ((0, 10, 30), (20, 15, 32)):
    ...     la = t.add_slice(main, start, dur, "cudaLaunchKernel", "cuda_runtime")
    ...     _ = t.add_flow(la, t.add_slice(s, k_start, 5, "gemm", "kernel"))
    >>> st = launch_stats(Timeline(t)); st.delay_ns.tolist(), st.cpu_ns.tolist()
    ([20, 0], [10, 15])
    """
    work = np.flatnonzero((tl.launch_of >= 0) & tl.on_device
                          & np.isin(tl.activity, np.array(DEVICE_WORK, np.int8)))
    launch = tl.launch_of[work]
    return LaunchStats(work, tl.dur[launch], tl.dur[work],
                       np.maximum(tl.start[work] - tl.end[launch], 0), tl.names(work))

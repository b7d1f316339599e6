"""Kernel launch statistics (after HTA's ``get_cuda_kernel_launch_stats``), on the model.

For every device work item with a launch link (host runtime call → kernel, copy, memset,
collective): the **CPU duration** of the runtime call, the **GPU duration** of the work,
and the **launch delay** = start of the work − end of its runtime call, clipped at 0 (a work
item that starts before its call returns has no delay), as HTA defines it. Distributions use
nearest-rank percentiles, so every number is a measured duration in exact ns.

That is traceconv's wider definition: every launch the trace links (runtime or driver API,
graph launches, HIP). :func:`hta_launch_stats` is HTA's own (0.5.0): only the calls in
:data:`HTA_LAUNCHES`, times in whole µs as HTA rounds them, the work launched in the last
step left out, linear percentiles.
"""

from __future__ import annotations

import math
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


# What HTA counts as a launch (hta/analyzers/cuda_kernel_analysis.py): these runtime calls by
# name, with the two memory calls (its include_memory_events=True); not the driver API
# (cuLaunchKernel), graph launches or HIP (hipLaunchKernel: HTA finds no launch on AMD)
HTA_LAUNCHES = frozenset({"cudaLaunchKernel", "cudaLaunchKernelExC", "cudaMemcpyAsync",
                          "cudaMemsetAsync", "runFunction - job_prep_and_submit_for_execution"})
HTA_RUNTIME_CUTOFF_US = 50   # its runtime_cutoff and launch_delay_cutoff defaults
HTA_DELAY_CUTOFF_US = 100


def hta_distribution(values: np.ndarray) -> dict[str, float]:
    """count, min, median, p90, p95, p99, max and mean as HTA's data frame gives them
    (numpy's default linear interpolation between ranks).

    >>> hta_distribution(np.array([1.0, 2.0, 3.0, 4.0]))["median"], hta_distribution(np.array([]))
    (2.5, {'count': 0})
    """
    if not len(values):
        return {"count": 0}
    out = {"count": len(values), "min": float(values.min())}
    out.update({"median" if p == 50 else f"p{p}": float(np.percentile(values, p))
                for p in PERCENTILES})
    out.update({"max": float(values.max()), "mean": float(values.mean())})
    return out


def hta_launch_stats(tl: Timeline) -> dict:
    """``launch_stats`` as HTA's ``get_cuda_kernel_launch_stats`` counts it (µs).

    HTA reads start times rounded up and end times rounded down to the µs (a work item
    shorter than a µs can last -1 µs; :func:`hta_microseconds`), and, when the trace has
    two step markers or more, drops the work launched at or after the start of the last one.

    >>> from traceconv.model import Trace, ProcessKind
    >>> t = Trace(); h = t.add_process("host"); g = t.add_process("GPU", kind=ProcessKind.DEVICE)
    >>> main = t.add_track("main", process=h); s = t.add_track("stream 7", process=g)
    >>> for name, start in (("cudaLaunchKernel", 0), ("cuLaunchKernel", 20_000)):
    ...     la = t.add_slice(main, start, 10_500, name, "cuda_runtime")
    ...     _ = t.add_flow(la, t.add_slice(s, start + 150_200, 5_000, "gemm", "kernel"))
    >>> st = hta_launch_stats(Timeline(t)); st["launches"], st["delay_us"]["max"]
    (1, 141.0)
    """
    work = np.flatnonzero((tl.launch_of >= 0) & tl.on_device
                          & np.isin(tl.activity, np.array(DEVICE_WORK, np.int8)))
    launch = tl.launch_of[work]
    strings = tl.trace.strings.strings
    named = np.fromiter((s in HTA_LAUNCHES for s in strings), bool, len(strings))
    chosen = named[tl.name[launch]] if len(launch) else np.zeros(0, bool)
    start_us, end_us = hta_microseconds(tl)
    last = _hta_last_step_start(tl, start_us)
    if last is not None:
        chosen &= start_us[launch] < last
    work, launch = work[chosen], launch[chosen]
    cpu = (end_us[launch] - start_us[launch]).astype(np.float64)
    gpu = (end_us[work] - start_us[work]).astype(np.float64)
    delay = np.maximum(start_us[work] - end_us[launch], 0).astype(np.float64)
    return {
        "definition": "hta",
        "launches": len(work),
        "cpu_us": hta_distribution(cpu),
        "gpu_us": hta_distribution(gpu),
        "delay_us": hta_distribution(delay),
        "short_kernels": int(((cpu <= HTA_RUNTIME_CUTOFF_US) & (gpu < cpu)).sum()),
        "runtime_outliers": {"threshold_us": HTA_RUNTIME_CUTOFF_US,
                             "count": int((cpu > HTA_RUNTIME_CUTOFF_US).sum())},
        "long_delay": {"threshold_us": HTA_DELAY_CUTOFF_US,
                       "count": int((delay > HTA_DELAY_CUTOFF_US).sum())},
    }


def hta_microseconds(tl: Timeline) -> tuple[np.ndarray, np.ndarray]:
    """Each slice's start and end in whole µs as HTA reads them: ``ceil(ts)`` and
    ``floor(ts + dur)`` of the file's numbers as doubles (Python's ``json``). Beyond 2**53
    ns a double does not hold a µs time's ns decimals (1712195495505582.988 reads as
    ...583.0), so HTA's µs can differ from the exact time's by one; they are worked out on
    the file's own clock (the model's minus ``clock_base_ns``: only differences and order
    are used). A merged trace's inputs have clocks of their own: there the exact times are
    rounded.

    >>> from traceconv.model import Trace
    >>> t = Trace(); main = t.add_track("main", process=t.add_process("python"))
    >>> _ = t.add_slice(main, 1712195495505582_001, 2_000, "op")
    >>> [a.tolist() for a in hta_microseconds(Timeline(t))]   # exact: 1712195495505583, ...584
    [[1712195495505582], [1712195495505584]]
    """
    if tl.input_count > 1:
        return -(-tl.start // 1000), tl.end // 1000
    base = tl.trace.metadata.clock_base_ns or 0
    whole, ns = np.divmod(tl.start - base, 1000)
    # (whole µs exact as a double, plus the ns fraction: one rounding, as json's float())
    ts = whole.astype(np.float64) + ns / 1000
    return np.ceil(ts).astype(np.int64), np.floor(ts + tl.dur / 1000).astype(np.int64)


def _hta_last_step_start(tl: Timeline, start_us: np.ndarray) -> float | None:
    """Where HTA stops counting launches: the start (µs) of the last host step marker when
    the trace names two steps or more (any name holding ``ProfilerStep``); None: no cut.
    With such names on the device only, HTA keeps nothing (-inf)."""
    strings = tl.trace.strings.strings
    step_names = {i for i, s in enumerate(strings) if "ProfilerStep" in s}
    used = step_names & set(np.unique(tl.name).tolist())
    if len(used) < 2:
        return None
    rows = np.flatnonzero(np.isin(tl.name, list(used)) & ~tl.on_device)
    return float(start_us[rows].max()) if len(rows) else -math.inf

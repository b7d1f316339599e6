"""Device idle time inside the profiled steps, split by cause (after HTA's idle breakdown).

A device is idle when none of its streams runs a kernel, copy, memset or collective. The
window is the step windows (a device that marks its own steps, as XPlane's per-GPU
``Steps`` row, gets its own), and apart from it the **work span**: per window, from the
device's first work to its last (host set-up before a graph replay is not in it). Each
idle gap is charged to the work that ends it, using the launch link (host launch → device
work) of that work:

- **host wait**: the work was launched only after the device had gone idle, or nothing
  came at all before the step ended: the host did not enqueue fast enough;
- **kernel wait**: the work was already queued and the gap is at most
  :data:`KERNEL_WAIT_MAX_NS`: the device's own latency between back-to-back launches;
- **other**: queued work that still waited longer (cross-stream events, dependencies), or
  work with no launch link to judge by.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..model.groups import grouped
from .activity import Activity, Intervals, Timeline, clip

# Gaps between already-queued kernels up to this long are launch latency (HTA uses a small
# "consecutive kernel delay" for the same split).
KERNEL_WAIT_MAX_NS = 30_000


@dataclass
class DeviceIdle:
    """Idle time of one device (or stream) over the step windows (ns)."""

    device: str
    window_ns: int
    busy_ns: int
    span_ns: int = 0   # per step window, its first work's start to its last work's end
    host_wait_ns: int = 0
    kernel_wait_ns: int = 0
    other_ns: int = 0
    longest_gaps: list[tuple[int, int, str]] = field(default_factory=list)  # start, dur, cause

    @property
    def idle_ns(self) -> int:
        return self.window_ns - self.busy_ns

    @property
    def idle_share(self) -> float:
        return self.idle_ns / self.window_ns if self.window_ns else 0.0

    @property
    def span_idle_share(self) -> float:
        """Idle share of the work span alone (set-up before the first work and the tail
        after the last are not in it)."""
        return (self.span_ns - self.busy_ns) / self.span_ns if self.span_ns else 0.0

    def as_dict(self, origin: int = 0) -> dict:
        """The JSON object (gap starts in ns since ``origin``)."""
        return {"name": self.device, "window_ns": self.window_ns, "busy_ns": self.busy_ns,
                "idle_ns": self.idle_ns, "idle_share": round(self.idle_share, 4),
                "span_ns": self.span_ns, "span_idle_share": round(self.span_idle_share, 4),
                "host_wait_ns": self.host_wait_ns, "kernel_wait_ns": self.kernel_wait_ns,
                "other_ns": self.other_ns,
                "longest_gaps": [{"start_ns": s - origin, "dur_ns": d, "cause": c}
                                 for s, d, c in self.longest_gaps]}


def _gap_causes(timeline: Timeline, gap_start: np.ndarray, gap_end: np.ndarray,
                next_row: np.ndarray) -> np.ndarray:
    """0 host wait, 1 kernel wait, 2 other, for each gap ending at ``next_row`` (-1: none)."""
    cause = np.full(len(gap_start), 2, dtype=np.int8)
    none = next_row < 0
    cause[none] = 0
    launch = np.where(none, -1, timeline.launch_of[np.maximum(next_row, 0)])
    linked = launch >= 0
    launched_at = np.where(linked, timeline.start[np.maximum(launch, 0)], 0)
    late = linked & (launched_at >= gap_start)
    cause[late] = 0
    queued = linked & ~late
    cause[queued & (gap_end - gap_start <= KERNEL_WAIT_MAX_NS)] = 1
    return cause


def device_idle(timeline: Timeline, keep_gaps: int = 5) -> list[DeviceIdle]:
    """Idle time per device over the step windows, with the longest gaps.

    >>> from traceconv.model import Trace, ProcessKind
    >>> t = Trace(); h = t.add_process("host"); g = t.add_process("GPU", kind=ProcessKind.DEVICE)
    >>> main = t.add_track("main", process=h); s = t.add_track("stream", process=g)
    >>> _ = t.add_slice(main, 0, 1_000_000, "ProfilerStep#1", "user_annotation")
    >>> l1 = t.add_slice(main, 0, 10, "cudaLaunchKernel", "cuda_runtime")
    >>> k1 = t.add_slice(s, 100, 400_000, "gemm", "kernel"); _ = t.add_flow(l1, k1)
    >>> l2 = t.add_slice(main, 500_000, 10, "cudaLaunchKernel", "cuda_runtime")
    >>> k2 = t.add_slice(s, 500_020, 400_000, "gemm", "kernel"); _ = t.add_flow(l2, k2)
    >>> l3 = t.add_slice(main, 600_000, 10, "cudaLaunchKernel", "cuda_runtime")
    >>> k3 = t.add_slice(s, 900_030, 50_000, "relu", "kernel"); _ = t.add_flow(l3, k3)
    >>> d = device_idle(Timeline(t))[0]
    >>> d.window_ns, d.busy_ns, d.host_wait_ns, d.kernel_wait_ns, d.other_ns
    (1000000, 850000, 149990, 10, 0)
    """
    result = []
    for process in timeline.device_processes():
        name = timeline.trace.processes[process].name
        result.append(_idle_of(timeline, name, timeline.device_busy(process), keep_gaps,
                               _windows_of(timeline, process)))
    return result


def _windows_of(timeline: Timeline, process: int) -> Intervals:
    """The step windows of one device: the steps it marks itself (XPlane's per-GPU ``Steps``
    row), else its rank's (:meth:`Timeline.steps_of`). Two GPUs' steps added together are no
    window of either, nor is a time when its rank was not recorded."""
    rows = timeline.rows(Activity.STEP)
    own = rows[timeline.on_device[rows] & (timeline.process[rows] == process)]
    return timeline.union(own) if len(own) else timeline.steps_of(process)


def stream_idle(timeline: Timeline, keep_gaps: int = 3) -> list[DeviceIdle]:
    """Idle time per stream (device track) over the step windows, split like
    :func:`device_idle` (HTA's per-stream idle time breakdown), in track order.

    >>> from traceconv.model import Trace, ProcessKind
    >>> t = Trace(); g = t.add_process("GPU 0", kind=ProcessKind.DEVICE)
    >>> a = t.add_track("stream 7", process=g); b = t.add_track("stream 9", process=g)
    >>> _ = t.add_slice(a, 0, 60, "gemm", "kernel"); _ = t.add_slice(b, 50, 50, "relu", "kernel")
    >>> [(d.device, d.busy_ns, d.idle_ns) for d in stream_idle(Timeline(t))]
    [('GPU 0 / stream 7', 60, 40), ('GPU 0 / stream 9', 50, 50)]
    """
    rows = timeline.device_work()
    result = []
    for track, positions in grouped(timeline.track[rows]):   # (one sort per call)
        info = timeline.trace.tracks[track]
        name = f"{timeline.trace.processes[info.process].name} / {info.name}"
        busy = timeline.union(rows[positions])
        result.append(_idle_of(timeline, name, busy, keep_gaps,
                               _windows_of(timeline, info.process)))
    return result


def _idle_of(timeline: Timeline, name: str, busy_all: Intervals, keep_gaps: int,
             windows: Intervals) -> DeviceIdle:
    """Idle time between ``busy_all`` intervals inside the step ``windows``, by cause."""
    busy = clip(busy_all, windows)
    item = DeviceIdle(name, windows.total, busy.total)
    starts, ends, causes = [], [], []
    for w0, w1 in zip(windows.start.tolist(), windows.end.tolist(), strict=True):
        inside = (busy.start >= w0) & (busy.end <= w1)
        b = Intervals(busy.start[inside], busy.end[inside], busy.first[inside])
        if len(b.start):   # (a window's work span: its first work's start to last's end)
            item.span_ns += int(b.end[-1] - b.start[0])
        gap_start = np.r_[w0, b.end]
        gap_end = np.r_[b.start, w1]
        next_row = np.r_[b.first, -1]
        real = gap_end > gap_start
        gap_start, gap_end, next_row = gap_start[real], gap_end[real], next_row[real]
        starts.append(gap_start)
        ends.append(gap_end)
        causes.append(_gap_causes(timeline, gap_start, gap_end, next_row))
    if starts:
        gs, ge, cause = np.concatenate(starts), np.concatenate(ends), np.concatenate(causes)
        lengths = ge - gs
        item.host_wait_ns, item.kernel_wait_ns, item.other_ns = (
            int(lengths[cause == c].sum()) for c in (0, 1, 2))
        names = ("host wait", "kernel wait", "other")
        for i in np.argsort(-lengths, kind="stable")[:keep_gaps].tolist():
            item.longest_gaps.append((int(gs[i]), int(lengths[i]), names[int(cause[i])]))
    return item

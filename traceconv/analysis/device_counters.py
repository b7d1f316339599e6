"""Counter tracks derived from the device work (after HTA's queue length and memory bandwidth
counters): a new trace with, per stream, the **launch queue** (work its host has launched
and the device has not finished: +1 when the runtime call starts, −1 when the work ends) and,
per device and copy direction, the **memcpy bandwidth** (GB/s of the copies running, from
each copy's ``bytes`` over its duration). Opt-in when converting (``--device-counters``);
the input is not changed.
"""

from __future__ import annotations

import re

import numpy as np

from ..model import Trace, TrackKind
from ..model.groups import grouped
from .activity import DEVICE_WORK, Activity, Timeline

_DIRECTION = re.compile(r"HtoD|DtoH|DtoD|PtoP|HtoH", re.IGNORECASE)


def _steps(times: np.ndarray, deltas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The running sum of ``deltas`` at each distinct time (ends before starts at a tie).

    >>> [a.tolist() for a in _steps(np.array([0, 5, 5, 9]), np.array([1.0, -1.0, 1.0, -1.0]))]
    [[0, 5, 9], [1.0, 1.0, 0.0]]
    """
    order = np.lexsort((deltas, times))
    times, values = times[order], np.cumsum(deltas[order])
    last = np.r_[times[1:] != times[:-1], True]
    return times[last], values[last]


def queue_lengths(tl: Timeline) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Per stream track: (times, queued work) as step functions.

    >>> from traceconv.model import ProcessKind
    >>> t = Trace(); h = t.add_process("host"); g = t.add_process("GPU", kind=ProcessKind.DEVICE)
    >>> main = t.add_track("main", process=h); s = t.add_track("stream 7", process=g)
    >>> for at in (0, 10):
    ...     la = t.add_slice(main, at, 5, "cudaLaunchKernel", "cuda_runtime")
    ...     _ = t.add_flow(la, t.add_slice(s, 20 + at, 15, "gemm", "kernel"))
    >>> [a.tolist() for a in queue_lengths(Timeline(t))[1]]
    [[0, 10, 35, 45], [1.0, 2.0, 1.0, 0.0]]
    """
    work = np.flatnonzero((tl.launch_of >= 0) & tl.on_device
                          & np.isin(tl.activity, np.array(DEVICE_WORK, np.int8)))
    out = {}
    for track, positions in grouped(tl.track[work]):   # (one sort, not a scan per track)
        rows = work[positions]
        times = np.r_[tl.start[tl.launch_of[rows]], tl.end[rows]]
        deltas = np.r_[np.ones(len(rows)), -np.ones(len(rows))]
        out[track] = _steps(times, deltas)
    return out


def copy_bandwidth(tl: Timeline) -> dict[tuple[int, str], tuple[np.ndarray, np.ndarray]]:
    """Per (device process, direction): (times, GB/s of the copies running)."""
    rows = tl.rows(Activity.MEMCPY)
    rows = rows[tl.on_device[rows] & (tl.dur[rows] > 0)]
    args = tl.trace.slices.args
    groups: dict[tuple[int, str], list[tuple[int, int, float]]] = {}
    for row, name in zip(rows.tolist(), tl.names(rows), strict=True):
        a = args[row]
        size = a.get("bytes") if isinstance(a, dict) else None
        if not isinstance(size, (int, float)) or size <= 0:
            continue
        found = _DIRECTION.search(name)
        key = (int(tl.process[row]), found[0] if found else "copy")
        groups.setdefault(key, []).append((int(tl.start[row]), int(tl.end[row]),
                                           size / float(tl.dur[row])))   # bytes/ns = GB/s
    out = {}
    for key, items in groups.items():
        starts, ends, rates = (np.array(x) for x in zip(*items, strict=True))
        out[key] = _steps(np.r_[starts, ends], np.r_[rates, -rates])
    return out


def with_device_counters(trace: Trace) -> Trace:
    """A copy of ``trace`` with launch-queue and memcpy-bandwidth counter tracks."""
    tl = Timeline(trace)
    queues, bandwidth = queue_lengths(tl), copy_bandwidth(tl)
    out = trace.copy()
    for track, (times, values) in queues.items():
        home = trace.tracks[track]
        counter = out.add_track(f"launch queue: {home.name}", process=home.process,
                                kind=TrackKind.COUNTER, unit="count")
        out.add_counter_series(counter, times, np.round(values))
    for (process, direction), (times, values) in sorted(bandwidth.items()):
        counter = out.add_track(f"memcpy {direction} GB/s", process=process,
                                kind=TrackKind.COUNTER, unit="GB/s")
        # float sums of ± rates leave rounding dust where nothing runs: 0 is 0
        out.add_counter_series(counter, times, np.where(np.abs(values) < 1e-9, 0.0, values))
    out.diagnostics.add("analysis.device_counters", count=len(queues) + len(bandwidth))
    return out.freeze()

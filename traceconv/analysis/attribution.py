"""Who had the time: the profiled window cut into pieces, each charged to exactly one thing.

At every instant inside the steps the time goes to, in order: the device work running (the
one that started last, when several streams overlap), else the innermost host slice running
(on any host thread; the one that started last; a step's own time between its ops is
Python and framework work), else **idle**. The pieces add up to the
window exactly, so differences between two runs add up to the change of the window.
"""

from __future__ import annotations

import bisect
import heapq
from dataclasses import dataclass

import numpy as np

from ..model import Trace
from .activity import DEVICE_WORK, Timeline
from .critical_path import _kind
from .host_segments import HostSegments

IDLE = ("(idle: nothing running)", "idle")
_WINDOW, _HOST, _DEVICE = 0, 1, 2


@dataclass(frozen=True)
class StepTimes:
    """Each step's time cut into pieces: ``ns[k, s]`` is what ``keys[k]`` (name, kind) had
    in step ``steps[s]`` (the marker's number; 0 for a trace without step markers, whose
    whole span is its one step). The columns add up to the steps' windows."""

    keys: list[tuple[str, str]]
    ns: np.ndarray
    steps: list[int]

    @property
    def per_step(self) -> np.ndarray:
        """Each step's total (ns), in step order."""
        return self.ns.sum(axis=0)


def attribute_steps(trace: Trace) -> StepTimes:
    """Who had the time in each step: device work is charged to the step whose host window
    launched it (the device may run behind the host), host work and idle time to the step
    whose host window they fall in.

    >>> from traceconv.model import ProcessKind
    >>> t = Trace(); h = t.add_process("host"); g = t.add_process("GPU", kind=ProcessKind.DEVICE)
    >>> main = t.add_track("main", process=h); s = t.add_track("stream", process=g)
    >>> _ = t.add_slice(main, 0, 100, "ProfilerStep#1", "user_annotation")
    >>> _ = t.add_slice(main, 100, 50, "ProfilerStep#2", "user_annotation")
    >>> launch = t.add_slice(main, 90, 5, "cudaLaunchKernel", "cuda_runtime")
    >>> kernel = t.add_slice(s, 95, 30, "gemm", "kernel"); _ = t.add_flow(launch, kernel)
    >>> st = attribute_steps(t); st.steps, st.per_step.tolist()
    ([1, 2], [125, 25])
    >>> dict(zip(st.keys, st.ns.tolist()))[("gemm", "kernel")]   # launched in step 1
    [30, 0]
    """
    from .steps import step_windows

    tl = Timeline(trace)
    names = trace.strings.strings
    windows = tl.steps
    marked = step_windows(tl)
    # a step's host window starts where its marker does; a trace without markers is one step
    step_starts = np.array([w.host_start for w in marked] or [0], np.int64)
    host = HostSegments(tl)
    device = tl.device_work()
    device = device[np.isin(tl.activity[device], np.array(DEVICE_WORK, np.int8))]
    launch = tl.launch_of[device]
    launched_in = np.where(launch >= 0, np.maximum(np.searchsorted(
        step_starts, tl.start[np.maximum(launch, 0)], side="right") - 1, 0), -1)
    # items: (start, end, class, key, step or -1: the step of the time); (name, kind) keys
    # interned once per distinct (name, activity), not once per slice
    rows = np.concatenate([host.row, device])
    codes, inverse = np.unique(tl.name[rows].astype(np.int64) * 256
                               + tl.activity[rows].astype(np.int64), return_inverse=True)
    key_ids: dict[tuple[str, str], int] = {IDLE: 0}
    code_key = np.array([key_ids.setdefault((names[c // 256], _kind(c % 256)), len(key_ids))
                         for c in codes.tolist()], np.int64)
    keys = list(key_ids)
    row_key = code_key[inverse].tolist()
    n_host = len(host.row)
    items: list[tuple[int, int, int, int, int]] = []
    items += [(s, e, _WINDOW, 0, -1) for s, e in zip(windows.start.tolist(),
                                                     windows.end.tolist(), strict=True)]
    items += list(zip(host.start.tolist(), host.end.tolist(), [_HOST] * n_host,
                      row_key[:n_host], [-1] * n_host, strict=True))
    items += list(zip(tl.start[device].tolist(), tl.end[device].tolist(), [_DEVICE] * len(device),
                      row_key[n_host:], launched_in.tolist(), strict=True))
    totals = _sweep(items, len(keys), step_starts.tolist())
    used = [k for k in range(len(keys)) if any(totals[k])]
    ns = np.array([totals[k] for k in used], np.int64).reshape(len(used), len(step_starts))
    return StepTimes([keys[k] for k in used], ns,
                     [w.number for w in marked] if marked else [0])


def attribute_time(trace: Trace) -> tuple[dict[tuple[str, str], int], int, int]:
    """((name, kind) → ns, window ns, step count) for ``trace``: :func:`attribute_steps`
    summed over the steps.

    >>> from traceconv.model import ProcessKind
    >>> t = Trace(); h = t.add_process("host"); g = t.add_process("GPU", kind=ProcessKind.DEVICE)
    >>> main = t.add_track("main", process=h); s = t.add_track("stream", process=g)
    >>> _ = t.add_slice(main, 0, 100, "ProfilerStep#1", "user_annotation")
    >>> _ = t.add_slice(main, 0, 30, "aten::mm", "cpu_op")
    >>> _ = t.add_slice(s, 20, 50, "gemm", "kernel")
    >>> times, window, steps = attribute_time(t)
    >>> sorted(times.items()), window, steps
    ([(('ProfilerStep#1', 'cpu'), 30), (('aten::mm', 'cpu'), 20), (('gemm', 'kernel'), 50)], 100, 1)
    """
    st = attribute_steps(trace)
    times = {key: int(ns) for key, ns in zip(st.keys, st.ns.sum(axis=1).tolist(), strict=True)}
    return times, int(st.ns.sum()), Timeline(trace).step_count


def _sweep(items: list[tuple[int, int, int, int, int]], nkeys: int,
           step_starts: list[int]) -> list[list[int]]:
    """Charge each stretch inside a window to the highest class running, latest start first,
    and to its step: the item's own when it has one, else the step of the stretch's time."""
    bounds = np.array([(it[0], it[1]) for it in items], np.int64).reshape(-1, 2)
    index = np.arange(len(items))
    times = np.concatenate([bounds[:, 0], bounds[:, 1]])
    starting = np.repeat([1, 0], len(items))
    order = np.lexsort((np.concatenate([index, index]), starting, times))
    events = zip(times[order].tolist(), starting[order].tolist(),
                 np.concatenate([index, index])[order].tolist(), strict=True)
    totals = [[0] * len(step_starts) for _ in range(nkeys)]
    active: list[tuple[int, int, int]] = []   # (-class, -start, item)
    ended: set[int] = set()
    open_windows = 0
    previous = None
    for time, is_start, index in events:
        if previous is not None and time > previous and open_windows:
            while active and active[0][2] in ended:
                heapq.heappop(active)
            winner = active[0][2] if active else None
            key, step = (items[winner][3], items[winner][4]) if winner is not None else (0, -1)
            if step < 0:
                step = max(bisect.bisect_right(step_starts, previous) - 1, 0)
            totals[key][step] += time - previous
        previous = time
        start, _end, cls, _key, _step = items[index]
        if is_start:
            if cls == _WINDOW:
                open_windows += 1
            else:
                heapq.heappush(active, (-cls, -start, index))
        elif cls == _WINDOW:
            open_windows -= 1
        else:
            ended.add(index)
    return totals

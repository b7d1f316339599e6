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
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ..model import Trace
from .activity import DEVICE_WORK, Activity, Timeline
from .critical_path import _kind
from .host_segments import HostSegments
from .steps import StepWindow, step_windows

IDLE = ("(idle: nothing running)", "idle")
_WINDOW, _HOST, _DEVICE = 0, 1, 2


@dataclass(frozen=True)
class StepTimes:
    """Each step's time cut into pieces: ``ns[k, s]`` is what ``keys[k]`` (name, kind) had
    in step ``steps[s]`` (the marker's number; 0 for a trace without step markers, whose
    whole span is its one step). The columns add up to the steps' windows. ``activities``:
    per key, what its slices are (their :func:`~traceconv.model.activity.primary`
    activities, as their readers' vocabularies stated them), so that a key of kind ``cpu``
    still tells a runtime call from a host op or a step (no entry: not known)."""

    keys: list[tuple[str, str]]
    ns: np.ndarray
    steps: list[int]
    activities: dict[tuple[str, str], frozenset[Activity]] = field(default_factory=dict)

    @property
    def per_step(self) -> np.ndarray:
        """Each step's total (ns), in step order."""
        return self.ns.sum(axis=0)


def attribute_steps(trace: Trace) -> StepTimes:
    """Who had the time in each step: device work is charged to the step whose host window
    launched it (the device may run behind the host), host work, idle time and device work
    whose launch the trace lacks to the step whose host window they fall in. The steps of a
    merged trace are its ranks' (:func:`attribute_ranks`), side by side.

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
    >>> st.activities[("cudaLaunchKernel", "cpu")], st.activities[("ProfilerStep#1", "cpu")]
    (frozenset({<Activity.LAUNCH: 4>}), frozenset({<Activity.STEP: 16>}))
    """
    from .step_samples import join

    return join(attribute_ranks(trace))


def attribute_ranks(trace: Trace) -> list[StepTimes]:
    """:func:`attribute_steps` for each input (rank) of a merged trace apart, in input
    order: a rank's time is cut over its own step windows (:meth:`Timeline.input_steps`)
    among its own work, never over its peers' (one entry for a trace read alone).

    >>> from traceconv.analysis.merge import merge
    >>> def rank(at, busy):
    ...     t = Trace(); main = t.add_track("main", process=t.add_process("python"))
    ...     _ = t.add_slice(main, at, 100, "ProfilerStep#1", "user_annotation")
    ...     _ = t.add_slice(main, at, busy, "aten::mm", "cpu_op")
    ...     return t
    >>> for r in attribute_ranks(merge([rank(0, 30), rank(50, 80)], align="none")):
    ...     print(dict(zip(r.keys, r.ns[:, 0].tolist())))
    {('ProfilerStep#1', 'cpu'): 70, ('aten::mm', 'cpu'): 30}
    {('ProfilerStep#1', 'cpu'): 20, ('aten::mm', 'cpu'): 80}
    """
    tl = Timeline(trace)
    names = trace.strings.strings
    host = HostSegments(tl)
    device = tl.device_work()
    device = device[np.isin(tl.activity[device], np.array(DEVICE_WORK, np.int8))]
    # (name, kind) keys interned once per distinct (name, activity), not once per slice
    rows = np.concatenate([host.row, device])
    codes, inverse = np.unique(tl.name[rows].astype(np.int64) * 256
                               + tl.activity[rows].astype(np.int64), return_inverse=True)
    key_ids: dict[tuple[str, str], int] = {IDLE: 0}
    code_key = np.array([key_ids.setdefault((names[c // 256], _kind(c % 256)), len(key_ids))
                         for c in codes.tolist()], np.int64)
    keys_in_order = list(key_ids)
    stated: dict[tuple[str, str], set[Activity]] = {}
    for c, key in zip(codes.tolist(), code_key.tolist(), strict=True):
        stated.setdefault(keys_in_order[key], set()).add(Activity(c % 256))
    work = _Work(tl, host, device, code_key[inverse],
                 tl.input_of(rows) if tl.input_count > 1 else None)
    marked = step_windows(tl)
    return [_attribute_input(work, keys_in_order, part,
                             [w for w in marked if w.input_index == part],
                             {key: frozenset(found) for key, found in stated.items()})
            for part in range(tl.input_count)]


class _Work(NamedTuple):
    """Host pieces and device work rows with their keys (host pieces first), and the input
    each came from (None: a trace read alone)."""

    tl: Timeline
    host: HostSegments
    device: np.ndarray
    key: np.ndarray
    input_index: np.ndarray | None

    def items(self, part: int, step_starts: np.ndarray) -> _Items:
        """Input ``part``'s step windows and work to charge; step -1: the step of the time
        charged (device work: the step its launch is in)."""
        tl, n_host = self.tl, len(self.host.row)
        if self.input_index is None:   # (one input: views, no copies)
            host: slice | np.ndarray = slice(None)
            device: slice | np.ndarray = slice(None)
        else:
            host, device = np.split(self.input_index == part, [n_host])
        rows = self.device[device]
        launch = tl.launch_of[rows]
        launched_in = np.where(launch >= 0, np.maximum(np.searchsorted(
            step_starts, tl.start[np.maximum(launch, 0)], side="right") - 1, 0), -1)
        windows = tl.input_steps(part)
        host_start, host_end = self.host.start[host], self.host.end[host]
        n_windows, n_mine = len(windows.start), len(host_start)
        return _Items(
            np.concatenate([windows.start, host_start, tl.start[rows]]).astype(np.int64),
            np.concatenate([windows.end, host_end, tl.end[rows]]).astype(np.int64),
            np.repeat(np.array([_WINDOW, _HOST, _DEVICE], np.int64),
                      [n_windows, n_mine, len(rows)]),
            np.concatenate([np.zeros(n_windows, np.int64), self.key[:n_host][host],
                            self.key[n_host:][device]]),
            np.concatenate([np.full(n_windows + n_mine, -1, np.int64), launched_in]))


def _attribute_input(work: _Work, keys: list[tuple[str, str]], part: int,
                     marked: list[StepWindow],
                     activities: dict[tuple[str, str], frozenset[Activity]]) -> StepTimes:
    """Input ``part``'s work charged over its step windows to its ``marked`` steps."""
    # a step's host window starts where its marker does; an input without markers is one step
    step_starts = np.array([w.host_start for w in marked] or [0], np.int64)
    items = work.items(part, step_starts)
    totals = _paint(items, len(keys), step_starts)
    if totals is None:   # (overlap too deep to paint in bounded memory)
        totals = _sweep(items, len(keys), step_starts)
    used = np.flatnonzero(totals.any(axis=1))
    mine = [keys[k] for k in used.tolist()]
    return StepTimes(mine, totals[used], [w.number for w in marked] if marked else [0],
                     {key: activities[key] for key in mine if key in activities})


class _Items(NamedTuple):
    """What is charged (columns): windows, host pieces and device work with their
    class, key and step (-1: the step of the time)."""

    start: np.ndarray
    end: np.ndarray
    cls: np.ndarray
    key: np.ndarray
    step: np.ndarray


_PAINT_LIMIT = 64   # segments painted per item, on average, before the sweep takes over


def _paint(items: _Items, nkeys: int, step_starts: np.ndarray) -> np.ndarray | None:
    """(keys × steps) ns: the time cut at every start and end, each piece charged to the
    work item running over it that ranks highest (class, then the latest start, then the
    first listed: :func:`_sweep`'s order), vectorised; None when the items overlap so much
    that painting would hold more than ``_PAINT_LIMIT`` pieces an item.

    >>> items = _Items(np.array([0, 0, 5]), np.array([20, 10, 15]), np.array([0, 1, 2]),
    ...                np.array([0, 1, 2]), np.array([-1, -1, 0]))
    >>> _paint(items, 3, np.array([0, 12])).tolist()   # idle, host 0-5, device 5-15
    [[0, 5], [5, 0], [10, 0]]
    """
    work = np.flatnonzero(items.cls != _WINDOW)
    cuts = np.unique(np.concatenate([items.start, items.end]))
    lo = np.searchsorted(cuts, items.start[work])
    cover = np.maximum(np.searchsorted(cuts, items.end[work]) - lo, 0)
    painted = int(cover.sum())
    if painted > _PAINT_LIMIT * (len(items.start) + 1):
        return None
    order = np.lexsort((-work, items.start[work], items.cls[work]))   # lowest rank first
    rank = np.empty(len(work), np.int64)
    rank[order] = np.arange(len(work))
    first = np.cumsum(cover) - cover
    piece = np.repeat(lo - first, cover) + np.arange(painted)
    best = np.full(max(len(cuts) - 1, 0), -1, np.int64)
    np.maximum.at(best, piece, np.repeat(rank, cover))
    begin, length = cuts[:-1], np.diff(cuts)
    windows = np.flatnonzero(items.cls == _WINDOW)
    w_start, w_end = items.start[windows], items.end[windows]
    at = np.searchsorted(w_start, begin, side="right") - 1
    inside = (at >= 0) & (begin < w_end[np.maximum(at, 0)]) if len(windows) else \
        np.zeros(len(begin), bool)
    winner = work[order[np.maximum(best, 0)]] if len(work) else np.zeros(len(best), np.int64)
    key = np.where(best >= 0, items.key[winner] if len(work) else 0, 0)
    step = np.where(best >= 0, items.step[winner] if len(work) else -1, -1)
    by_time = np.maximum(np.searchsorted(step_starts, begin, side="right") - 1, 0)
    step = np.where(step >= 0, step, by_time)
    totals = np.zeros(nkeys * len(step_starts), np.int64)
    np.add.at(totals, (key * len(step_starts) + step)[inside], length[inside])
    return totals.reshape(nkeys, len(step_starts))


def _sweep(items: _Items, nkeys: int, step_starts: np.ndarray) -> np.ndarray:
    """Charge each stretch inside a window to the highest class running, latest start first,
    and to its step: the item's own when it has one, else the step of the stretch's time
    (one event at a time, in bounded memory)."""
    index = np.arange(len(items.start))
    times = np.concatenate([items.start, items.end])
    starting = np.repeat([1, 0], len(index))
    order = np.lexsort((np.concatenate([index, index]), starting, times))
    events = zip(times[order].tolist(), starting[order].tolist(),
                 np.concatenate([index, index])[order].tolist(), strict=True)
    rows = list(zip(*(column.tolist() for column in items), strict=True))
    starts = step_starts.tolist()
    totals = [[0] * len(starts) for _ in range(nkeys)]
    active: list[tuple[int, int, int]] = []   # (-class, -start, item)
    ended: set[int] = set()
    open_windows = 0
    previous = None
    for time, is_start, index in events:
        if previous is not None and time > previous and open_windows:
            while active and active[0][2] in ended:
                heapq.heappop(active)
            winner = active[0][2] if active else None
            key, step = (rows[winner][3], rows[winner][4]) if winner is not None else (0, -1)
            if step < 0:
                step = max(bisect.bisect_right(starts, previous) - 1, 0)
            totals[key][step] += time - previous
        previous = time
        start, _end, cls, _key, _step = rows[index]
        if is_start:
            if cls == _WINDOW:
                open_windows += 1
            else:
                heapq.heappush(active, (-cls, -start, index))
        elif cls == _WINDOW:
            open_windows -= 1
        else:
            ended.add(index)
    return np.array(totals, np.int64).reshape(nkeys, len(starts))

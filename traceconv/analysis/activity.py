"""What each slice *is*, in words every analysis shares: host op, launch, kernel, copy, sync...

Readers state each slice's :class:`~traceconv.model.activity.Activity` at read time, from
their own vendor's words (:mod:`traceconv.model.activity`); :func:`slice_activity` is the
one way analyses read it (rows a reader left unknown are classified by the general
vocabulary), and :func:`timed_durations` the one way they read how long a slice ran (a
slice whose end is not in the input ran for a time nobody measured: none is counted).
:class:`Timeline` adds launch links (the model's flows, host slice → device slice) and
steps (the step role: ``ProfilerStep#N``, Paddle's ``ProfileStep``), each input of a merged
trace (a rank) with its own: a rank is measured over the time it was recorded, never the job's.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..model import ProcessKind, Trace, TrackKind
from ..model.activity import DEVICE_WORK, KIND_BITS, NOT_WORK, Activity, kind_of, primary
from ..model.groups import grouped
from ..model.repairs import not_ended_rows
from ..model.timeline_order import timeline_order

__all__ = ["DEVICE_WORK", "NOT_WORK", "Activity", "Intervals", "Timeline", "clip",
           "input_of_process", "kind_of", "main_threads", "merge_intervals", "not_ended",
           "overhead_on_main_threads", "overlap_ns", "primary", "slice_activity",
           "timed_durations"]


def slice_activity(trace: Trace) -> np.ndarray:
    """Every slice's activity value (kind | roles, int8) as its reader stated it; rows left
    :attr:`~Activity.UNKNOWN` (a trace built by hand, a producer traceconv does not know)
    are classified by the general vocabulary. A slice on an async track (Chrome's ``b``/``e``,
    a Perfetto track of no thread, Nsight's NVTX start/end ranges) is a
    :attr:`~Activity.RANGE` whatever its name says: an object's lifetime or a logical
    operation, which no thread runs, so no analysis counts it as host or device time. The
    trace is not changed.

    >>> t = Trace(); p = t.add_process("python"); main = t.add_track("main", process=p)
    >>> _ = t.add_slice(main, 0, 10, "cudaStreamSynchronize", "cuda_runtime")
    >>> _ = t.add_slice(main, 0, 10, "mine", activity=Activity.ANNOTATION)
    >>> spans = t.add_track("MESSAGEPORT", process=p, kind=TrackKind.ASYNC)
    >>> _ = t.add_slice(spans, 0, 10, "MESSAGEPORT", "node.async_hooks")
    >>> [Activity(a).name for a in slice_activity(t)]
    ['SYNC', 'ANNOTATION', 'RANGE']
    """
    s = trace.slices
    column = np.zeros(len(s), np.int8)
    stated = min(len(s.activity), len(column))
    column[:stated] = s.numpy_view("activity")[:stated]
    unknown = np.flatnonzero(column == Activity.UNKNOWN)
    if len(unknown):
        from ..vocabularies.generic import GENERIC_VOCABULARY

        column[unknown] = GENERIC_VOCABULARY.classify_rows(trace, unknown)
    spans = np.array([t.kind is TrackKind.ASYNC for t in trace.tracks] + [False], bool)
    if spans.any() and len(column):
        column[spans[s.numpy("track")]] = Activity.RANGE
    return column


def input_of_process(trace: Trace) -> np.ndarray:
    """Per process (and one more entry for tracks with none), the index of the input of a
    merged trace that it came from, by the input's label on its name
    (:func:`~traceconv.analysis.merge.carries_label`); 0 for a process of no input, and
    for every process of a trace read from one input.

    >>> from traceconv.model import Metadata
    >>> t = Trace(Metadata(attributes={"inputs": [{"label": "rank 0"}, {"label": "rank 1"}]}))
    >>> for name in ("rank 1: python", "rank 0: python", "rank 1: GPU 0"): _ = t.add_process(name)
    >>> input_of_process(t).tolist()
    [1, 0, 1, 0]
    """
    from .merge import carries_label

    part = np.zeros(len(trace.processes) + 1, np.int64)
    labels = [str(entry.get("label")) for entry in trace.metadata.attributes.get("inputs") or ()]
    if len(labels) < 2:
        return part
    for i, process in enumerate(trace.processes):
        part[i] = next((k for k, label in enumerate(labels)
                        if carries_label(process.name, label)), 0)
    return part


def not_ended(trace: Trace) -> np.ndarray:
    """Per slice, whether its end is not in the input (a ``B`` never closed, a BEGIN
    without its END: the builder ended it at the trace's last timestamp and marked it
    ``args.unfinished``, :func:`~traceconv.model.repairs.end_not_ended`).

    >>> t = Trace(); main = t.add_track("main", process=t.add_process("python"))
    >>> _ = t.add_slice(main, 0, 10, "op"); _ = t.add_slice(main, 5, 95, "open", args={"unfinished": True})
    >>> not_ended(t).tolist()
    [False, True]
    """
    mask = np.zeros(len(trace.slices), dtype=bool)
    mask[not_ended_rows(trace)] = True
    return mask


def timed_durations(trace: Trace, never_ended: np.ndarray | None = None) -> np.ndarray:
    """Every slice's duration as analyses count time: the model's, except a slice whose end
    is not in the input (:func:`not_ended`, or ``never_ended`` when the caller has it),
    whose length the builder made up: 0, a call at its start that takes no time (on no
    critical path, in no self time, no step window, no busy time).

    >>> t = Trace(); main = t.add_track("main", process=t.add_process("python"))
    >>> _ = t.add_slice(main, 0, 10, "op"); _ = t.add_slice(main, 5, 95, "open", args={"unfinished": True})
    >>> timed_durations(t).tolist()
    [10, 0]
    """
    dur = trace.slices.numpy("dur")
    mask = not_ended(trace) if never_ended is None else never_ended
    if mask.any():
        dur = np.where(mask, 0, dur)
    return dur


@dataclass(frozen=True)
class Intervals:
    """Disjoint, sorted [start, end) intervals; ``first`` is the slice row that opens each."""

    start: np.ndarray
    end: np.ndarray
    first: np.ndarray

    @property
    def total(self) -> int:
        return int((self.end - self.start).sum())


def merge_intervals(starts: np.ndarray, ends: np.ndarray, rows: np.ndarray) -> Intervals:
    """The union of [start, end) intervals, with the earliest row of each merged group.

    >>> m = merge_intervals(np.array([0, 5, 20]), np.array([10, 12, 30]), np.array([7, 8, 9]))
    >>> m.start.tolist(), m.end.tolist(), m.first.tolist(), m.total
    ([0, 20], [12, 30], [7, 9], 22)
    """
    if not len(starts):
        empty = np.zeros(0, np.int64)
        return Intervals(empty, empty, empty)
    order = np.lexsort((-ends, starts))
    s, e, r = starts[order], ends[order], rows[order]
    reach = np.maximum.accumulate(e)
    opens = np.ones(len(s), dtype=bool)
    opens[1:] = s[1:] > reach[:-1]
    group = np.cumsum(opens) - 1
    group_end = np.zeros(int(group[-1]) + 1, dtype=np.int64)
    np.maximum.at(group_end, group, e)
    return Intervals(s[opens], group_end, r[opens])


def overlap_ns(a: Intervals, b: Intervals) -> int:
    """Nanoseconds covered by both interval sets (each disjoint and sorted).

    >>> x = merge_intervals(np.array([0, 20]), np.array([10, 30]), np.array([0, 1]))
    >>> y = merge_intervals(np.array([5]), np.array([25]), np.array([0]))
    >>> overlap_ns(x, y)
    10
    """
    if not len(a.start) or not len(b.start):
        return 0
    # covered(a ∩ b) = |a| + |b| - |a ∪ b|
    union = merge_intervals(np.r_[a.start, b.start], np.r_[a.end, b.end],
                            np.zeros(len(a.start) + len(b.start), np.int64))
    return a.total + b.total - union.total


def clip(intervals: Intervals, windows: Intervals) -> Intervals:
    """``intervals`` cut to the parts inside ``windows``."""
    if not len(intervals.start) or not len(windows.start):
        return Intervals(*(np.zeros(0, np.int64),) * 3)
    starts, ends, rows = [], [], []
    for w0, w1 in zip(windows.start.tolist(), windows.end.tolist(), strict=True):
        lo = int(np.searchsorted(intervals.end, w0, "right"))
        hi = int(np.searchsorted(intervals.start, w1, "left"))
        if hi > lo:
            starts.append(np.maximum(intervals.start[lo:hi], w0))
            ends.append(np.minimum(intervals.end[lo:hi], w1))
            rows.append(intervals.first[lo:hi])
    if not starts:
        return Intervals(*(np.zeros(0, np.int64),) * 3)
    return Intervals(np.concatenate(starts), np.concatenate(ends), np.concatenate(rows))


# what the profiler or a statistics table drew, or a thread blocked: not work a thread ran
_NOT_THREAD_WORK = np.array([Activity.OVERHEAD, Activity.PROFILER, Activity.AGGREGATE,
                             Activity.WAIT], np.int8)


def main_threads(trace: Trace, activity: np.ndarray) -> dict[int, int]:
    """Each host process's main thread (process id → track id), given every slice's
    ``activity`` value (:func:`slice_activity`: kind | roles); key ``-1 - k`` is input
    ``k``'s (the rank's, in a merged trace; ``-1``: the trace's, read alone).

    The main thread is where torch puts a Kineto event that has no op to hang on (its
    profiler overhead): the thread that stopped the profiler, the one that drove it. A
    trace does not name that thread, so it is the host thread holding the most step time
    (``ProfilerStep#N``: the profiler's own ``step()``), else the one whose tid is the
    process id (the OS's main thread; a Kineto trace may number its threads otherwise),
    else the one busy longest (the union of its slices). Only threads with work of their
    own count: a track of nothing but profiler overhead (Kineto's pid -1) is no main
    thread. An input's main thread is the first of its processes' by the same order.

    >>> t = Trace(); py = t.add_process("python", pid=7); pseudo = t.add_process("", pid=-1)
    >>> worker = t.add_track("41", process=py, tid=41); main = t.add_track("9", process=py, tid=9)
    >>> other = t.add_track("0", process=pseudo, tid=0)
    >>> _ = t.add_slice(worker, 0, 5, "aten::add", "cpu_op")
    >>> _ = t.add_slice(main, 0, 50, "aten::mm", "cpu_op")
    >>> _ = t.add_slice(other, 10, 5, "Activity Buffer Request", "overhead")
    >>> main_threads(t, slice_activity(t))
    {0: 1, -1: 1}
    >>> from traceconv.analysis.merge import merge
    >>> two = merge([t, t], align="none"); main_threads(two, slice_activity(two))
    {0: 1, -1: 1, 2: 4, -2: 4}
    """
    s = trace.slices
    track, start, dur = s.numpy("track"), s.numpy("start"), timed_durations(trace)
    host_track = np.array([trace.processes[t.process].kind is not ProcessKind.DEVICE
                           for t in trace.tracks] + [False], dtype=bool)
    rows = np.flatnonzero(host_track[np.minimum(track, len(trace.tracks))]
                          & ~np.isin(activity & KIND_BITS, _NOT_THREAD_WORK))
    step = np.zeros(len(trace.tracks) + 1, np.int64)
    marked = rows[(activity[rows] & Activity.STEP) != 0]
    np.add.at(step, np.minimum(track[marked], len(trace.tracks)), dur[marked])
    part = input_of_process(trace)
    best: dict[int, tuple] = {}
    for t, positions in grouped(track[rows]):
        if t >= len(trace.tracks):
            continue   # (a slice on no known track)
        mine = rows[positions]
        entity = trace.tracks[t]
        own_tid = entity.tid is not None and entity.tid == trace.processes[entity.process].pid
        busy = merge_intervals(start[mine], start[mine] + dur[mine], mine).total
        rank = (int(step[t]), own_tid, busy, -t)
        for key in (entity.process, -1 - int(part[entity.process])):
            if key not in best or rank > best[key]:
                best[key] = rank
    return {key: -rank[-1] for key, rank in best.items()}


# Linux caps pids at 2^22 (PID_MAX_LIMIT): a pid beyond 0..2^22 was made up by a profiler
# (Kineto's -1) or a writer (traceconv's Chrome JSON: 2^24 + n), never an OS process's
_PID_MAX_LIMIT = 1 << 22


def overhead_on_main_threads(trace: Trace, activity: np.ndarray, track: np.ndarray,
                             overhead: np.ndarray) -> np.ndarray:
    """``track`` (a slice track column) with the ``overhead`` rows, the profiler's own work,
    on the thread that paid them: the thread the profiler recorded, unless that is in a
    profiler's pseudo process (no OS pid and no work of its own): then the main thread of
    its input (:func:`main_threads`; ``activity`` as it takes it): in a merged trace, each
    rank's pseudo process pays on that rank's main thread, never on another rank's.

    Kineto writes its overhead (trace buffer requests, CUPTI's instrumentation) under pid
    -1, though it happens inside the op that ran out of trace buffer; torch nests it there:
    a Kineto event with no op of its own goes to the thread that stopped the profiler
    (``setKinetoTID`` in torch's ``profiler_kineto.cpp``), so its time is not that op's
    self time. A profiler that names the paying thread (Nsight Systems' ``globalTid``) is
    taken at its word: its rows stay there, on a helper thread or in a child process with
    nothing else recorded too, and nest with that thread's own calls.

    >>> t = Trace(); py = t.add_process("python", pid=7); pseudo = t.add_process("", pid=-1)
    >>> main = t.add_track("1234", process=py, tid=1234); helper = t.add_track("9", process=py, tid=9)
    >>> other = t.add_track("0", process=pseudo, tid=0)
    >>> child = t.add_track("8", process=t.add_process("child", pid=8), tid=8)
    >>> _ = t.add_slice(main, 0, 100, "cudaDeviceSynchronize", "cuda_runtime")
    >>> for track in (other, helper, child):
    ...     _ = t.add_slice(track, 20, 5, "TLS allocation", "overhead")
    >>> overhead_on_main_threads(t, slice_activity(t), np.array([main, other, helper, child]),
    ...                          np.array([1, 2, 3])).tolist()
    [0, 0, 1, 3]
    """
    if not len(overhead):
        return track
    main = main_threads(trace, activity)
    part = input_of_process(trace).tolist()
    # a pseudo process's rows go to its input's main thread (where that input has one)
    payer = [main.get(-1 - part[i], -1) if i not in main and (
        p.pid is None or not 0 <= p.pid <= _PID_MAX_LIMIT) else -1
        for i, p in enumerate(trace.processes)]
    process_of = [t.process for t in trace.tracks]
    moved = track.copy()
    moved[overhead] = [t if payer[process_of[t]] < 0 else payer[process_of[t]]
                       for t in track[overhead].tolist()]
    return moved


def _together(parts: list[Intervals]) -> Intervals:
    """The union of the intervals of ``parts`` (the one part itself)."""
    if len(parts) == 1:
        return parts[0]
    return merge_intervals(*(np.concatenate([getattr(p, f) for p in parts])
                             for f in ("start", "end", "first")))


class Timeline:
    """A trace's slices as numpy columns plus their :class:`Activity`, launch links and steps.

    Built once per analysis; reads the trace, never changes it. ``dur`` and ``end`` are
    the times analyses count (:func:`timed_durations`: a slice never ended in the input,
    ``not_ended``, takes none).

    >>> t = Trace(); host = t.add_process("python"); gpu = t.add_process(
    ...     "GPU 0", kind=ProcessKind.DEVICE)
    >>> main = t.add_track("main", process=host); stream = t.add_track("stream 7", process=gpu)
    >>> launch = t.add_slice(main, 0, 10, "cudaLaunchKernel", "cuda_runtime")
    >>> kernel = t.add_slice(stream, 20, 100, "gemm", "kernel")
    >>> _ = t.add_flow(launch, kernel, "ac2g")
    >>> tl = Timeline(t)
    >>> [Activity(a).name for a in tl.activity], tl.launch_of.tolist()
    (['LAUNCH', 'KERNEL'], [-1, 0])
    """

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        s = trace.slices
        self.track = s.numpy("track")
        self.start = s.numpy("start")
        self.not_ended = not_ended(trace)
        self.dur = timed_durations(trace, self.not_ended)
        self.end = self.start + self.dur
        self.name = s.numpy("name")
        device_process = np.array([p.kind is ProcessKind.DEVICE for p in trace.processes]
                                  + [False], dtype=bool)
        track_process = np.array([t.process for t in trace.tracks] + [len(trace.processes)],
                                 dtype=np.int64)
        self.process = track_process[self.track] if len(self.track) else self.track
        self.on_device = device_process[self.process] if len(self.track) else np.zeros(0, bool)
        # one activity per slice: its role (step, data loading, communication), else its
        # kind; the roles apart too (a step's range drawn on a device is a device mark)
        self.stated = stated = slice_activity(trace)
        self.activity = primary(stated)
        self.roles = stated & ~np.int8(KIND_BITS)
        self.launch_of = self._launches()

    @cached_property
    def host_track(self) -> np.ndarray:
        """:attr:`track`, with the profiler's overhead rows on the thread that paid them
        (:func:`overhead_on_main_threads`: Kineto's pseudo process's on the main thread)."""
        overhead = np.flatnonzero((self.activity == Activity.OVERHEAD) & ~self.on_device)
        return overhead_on_main_threads(self.trace, self.stated, self.track, overhead)

    def _launches(self) -> np.ndarray:
        """For every slice, the row of the host slice that launched it (-1: none)."""
        launch_of = np.full(len(self.start), -1, dtype=np.int64)
        f = self.trace.flows
        if len(f) and len(self.start):
            src, dst = f.numpy("source"), f.numpy("target")
            valid = (src >= 0) & (src < len(launch_of)) & (dst >= 0) & (dst < len(launch_of))
            src, dst = src[valid], dst[valid]
            keep = ~self.on_device[src] & self.on_device[dst]
            launch_of[dst[keep]] = src[keep]
        return launch_of

    @cached_property
    def origin(self) -> int:
        """The trace's first timestamp: positions in reports are ns since it."""
        bounds = self.trace.time_range
        return bounds[0] if bounds else 0

    def since_start(self, ts: int) -> int:
        return int(ts) - self.origin

    def rows(self, *kinds: Activity) -> np.ndarray:
        """Slice rows of the given activities, in storage order."""
        return np.flatnonzero(np.isin(self.activity, np.array(kinds, dtype=np.int8)))

    def has(self, *kinds: Activity) -> bool:
        return bool(np.isin(self.activity, np.array(kinds, dtype=np.int8)).any())

    def union(self, rows: np.ndarray) -> Intervals:
        """The time covered by slices ``rows`` (overlaps counted once)."""
        return merge_intervals(self.start[rows], self.end[rows], rows)

    @cached_property
    def process_input(self) -> np.ndarray:
        """Per process, the input of a merged trace (a rank) it came from
        (:func:`input_of_process`)."""
        return input_of_process(self.trace)

    def input_of(self, rows: np.ndarray) -> np.ndarray:
        """The input of a merged trace (a rank) that slice ``rows`` came from."""
        return self.process_input[self.process[rows]]

    @cached_property
    def steps(self) -> Intervals:
        """The step windows of every input together (:meth:`steps_of`)."""
        return _together(list(self._steps_by_input.values()))

    @cached_property
    def host_steps(self) -> Intervals:
        """The step windows as the host marked them, else one window over all work (each
        input of a merged trace apart: a rank's window is its own), every input together."""
        return _together([self._host_steps(part) for part in range(self.input_count)])

    @property
    def input_count(self) -> int:
        """How many inputs (ranks) were merged into the trace (1: a trace read alone)."""
        return int(self.process_input.max()) + 1

    def steps_of(self, process: int) -> Intervals:
        """The step windows of the input (rank) holding ``process``: each of its step
        markers' windows extended by its device-side window (:mod:`.steps`: the device may
        run behind the host), else one window over that input's work. In a merged trace a
        rank is measured over the time it was recorded, never over its peers' steps.

        >>> from traceconv.analysis.merge import merge
        >>> def rank(at):
        ...     t = Trace(); main = t.add_track("main", process=t.add_process("python"))
        ...     _ = t.add_slice(main, at, 100, "ProfilerStep#1", "user_annotation")
        ...     return t
        >>> tl = Timeline(merge([rank(0), rank(500)], align="none"))
        >>> w = tl.steps_of(1); w.start.tolist(), w.end.tolist(), tl.steps.total
        ([500], [600], 200)
        """
        return self.input_steps(int(self.process_input[process]))

    def input_steps(self, index: int) -> Intervals:
        """The step windows of input (rank) ``index`` of a merged trace (0: a trace read
        alone), as :meth:`steps_of` gives them for that input's processes."""
        return self._steps_by_input[index]

    @cached_property
    def _steps_by_input(self) -> dict[int, Intervals]:
        from .steps import step_windows

        marked = step_windows(self)
        by_input = {}
        for part in range(self.input_count):
            mine = [w for w in marked if w.input_index == part]
            by_input[part] = merge_intervals(
                np.array([w.start for w in mine], np.int64),
                np.array([w.end for w in mine], np.int64),
                np.full(len(mine), -1, np.int64)) if mine else self._host_steps(part)
        return by_input

    def _host_steps(self, part: int) -> Intervals:
        """Input ``part``'s step windows as its host marked them, else one window over all
        its work."""
        mine = (self.process_input[self.process] == part) if self.input_count > 1 else None
        rows = self.rows(Activity.STEP)
        rows = rows if mine is None else rows[mine[rows]]
        if len(rows):
            return self.union(rows)
        is_work = ~np.isin(self.activity, NOT_WORK)
        work = np.flatnonzero(is_work if mine is None else is_work & mine)
        if not len(work):
            return Intervals(*(np.zeros(0, np.int64),) * 3)
        lo, hi = int(self.start[work].min()), int(self.end[work].max())
        return Intervals(np.array([lo]), np.array([hi]), np.array([-1]))

    @property
    def step_count(self) -> int:
        """Steps marked (1 when the trace has no step markers: the whole run)."""
        rows = self.rows(Activity.STEP)
        return max(1, len(self.outermost(rows[~self.on_device[rows]])))

    @property
    def has_step_markers(self) -> bool:
        return self.has(Activity.STEP)

    @property
    def steps_word(self) -> str:
        """What :attr:`steps` is called in a sentence: ``the steps``, or ``the run`` when
        the trace marks none (its one window is all the work)."""
        return "the steps" if self.has_step_markers else "the run"

    def device_processes(self) -> list[int]:
        """Processes (devices) that ran device work."""
        rows = self.device_work()
        return sorted(set(self.process[rows].tolist()))

    def device_busy(self, process: int) -> Intervals:
        """When device ``process`` ran anything (kernels, copies, collectives) on any stream."""
        rows = self.device_work()
        return self.union(rows[self.process[rows] == process])

    def waits(self) -> np.ndarray:
        """Rows of host threads blocked in a call (:attr:`~Activity.WAIT`: ``futex``,
        ``poll``...): waiting, not work (the same kind on a device is a sync marker).

        >>> t = Trace(); main = t.add_track("main", process=t.add_process("python"))
        >>> _ = t.add_slice(main, 0, 90, "poll", "os_runtime")
        >>> _ = t.add_slice(main, 90, 5, "ioctl", "os_runtime")
        >>> from ..vocabularies.nsys import NSYS_VOCABULARY
        >>> from ..model.activity import fill_activity
        >>> fill_activity(t, NSYS_VOCABULARY); Timeline(t).waits().tolist()
        [0]
        """
        rows = self.rows(Activity.WAIT)
        return rows[~self.on_device[rows]]

    def device_work(self) -> np.ndarray:
        """Rows of work that ran on a device (kernels, copies, memsets, collectives)."""
        rows = self.rows(*DEVICE_WORK)
        return rows[self.on_device[rows]]

    def outermost(self, rows: np.ndarray) -> np.ndarray:
        """Those of ``rows`` not nested inside another of ``rows`` on the same track.

        >>> t = Trace(); p = t.add_process("p"); a = t.add_track("a", process=p)
        >>> for start, dur in ((0, 10), (2, 3), (20, 5)): _ = t.add_slice(a, start, dur, "op")
        >>> Timeline(t).outermost(np.arange(3)).tolist()
        [0, 2]
        """
        if not len(rows):
            return rows
        order = rows[timeline_order(self.track[rows], self.start[rows], -self.dur[rows])]
        track, start, end = self.track[order], self.start[order], self.end[order]
        # shift each track past the previous one so one running maximum serves all tracks
        span = int(end.max() - start.min()) + 1
        group = np.cumsum(np.r_[0, track[1:] != track[:-1]])
        begin = start - start.min() + group * span
        reach = np.maximum.accumulate(end - start.min() + group * span)
        keep = np.ones(len(order), dtype=bool)
        keep[1:] = begin[1:] >= reach[:-1]
        return np.sort(order[keep])

    def names(self, rows: np.ndarray) -> list[str]:
        strings = self.trace.strings.strings
        return [strings[n] for n in self.name[rows].tolist()]

"""Per-operator totals of a timeline with the meaning of ``torch.profiler``'s
``prof.key_averages()``.

What torch computes, and what this does on the trace (never changing it):

- **Events.** Every slice on a host thread is an event, except Python frames (torch keeps
  them out of its table), the profiler's own span and the bookkeeping ops torch filters out
  (``aten::is_leaf``, ``profiler::_record_function_*``...). Every kernel, memcpy and memset
  on a device stream is an event of its own (a device row). What a slice is comes from the
  model's activity column (:func:`~traceconv.analysis.activity.slice_activity`), never
  from a vendor's category names.
- **Nesting** is per thread, on the slices as recorded (not on the lanes a viewer draws):
  sorted by (start, -end), an event is the child of the innermost open event that ends at or
  after its own end; a partial overlap is no nesting.
- **Self host time** = duration - the time covered by its children (their union, clipped
  to the event: children that overlap each other, as an overhead event moved onto the main
  thread does, count once), so never negative. **Host total** = duration.
- **Device time of an op**: the device events whose ``External id`` names it (torch's link
  from a kernel to the op that was innermost when it was launched), else the op around its
  launch (the flow's source), or that source itself when it is an op and no runtime call
  (a TensorFlow executor op links to its kernels). **Self device time** = those events' time; **device total** =
  self device time + the children's device totals.
- **Annotations** (user ranges, steps such as ``ProfilerStep#N``, ranges and step markers
  on a device stream) are ranges: they have totals, never self device time; a device row
  is a kernel only when the model says kernel.
- **Async spans** (slices on an async track: Chrome's ``b``/``e``, an object's lifetime or
  a logical operation) are rows of kind ``async``: calls and host total (how long they were
  open), no self time of any kind, since no thread runs them; they nest with nothing.
- **Duplicate nesting** (an op whose only child has its own name, as autocast redispatch
  makes) counts once: the child's children and device events go to the parent.
- **Self memory**: the bytes allocated (+) and freed (-) inside an event's time range (any
  thread), minus those inside the union of its children's, read from the model's memory
  blocks of the memory torch counts (host: CPU, MKLDNN, IDEEP; device: CUDA, HIP,
  PrivateUse1), whose sizes and times the builder checked.
- **Rows** group events by (name, kind), and by input shapes when asked.
- **A slice whose end is not in the input** (a ``B`` never closed, a BEGIN without END:
  the builder ended it at the trace's last timestamp) is a call of no known length: it
  counts in ``calls`` and in ``not_timed``, never in a time (its children's times are
  theirs, its own is none; :func:`~traceconv.analysis.activity.timed_durations`). It
  still encloses what ran inside it, so device time its children launched is in its
  device total.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from ..model import ProcessKind, Trace
from ..model.activity import KIND_BITS, RUNTIME_CALLS, Activity, kind_of
from ..model.timeline_order import timeline_order
from ..vocabularies.kineto import counted_memory
from .activity import not_ended, overhead_on_main_threads, slice_activity, timed_durations

# Bookkeeping events torch drops before building its table.
FILTERED_NAMES = frozenset({
    "[memory]", "[OutOfMemory]", "profiler::_record_function_enter",
    "profiler::_record_function_enter_new", "profiler::_record_function_exit",
    "aten::is_leaf", "aten::output_nr", "aten::_version"})
SKIPPED_KINDS = (Activity.PYTHON, Activity.PROFILER)   # not in torch's table
_STEP_NAME = re.compile(r"ProfilerStep#\d+$")
DEVICE_KINDS = {Activity.KERNEL: "kernel", Activity.AGGREGATE: "kernel",  # (trtexec layers)
                Activity.DEVICE_SYNC: "sync", Activity.MEMCPY: "memcpy",
                Activity.MEMSET: "memset", Activity.OTHER: "other"}   # else a range: "gpu_annotation"
RANGE_KINDS = frozenset({"gpu_annotation", "sync", "async"})
# a host thread blocked in a call (Activity.WAIT: futex, poll...): its self time is time
# waited, which no total of work adds (model.entities.NOT_WORK_TIMES["waiting"])
WAIT_KIND = "wait"
SORT_KEYS = ("self_device_ns", "device_total_ns", "self_host_ns", "host_total_ns", "calls",
             "flops", "self_memory_bytes", "name")


@dataclass(slots=True)
class OpRow:
    """One row of the table: every event of one name and kind (and input shapes)."""

    name: str
    kind: str   # op, annotation, runtime, overhead, async, kernel, memcpy, memset, gpu_annotation, sync
    calls: int = 0
    self_host_ns: int | None = None
    host_total_ns: int | None = None
    self_device_ns: int | None = None
    device_total_ns: int | None = None
    flops: int | None = None
    self_memory_bytes: int | None = None
    input_shapes: str | None = None
    not_timed: int = 0   # calls whose end is not in the input: in calls, in no time

    def as_dict(self) -> dict[str, Any]:
        """The JSON object of the row (``input_shapes`` only when grouped by them,
        ``not_timed`` only when some call was not timed)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        if out["input_shapes"] is None:
            del out["input_shapes"]
        if not out["not_timed"]:
            del out["not_timed"]
        return out


def _device_kind(activity: int) -> str:
    """What a device event is; a step marker or any other range drawn on a device line
    (XPlane's ``Steps`` row) is never a kernel.

    >>> _device_kind(Activity.KERNEL | Activity.COMMUNICATION), _device_kind(
    ...     Activity.OTHER | Activity.STEP)
    ('kernel', 'gpu_annotation')
    """
    if activity & Activity.STEP:
        return "gpu_annotation"
    return DEVICE_KINDS.get(activity & KIND_BITS, "gpu_annotation")   # type: ignore[call-overload]


def _host_kind(activity: int) -> str:
    """What a host event is; the profiler's own work (Kineto's buffer requests, CUPTI's
    instrumentation) is no framework op.

    >>> _host_kind(Activity.OVERHEAD), _host_kind(Activity.SYNC), _host_kind(Activity.HOST_OP)
    ('overhead', 'runtime', 'op')
    >>> _host_kind(Activity.WAIT)
    'wait'
    """
    if (activity & KIND_BITS) == Activity.WAIT:
        return WAIT_KIND
    if activity & Activity.STEP or (activity & KIND_BITS) == Activity.ANNOTATION:
        return "annotation"
    if (activity & KIND_BITS) == Activity.OVERHEAD:
        return "overhead"
    return "runtime" if (activity & KIND_BITS) in RUNTIME_CALLS else "op"


class _Events:
    """The trace's host and device events as arrays, plus the nesting of the host ones."""

    def __init__(self, trace: Trace) -> None:
        s, strings = trace.slices, trace.strings.strings
        device_processes = {p.id for p in trace.processes if p.kind == ProcessKind.DEVICE}
        on_device = np.array([t.process in device_processes for t in trace.tracks], dtype=bool)
        track, start = s.numpy("track"), s.numpy("start")
        self.not_ended = not_ended(trace)
        self.end = start + timed_durations(trace, self.not_ended)
        # nesting by the slices' extent in the model: a slice never ended still encloses
        # what began inside it (its made-up end is the trace's last timestamp)
        extent = start + s.numpy("dur") if self.not_ended.any() else self.end
        name = s.numpy("name")
        names = np.array(strings, dtype=object)
        self.activity = slice_activity(trace)
        kind = kind_of(self.activity)
        skip_names = {i for i, text in enumerate(strings) if text in FILTERED_NAMES}
        kept = ~np.isin(name, list(skip_names)) & ~np.isin(kind, SKIPPED_KINDS)
        device = on_device[track] if len(track) else np.zeros(0, dtype=bool)
        # a statistics table drawn beside a timeline (merged inputs) is no call of its own
        kept &= device | (kind != Activity.AGGREGATE)
        self.trace = trace
        # async spans (an object's lifetime, a logical operation): no thread runs them
        spans = kind == Activity.RANGE
        self.host = np.flatnonzero(kept & ~device & ~spans)
        self.device = np.flatnonzero(kept & device)
        self.spans = np.flatnonzero(kept & ~device & spans)
        # host events in (track, start, -end) order: parents before their children
        h = self.host
        self.host = h[timeline_order(track[h], start[h], -extent[h])]
        self.start, self.extent = start, extent
        self.names, self.name_ids = names, name
        # the profiler's own work (Kineto's trace buffer requests, nsys's TLS allocation)
        self.overhead = self.host[kind[self.host] == Activity.OVERHEAD]
        if len(self.overhead):   # (on the thread that paid them: Kineto's as torch has them)
            track = overhead_on_main_threads(trace, self.activity, track, self.overhead)
            h = self.host
            self.host = h[timeline_order(track[h], self.start[h], -extent[h])]
        self.parent = self._nest(track)

    def _nest(self, track: np.ndarray) -> dict[int, int]:
        """Slice row → parent slice row, per thread (torch's stack walk)."""
        parent: dict[int, int] = {}
        stack: list[int] = []
        current_track = -1
        start, end = self.start, self.extent
        for row in self.host.tolist():
            if track[row] != current_track:
                current_track, stack = track[row], []
            while stack and (start[row] >= end[stack[-1]] or end[row] > end[stack[-1]]):
                stack.pop()
            if stack:
                parent[row] = stack[-1]
            stack.append(row)
        return parent


def _external_ids(events: _Events) -> dict[Any, int]:
    """``External id`` → the host event (not a runtime call) that carries it."""
    found: dict[Any, int] = {}
    all_args = events.trace.slices.args
    for row in events.host.tolist():
        args = all_args[row]
        external = args.get("External id") if args else None
        # (a list or dict there is not an id)
        runtime_call = (events.activity[row] & KIND_BITS) in RUNTIME_CALLS
        if isinstance(external, int | str) and not runtime_call:
            found.setdefault(external, row)
    return found


def _launchers(trace: Trace) -> dict[int, int]:
    """Device event → the host slice that launched it (flow target → source)."""
    flows = trace.flows
    return dict(zip(flows.numpy("target").tolist(), flows.numpy("source").tolist(), strict=True))


def _owner_of_device_events(events: _Events) -> dict[int, int]:
    """Device event → the host event whose device time it is."""
    trace = events.trace
    by_external = _external_ids(events)
    launcher = _launchers(trace)
    host = set(events.host.tolist())
    owner: dict[int, int] = {}
    for row in events.device.tolist():
        if _device_kind(events.activity[row]) in RANGE_KINDS:
            continue   # a range drawn on the device, no work of its own
        args = trace.slices.args[row]
        external = args.get("External id") if args else None
        found = by_external.get(external) if isinstance(external, int | str) else None
        if found is None and (launch := launcher.get(row)) is not None and launch in host:
            # the op around a runtime launch call; an op that launched it itself (TF's
            # executor op: no runtime call between) owns it
            runtime_call = (events.activity[launch] & KIND_BITS) in RUNTIME_CALLS
            found = events.parent.get(launch) if runtime_call else launch
        if found is not None:
            owner[row] = found
    return owner


def _merge_duplicates(events: _Events, children: dict[int, list[int]],
                      kernels: dict[int, list[int]]) -> set[int]:
    """torch's merge of an op with its only child of the same name; returns merged rows."""
    merged: set[int] = set()
    parent, names = events.parent, events.name_ids
    for row in events.host.tolist():      # parents first: chains collapse to their top
        up = parent.get(row)
        if up is None or names[up] != names[row] or len(children[up]) != 1:
            continue
        children[up] = children.pop(row, [])
        for child in children[up]:
            parent[child] = up
        kernels[up].extend(kernels.pop(row, []))
        del parent[row]
        merged.add(row)
    return merged


class _MemoryRecords:
    """Bytes allocated (or freed) inside a time range: ``amounts`` (+ an alloc, - a free)
    at ``times``."""

    def __init__(self, times: np.ndarray, amounts: np.ndarray) -> None:
        order = np.argsort(times, kind="stable")
        self.times = times[order]
        self.cumulative = np.concatenate(([0], np.cumsum(amounts[order])))

    def usage(self, starts: np.ndarray | list, ends: np.ndarray | list) -> np.ndarray:
        """Bytes of the records at ``start`` ≤ time ≤ ``end``, for each range."""
        lo = np.searchsorted(self.times, starts, "left")
        hi = np.searchsorted(self.times, ends, "right")
        return self.cumulative[hi] - self.cumulative[lo]


_SAFE_SUM = float(1 << 62)   # beyond: the amounts are summed as Python ints (no wrap-around)


def _memory_records(trace: Trace) -> _MemoryRecords | None:
    """The allocs and frees of ``trace``'s memory blocks of the memory torch counts (host
    or device; None if none), read from the block table: the sizes and times the builder
    checked (a size no int64 holds is no block: ``model.memory_block_unreadable``).

    >>> from traceconv.model import MemoryBlock
    >>> t = Trace(); t.memory.extend([MemoryBlock(0, 8, 10, 30, device="CUDA:0"),
    ...                               MemoryBlock(64, 4, None, 20, device="CPU")])
    >>> _memory_records(t).usage([0, 15, 25], [15, 25, 40]).tolist()   # (+8, -4, -8)
    [8, -4, -8]
    """
    blocks = trace.memory
    if not len(blocks):
        return None
    names, codes = blocks.coded("device")
    counted = np.array([isinstance(n, str) and counted_memory(n) for n in names] or [False])
    counted = counted[codes]
    allocated, freed = counted & blocks.known("alloc_ns"), counted & blocks.known("free_ns")
    if not allocated.any() and not freed.any():
        return None
    sizes = blocks.numbers("size")
    amounts = np.concatenate((sizes[allocated], -sizes[freed]))
    if np.abs(amounts.astype(np.float64)).sum() >= _SAFE_SUM:
        amounts = amounts.astype(object)
    times = np.concatenate((blocks.numbers("alloc_ns")[allocated],
                            blocks.numbers("free_ns")[freed]))
    return _MemoryRecords(times, amounts)


def covered(start: int, end: int, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The union of ``spans`` clipped to [start, end], as disjoint sorted intervals.

    A parent's self time is its duration minus the time these cover: children that
    overlap each other (or run past their parent) must not be taken out twice.

    >>> covered(0, 100, [(10, 40), (30, 50), (90, 130), (60, 60)])
    [(10, 50), (60, 60), (90, 100)]
    """
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(spans):
        lo, hi = max(lo, start), min(hi, end)
        if hi < lo:
            continue
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged


def _shapes(args: dict | None) -> str:
    dims = (args or {}).get("Input Dims")
    return "" if dims is None else str(dims)


def op_summary(trace: Trace, *, group_by_input_shape: bool = False) -> list[OpRow]:
    """The ``key_averages()`` rows of a timeline, in first-seen order.

    >>> from traceconv.model import Trace, ProcessKind
    >>> t = Trace(); cpu = t.add_track("main", process=t.add_process("python"))
    >>> gpu = t.add_track("stream 7", process=t.add_process("GPU 0", kind=ProcessKind.DEVICE))
    >>> step = t.add_slice(cpu, 0, 10_000, "step", "user_annotation")
    >>> conv = t.add_slice(cpu, 1_000, 4_000, "aten::conv2d", "cpu_op")
    >>> launch = t.add_slice(cpu, 2_000, 1_000, "cudaLaunchKernel", "cuda_runtime")
    >>> gemm = t.add_slice(gpu, 3_000, 2_000, "gemm", "kernel")
    >>> _ = t.add_flow(launch, gemm, "ac2g")
    >>> for row in op_summary(t):
    ...     print(row.name, row.kind, row.self_host_ns, row.self_device_ns, row.device_total_ns)
    step annotation 6000 0 2000
    aten::conv2d op 3000 2000 2000
    cudaLaunchKernel runtime 1000 0 0
    gemm kernel None 2000 2000
    """
    events = _Events(trace)
    owner = _owner_of_device_events(events)
    children: dict[int, list[int]] = defaultdict(list)
    for child, up in events.parent.items():
        children[up].append(child)
    kernels: dict[int, list[int]] = defaultdict(list)
    for device_row, host_row in owner.items():
        kernels[host_row].append(device_row)
    for row in events.overhead.tolist():
        # torch credits an overhead event with the device work of the op it interrupted
        # (it carries that op's correlation id): counted in both, as torch does.
        interrupted = events.parent.get(row)
        if interrupted is not None:
            kernels[row] = list(kernels.get(interrupted, ()))
    # (torch's key_averages counts an op and its only child of the same name once; other
    # producers' nested scopes of one name are calls each: a browser's, XLA's)
    merged = _merge_duplicates(events, children, kernels) \
        if trace.metadata.framework == "PyTorch" else set()
    start, end, names = events.start, events.end, events.names
    not_timed = set(np.flatnonzero(events.not_ended).tolist())   # (a set: a loop per row)
    s = trace.slices
    has_device = bool(len(events.device))
    memory = _memory_records(trace)
    usage = memory.usage(start, end) if memory is not None else None
    device_rows = set(events.device.tolist())

    own_device = {row: int(sum(end[k] - start[k] for k in ks)) for row, ks in kernels.items()}
    device_total: dict[int, int] = defaultdict(int)
    for row in events.host[::-1].tolist():     # children before parents
        if row in merged:
            continue
        device_total[row] += own_device.get(row, 0)
        enclosing = events.parent.get(row)
        if enclosing is not None:
            device_total[enclosing] += device_total[row]

    rows: dict[tuple, OpRow] = {}

    def row_of(slice_row: int, kind: str) -> OpRow:
        name = names[events.name_ids[slice_row]]
        if _STEP_NAME.match(name):   # (torch's key_averages: one row for the steps)
            name = "ProfilerStep*"
        shapes = _shapes(s.args[slice_row]) if group_by_input_shape else None
        key = (name, kind, shapes)
        found = rows.get(key)
        if found is None:
            found = rows[key] = OpRow(name, kind, input_shapes=shapes)
        return found

    spans = set(events.spans.tolist())
    for row in np.sort(np.concatenate((events.host, events.device, events.spans))).tolist():
        if row in merged:
            continue
        duration = int(end[row] - start[row])
        activity = int(events.activity[row])
        if row in spans:   # a range: how long it was open, no one's self time
            out = row_of(row, "async")
            out.calls += 1
            out.not_timed += row in not_timed
            out.host_total_ns = (out.host_total_ns or 0) + duration
            continue
        if row in device_rows:
            kind = _device_kind(activity)
            out = row_of(row, kind)
            out.calls += 1
            out.not_timed += row in not_timed
            work = 0 if kind in RANGE_KINDS else duration
            out.self_device_ns = (out.self_device_ns or 0) + work
            out.device_total_ns = (out.device_total_ns or 0) + duration
            continue
        kind = _host_kind(activity)
        out = row_of(row, kind)
        out.calls += 1
        out.not_timed += row in not_timed
        kids = covered(int(start[row]), int(end[row]), [
            (int(start[k]), int(end[k])) for k in children[row]]) if row in children else []
        out.self_host_ns = (out.self_host_ns or 0) + duration - sum(b - a for a, b in kids)
        out.host_total_ns = (out.host_total_ns or 0) + duration
        if has_device:
            self_device = 0 if kind == "annotation" else own_device.get(row, 0)
            out.self_device_ns = (out.self_device_ns or 0) + self_device
            out.device_total_ns = (out.device_total_ns or 0) + device_total[row]
        args = s.args[row]
        if args and isinstance(args.get("flops"), int | float):
            out.flops = (out.flops or 0) + int(args["flops"])
        if memory is not None and usage is not None:
            inside_children = memory.usage([a for a, _ in kids], [b for _, b in kids])
            out.self_memory_bytes = (out.self_memory_bytes or 0) + int(
                usage[row] - inside_children.sum())
    return list(rows.values())


def work_rows(rows: list[OpRow]) -> list[OpRow]:
    """The rows whose self time is work: all but threads blocked in calls (:data:`WAIT_KIND`),
    the rows every total of work adds.

    >>> [r.name for r in work_rows([OpRow("aten::mm", "op", 1, 5), OpRow("futex", "wait", 1, 9)])]
    ['aten::mm']
    """
    return [r for r in rows if r.kind != WAIT_KIND]


def waiting_ns(rows: list[OpRow]) -> tuple[int, int]:
    """(rows, ns) of the time threads spent blocked in calls (the :data:`WAIT_KIND` rows'
    self host time), which no total of work counts.

    >>> waiting_ns([OpRow("aten::mm", "op", 1, 5), OpRow("futex", "wait", 2, 9)])
    (1, 9)
    """
    waits = [r for r in rows if r.kind == WAIT_KIND]
    return len(waits), sum(r.self_host_ns or 0 for r in waits)


# torch's sort_by names (key_averages().table(sort_by=...)) and short forms → columns
SORT_ALIASES = {
    "self_cpu_time_total": "self_host_ns", "cpu_time_total": "host_total_ns",
    "self_cuda_time_total": "self_device_ns", "self_device_time_total": "self_device_ns",
    "cuda_time_total": "device_total_ns", "device_time_total": "device_total_ns",
    "count": "calls", "self_cpu_memory_usage": "self_memory_bytes",
    "self_cuda_memory_usage": "self_memory_bytes", "self_device_memory_usage": "self_memory_bytes",
    "self_host": "self_host_ns", "host_total": "host_total_ns", "self_device": "self_device_ns",
    "device_total": "device_total_ns", "memory": "self_memory_bytes",
}


def sort_rows(rows: list[OpRow], by: str | None = None, top: int = 0,
              ascending: bool = False) -> list[OpRow]:
    """``rows`` sorted by a column (missing values last), cut to ``top`` (0 = all).

    ``by`` is a column name or one of torch's ``sort_by`` names (``self_cpu_time_total``,
    ``cuda_time_total``, ``count``...); None sorts by self device time when there is any,
    else by self host time.

    >>> rows = [OpRow("a", "op", 1, 5), OpRow("b", "op", 3, 9), OpRow("c", "op", 2)]
    >>> [r.name for r in sort_rows(rows)], [r.name for r in sort_rows(rows, "count", 1)]
    (['b', 'a', 'c'], ['b'])
    """
    if by is None:
        by = "self_device_ns" if any(r.self_device_ns for r in rows) else "self_host_ns"
    column = SORT_ALIASES.get(by, by)
    if column not in SORT_KEYS:
        raise ValueError(f"cannot sort by {by!r} (one of {', '.join(SORT_KEYS)}, or torch's "
                         f"{', '.join(k for k in SORT_ALIASES if k.endswith(('total', 'count', 'usage')))})")
    known = [r for r in rows if getattr(r, column) is not None]
    missing = [r for r in rows if getattr(r, column) is None]
    known.sort(key=lambda r: getattr(r, column), reverse=not ascending)
    ordered = known + missing
    return ordered[:top] if top else ordered

"""The critical path of a run: the chain of work that, made shorter, makes the run shorter.

Two ways, chosen by what the trace holds:

- **timeline** (any trace with slices, as HTA's critical-path analysis does): walk back in
  time from the end of the run (:mod:`.critical_walk`): program order per thread (the
  innermost op at each moment: parents' self time counts as theirs), launch → kernel, stream
  order, synchronisations that really block, cross-thread hand-offs. What lies between two
  links is a wait on another thread or device, untraced host time or idle
  (:mod:`.path_gaps`).
- **graph** (op graphs with data dependencies: MegEngine, MIGraphX, Paddle protobuf, ...):
  the producer → consumer chain that finishes last when each op starts as soon as its inputs
  are done (measured op times); time between two links in which other ops ran (a program
  run one instruction at a time) is ``other`` work, not idle.

The result is a list of path entries in time order whose durations plus the idle gaps add up
to ``length_ns`` exactly. ``span_ns`` is the time from the first to the last slice of work
(instants, the profiler's own window and ranges such as async spans do not count). A slice
whose end is not in the input is no work of a known length: the path never runs through it
(:func:`~traceconv.analysis.activity.timed_durations`), and ``not_timed`` counts them.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Literal

import numpy as np

from ..model import Trace
from ..model.graph import OP, TENSOR, op_spans
from ..units import format_duration
from .activity import (
    KIND_BITS,
    NOT_WORK,
    Activity,
    Timeline,
    not_ended,
    primary,
    slice_activity,
    timed_durations,
)
from .critical_walk import Link, Walk
from .path_gaps import GapFiller

# (``other``: work of no other kind, a producer's bookkeeping; in graph mode also ops off
# the path that ran between two of its links)
Kind = Literal["cpu", "kernel", "memcpy", "communication", "wait", "untraced", "other", "idle"]
KINDS: tuple[Kind, ...] = ("cpu", "kernel", "memcpy", "communication", "wait", "untraced",
                           "other", "idle")

_KIND_OF = {Activity.KERNEL: "kernel", Activity.MEMCPY: "memcpy", Activity.MEMSET: "memcpy",
            Activity.COMMUNICATION: "communication", Activity.OTHER: "other"}


@dataclass
class PathEntry:
    """One link of the path: the part of slice ``row`` (or op ``op``) that is on it."""

    name: str
    kind: Kind
    start_ns: int
    dur_ns: int
    row: int | None = None      # slice row, for highlighting
    op: str | None = None       # op-graph node, in graph mode
    waited: int | None = None   # a wait: the slice row of the work waited on
    rank: int | None = None     # a path across ranks: the rank this link ran on

    @property
    def end_ns(self) -> int:
        return self.start_ns + self.dur_ns


@dataclass
class CriticalPath:
    """The path (time order, trace clock), its length, and the length split by kind."""

    mode: str
    path: list[PathEntry]
    span_ns: int
    origin_ns: int = 0
    breakdown: dict[str, int] = field(default_factory=dict)
    not_timed: int = 0   # slices never ended in the input: no work, on no path

    @property
    def length_ns(self) -> int:
        return self.path[-1].end_ns - self.path[0].start_ns if self.path else 0

    def __repr__(self) -> str:
        """Length, span and links, not every link (``path`` has them).

        >>> CriticalPath("timeline", [], 2_000_000)
        <CriticalPath timeline: 0 ns of 2 ms of work, 0 links>
        """
        return (f"<CriticalPath {self.mode}: {format_duration(self.length_ns)} of "
                f"{format_duration(self.span_ns)} of work, {len(self.path):,} links>")

    def as_dict(self) -> dict:
        """The ``--json`` form; ``start_ns`` counts from the trace's first event (a path
        across ranks: each entry's ``rank`` too; ``not_timed`` when slices never ended)."""
        return {"mode": self.mode, "length_ns": self.length_ns, "span_ns": self.span_ns,
                "breakdown": self.breakdown,
                "path": [{"name": e.name, "kind": e.kind, "start_ns": e.start_ns - self.origin_ns,
                          "dur_ns": e.dur_ns} | ({} if e.rank is None else {"rank": e.rank})
                         for e in self.path]} | (
            {"not_timed": self.not_timed} if self.not_timed else {})


# -- timeline ---------------------------------------------------------------------------------


def _kind(activity: int) -> Kind:
    """The path kind of an activity: host work of any sort is ``cpu``, a producer's
    bookkeeping (``Activity.OTHER``, on a device too) ``other``."""
    return _KIND_OF.get(Activity(activity), "cpu")  # type: ignore[return-value]


def timeline_path(trace: Trace) -> list[PathEntry]:
    """The critical path through a timeline (see :mod:`.critical_walk`), in time order."""
    tl = Timeline(trace)
    return with_gaps_named(GapFiller(tl), walked_entries(tl, Walk(tl).run()))


def walked_entries(tl: Timeline, links: list[Link]) -> list[PathEntry]:
    """The links of a walk (latest first) as path entries in time order."""
    names = tl.trace.strings.strings
    path = [PathEntry(names[tl.name[link.row]], _kind(tl.activity[link.row]), link.start_ns,
                      link.end_ns - link.start_ns, link.row) for link in reversed(links)]
    return _in_time_order(path)


def with_gaps_named(gaps: GapFiller, path: list[PathEntry]) -> list[PathEntry]:
    """``path`` with its waits and untraced host time as entries (idle stays a gap)."""
    out: list[PathEntry] = []
    for previous, entry in zip([None, *path], path, strict=False):
        if previous is not None and entry.start_ns > previous.end_ns:
            for piece in gaps.classify(previous.end_ns, entry.start_ns, previous.row, entry.row):
                if piece.kind != "idle":
                    out.append(PathEntry(piece.name, piece.kind,  # type: ignore[arg-type]
                                         piece.start_ns, piece.end_ns - piece.start_ns,
                                         waited=piece.row))
        out.append(entry)
    return out


def _in_time_order(path: list[PathEntry]) -> list[PathEntry]:
    """Make consecutive entries not overlap (a predecessor ends when its successor starts,
    or the successor starts when its predecessor ended), merge repeats, drop empty ones."""
    for a, b in pairwise(path):
        if a.end_ns > b.start_ns:
            if a.start_ns < b.start_ns:
                a.dur_ns = b.start_ns - a.start_ns
            else:
                new_start = min(a.end_ns, b.end_ns)
                b.dur_ns = b.end_ns - new_start
                b.start_ns = new_start
    merged: list[PathEntry] = []
    for entry in path:
        if entry.dur_ns <= 0:
            continue
        last = merged[-1] if merged else None
        if (last is not None and last.name == entry.name and last.kind == entry.kind
                and last.end_ns == entry.start_ns and last.row == entry.row):
            last.dur_ns += entry.dur_ns
        else:
            merged.append(entry)
    return merged


# -- graph ------------------------------------------------------------------------------------


def _op_times(trace: Trace, tl: Timeline) -> dict[str, tuple[int, int, Kind, int | None]]:
    """(start, dur, kind, slice row) per op node: its longest device slice, else host slice,
    else its recorded device/host spans (the model's op attribute contract); none for a
    node whose slices are all ranges (steps, annotations: their time is their ops')."""
    times: dict[str, tuple[int, int, Kind, int | None]] = {}
    for node, data in trace.graph.nodes(data=True):
        if data.get("kind") != OP:
            continue
        rows = [r for r in data.get("slices") or () if 0 <= r < len(tl.start)
                and tl.activity[r] & KIND_BITS != Activity.AGGREGATE]   # (drawn, not timed)
        if rows and all(tl.activity[r] == Activity.ANNOTATION or tl.roles[r] & Activity.STEP
                        for r in rows):
            continue   # a range (a step, a record_function): its ops are the chain's links
        if rows:
            device = [r for r in rows if tl.on_device[r]]
            best = max(device or rows, key=lambda r: tl.dur[r])
            times[node] = (int(tl.start[best]), int(tl.dur[best]),
                           _kind(tl.activity[best]), best)
            continue
        for place in ("device", "host"):
            spans = list(op_spans(data, place).values())
            if spans:
                start = min(span.start_ns for span in spans)
                end = max(span.end_ns for span in spans)
                times[node] = (start, end - start, "kernel" if place == "device" else "cpu",
                               None)
                break
    return times


def has_dependency_graph(trace: Trace) -> bool:
    """True when some op feeds another op through a tensor."""
    graph = trace.graph
    for node, kind in graph.nodes(data="kind"):
        if kind == TENSOR and graph.in_degree(node) and graph.out_degree(node):
            return True
    return False


def graph_path(trace: Trace) -> list[PathEntry]:
    """The critical path through the op graph: the producer → consumer chain that finishes
    last when each op starts as soon as its inputs are done (each op's measured time), each
    link the input its successor waited for. Time between two links in which other ops ran
    (a program run one op at a time) is ``other`` work, off the path; idle is only time in
    which no op ran.

    >>> import networkx as nx
    >>> from traceconv.model import ProcessKind
    >>> t = Trace(); gpu = t.add_process("gpu", kind=ProcessKind.DEVICE)
    >>> s = t.add_track("stream", process=gpu)
    >>> for name, start, dur in (("x", 0, 30), ("w", 30, 20), ("dot", 50, 100)):
    ...     t.graph.add_node(name, kind=OP, name=name, slices=[t.add_slice(s, start, dur, name)])
    >>> t.graph.add_edges_from([("x", "tx"), ("tx", "dot"), ("w", "tw"), ("tw", "dot")])
    >>> nx.set_node_attributes(t.graph, {"tx": TENSOR, "tw": TENSOR}, "kind")
    >>> [(e.name, e.kind, e.start_ns, e.dur_ns) for e in graph_path(t)]
    [('x', 'kernel', 0, 30), ('other work', 'other', 30, 20), ('dot', 'kernel', 50, 100)]
    """
    import networkx as nx

    tl = Timeline(trace)
    times = _op_times(trace, tl)
    graph = trace.graph
    preds: dict[str, set[str]] = defaultdict(set)
    for tensor, kind in graph.nodes(data="kind"):
        if kind != TENSOR:
            continue
        for producer in graph.predecessors(tensor):
            for consumer in graph.successors(tensor):
                if producer != consumer:
                    preds[consumer].add(producer)
    ops = nx.DiGraph()
    ops.add_nodes_from(n for n, k in graph.nodes(data="kind") if k == OP)
    ops.add_edges_from((p, c) for c, ps in preds.items() for p in ps)
    if not nx.is_directed_acyclic_graph(ops):
        ops.remove_edges_from(nx.find_cycle(ops))   # a loop (While bodies): cut where found
    # each op waits for the input that finishes last when only data dependencies hold
    # (the earliest finish of the chain that leads to it: the critical path method); the
    # times as laid out say more about the executor's order than about what an op waited for
    best: dict[str, int] = {}
    via: dict[str, str | None] = {}
    for node in nx.topological_sort(ops):
        weight = times.get(node, (0, 0, "cpu", None))[1]
        incoming = [(best[p], p) for p in ops.predecessors(node)]
        top = max(incoming, default=(0, None))
        best[node], via[node] = top[0] + weight, top[1]
    if not best:
        return []
    last: str | None = max(best, key=lambda n: (best[n], n))
    chain = []
    while last is not None:
        chain.append(last)
        last = via[last]
    entries = []
    for op in reversed(chain):
        start, dur, kind, row = times.get(op, (0, 0, "cpu", None))
        entries.append(PathEntry(graph.nodes[op].get("name", op), kind, start, dur, row, op))
    # (an op of no time, which the path drops, does not keep the timed ones out of order)
    if all(e.row is not None or e.start_ns or not e.dur_ns for e in entries):
        entries.sort(key=lambda e: e.start_ns)
    return _with_other_work(_in_time_order(entries), times.values())


def _with_other_work(path: list[PathEntry],
                     times: Iterable[tuple[int, int, Kind, int | None]]) -> list[PathEntry]:
    """``path`` with the time between its links in which other ops ran as ``other`` entries;
    the rest of a gap (no op ran) stays a gap: idle.

    >>> path = [PathEntry("a", "kernel", 0, 10), PathEntry("c", "kernel", 30, 5)]
    >>> [(e.kind, e.start_ns, e.dur_ns) for e in _with_other_work(path, [(12, 6, "kernel", None)])]
    [('kernel', 0, 10), ('other', 12, 6), ('kernel', 30, 5)]
    """
    busy: list[tuple[int, int]] = []   # when any op ran: sorted, disjoint
    for start, end in sorted((start, start + dur) for start, dur, _k, _r in times if dur > 0):
        if busy and start <= busy[-1][1]:
            busy[-1] = (busy[-1][0], max(busy[-1][1], end))
        else:
            busy.append((start, end))
    ends = [end for _start, end in busy]
    out: list[PathEntry] = []
    for previous, entry in zip([None, *path], path, strict=False):
        if previous is not None and entry.start_ns > previous.end_ns:
            index = bisect_right(ends, previous.end_ns)
            while index < len(busy) and busy[index][0] < entry.start_ns:
                start = max(busy[index][0], previous.end_ns)
                end = min(busy[index][1], entry.start_ns)
                out.append(PathEntry("other work", "other", start, end - start))
                index += 1
        out.append(entry)
    return out


# -- both -------------------------------------------------------------------------------------


def critical_path(trace: Trace, mode: str = "auto") -> CriticalPath:
    """The critical path of ``trace`` (``mode``: auto, graph or timeline).

    ``auto`` uses the op graph when ops feed each other through tensors, else the timeline.

    >>> from traceconv.model import ProcessKind
    >>> t = Trace(); h = t.add_process("host"); g = t.add_process("GPU", kind=ProcessKind.DEVICE)
    >>> main = t.add_track("main", process=h); s = t.add_track("stream", process=g)
    >>> op = t.add_slice(main, 0, 50, "aten::mm", "cpu_op")
    >>> launch = t.add_slice(main, 40, 10, "cudaLaunchKernel", "cuda_runtime")
    >>> kernel = t.add_slice(s, 60, 100, "gemm", "kernel"); _ = t.add_flow(launch, kernel)
    >>> cp = critical_path(t)
    >>> [(e.name, e.kind, e.start_ns, e.dur_ns) for e in cp.path], cp.length_ns, cp.breakdown
    ([('aten::mm', 'cpu', 0, 40), ('cudaLaunchKernel', 'cpu', 40, 10), ('gemm', 'kernel', 60, 100)], 160, {'cpu': 50, 'kernel': 100, 'memcpy': 0, 'communication': 0, 'wait': 0, 'untraced': 0, 'other': 0, 'idle': 10})
    """
    if mode not in ("auto", "graph", "timeline"):
        raise ValueError(f"unknown critical-path mode {mode!r} (auto, graph, timeline)")
    use_graph = mode == "graph" or (mode == "auto" and has_dependency_graph(trace))
    path = graph_path(trace) if use_graph else timeline_path(trace)
    bounds = trace.time_range
    result = CriticalPath("graph" if use_graph else "timeline", path, work_span_ns(trace),
                          bounds[0] if bounds else 0,
                          not_timed=int(not_ended(trace).sum()))
    result.breakdown = breakdown(path)
    return result


def breakdown(path: list[PathEntry]) -> dict[str, int]:
    """Time per kind along ``path`` (time order); the gaps between entries are idle."""
    totals: dict[str, int] = dict.fromkeys(KINDS, 0)
    for previous, entry in zip([None, *path], path, strict=False):
        totals[entry.kind] += entry.dur_ns
        if previous is not None:
            totals["idle"] += entry.start_ns - previous.end_ns
    return totals


def work_span_ns(trace: Trace) -> int:
    """From the first slice's start to the last slice's end, over slices of work: instants,
    counters, the profiler's own window, rows of statistics tables and ranges (device
    annotations, async spans) do not count.

    >>> t = Trace(); a = t.add_track("main", process=t.add_process("p"))
    >>> _ = t.add_slice(a, 10, 5, "op", "cpu_op"); _ = t.add_instant(a, 100, "mark")
    >>> work_span_ns(t), t.span_ns
    (5, 90)
    """
    bounds = work_bounds(trace)
    return bounds[1] - bounds[0] if bounds else 0


def work_bounds(trace: Trace) -> tuple[int, int] | None:
    """(first start, last end) of the slices of work (see :func:`work_span_ns`; a slice
    never ended in the input adds its start, not the end the builder gave it).

    >>> t = Trace(); a = t.add_track("main", process=t.add_process("p"))
    >>> _ = t.add_slice(a, 10, 5, "op"); _ = t.add_slice(a, 12, 88, "open", args={"unfinished": True})
    >>> work_bounds(t)
    (10, 15)
    """
    work = np.flatnonzero(~np.isin(primary(slice_activity(trace)), NOT_WORK))
    if not len(work):
        return None
    start = trace.slices.numpy("start")[work]
    return int(start.min()), int((start + timed_durations(trace)[work]).max())

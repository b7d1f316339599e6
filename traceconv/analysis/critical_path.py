"""The critical path of a run: the chain of work that, made shorter, makes the run shorter.

Two ways, chosen by what the trace holds:

- **timeline** (any trace with slices, as HTA's critical-path analysis does): walk back from
  the work that ends last. On a host thread the predecessor is the work just before on the
  same thread (the innermost op at each moment: parents' self time counts as theirs); a
  synchronising call waits for the device work it synchronised with; a kernel, copy or
  collective waits either for the previous work on its stream or, when the host launched it
  only after the stream was free, for its launch call. Gaps between links are idle time.
- **graph** (op graphs with data dependencies: MegEngine, MIGraphX, Paddle protobuf, ...):
  the longest chain producer op → tensor → consumer op, weighted by each op's measured time.

The result is a list of path entries in time order whose durations plus the idle gaps add up
to ``length_ns`` exactly.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Literal

import numpy as np

from ..model import Trace
from ..model.graph import OP, TENSOR, op_spans
from .activity import Activity, Timeline
from .timeline_order import timeline_order

Kind = Literal["cpu", "kernel", "memcpy", "communication", "idle"]
KINDS: tuple[Kind, ...] = ("cpu", "kernel", "memcpy", "communication", "idle")

_KIND_OF = {Activity.KERNEL: "kernel", Activity.MEMCPY: "memcpy", Activity.MEMSET: "memcpy",
            Activity.COMMUNICATION: "communication"}
# Python frames, user ranges and steps count too: the host is busy in them (their self time
# is interpreter and framework work between ops)
_HOST_WORK = np.array([Activity.HOST_OP, Activity.LAUNCH, Activity.SYNC, Activity.RUNTIME,
                       Activity.DATALOADER, Activity.COMMUNICATION, Activity.OTHER,
                       Activity.PYTHON, Activity.ANNOTATION, Activity.STEP], np.int8)
_DEVICE_WORK = np.array([Activity.KERNEL, Activity.MEMCPY, Activity.MEMSET,
                         Activity.COMMUNICATION], np.int8)


@dataclass
class PathEntry:
    """One link of the path: the part of slice ``row`` (or op ``op``) that is on it."""

    name: str
    kind: Kind
    start_ns: int
    dur_ns: int
    row: int | None = None      # slice row, for highlighting
    op: str | None = None       # op-graph node, in graph mode

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

    @property
    def length_ns(self) -> int:
        return self.path[-1].end_ns - self.path[0].start_ns if self.path else 0

    def __repr__(self) -> str:
        """Length, span and links, not every link (``path`` has them).

        >>> CriticalPath("timeline", [], 2_000_000)
        <CriticalPath timeline: 0.000 ms of a 2.000 ms trace, 0 links>
        """
        return (f"<CriticalPath {self.mode}: {self.length_ns / 1e6:,.3f} ms of a "
                f"{self.span_ns / 1e6:,.3f} ms trace, {len(self.path):,} links>")

    def as_dict(self) -> dict:
        """The ``--json`` form; ``start_ns`` counts from the trace's first event."""
        return {"mode": self.mode, "length_ns": self.length_ns, "span_ns": self.span_ns,
                "breakdown": self.breakdown,
                "path": [{"name": e.name, "kind": e.kind, "start_ns": e.start_ns - self.origin_ns,
                          "dur_ns": e.dur_ns} for e in self.path]}


# -- timeline ---------------------------------------------------------------------------------


class _HostSegments:
    """Each host thread cut into pieces where one innermost slice runs (its self time)."""

    def __init__(self, tl: Timeline) -> None:
        rows = np.flatnonzero(np.isin(tl.activity, _HOST_WORK) & ~tl.on_device)
        rows = rows[timeline_order(tl.track[rows], tl.start[rows], -tl.dur[rows])]
        starts, ends, owners, tracks = [], [], [], []
        for track in np.unique(tl.track[rows]).tolist():
            mine = rows[tl.track[rows] == track]
            s, e, r = _flatten(tl.start[mine].tolist(), tl.end[mine].tolist(), mine.tolist())
            starts += s
            ends += e
            owners += r
            tracks += [track] * len(s)
        self.start = np.asarray(starts, np.int64)
        self.end = np.asarray(ends, np.int64)
        self.row = np.asarray(owners, np.int64)
        self.track = np.asarray(tracks, np.int64)
        # segments are grouped by track and sorted by time inside each group
        self.bounds = {t: (int(np.searchsorted(self.track, t, "left")),
                           int(np.searchsorted(self.track, t, "right")))
                       for t in np.unique(self.track).tolist()}
        self.last_of_row: dict[int, int] = {}
        for i, row in enumerate(owners):
            self.last_of_row[row] = i

    def before(self, track: int, ts: int) -> int | None:
        """The segment of ``track`` that ends last at or before ``ts``."""
        lo, hi = self.bounds.get(track, (0, 0))
        i = int(np.searchsorted(self.end[lo:hi], ts, "right")) - 1
        return lo + i if i >= 0 else None


def _flatten(starts: list[int], ends: list[int], rows: list[int]
             ) -> tuple[list[int], list[int], list[int]]:
    """Pieces of one thread's nested slices (sorted by start, longest first) where the
    innermost slice is the same; a child sticking out of its parent is cut at the parent's end.

    >>> _flatten([0, 2], [10, 5], [7, 8])
    ([0, 2, 5], [2, 5, 10], [7, 8, 7])
    """
    out_s: list[int] = []
    out_e: list[int] = []
    out_r: list[int] = []
    stack: list[tuple[int, int]] = []   # (end, row)
    cursor = 0

    def emit(until: int, row: int) -> None:
        if until > cursor:
            out_s.append(cursor)
            out_e.append(until)
            out_r.append(row)

    for start, end, row in zip(starts, ends, rows, strict=True):
        while stack and stack[-1][0] <= start:
            top_end, top_row = stack.pop()
            emit(top_end, top_row)
            cursor = max(cursor, top_end)
        if stack:
            emit(start, stack[-1][1])
            end = min(end, stack[-1][0])
        cursor = max(cursor, start)
        stack.append((end, row))
    while stack:
        top_end, top_row = stack.pop()
        emit(top_end, top_row)
        cursor = max(cursor, top_end)
    return out_s, out_e, out_r


class _Streams:
    """Device work per track (stream), sorted by end, to find what ran before on a stream."""

    def __init__(self, tl: Timeline) -> None:
        rows = np.flatnonzero(np.isin(tl.activity, _DEVICE_WORK) & tl.on_device)
        self.rows = rows[np.lexsort((tl.end[rows], tl.track[rows]))]
        self.track = tl.track[self.rows]
        self.end = tl.end[self.rows]
        self.by_end = self.rows[np.argsort(tl.end[self.rows], kind="stable")]
        self.all_ends = tl.end[self.by_end]

    def before(self, track: int, ts: int) -> int | None:
        lo = int(np.searchsorted(self.track, track, "left"))
        hi = int(np.searchsorted(self.track, track, "right"))
        i = int(np.searchsorted(self.end[lo:hi], ts, "right")) - 1
        return int(self.rows[lo + i]) if i >= 0 else None

    def last_ending_within(self, lo: int, hi: int) -> int | None:
        """The device work on any stream that ends last in (lo, hi]."""
        i = int(np.searchsorted(self.all_ends, hi, "right")) - 1
        return int(self.by_end[i]) if i >= 0 and self.all_ends[i] > lo else None


def _kind(activity: int) -> Kind:
    """The path kind of an activity: host work of any sort is ``cpu``."""
    return _KIND_OF.get(Activity(activity), "cpu")  # type: ignore[return-value]


def timeline_path(trace: Trace) -> list[PathEntry]:
    """The critical path through a timeline, walking back from the work that ends last."""
    tl = Timeline(trace)
    host, streams = _HostSegments(tl), _Streams(tl)
    names = trace.strings.strings
    launched: dict[int, list[int]] = defaultdict(list)
    for work in np.flatnonzero(tl.launch_of >= 0).tolist():
        launched[int(tl.launch_of[work])].append(work)
    # the start: whatever ends last, host segment or device work
    last_host = int(np.argmax(host.end)) if len(host.end) else None
    last_device = int(streams.by_end[-1]) if len(streams.by_end) else None
    if last_host is None and last_device is None:
        return []
    current: tuple[str, int]
    if last_device is not None and (last_host is None
                                    or tl.end[last_device] >= host.end[last_host]):
        current = ("device", last_device)
    else:
        current = ("host", last_host)  # type: ignore[assignment]
    reversed_path: list[PathEntry] = []
    seen: set[tuple[str, int]] = set()
    while current not in seen:
        seen.add(current)
        where, index = current
        if where == "host":
            row = int(host.row[index])
            start, end = int(host.start[index]), int(host.end[index])
            reversed_path.append(PathEntry(names[tl.name[row]], _kind(tl.activity[row]),
                                           start, end - start, row))
            waited = None
            if tl.activity[row] == Activity.SYNC:
                waited = streams.last_ending_within(start, end)
            elif row in launched:   # a copy call that returns only when its copy is done
                done = [w for w in launched[row] if start < tl.end[w] <= end]
                waited = max(done, key=lambda w: tl.end[w]) if done else None
            if waited is not None:
                current = ("device", waited)
                continue
            previous = host.before(int(host.track[index]), start)
            if previous is None:
                break
            current = ("host", previous)
            continue
        row = index
        reversed_path.append(PathEntry(names[tl.name[row]], _kind(tl.activity[row]),
                                       int(tl.start[row]), int(tl.dur[row]), row))
        on_stream = streams.before(int(tl.track[row]), int(tl.start[row]))
        launch = int(tl.launch_of[row])
        launched_late = launch >= 0 and launch in host.last_of_row and (
            on_stream is None or tl.start[launch] >= tl.end[on_stream])
        if launched_late:
            current = ("host", host.last_of_row[launch])
        elif on_stream is not None:
            current = ("device", on_stream)
        else:
            break
    return _in_time_order(reversed_path[::-1])


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
    else its recorded device/host spans (the model's op attribute contract)."""
    times: dict[str, tuple[int, int, Kind, int | None]] = {}
    for node, data in trace.graph.nodes(data=True):
        if data.get("kind") != OP:
            continue
        rows = [r for r in data.get("slices") or () if 0 <= r < len(tl.start)]
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
    """The longest producer → consumer chain of the op graph, by measured op time."""
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
    if all(e.row is not None or e.start_ns for e in entries):
        entries.sort(key=lambda e: e.start_ns)
    return _in_time_order(entries)


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
    ([('aten::mm', 'cpu', 0, 40), ('cudaLaunchKernel', 'cpu', 40, 10), ('gemm', 'kernel', 60, 100)], 160, {'cpu': 50, 'kernel': 100, 'memcpy': 0, 'communication': 0, 'idle': 10})
    """
    if mode not in ("auto", "graph", "timeline"):
        raise ValueError(f"unknown critical-path mode {mode!r} (auto, graph, timeline)")
    use_graph = mode == "graph" or (mode == "auto" and has_dependency_graph(trace))
    path = graph_path(trace) if use_graph else timeline_path(trace)
    bounds = trace.time_range
    result = CriticalPath("graph" if use_graph else "timeline", path, trace.span_ns,
                          bounds[0] if bounds else 0)
    breakdown: dict[str, int] = dict.fromkeys(KINDS, 0)
    for previous, entry in zip([None, *path], path, strict=False):
        breakdown[entry.kind] += entry.dur_ns
        if previous is not None:
            breakdown["idle"] += entry.start_ns - previous.end_ns
    result.breakdown = breakdown
    return result

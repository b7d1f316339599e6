"""Per-operator summary of any trace, with the semantics of MegEngine's ``profile_analyze``.

The engine works on :class:`OpRecord` rows (one per operator) that come from, in order of
preference:

1. op-graph nodes carrying ``device_spans`` / ``host_spans`` (``{place: OpSpan}`` in int
   ns, the contract of :mod:`traceconv.model.graph`): the op's time is the max over places
   of ``end - start`` (or ``kernel - start`` for the waiting time). MegEngine op nodes
   also keep the source's float seconds (``source_seconds``): those are summed instead,
   so that every digit ``profile_analyze`` prints is reproduced;
2. slices: one record per row of :func:`~traceconv.analysis.op_summary.op_summary` (slice
   name and kind), time = summed host self time, or device self time for device work;
3. ``trace.stats`` (stats-only traces such as Paddle or MIGraphX summaries).

:func:`summarize` then filters, aggregates, sorts and cuts exactly like ``profile_analyze``:
the totals are the unfiltered sums (``numpy.sum``) of per-op times, ties keep operator
order, missing values (``N/A``) are ``None`` and sort last, a zero time gives ``inf``/``nan``
FLOPS and bandwidth. Where ``profile_analyze`` crashes (aggregating ``max``/``min`` or
sorting by a column with N/A, ``--input-dtype`` on unplanned vars) this gives the evident
answer instead: N/A values are ignored or sorted last.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np

from ..model import OpStat, Trace
from ..model.breakdown import only_breakdown, self_time
from ..model.entities import KERNEL_SECTION, TIME_IS, TOTALS_OF, summed_calls
from ..model.graph import OP, op_spans
from ..model.partial_timeline import timeline_is_partial
from .op_summary import RANGE_KINDS, OpRow, op_summary, waiting_ns, work_rows

Place = Literal["device", "host"]
EndKey = Literal["end", "kern"]
AGGREGATES = ("sum", "mean", "max", "min")
SORT_COLUMNS = ("time", "memory", "computation", "flops", "bandwidth", "opr_id", "count",
                "calls")


@dataclass(slots=True)
class OpRecord:
    """One operator's measured numbers; times in seconds keyed by (place, end key)."""

    name: str
    type: str = ""
    id: str | None = None
    times: dict[tuple[str, str], float] = field(default_factory=dict)
    computation: int | None = None
    memory: int | None = None
    in_shapes: list[list[int]] | None = None
    out_shapes: list[list[int]] | None = None
    in_layouts: list[list[int] | None] | None = None
    input_dtypes: tuple[str, ...] = ()
    calls: int | None = None   # a statistics row's calls (a graph's op runs once)


@dataclass(slots=True)
class Row:
    """One printed row: an operator, or an aggregate of ``count`` operators."""

    time: float
    name: str
    type: str
    id: str | None
    count: int
    computation: float | None
    memory: float | None
    in_shapes: list[list[int]] | None = None
    out_shapes: list[list[int]] | None = None
    in_layouts: list[list[int] | None] | None = None
    cumulative: float = 0.0
    calls: int | None = None

    @property
    def flops(self) -> float | None:
        return _ratio(self.computation, self.time)

    @property
    def bandwidth(self) -> float | None:
        return _ratio(self.memory, self.time)

    @property
    def opr_id(self) -> int | None:
        return int(self.id) if self.id is not None and self.id.isdecimal() else None


@dataclass(frozen=True, slots=True)
class SummaryOptions:
    """The knobs of ``profile_analyze`` (same names, same defaults)."""

    top: int = 3
    types: tuple[str, ...] = ()
    aggregate_by: Literal["type"] | None = None
    aggregate: Literal["sum", "mean", "max", "min"] | None = None
    opr_name: str | None = None
    input_dtype: str | None = None
    order_by: str = "time"
    min_time: float = -math.inf
    max_time: float = math.inf
    top_end_key: EndKey = "end"


@dataclass(slots=True)
class Summary:
    """Totals (seconds, None when the trace has no such times) and the selected rows."""

    total_device_time: float | None
    total_host_time: float | None
    device_rows: list[Row]
    host_rows: list[Row]
    # time that is no work, in no row and no total (statistics rows so marked, a timeline's
    # threads blocked in calls): what it is (model.entities.NOT_WORK_TIMES) -> (rows, seconds)
    not_work: dict[str, tuple[int, float]] = field(default_factory=dict)
    # those statistics rows themselves (host time, each row's type saying what its time is),
    # selected as the host rows are: shown when no row of work is (an nvtx_sum alone)
    not_work_rows: list[Row] = field(default_factory=list)

    def total(self, place: Place) -> float | None:
        return self.total_device_time if place == "device" else self.total_host_time

    @property
    def host_only(self) -> bool:
        """No device time: the host rows are what there is to show (text and JSON alike)."""
        return not self.total_device_time

    def rows(self, place: Place) -> list[Row]:
        return self.device_rows if place == "device" else self.host_rows

    def shown_rows(self, place: Place) -> list[Row]:
        """The rows a table of ``place`` shows: its rows, else for the host the rows whose
        time is no work (an ``nvtx_sum`` alone: its ranges, not nothing)."""
        return self.rows(place) or (self.not_work_rows if place == "host" else [])


def _ratio(amount: float | None, seconds: float) -> float | None:
    """``amount / seconds`` with numpy's float semantics (x/0 = inf, 0/0 = nan); N/A stays."""
    if amount is None:
        return None
    if seconds == 0:
        return math.nan if amount == 0 else math.copysign(math.inf, amount)
    return amount / seconds


# -- records ----------------------------------------------------------------------------------


def op_records(trace: Trace) -> list[OpRecord]:
    """The per-operator records of ``trace`` (graph timings, else slices, else stats).

    >>> from traceconv.model import Trace, ProcessKind
    >>> t = Trace(); gpu = t.add_process("gpu", kind=ProcessKind.DEVICE)
    >>> s = t.add_track("stream 7", process=gpu)
    >>> _ = t.add_slice(s, 0, 3_000, "gemm"); _ = t.add_slice(s, 5_000, 1_000, "gemm")
    >>> [(r.name, r.times[("device", "end")]) for r in op_records(t)]
    [('gemm', 4e-06)]
    """
    return _records_and_not_work(trace)[0]


def _records_and_not_work(trace: Trace) -> tuple[list[OpRecord], dict[str, tuple[int, float]]]:
    """:func:`op_records` and the time no record counts (:attr:`Summary.not_work`): a
    statistics table's rows of no work, a timeline's threads blocked in calls."""
    if timeline_is_partial(trace):
        return _stat_records(trace), not_work_time(trace)
    records = _graph_records(trace)
    if records:
        return records, not_work_time(trace)
    if len(trace.slices) and not only_breakdown(trace):
        rows = op_summary(trace)
        waits, waited = waiting_ns(rows)
        return _slice_records(rows), {"waiting": (waits, waited / 1e9)} if waits else {}
    return _stat_records(trace), not_work_time(trace)


def view_of(trace: Trace) -> Literal["graph", "timeline", "stats"]:
    """Which numbers ``summary`` shows: an op graph's timings (MegEngine's profile_analyze),
    a timeline's per-op totals (torch.profiler's key_averages), or a stats table (also
    when the table measures a run whose timeline is partial: :mod:`traceconv.model.partial_timeline`).

    >>> from traceconv.model import Trace
    >>> t = Trace(); _ = t.add_slice(t.add_track("main", process=t.add_process("p")), 0, 5, "op")
    >>> view_of(t), view_of(Trace())
    ('timeline', 'stats')
    """
    if timeline_is_partial(trace):
        return "stats"
    if _graph_records(trace):
        return "graph"
    if len(trace.slices) and not only_breakdown(trace):
        return "timeline"
    return "stats"


def _graph_records(trace: Trace) -> list[OpRecord]:
    graph = trace.graph
    records = []
    for node, data in graph.nodes(data=True):
        if data.get("kind") != OP or not ("device_spans" in data or "host_spans" in data):
            continue
        times: dict[tuple[str, str], float] = {}
        for place in ("device", "host"):
            seconds = list((data.get("source_seconds") or {}).get(place, {}).values())
            spans = list(op_spans(data, place).values())
            # (an end before the start is a zero-length run, as the builder makes its
            # slice; a kernel time before the start says no kernel ran, MegEngine's -1: no
            # waiting time then. Never a negative time.)
            if seconds:
                times[(place, "end")] = max(0.0, *(end - start for start, _k, end in seconds))
                waited = [kern - start for start, kern, _end in seconds if kern >= start]
                if waited:
                    times[(place, "kern")] = max(waited)
            elif spans:
                times[(place, "end")] = max(s.dur_ns for s in spans) / 1e9
                waits = [s.kernel_ns - s.start_ns for s in spans
                         if s.kernel_ns is not None and s.kernel_ns >= s.start_ns]
                if waits:
                    times[(place, "kern")] = max(waits) / 1e9
        dtypes = tuple(graph.nodes[src].get("dtype") or "" for src in graph.predecessors(node))
        records.append(OpRecord(
            data.get("name", node), data.get("type", ""), node.split("/", 1)[-1], times,
            data.get("computation"), data.get("memory"), data.get("in_shapes"),
            data.get("out_shapes"), data.get("in_layouts"), dtypes))
    return records


def _slice_records(rows: list[OpRow]) -> list[OpRecord]:
    """One record per (name, kind) row of :func:`~traceconv.analysis.op_summary.op_summary`:
    host self time for host rows, device self time for device work (never for ranges);
    threads blocked in calls are no work (:func:`~.op_summary.work_rows`)."""
    records = []
    for row in work_rows(rows):
        if row.self_host_ns is not None:
            records.append(OpRecord(row.name, row.kind,
                                    times={("host", "end"): row.self_host_ns / 1e9}))
        elif row.kind not in RANGE_KINDS and row.self_device_ns is not None:
            records.append(OpRecord(row.name, row.kind,
                                    times={("device", "end"): row.self_device_ns / 1e9}))
    return records


def _stat_records(trace: Trace) -> list[OpRecord]:
    """One record per row of the first section of each input's statistics (a stats reader
    lists its per-operator table first; overheads, memory tables or a recomputed copy would
    count the same time twice; inputs given together, such as rocprof's or ``nsys stats``'
    kernel and API tables of one run, each count; rows that add up others, such as
    rocprofv3's per-domain totals, only without them; rows whose time is no work, such as
    an OS runtime summary's waits, never: :func:`not_work_time`; a table of rows with no
    time at all, such as utilisation or bytes, leads none), with self times: nested rows'
    times are taken out of their parent's (:func:`~traceconv.model.breakdown.self_time`).
    Where an input also has per-kernel statistics (:data:`KERNEL_SECTION`), its device
    time is by kernel, from them, as a timeline's is: the operator rows keep host time.

    >>> from traceconv.model import OpStat
    >>> t = Trace()
    >>> for name, section, source in (("k", "kernel", "a"), ("k", "again", "a"),
    ...                               ("hipMemcpy", "hip_api", "b")):
    ...     _ = t.add_stat(OpStat(name, total_ns=5, section=section, extra={"input": source}))
    >>> [r.name for r in _stat_records(t)]
    ['k', 'hipMemcpy']
    >>> t = Trace()
    >>> _ = t.add_stat(OpStat("GPU0", section="device", extra={TIME_IS: "none"}))
    >>> _ = t.add_stat(OpStat("matmul", cpu_ns=9, device_ns=7, section="operator"))
    >>> _ = t.add_stat(OpStat("gemm", device_ns=7, section="kernel"))
    >>> [(r.name, r.times) for r in _stat_records(t)]
    [('matmul', {('host', 'end'): 9e-09}), ('gemm', {('device', 'end'): 7e-09})]
    """
    if not trace.stats:
        return []
    first: dict[object, str] = {}
    by_kernel: set[object] = set()
    for stat in trace.stats:   # (merged inputs carry their label; one input has none)
        if stat.extra.get(TIME_IS) != "none":
            first.setdefault(stat.extra.get("input"), stat.section)
            if stat.section == KERNEL_SECTION:
                by_kernel.add(stat.extra.get("input"))
    rows = [i for i, stat in enumerate(trace.stats) if TIME_IS not in stat.extra and (
        stat.section == first.get(stat.extra.get("input"))
        or (stat.section == KERNEL_SECTION and stat.extra.get("input") in by_kernel))]
    if any(TOTALS_OF not in trace.stats[i].extra for i in rows):   # totals beside their rows
        rows = [i for i in rows if TOTALS_OF not in trace.stats[i].extra]
    nested_cpu: dict[int, int] = defaultdict(int)
    nested_device: dict[int, int] = defaultdict(int)
    for i in rows:
        stat = trace.stats[i]
        if stat.parent is not None:
            nested_cpu[stat.parent] += stat.cpu_ns or 0
            nested_device[stat.parent] += _device_ns(stat) or 0
    records = []
    for i in rows:
        stat = trace.stats[i]
        source = stat.extra.get("input")
        times = {}
        device = _device_ns(stat)
        kernels_elsewhere = source in by_kernel and stat.section != KERNEL_SECTION
        if device is not None and not kernels_elsewhere:
            own = self_time(stat, device, nested_device[i])
            if own is not None:
                times[("device", "end")] = own / 1e9
        if stat.cpu_ns is not None and (own := self_time(stat, stat.cpu_ns,
                                                         nested_cpu[i])) is not None:
            times[("host", "end")] = own / 1e9
        records.append(OpRecord(stat.name, stat.type or stat.section, None, times,
                                calls=stat.calls))
    return records


def not_work_time(trace: Trace) -> dict[str, tuple[int, float]]:
    """The statistics rows whose time is no work (``extra[TIME_IS]``: threads waiting,
    ranges around other rows), which no summary row or total counts: per what their time
    is, the rows and their summed time in seconds (rows of no time left out).

    >>> from traceconv.model import OpStat
    >>> t = Trace()
    >>> _ = t.add_stat(OpStat("futex", total_ns=7 * 10**9, extra={TIME_IS: "waiting"}))
    >>> _ = t.add_stat(OpStat("cudaMalloc", total_ns=10**9, cpu_ns=10**9))
    >>> not_work_time(t)
    {'waiting': (1, 7.0)}
    """
    found: dict[str, tuple[int, float]] = {}
    for stat in trace.stats:
        what = stat.extra.get(TIME_IS)
        if what is not None and what != "none":
            rows, seconds = found.get(what, (0, 0.0))
            found[what] = (rows + 1, seconds + stat.total_ns / 1e9)
    return found


def _not_work_records(trace: Trace) -> list[OpRecord]:
    """One record per statistics row whose time is no work (:func:`not_work_time`), its
    total as host time and what that time is as its type (``nvtx, enclosing``).

    >>> from traceconv.model import OpStat
    >>> t = Trace(); _ = t.add_stat(OpStat("step", calls=2, total_ns=10**9, section="nvtx",
    ...                                    extra={TIME_IS: "enclosing"}))
    >>> [(r.name, r.type, r.times) for r in _not_work_records(t)]
    [('step', 'nvtx, enclosing', {('host', 'end'): 1.0})]
    """
    return [OpRecord(stat.name, f"{stat.section}, {what}",
                     times={("host", "end"): stat.total_ns / 1e9}, calls=stat.calls)
            for stat in trace.stats
            if (what := stat.extra.get(TIME_IS)) is not None and what != "none"]


def _device_ns(stat: OpStat) -> int | None:
    if stat.device_ns is not None:
        return stat.device_ns
    return None if stat.cpu_ns is not None else stat.self_ns or stat.total_ns


# -- selection --------------------------------------------------------------------------------


def _keep(record: OpRecord, options: SummaryOptions) -> bool:
    if options.types and record.type not in options.types:
        return False
    if options.opr_name and not re.match(options.opr_name, record.name):
        return False
    return not options.input_dtype or options.input_dtype in record.input_dtypes


def _aggregate(values: Sequence[float | None], how: str) -> float | None:
    """numpy's aggregate with profile_analyze's N/A rules (N/A ignored; mean over all)."""
    known = [v for v in values if v is not None]
    if not known:
        return None
    if how == "mean" and len(known) < len(values):
        return np.sum(known).item() / len(values)
    return getattr(np, how)(known).item()


def _group(rows: list[Row], by: str | None, how: str) -> list[Row]:
    groups: dict[str, list[Row]] = {}
    for row in rows:
        groups.setdefault(row.type if by == "type" else "all", []).append(row)
    out = []
    for key, members in groups.items():
        time = float(getattr(np, how)([m.time for m in members]))
        computation = _aggregate([m.computation for m in members], how)
        memory = _aggregate([m.memory for m in members], how)
        # profile_analyze turns a zero (or N/A) computation into N/A, but keeps memory 0.
        # (calls unknown for one member are unknown for the group: no partial sum)
        out.append(Row(time, key, key, None, len(members), computation or None, memory,
                       calls=summed_calls(m.calls for m in members)))
    return out


def _sort(rows: list[Row], order_by: str) -> list[Row]:
    ascending = order_by.startswith("+")
    column = order_by.lstrip("+-") or "time"
    if column not in SORT_COLUMNS:
        raise ValueError(f"cannot order by {column!r} (one of {', '.join(SORT_COLUMNS)})")
    known = [r for r in rows if getattr(r, column) is not None]
    missing = [r for r in rows if getattr(r, column) is None]
    known.sort(key=(lambda r: getattr(r, column)) if ascending
               else (lambda r: -getattr(r, column)))
    return known + missing


def select(records: Iterable[OpRecord], place: Place, options: SummaryOptions) -> list[Row]:
    """Rows for ``place`` after filters, time bounds, aggregation, sort and top-k."""
    rows = []
    for rec in records:
        time = rec.times.get((place, options.top_end_key))
        if time is None or not _keep(rec, options):
            continue
        if time < options.min_time or time > options.max_time:
            continue
        rows.append(Row(time, rec.name, rec.type, rec.id, 1, rec.computation or None,
                        rec.memory, rec.in_shapes, rec.out_shapes, rec.in_layouts,
                        calls=rec.calls))
    how = options.aggregate or ("sum" if options.aggregate_by else None)
    if how is not None:
        rows = _group(rows, options.aggregate_by, how)
    rows = _sort(rows, options.order_by)
    if options.top:
        rows = rows[:options.top]
    cumulative = 0.0
    for row in rows:
        cumulative += row.time
        row.cumulative = cumulative
    return rows


def total_time(records: Iterable[OpRecord], place: Place) -> float | None:
    """Unfiltered ``numpy.sum`` of the per-op ``end - start`` times (None when there are none)."""
    times = [t for r in records if (t := r.times.get((place, "end"))) is not None]
    return float(np.sum(times)) if times else None


def summarize(trace: Trace, options: SummaryOptions | None = None, **overrides) -> Summary:
    """The ``profile_analyze`` view of ``trace``: totals plus device and host rows.

    >>> from traceconv.model import Trace, ProcessKind
    >>> t = Trace(); gpu = t.add_process("gpu", kind=ProcessKind.DEVICE)
    >>> s = t.add_track("stream 7", process=gpu)
    >>> _ = t.add_slice(s, 0, 3_000, "gemm"); _ = t.add_slice(s, 3_000, 1_000, "relu")
    >>> result = summarize(t, top=1)
    >>> result.total_device_time, [(r.name, r.time) for r in result.device_rows]
    (4e-06, [('gemm', 3e-06)])
    """
    options = replace(options or SummaryOptions(), **overrides)
    records, not_work = _records_and_not_work(trace)
    return Summary(total_time(records, "device"), total_time(records, "host"),
                   select(records, "device", options), select(records, "host", options),
                   not_work, select(_not_work_records(trace), "host", options))

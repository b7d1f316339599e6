"""Turn a parsed :class:`ReportLog` into op statistics plus an aggregate breakdown."""

from __future__ import annotations

from ...model import Metadata, OpStat, Trace
from ...model.breakdown import add_aggregate_breakdown, set_self_times
from ...model.builder import TraceBuilder
from ...model.entities import CHILDREN_LEFT_OUT, RUN_LABEL
from ...numbers import located, printed_bytes, printed_ns
from .._paddle import FRAMEWORK
from ..never_timed import count_never_timed
from .nesting import THREAD_PREFIX
from .places import place_clock
from .schema import EventRow, ProfilingReport, ReportLog

MB = 1 << 20


def ms_to_ns(value: float | None) -> int | None:
    """Milliseconds as printed → integer nanoseconds by the text readers' one rule (None
    stays None; past int64 the builder moves and counts).

    >>> ms_to_ns(0.0247018), ms_to_ns(None)
    (24702, None)
    """
    return printed_ns(value, 1e6)


def report_label(report: ProfilingReport, index: int) -> str:
    view = "merged threads" if report.merged else "per thread"
    return f"Paddle report {index + 1} (window {report.group + 1}, Place: {report.place}, {view})"


def build_trace(log: ReportLog, trace: Trace | None = None) -> Trace:
    """Stats for every report of ``log`` (sections events / overhead / memcpy / memory).

    Each report's Event Summary also becomes one synthetic aggregate-breakdown process.
    """
    trace = trace or TraceBuilder(Metadata(framework=FRAMEWORK))
    meta = trace.metadata
    meta.framework = FRAMEWORK
    meta.attributes.update({
        "paddle.reports": len(log.reports),
        "paddle.windows": len({r.group for r in log.reports}),
        "paddle.places": sorted({r.place for r in log.reports if r.place}),
    })
    merged_windows = {r.group for r in log.reports if r.merged}
    # Event rows first: summaries read the first section as the per-operator table. The
    # per-thread report of a window that also has a merged one repeats the same time, so
    # its rows get a section of their own.
    for index, report in enumerate(log.reports):
        view = "merged" if report.merged else "thread"
        section = "events per thread" if view == "thread" and report.group in merged_windows \
            else "events"
        common = {"report": index, "window": report.group, "place": report.place,
                  "view": view, "sorted_by": report.sorted_by}
        rows = _add_events(trace, report, common, section)
        set_self_times(trace, rows)
        if rows:
            add_aggregate_breakdown(
                trace, rows, f"{report_label(report, index)}: aggregate breakdown (not a timeline)",
                lane_of=_thread_lane, labels=[f"{RUN_LABEL}{report.group}"])
    for index, report in enumerate(log.reports):
        common = {"report": index, "window": report.group, "place": report.place}
        _add_overhead(trace, report, common)
        _add_memcpy(trace, report, common)
    for memory in log.memory:
        for row in memory.rows:
            # (a size past int64, infinity too: the builder's to move, model.statistic_beyond_range)
            alloc, free = (printed_bytes(mb, MB) for mb in (row.alloc_mb, row.free_mb))
            trace.add_stat(OpStat(
                row.event, calls=row.alloc_calls, section="memory",
                extra={"window": memory.group, "alloc_calls": row.alloc_calls,
                       "alloc_mb": row.alloc_mb, "free_calls": row.free_calls,
                       "free_mb": row.free_mb, "alloc_bytes": alloc, "free_bytes": free}))
    return trace


def _thread_lane(stat: OpStat) -> str:
    thread = stat.extra.get("thread")
    return "all threads merged" if thread is None else f"thread{thread}"


def _add_overhead(trace: Trace, report: ProfilingReport, common: dict) -> None:
    overhead = report.overhead
    if overhead is None:
        return
    lines = overhead.lines
    with located(lines.get("total_ms")):
        total = ms_to_ns(overhead.total_ms) or 0
    extra = {**common, "parallel_executor": overhead.parallel_executor}
    if overhead.accumulated_ms is not None:
        with located(lines.get("accumulated_ms")):
            extra["accumulated_ns"] = ms_to_ns(overhead.accumulated_ms)
    parent = trace.add_stat(OpStat("Total time", total_ns=total, section="overhead",
                                   extra=extra))
    for name, field, ms, pct in (("Computation time", "computation_ms", overhead.computation_ms,
                                  overhead.computation_ratio_pct),
                                 ("Framework overhead", "framework_ms", overhead.framework_ms,
                                  overhead.framework_ratio_pct)):
        if ms is not None or pct is not None:
            with located(lines.get(field)):
                ns = ms_to_ns(ms) or 0
            trace.add_stat(OpStat(name, total_ns=ns, ratio=pct,
                                  section="overhead", parent=parent, depth=1,
                                  extra=dict(common)))


def _add_memcpy(trace: Trace, report: ProfilingReport, common: dict) -> None:
    parent: int | None = None
    for row in report.memcpy:
        nested = row.name != "GpuMemcpy" and parent is not None
        with located(row.line):
            total = ms_to_ns(row.total_ms) or 0
        index = trace.add_stat(OpStat(
            row.name, calls=row.calls, total_ns=total,
            ratio=row.ratio_pct, section="memcpy", parent=parent if nested else None,
            depth=1 if nested else 0, extra=dict(common)))
        if not nested:
            parent = index


def _add_events(trace: Trace, report: ProfilingReport, common: dict,
                section: str) -> list[int]:
    first = len(trace.stats)
    paths: list[str] = []
    for row in report.events:
        parent = None if row.parent is None else first + row.parent
        leaf = THREAD_PREFIX.sub("", row.name)
        if row.parent is not None:
            # Inner rows print "op/compute" and flat layouts the whole path: drop the part
            # the parent already names.
            parent_name = THREAD_PREFIX.sub("", report.events[row.parent].name)
            leaf = leaf.removeprefix(parent_name + "/")
        path = leaf if row.parent is None else f"{paths[row.parent]}/{leaf}"
        paths.append(path)
        if row.total_ms is None:
            count_never_timed(trace.diagnostics, "paddle_report", f"line {row.line}: {row.name}")
        with located(row.line):
            stat = _event_stat(row, report, parent, {**common, "thread": row.thread,
                                                     "path": path})
        stat.section = section
        trace.add_stat(stat)
    return list(range(first, len(trace.stats)))


def _event_stat(row: EventRow, report: ProfilingReport, parent: int | None,
                extra: dict) -> OpStat:
    total = ms_to_ns(row.total_ms)
    if report.has_cpu_gpu_columns:
        cpu, device = ms_to_ns(row.cpu_ms), ms_to_ns(row.gpu_ms)
    else:
        clock = "host" if report.place is None else place_clock(report.place, False)
        cpu = total if clock == "host" else None
        device = total if clock == "device" else None
    extra["ratio_fraction"] = row.ratio
    if row.reorder_marked:
        extra["reorder_marked"] = True
    if row.children_left_out:
        extra[CHILDREN_LEFT_OUT] = True
    return OpStat(
        row.name, calls=row.calls, total_ns=total or 0, min_ns=ms_to_ns(row.min_ms),
        max_ns=ms_to_ns(row.max_ms), avg_ns=ms_to_ns(row.ave_ms), cpu_ns=cpu,
        device_ns=device, ratio=None if row.ratio is None else round(row.ratio * 100, 9),
        section="events", parent=parent, depth=row.depth, extra=extra)

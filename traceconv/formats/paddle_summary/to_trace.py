"""Turn a parsed :class:`SummaryDocument` into op statistics and aggregate breakdowns."""

from __future__ import annotations

import math
from typing import TypedDict

from ...model import OpStat, Trace
from ...model.breakdown import add_aggregate_breakdown, set_self_times
from ...model.entities import CHILDREN_LEFT_OUT, TIME_IS
from ...numbers import located, printed_ns, printed_whole, saturated_int, to_int64
from .._paddle import FRAMEWORK
from ..never_timed import count_never_sized, count_never_timed
from .runs import runs_of
from .schema import PerfSummary, SummaryDocument, SummaryRow, SummaryTable

UNIT_NS = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}
CPU_COMPOUND = "CPU Total / Avg / Max / Min / Ratio(%)"
GPU_COMPOUND = "GPU Total / Avg / Max / Min / Ratio(%)"
# Tables whose rows nest in time and so make a meaningful aggregate breakdown.
DRAWN = ("Model Summary", "Operator Summary", "Kernel Summary", "UserDefined Summary",
         "Memory Manipulation Summary")
# The tables a summary reads first, in this order: the per-operator table (host time by
# operator), then the per-kernel one (device time by kernel, as a timeline's kernels).
LEADING = ("Operator Summary", "Kernel Summary")
# Sections whose rows hold no time: the Device Summary's utilisation percentages (also in
# metadata), the Memory Summaries' bytes. No summary counts them as work.
TIMELESS = ("device", "memory")


def number(text: str | None) -> float | None:
    """A printed cell as a number; ``-`` and anything else non-numeric is None.

    >>> number("12.71"), number("-"), number(None)
    (12.71, None, None)
    """
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


class Compound(TypedDict):
    """One ``total / avg / max / min / ratio`` cell: ns, and the ratio in %."""

    total: int | None
    avg: int | None
    max: int | None
    min: int | None
    ratio: float | None


def compound(text: str | None, scale: int) -> Compound:
    """``"101.66 / 12.71 / 15.44 / 10.18 / 100.00"`` → ns totals and the ratio in %.

    >>> compound("1.50 / 0.75 / 1.00 / 0.50 / 10.00", 1_000_000)["total"]
    1500000
    """
    parts = [number(p.strip()) for p in (text or "").split("/")]
    parts += [None] * (5 - len(parts))
    total, avg, high, low, ratio = parts[:5]
    return Compound(total=_ns(total, scale), avg=_ns(avg, scale), max=_ns(high, scale),
                    min=_ns(low, scale), ratio=ratio)


def _ns(value: float | None, scale: int) -> int | None:
    return printed_ns(value, scale)


TIME_COLUMNS = (CPU_COMPOUND, GPU_COMPOUND, "CPU Time", "GPU Time", "Total Time")


def never_timed(row: SummaryRow) -> bool:
    """Whether a time of ``row`` is printed ``nan`` (a compound cell's ratio is no time).

    >>> never_timed(SummaryRow(name="x", line=3, cells={CPU_COMPOUND: "nan / 1 / 1 / 1 / 9"}))
    True
    >>> never_timed(SummaryRow(name="x", line=3, cells={"Total Time": "1.5", "Ratio (%)": "nan"}))
    False
    """
    return any(math.isnan(value) for column in TIME_COLUMNS
               for part in (row.cells.get(column) or "").split("/")[:4]
               if (value := number(part.strip())) is not None)


# a Memory Summary row's counts and sizes (extra: their names in lower case, ``_`` for blanks)
MEMORY_COLUMNS = ("Allocation Count", "Free Count", "Allocation Size", "Free Size",
                  "Increased Size")


def never_sized(row: SummaryRow) -> bool:
    """Whether a count or size of ``row`` (its calls, a Memory Summary's) is printed ``nan``.

    >>> never_sized(SummaryRow(name="x", line=3, cells={"Free Size": "nan"}))
    True
    """
    return any(math.isnan(value) for column in ("Calls", *MEMORY_COLUMNS)
               if (value := number(row.cells.get(column))) is not None)


def section_of(title: str) -> str:
    """``Operator Summary`` → ``operator``; every ``Memory Summary - <Place>`` → ``memory``.

    >>> section_of("Memory Manipulation Summary"), section_of("Memory Summary - Place(cpu)")
    ('memory manipulation', 'memory')
    """
    if title.startswith("Memory Summary"):
        return "memory"
    return title.removesuffix(" Summary").lower()


def build_trace(doc: SummaryDocument, trace: Trace) -> Trace:
    meta = trace.metadata
    meta.framework = FRAMEWORK
    meta.attributes["paddle.summary_tables"] = [t.title for t in doc.tables]
    run_of = runs_of(doc.tables)
    # several runs: their rows and breakdowns name theirs (analysis.runs keeps them apart)
    several_runs = bool(run_of) and run_of[-1] > 1
    # summaries read the first section as the op table, and kernel rows as device time
    order = sorted(range(len(doc.tables)), key=lambda i: (
        run_of[i],
        LEADING.index(doc.tables[i].title) if doc.tables[i].title in LEADING
        else len(LEADING)))
    for number_ in order:
        table = doc.tables[number_]
        run = f"run {run_of[number_]}" if several_runs else None
        rows = _add_table(trace, table, number_, run)
        if table.title in DRAWN:
            set_self_times(trace, rows)
        if table.title in DRAWN and rows:
            add_aggregate_breakdown(
                trace, rows, f"Paddle summary: {table.title}: aggregate breakdown "
                f"(not a timeline){' ' + run if run else ''}",
                lane_of=lambda s: f"Thread: {s.extra.get('thread') or '-'}")
    steps = [s for s in trace.stats if s.section == "model" and s.parent is None
             and s.name == "ProfileStep"]
    if len(steps) == 1:   # the run's own totals, whatever rows a paste left out
        meta.attributes["stated_totals_ns"] = {"host": steps[0].cpu_ns,
                                               "device": steps[0].device_ns}
    for perf in doc.perf:
        _add_perf(trace, perf)
    if doc.steps:
        meta.attributes["paddle.step_info"] = [s.model_dump(exclude={"line"}) for s in doc.steps]
    return trace


def _add_table(trace: Trace, table: SummaryTable, number_: int, run: str | None) -> list[int]:
    scale = UNIT_NS.get(table.time_unit or "ms", 1_000_000)
    section = section_of(table.title)
    extra_common: dict = {"table": table.title, "table_index": number_,
                          **({"run": run} if run else {})}
    if section == "memory":
        extra_common["place"] = table.title.partition(" - ")[2] or None
        extra_common.update({k.lower().replace(" ", "_"): saturated_int(v)
                             if v.lstrip("-").isdecimal() else v
                             for k, v in table.notes.items()})
    if section == "device":
        trace.metadata.attributes["paddle.utilization_pct"] = {
            r.name: number(r.cells.get("Utilization (%)")) for r in table.rows}
    first = len(trace.stats)
    paths: list[str] = []
    for row in table.rows:
        path = row.name if row.parent is None else f"{paths[row.parent]}/{row.name}"
        paths.append(path)
        extra = {**extra_common, "thread": row.thread, "path": path}
        if section in TIMELESS:
            extra[TIME_IS] = "none"
        if row.children_left_out:
            extra[CHILDREN_LEFT_OUT] = True
        with located(row.line):
            stat = _row_stat(row, section, scale, extra)
        if never_timed(row):
            count_never_timed(trace.diagnostics, "paddle_summary", f"line {row.line}: {row.name}")
        if never_sized(row):
            count_never_sized(trace.diagnostics, "paddle_summary", f"line {row.line}: {row.name}")
        stat.parent = None if row.parent is None else first + row.parent
        stat.depth = row.depth
        trace.add_stat(stat)
    return list(range(first, len(trace.stats)))


def _row_stat(row: SummaryRow, section: str, scale: int, extra: dict) -> OpStat:
    cells = row.cells
    calls = cells.get("Calls", "")
    # (a table without a Calls column, the Device Summary's, states none: unknown, not 0)
    stat = OpStat(row.name, calls=printed_whole(calls, "Calls") if number(calls) is not None
                  else None, section=section, extra=extra)
    cpu = compound(cells[CPU_COMPOUND], scale) if CPU_COMPOUND in cells else None
    gpu = compound(cells[GPU_COMPOUND], scale) if GPU_COMPOUND in cells else None
    main = cpu or gpu
    if main is not None:
        stat.total_ns = main["total"] or 0
        stat.avg_ns, stat.max_ns, stat.min_ns = main["avg"], main["max"], main["min"]
        stat.ratio = main["ratio"]
        stat.cpu_ns = None if cpu is None else cpu["total"]
        stat.device_ns = None if gpu is None else gpu["total"]
        if cpu and gpu:
            extra.update({f"gpu_{k}_ns" if k != "ratio" else "gpu_ratio_pct": v
                          for k, v in gpu.items() if k != "total"})
    for column, field in (("CPU Time", "cpu_ns"), ("GPU Time", "device_ns"),
                          ("Total Time", None)):
        if (value := number(cells.get(column))) is not None:
            stat.total_ns = printed_ns(value, scale) or 0
            if field:
                setattr(stat, field, stat.total_ns)
            stat.ratio = number(cells.get("Ratio (%)"))
    if "FLOPs" in cells and (flops := number(cells["FLOPs"])) is not None:
        extra["flops"] = to_int64(flops, "FLOPs")
    if "Utilization (%)" in cells:
        extra["utilization_pct"] = number(cells["Utilization (%)"])
    if section == "memory":
        # (by the text readers' one rule: past int64 the builder's to move and count, nan
        # not stated, counted by the caller)
        stated = {column: printed_whole(text, column) for column in MEMORY_COLUMNS
                  if (text := cells.get(column)) is not None and number(text) is not None}
        stat.calls = stated.get("Allocation Count", 0)
        stat.type = cells.get("Type", "")
        extra.update({column.lower().replace(" ", "_"): value
                      for column, value in stated.items() if value is not None})
    return stat


def _add_perf(trace: Trace, perf: PerfSummary) -> None:
    trace.metadata.attributes.setdefault("paddle.perf_summary", []).append(
        perf.model_dump(exclude={"line"}))
    scale = UNIT_NS.get(perf.time_unit or "s", 1_000_000_000)
    for name, values in perf.metrics.items():
        if name.endswith("_cost"):
            with located(perf.line):
                ns = {k: printed_ns(v, scale) for k, v in values.items()}
            if any(math.isnan(v) for v in values.values()):
                count_never_timed(trace.diagnostics, "paddle_summary",
                                  f"line {perf.line}: {name}")
            trace.add_stat(OpStat(name, total_ns=ns.get("avg") or 0, avg_ns=ns.get("avg"),
                                  max_ns=ns.get("max"), min_ns=ns.get("min"), section="perf",
                                  extra={"reader_ratio_pct": perf.reader_ratio_pct}))
        else:
            trace.add_stat(OpStat(name, section="perf",
                                  extra={**values, "unit": perf.ips_unit}))

"""``nsys stats --format csv`` summary reports (``cuda_gpu_kern_sum``, ``cuda_api_sum``,
``cuda_gpu_mem_time_sum``, ``nvtx_sum`` and their names before 2022, ``gpukernsum``...) as
statistics: one :class:`~traceconv.model.OpStat` a row, in the section of its kind
(:func:`..nsys_stats_header.kind_of`: ``kernels``, ``api``, ``memops``, ``gpu``, ``nvtx``).

Columns are found by their header names, in either spelling (``Avg (ns)`` or ``Average``,
``Count`` or ``Operations``); a time's unit is the one its header states (``(ns)``,
``(us)``, ``(ms)``, ``(s)``), else the ``Total Time`` column's, else ns (what the reports
without units documented). Times are kept to the nearest ns; the median and the standard
deviation go to ``extra`` (``median_ns``, ``stddev_ns``) with the report's name and any
text column (``Style``, ``Category``). One output holding several reports (nsys's stdout)
gives every table, each counted as if it were a file of its own; a row whose numbers are
not numbers is counted, as is a report nsys skipped (``SKIPPED: ... does not contain ...``);
a row of another width than its header is :mod:`..csv_rows`' to leave out and count.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation

from ...model import OpStat
from ...model.builder import TraceBuilder
from ..csv_rows import CsvRows
from ..nsys_stats_header import TRACE, ColumnRows, is_prose, kind_of, report_named

_NAMES = ("Name", "Range", "Operation")
_COUNTS = ("Instances", "Num Calls", "Count", "Operations", "Calls")
_TIMES = {"Total Time": "total_ns", "Avg": "avg_ns", "Average": "avg_ns", "Min": "min_ns",
          "Minimum": "min_ns", "Max": "max_ns", "Maximum": "max_ns", "Med": "median_ns",
          "Median": "median_ns", "StdDev": "stddev_ns"}
_IN_EXTRA = ("median_ns", "stddev_ns")
_SHARES = ("Time (%)", "Time(%)")
_UNIT = re.compile(r"^(.*?)\s*\((ns|us|µs|ms|s)\)$")
_NS_PER = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_ON_DEVICE = ("kernels", "memops", "gpu")
_INT64 = 2**63 - 1


@dataclass
class Table:
    """Where one report's values are in its rows."""

    kind: str
    width: int
    name: int
    count: int | None
    share: int | None
    times: dict[str, tuple[int, int]] = field(default_factory=dict)  # field -> column, ns per
    texts: list[tuple[int, str]] = field(default_factory=list)       # other columns
    report: str | None = None
    # a report after the first of one output: its rows count as an input of their own, as
    # when each report is a file (the summary takes each input's first table)
    part: str | None = None


def table_of(header: list[str], kind: str, report: str | None = None) -> Table | None:
    """The layout of a summary report whose header is ``header`` (None: no name column).

    >>> t = table_of("Time(%),Total Time (us),Calls,Average,Name".split(","), "kernels")
    >>> t.name, t.count, t.share, t.times
    (4, 2, 0, {'total_ns': (1, 1000), 'avg_ns': (3, 1000)})
    """
    cells = [cell.strip() for cell in header]
    name = next((cells.index(c) for c in _NAMES if c in cells), None)
    if name is None:
        return None
    table = Table(kind, len(cells), name, next((cells.index(c) for c in _COUNTS if c in cells),
                                               None),
                  next((cells.index(c) for c in _SHARES if c in cells), None), report=report)
    units: dict[str, str | None] = {}
    for index, cell in enumerate(cells):
        match = _UNIT.match(cell)
        base, unit = (match.group(1), match.group(2)) if match else (cell, None)
        if base in _TIMES:
            units[_TIMES[base]] = unit
            table.times[_TIMES[base]] = (index, 0)
        elif index not in (name, table.count, table.share):
            table.texts.append((index, cell))
    default = units.get("total_ns") or "ns"
    table.times = {f: (i, _NS_PER[units[f] or default]) for f, (i, _) in table.times.items()}
    return table


def nanoseconds(text: str, ns_per: int) -> int:
    """A time as the report prints it (``22718084.6``, ``1417580893``), in whole ns (to the
    nearest, ties to even); ValueError when it is no number or past int64.

    >>> nanoseconds("22718084.6", 1), nanoseconds("0.5", 1), nanoseconds("1.25", 1000)
    (22718085, 0, 1250)
    """
    try:
        value = (Decimal(text.strip()) * ns_per).to_integral_value(ROUND_HALF_EVEN)
    except InvalidOperation:
        raise ValueError(text) from None
    if not value.is_finite() or abs(value) > _INT64:
        raise ValueError(text)
    return int(value)


def stat_of(table: Table, row: list[str]) -> OpStat:
    """The statistic of one row (ValueError when a number in it is not one).

    >>> t = table_of(["Time (%)", "Total Time (ns)", "Num Calls", "Avg (ns)", "Name"], "api")
    >>> stat_of(t, ["65.1", "1417580893", "293", "4838160.0", "cuMemcpyHtoD_v2"])
    ... # doctest: +NORMALIZE_WHITESPACE
    OpStat(name='cuMemcpyHtoD_v2', calls=293, total_ns=1417580893, self_ns=None, min_ns=None,
           max_ns=None, avg_ns=4838160, cpu_ns=1417580893, device_ns=None, ratio=65.1,
           type='api', section='api', parent=None, depth=0, extra={})
    """
    times = {f: nanoseconds(row[i], scale) for f, (i, scale) in table.times.items()}
    calls = int(row[table.count]) if table.count is not None else 0
    if not 0 <= calls <= _INT64:
        raise ValueError(row[table.count])   # type: ignore[index]
    share = float(row[table.share]) if table.share is not None else None
    extra: dict[str, object] = {f: times.pop(f) for f in _IN_EXTRA if f in times}
    extra |= {column: row[i] for i, column in table.texts}
    if table.report:
        extra["report"] = table.report
    if table.part:
        extra["input"] = table.part
    total = times.pop("total_ns", 0)
    where = "device_ns" if table.kind in _ON_DEVICE else "cpu_ns"
    return OpStat(row[table.name], calls=calls, total_ns=total, ratio=share, type=table.kind,
                  section=table.kind, extra=extra, **times, **{where: total})


def read_tables(trace: TraceBuilder, first: Table, rows: ColumnRows | CsvRows) -> list[str]:
    """Every row of the report that starts with ``first``'s header and of the reports that
    follow it in ``rows`` (each table's width set on ``rows``: a row of another width is
    theirs to leave out); returns the reports' names (or kinds) in order.

    >>> trace = TraceBuilder()
    >>> first = table_of(["Time (%)", "Total Time (ns)", "Instances", "Name"], "kernels")
    >>> read_tables(trace, first, CsvRows(["90.0,900,3,gemm\\n", "10.0,100,1,copy\\n", "\\n",
    ...                                    "SKIPPED: r.sqlite does not contain NVTX data.\\n"], "r"))
    ['kernels']
    >>> [(s.name, s.calls, s.device_ns) for s in trace.stats], trace.diagnostics.count(
    ...     "nsys_stats.report_skipped")
    ([('gemm', 3, 900), ('copy', 1, 100)], 1)
    """
    table: Table | None = first
    reports, report = [first.report or first.kind], None
    bad = skipped = unread = 0
    examples: dict[str, str] = {}
    for row in rows:
        line = ",".join(row)
        kind = kind_of(row)
        if is_prose(line):
            table, report, rows.width = None, report_named(line) or report, None
            if line.startswith("SKIPPED:"):
                skipped += 1
                examples.setdefault("skipped", line[:120])
        elif kind is not None and kind != TRACE and (found := table_of(row, kind, report)):
            table, report, rows.width = found, None, found.width
            found.part = found.report or kind
            reports.append(found.part)
        elif table is not None:
            try:
                trace.add_stat(stat_of(table, row))
            except ValueError:
                bad += 1
                examples.setdefault("bad", line[:120])
        else:
            unread += 1
            examples.setdefault("unread", line[:120])
    trace.diagnostics.add("nsys_stats.malformed_row", count=bad, example=examples.get("bad"))
    trace.diagnostics.add("nsys_stats.report_skipped", count=skipped,
                          example=examples.get("skipped"))
    trace.diagnostics.add("nsys_stats.line_outside_table", count=unread,
                          example=examples.get("unread"))
    return reports

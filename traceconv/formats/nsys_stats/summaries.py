"""``nsys stats --format csv`` summary reports (``cuda_gpu_kern_sum``, ``cuda_api_sum``,
``cuda_gpu_mem_time_sum``, ``nvtx_sum`` and their names before 2022, ``gpukernsum``...) as
statistics: one :class:`~traceconv.model.OpStat` a row, in the section of its kind
(:func:`..nsys_stats_header.kind_of`: ``kernels``, ``api``, ``os_runtime``, ``memops``,
``gpu``, ``nvtx``, ``memory_sizes``).

Columns are found by their header names, in either spelling (``Avg (ns)`` or ``Average``,
``Count`` or ``Operations``); a time's unit is the one its header states (``(ns)``,
``(us)``, ``(ms)``, ``(s)``), else the ``Total Time`` column's, else ns (what the reports
without units documented). Times are kept to the nearest ns; the median and the standard
deviation go to ``extra`` (``median_ns``, ``stddev_ns``) with the report's name and any
text column (``Style``, ``Category``). Numbers may be grouped in threes (``444,988,647``, as
the column layout prints them). A table of sizes (``cuda_gpu_mem_size_sum``) gives its sizes
in bytes in ``extra`` (``total_bytes``...). Rows whose time is no work say so
(``extra[TIME_IS]``, by :meth:`Vocabulary.time_is <traceconv.model.activity.Vocabulary.time_is>`
of the Nsight Systems vocabulary, which the timeline reader's slices follow): an OS runtime
summary's waits (``futex``, ``poll``) are threads blocked, NVTX ranges enclose other rows'
calls, sizes are no time. One output holding several reports (nsys's stdout) gives every table, each counted as if it were a file of its own (a report printed again,
for another process, as ``osrt_sum #2``; an output pasting several runs, each run's rows
naming it in ``extra["run"]``: the report file nsys's prose names, or ``run N`` where the paste
left the names out and nsys's step numbers start again, :mod:`traceconv.analysis.runs` keeps
them apart); a row whose numbers are not numbers is counted, as
is a report nsys skipped (``SKIPPED: ... does not contain ...``); a row of another width
than its header is :mod:`..csv_rows`' to leave out and count.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation

from ...model import OpStat
from ...model.builder import TraceBuilder
from ...model.entities import TIME_IS
from ...numbers import MAX_DIGITS, printed_ns, printed_whole, ungrouped
from ...vocabularies.nsys import NSYS_VOCABULARY
from ..csv_rows import CsvRows
from ..line_patterns import UP_TO_LAST_VISIBLE
from ..never_timed import count_never_sized, count_never_timed
from ..nsys_stats_header import (
    TRACE,
    ColumnRows,
    is_prose,
    kind_of,
    kind_of_report,
    report_named,
    run_named,
    step_of,
)
from ..stated_totals import compare_total

_NAMES = ("Name", "Range", "Operation")
_COUNTS = ("Instances", "Num Calls", "Count", "Operations", "Calls")
_TIMES = {"Total Time": "total_ns", "Avg": "avg_ns", "Average": "avg_ns", "Min": "min_ns",
          "Minimum": "min_ns", "Max": "max_ns", "Maximum": "max_ns", "Med": "median_ns",
          "Median": "median_ns", "StdDev": "stddev_ns"}
_SIZES = {"Total": "total_bytes", "Avg": "avg_bytes", "Average": "avg_bytes",
          "Med": "median_bytes", "Median": "median_bytes", "Min": "min_bytes",
          "Minimum": "min_bytes", "Max": "max_bytes", "Maximum": "max_bytes",
          "StdDev": "stddev_bytes"}
_IN_EXTRA = ("median_ns", "stddev_ns")
_SHARES = ("Time (%)", "Time(%)")
_UNIT = re.compile(rf"^({UP_TO_LAST_VISIBLE})\s*\((ns|us|µs|ms|s|B|KB|KiB|MB|MiB|GB|GiB)\)$")
_NS_PER = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
# sizes: decimal MB (nsys's cuda_gpu_mem_size_sum), KiB when no unit is stated (its tables
# before 2022, "by size in KiB")
_BYTES_PER = {"B": 1, "KB": 1_000, "KiB": 1_024, "MB": 1_000_000, "MiB": 1 << 20,
              "GB": 1_000_000_000, "GiB": 1 << 30, None: 1_024}
_ON_DEVICE = ("kernels", "memops", "gpu")
# what the time of a kind's rows is, when it is no work (model.entities.NOT_WORK_TIMES); an
# OS runtime row is waiting when its call is a wait by the rule the timeline reader's slices
# follow (vocabularies.common: futex, poll...), else a call's time as the API's are
_TIME_IS = {"nvtx": "enclosing", "memory_sizes": "none"}


@dataclass
class Table:
    """Where one report's values are in its rows."""

    kind: str
    width: int
    name: int
    count: int | None
    share: int | None
    times: dict[str, tuple[int, int]] = field(default_factory=dict)  # field -> column, ns per
    sizes: dict[str, tuple[int, int]] = field(default_factory=dict)  # field -> column, bytes per
    texts: list[tuple[int, str]] = field(default_factory=list)       # other columns
    report: str | None = None
    # a report after the first of one output: its rows count as an input of their own, as
    # when each report is a file (the summary takes each input's first table)
    part: str | None = None
    section: str | None = None   # a report printed again (for another process): kind #n
    run: str | None = None       # the report file prose named before it (one run's)


def table_of(header: list[str], kind: str, report: str | None = None) -> Table | None:
    """The layout of a summary report whose header is ``header`` (None: no name column).

    >>> t = table_of("Time(%),Total Time (us),Calls,Average,Name".split(","), "kernels")
    >>> t.name, t.count, t.share, t.times
    (4, 2, 0, {'total_ns': (1, 1000), 'avg_ns': (3, 1000)})
    >>> table_of(["Total (MB)", "Count", "Avg (MB)", "Operation"], "memory_sizes").sizes
    {'total_bytes': (0, 1000000), 'avg_bytes': (2, 1000000)}
    >>> table_of(["Time (%)", "Total Time (ns)", "Num Calls", "Name"], "api", "osrtsum").kind
    'os_runtime'
    """
    cells = [cell.strip() for cell in header]
    name = next((cells.index(c) for c in _NAMES if c in cells), None)
    if name is None:
        return None
    kind = kind_of_report(kind, report)
    table = Table(kind, len(cells), name, next((cells.index(c) for c in _COUNTS if c in cells),
                                               None),
                  next((cells.index(c) for c in _SHARES if c in cells), None), report=report)
    units: dict[str, str | None] = {}
    for index, cell in enumerate(cells):
        match = _UNIT.match(cell)
        base, unit = (match.group(1), match.group(2)) if match else (cell, None)
        if kind == "memory_sizes" and base in _SIZES:
            table.sizes[_SIZES[base]] = (index, _BYTES_PER[unit])
        elif base in _TIMES:
            units[_TIMES[base]] = unit
            table.times[_TIMES[base]] = (index, 0)
        elif index not in (name, table.count, table.share):
            table.texts.append((index, cell))
    default = units.get("total_ns") or "ns"
    table.times = {f: (i, _NS_PER[units[f] or default]) for f, (i, _) in table.times.items()}
    return table


def printed(text: str, per: int) -> int | None:
    """A time or size as the report prints it (``22718084.6``, ``444,988,647``) times
    ``per`` (ns or bytes per its unit), to the nearest integer (ties to even), by the text
    readers' one rule (:func:`printed_ns`): past int64, infinity included, past every
    range, for the builder to move and count; NaN none (None: never timed, never sized);
    ValueError when it is no number.

    >>> printed("914,835.267", 10**6), printed("nan", 1), printed("1e400", 1) > 2**63
    (914835267000, None, True)
    >>> printed("22718084.6", 1), printed("0.5", 1), printed("1.25", 1000)
    (22718085, 0, 1250)
    """
    try:
        value = Decimal(ungrouped(text))
    except InvalidOperation:
        raise ValueError(text) from None
    if not value.is_finite() or value.adjusted() > MAX_DIGITS:   # (no exact digits to keep)
        return printed_ns(float(value), per)
    return printed_ns(int((value * per).to_integral_value(ROUND_HALF_EVEN)), 1)


def never_timed(table: Table, row: list[str]) -> bool:
    """Whether a time cell of ``row`` is printed ``nan`` (:func:`time_ns`'s None).

    >>> t = table_of(["Total Time (ns)", "Num Calls", "Name"], "api")
    >>> never_timed(t, ["nan", "2", "x"]), never_timed(t, ["5", "2", "x"])
    (True, False)
    """
    # (a number's digits hold no n: only a nan's or an inf's cell is read again)
    return any(printed(row[i], per) is None for i, per in table.times.values()
               if "n" in row[i].lower())


def never_sized(table: Table, row: list[str]) -> bool:
    """Whether the count or a size cell of ``row`` is printed ``nan``.

    >>> t = table_of(["Total (MB)", "Count", "Operation"], "memory_sizes")
    >>> never_sized(t, ["nan", "2", "x"]), never_sized(t, ["5", "-nan", "x"]), never_sized(t, ["5", "2", "x"])
    (True, True, False)
    """
    cells = [i for i, _ in table.sizes.values()] + ([] if table.count is None else [table.count])
    return any(printed(row[i], 1) is None for i in cells if "n" in row[i].lower())


def stat_of(table: Table, row: list[str]) -> OpStat:
    """The statistic of one row (ValueError when a number in it is not one).

    >>> t = table_of(["Time (%)", "Total Time (ns)", "Num Calls", "Avg (ns)", "Name"], "api")
    >>> stat_of(t, ["65.1", "1417580893", "293", "4838160.0", "cuMemcpyHtoD_v2"])
    ... # doctest: +NORMALIZE_WHITESPACE
    OpStat(name='cuMemcpyHtoD_v2', calls=293, total_ns=1417580893, self_ns=None, min_ns=None,
           max_ns=None, avg_ns=4838160, cpu_ns=1417580893, device_ns=None, ratio=65.1,
           type='api', section='api', parent=None, depth=0, extra={})
    """
    times = {f: printed(row[i], scale) for f, (i, scale) in table.times.items()}
    # (a count past int64 the builder's to move, below 0 its to count, as a time's)
    calls = printed_whole(ungrouped(row[table.count]), "calls") if table.count is not None \
        else 0
    share = float(ungrouped(row[table.share])) if table.share is not None else None
    extra: dict[str, object] = {f: times.pop(f) for f in _IN_EXTRA if f in times}
    extra |= {f: printed(row[i], per) for f, (i, per) in table.sizes.items()}
    extra |= {column: row[i] for i, column in table.texts}
    kind, what = NSYS_VOCABULARY.statistic(table.kind, row[table.name], table.kind in _ON_DEVICE,
                                           table.kind)
    if what := _TIME_IS.get(table.kind, what):
        extra[TIME_IS] = what
    if table.report:
        extra["report"] = table.report
    if table.part:
        extra["input"] = table.part
    total = times.pop("total_ns", 0) or 0
    where = {} if table.sizes else {"device_ns" if table.kind in _ON_DEVICE else "cpu_ns": total}
    stat = OpStat(row[table.name], calls=calls, total_ns=total, ratio=share, type=kind,
                  section=table.section or table.kind, extra=extra)
    for name, ns in (times | where).items():   # (the optional times: None when never timed)
        setattr(stat, name, ns)
    return stat


class TableShares:
    """The ``Time (%)`` cells of the rows read of one table at a time: nsys states that
    they share 100 % (printed to one decimal), compared when the table ends
    (:mod:`..stated_totals`; a table of no time at all, every share 0, states nothing, and
    one whose rows the CSV layer left out, counted there, is not compared again)."""

    def __init__(self, trace: TraceBuilder, rows: ColumnRows | CsvRows) -> None:
        self.trace, self.rows = trace, rows
        self.table: Table | None = None
        self.shares: list[str] = []
        self.left_out = getattr(rows, "left_out", None)   # (at the table's first row)

    def add(self, table: Table, row: list[str]) -> None:
        if table is not self.table:
            self.end()
            self.table, self.left_out = table, getattr(self.rows, "left_out", None)
        if table.share is not None:
            self.shares.append(ungrouped(row[table.share]))

    def end(self) -> None:
        table, shares = self.table, self.shares
        counted = getattr(self.rows, "left_out", None) != self.left_out
        if table is not None and not counted and any(float(share) for share in shares):
            where = f"{table.section or table.part or table.report or table.kind} table"
            compare_total(self.trace.diagnostics, "nsys_stats", where, 100, shares,
                          what="% of the time (Time (%))")
        self.table, self.shares = None, []


def read_tables(trace: TraceBuilder, first: Table, rows: ColumnRows | CsvRows,
                column_layout: bool = False, step: int | None = None) -> list[str]:
    """Every row of the report that starts with ``first``'s header and of the reports that
    follow it in ``rows`` (each table's width set on ``rows``: a row of another width is
    theirs to leave out); returns the reports' names (or kinds) in order. In nsys's
    ``column_layout`` the names of the rows read that nsys cut to fit (ending in …) are
    counted. ``step`` is the progress step that printed ``first`` (a step again starts the
    next run). A diagnostic's example shows a row's cells apart (``80.8 | 444,988,647 | ...``).

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
    shares = TableShares(trace, rows)
    reports, report = [first.report or first.kind], None
    # the report files named, one per run (an output may paste several); the tables before
    # the first name are the first named run's
    runs, opened = [first.run], [first]
    number = 1   # the run of the tables that follow
    printed = {(number, reports[0]): 1}   # times each report was printed in a run (osrt_sum:
    # once per process)
    bad = skipped = unread = cut = untimed = unsized = 0
    read: list[tuple[OpStat, Table]] = []   # (each row's run is known once all are read)
    examples: dict[str, str] = {}
    for row in rows:
        line = ",".join(row)
        kind = kind_of(row)
        if is_prose(line):
            shares.end()
            table, report, rows.width = None, report_named(line) or report, None
            if (named := run_named(line)) is not None:
                if runs == [None]:
                    runs = [named]
                    for earlier in opened:
                        earlier.run = named
                runs += [] if named in runs else [named]
                number = runs.index(named) + 1
            elif step is not None and (later := step_of(line)) is not None and later <= step:
                # a step again with no report file named: the next run of an output that
                # left the names out (each run's output grepped), numbered as runs are
                if runs == [None]:
                    runs = ["run 1"]
                    for earlier in opened:
                        earlier.run = runs[0]
                runs.append(f"run {len(runs) + 1}")
                number = len(runs)
            step = step_of(line) or step
            if line.startswith("SKIPPED:"):
                skipped += 1
                examples.setdefault("skipped", line[:120])
        elif kind is not None and kind != TRACE and (found := table_of(row, kind, report)):
            shares.end()
            table, report, rows.width = found, None, found.width
            label = found.report or found.kind
            printed[number, label] = times = printed.get((number, label), 0) + 1
            found.run = runs[number - 1]
            # a report printed again: a section and an input of its own; of a later run: an
            # input of its own, its section the first run's (a diff of the runs pairs them)
            again = "" if times == 1 else f" #{times}"
            found.part = label + again + ("" if number == 1 else f", run {number}")
            found.section = f"{found.kind}{again}" if again else None
            reports.append(label + again)
            opened.append(found)
        elif table is not None:
            try:
                read.append((stat_of(table, row), table))
            except (ValueError, IndexError):   # (IndexError: a row short of its columns)
                bad += 1
                examples.setdefault("bad", f"line {rows.line_num}: {' | '.join(row)}"[:120])
            else:
                cut += column_layout and row[table.name].endswith("…")
                if never_timed(table, row):
                    untimed += 1
                    examples.setdefault("untimed", f"line {rows.line_num}: {row[table.name]}")
                if never_sized(table, row):
                    unsized += 1
                    examples.setdefault("unsized", f"line {rows.line_num}: {row[table.name]}")
                shares.add(table, row)
        else:
            unread += 1
            examples.setdefault("unread", " | ".join(row)[:120])
    shares.end()
    # the rows of an output pasting several runs name theirs (analysis.runs keeps them apart)
    several_runs = len({of.run for _, of in read}) > 1
    for stat, of in read:
        trace.add_stat(replace(stat, extra={**stat.extra, "run": of.run}) if several_runs
                       else stat)
    trace.diagnostics.add("nsys_stats.malformed_row", count=bad, example=examples.get("bad"))
    trace.diagnostics.add("nsys_stats.report_skipped", count=skipped,
                          example=examples.get("skipped"))
    trace.diagnostics.add("nsys_stats.line_outside_table", count=unread,
                          example=examples.get("unread"))
    trace.diagnostics.add("nsys_stats.name_cut", count=cut)
    count_never_timed(trace.diagnostics, "nsys_stats", examples.get("untimed"), count=untimed)
    count_never_sized(trace.diagnostics, "nsys_stats", examples.get("unsized"), count=unsized)
    return reports

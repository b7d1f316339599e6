"""Line parser for Paddle's old text Profiling Report, in every layout seen since 2018.

The report is printed with ``std::setw`` cells that overflow into each other, names hold
spaces and ``/``, and pastes often collapse whitespace, so rows are never sliced by column
position: each row regex is anchored on the numeric tail and the name is what is left.
Recognised lines may appear in any order and between arbitrary log output, which makes
the older layouts (no section titles, no overhead title, flat full-path rows) fall out of
the same state machine.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

from ...model import Diagnostics
from .schema import (
    EventRow,
    MemcpyRow,
    MemoryReport,
    MemoryRow,
    OverheadSummary,
    ProfilingReport,
    ReportLog,
)

NUM = r"[-+]?(?:nan|inf|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)"
BANNER = re.compile(r"^\s*-{5,}>\s*Profiling Report\s*<-{5,}\s*$")
MEMORY_BANNER = re.compile(r"^\s*-{5,}>\s*Memory Profiling Report\s*<-{5,}\s*$")
SECTION_TITLE = re.compile(r"^\s*-{5,}\s*(?:Overhead|GpuMemCpy|Event) Summary\s*-{5,}\s*$")
MERGED_NOTE = re.compile(r"^\s*Note! This Report merge all thread info into one\.?\s*$")
PLACE = re.compile(r"^\s*Place:\s*(CPU|CUDA|All)\s*$")
TIME_UNIT = re.compile(r"^\s*Time unit:\s*(\S+)\s*$")
SORTED_BY = re.compile(r"^\s*Sorted by (.+?) in descending order")
TOTAL_TIME = re.compile(rf"^\s*Total time:\s*({NUM})\s*$")
OVERHEAD_SPLIT = re.compile(
    rf"^\s*(Computation time|Framework overhead)\s+Total:\s*({NUM})\s*Ratio:\s*({NUM})%\s*$")
PE_TIME = re.compile(rf"^\s*(Elapsed|Accumulated) time of events:\s*({NUM})\s*$")
PE_EXPLANATION = re.compile(r"^\s*The Overhead Summary divides the cost")
MEMCPY = re.compile(
    rf"^\s*(GpuMemcpy\w*)\s+Calls:\s*(\d+)\s+Total:\s*({NUM})\s*Ratio:\s*({NUM})%\s*$")
EVENT_HEADER = re.compile(r"^\s*Event\s+Calls\s+Total\b")
MEMORY_HEADER = re.compile(r"^\s*Event\s+Alloc Calls\s+Size\(MB\)\s+Free Calls")
_TAIL = rf"(?P<min>{NUM})\s+(?P<max>{NUM})\s+(?P<ave>{NUM})\s+(?P<ratio>{NUM})(?P<star>\*)?\s*$"
_CPU_GPU = rf"(?P<cpu>{NUM})\s*\((?P<cpur>{NUM})\)\s*(?P<gpu>{NUM})\s*\((?P<gpur>{NUM})\)\s*"
# Spaces separate the name from the calls, except where a name longer than its setw() cell
# touches the calls digits ("grad0/prepare_data5"): that ``touching`` form is tried only
# when the spaced one fails, and its digits are split by Ave. = Total / Calls.
ROW_FORMS = {
    (all_place, touching): re.compile(
        (r"^(?P<indent> *)(?P<name>\S.*?\D)(?P<calls>\d+)\s+" if touching else
         r"^(?P<indent> *)(?P<name>\S.*?)\s+(?P<calls>\d+)\s+")
        + rf"(?P<total>{NUM})\s+" + (_CPU_GPU if all_place else "") + _TAIL)
    for all_place in (False, True) for touching in (False, True)
}
MEMORY_ROW = re.compile(
    rf"^\s*(?P<event>\S.*?)\s+(?P<ac>\d+)\s+(?P<am>{NUM})\s+(?P<fc>\d+)\s+(?P<fm>{NUM})\s*$")
THREAD_PREFIX = re.compile(r"^thread(\d+)::")
# Rows that enclose other rows whose names do not say so (for collapsed pastes): executors,
# dygraph op wrappers, grad nodes, the backward pass.
CONTAINER_NAME = re.compile(r"(?P<executor>::|^backward$|^default-\d+$)|(?P<grad>GradNode)|"
                            r" (?P<op>dygraph|pybind_imperative_func|pybind_patch_func)$")
DEFAULT_STREAM = re.compile(r"^default-\d+$")
MEMCPY_NAME = re.compile(r"^(?:GpuMemcpy|BufferedReader:MemoryCopy|TensorCopy)")


def number(text: str) -> float | None:
    """A printed ``%g`` number, or None for ``nan``/``-nan``/``inf``.

    >>> number("9.54908e-05"), number("-nan"), number("1")
    (9.54908e-05, None, 1.0)
    """
    value = float(text)
    return value if math.isfinite(value) else None


def _container_kind(name: str) -> str | None:
    """``executor``, ``grad`` or ``op`` for rows that enclose unhinted rows, else None.

    >>> _container_kind("Executor::Run"), _container_kind("conv2d dygraph"), _container_kind("relu")
    ('executor', 'op', None)
    """
    match = CONTAINER_NAME.search(name)
    return None if match is None else match.lastgroup


def split_touching(name: str, digits: str, total: float | None,
                   ave: float | None) -> tuple[str, str]:
    """Split a name that ran into its calls digits, using Ave. = Total / Calls (%g, 6 digits).

    >>> split_touching("conv2d", "110", 1.1, 0.11)
    ('conv2d1', '10')
    >>> split_touching("grad0/prepare_data", "5", 0.014251, 0.0028502)
    ('grad0/prepare_data', '5')
    """
    if total is not None and ave:
        for cut in range(len(digits)):
            calls = int(digits[cut:])
            if calls and digits[cut] != "0" and abs(total / calls - ave) <= 5e-6 * abs(ave):
                return name + digits[:cut], digits[cut:]
    return name, digits


class _Table:
    """Rows of one Event Summary table and the stack that rebuilds their nesting."""

    def __init__(self, report: ProfilingReport, header: str) -> None:
        self.report = report
        report.has_cpu_gpu_columns = "CPU Time" in header
        # A paste with collapsed whitespace has no double spaces in the header line.
        self.collapsed = "  " not in header.strip()
        self.stack: list[int] = []          # indices of the open ancestors, outermost first
        self.indents: list[int] = []        # collapsed tables: leading spaces of each row
        self.guessed = 0

    def parse(self, line: str) -> EventRow | None:
        all_place = self.report.has_cpu_gpu_columns
        match = ROW_FORMS[all_place, False].match(line)
        touching = match is None
        if touching:
            match = ROW_FORMS[all_place, True].match(line)
        if match is None:
            return None
        g = match.groupdict()
        name, calls = g["name"], g["calls"]
        if touching:
            name, calls = split_touching(name, calls, number(g["total"]), number(g["ave"]))
        row = EventRow(
            name=name, calls=int(calls), total_ms=number(g["total"]),
            min_ms=number(g["min"]), max_ms=number(g["max"]), ave_ms=number(g["ave"]),
            ratio=number(g["ratio"]), reorder_marked=bool(g["star"]))
        if all_place:
            row.cpu_ms, row.cpu_ratio = number(g["cpu"]), number(g["cpur"])
            row.gpu_ms, row.gpu_ratio = number(g["gpu"]), number(g["gpur"])
        if self.collapsed:
            self.indents.append(len(g["indent"]))   # nested once the table is complete
        else:
            self._nest(row, len(g["indent"]) // 2)
        return row

    def _nest(self, row: EventRow, depth: int) -> None:
        rows = self.report.events
        if depth == 0 and "/" in row.name:
            # early-2020 layout: unindented rows that print the whole path
            parent = self._parent_by_path(row)
            if parent is not None:
                self._attach(row, len(rows), parent)
                return
        while self.stack and rows[self.stack[-1]].depth >= depth:
            self.stack.pop()
        self._attach(row, len(rows), self.stack[-1] if self.stack else None)

    def _parent_by_path(self, row: EventRow) -> int | None:
        """The open row that ``a/b/c`` (or ``op/compute``) names as its prefix, if any."""
        rows = self.report.events
        prefix = THREAD_PREFIX.sub("", row.name).rsplit("/", 1)[0]
        return next((index for index in reversed(self.stack)
                     if THREAD_PREFIX.sub("", rows[index].name) == prefix), None)

    def _attach(self, row: EventRow, index: int, parent: int | None) -> None:
        rows = self.report.events
        thread = THREAD_PREFIX.match(row.name)
        row.parent = parent
        row.depth = 0 if parent is None else rows[parent].depth + 1
        row.thread = (int(thread.group(1)) if thread
                      else rows[parent].thread if parent is not None else None)
        self.stack = self.stack[:row.depth] + [index]

    def finish(self) -> None:
        """Nest the rows of a collapsed table. A single leading space may survive the
        collapse and mark nested rows; when none did, rows without a ``threadN::`` prefix
        are nested in a per-thread report and top level in a merged one."""
        if not self.collapsed:
            return
        rows = self.report.events
        marked = any(self.indents)
        per_thread = bool(rows) and THREAD_PREFIX.match(rows[0].name) is not None
        for index, (row, indent) in enumerate(zip(rows, self.indents, strict=True)):
            nested = indent > 0 if marked else per_thread
            self._attach(row, index, self._parent_by_name(row, nested))

    def _parent_by_name(self, row: EventRow, indented: bool) -> int | None:
        """Nesting when indentation was collapsed: names and the row order must tell it.

        ``op/compute`` (and a flat full path ``a/b/c``) belong under the open row named by
        the prefix, ``conv2d0`` under ``conv2d``, ``Local_XGradNode`` under
        ``Global_XGradNode``; ``threadN::`` rows and unindented rows are
        top level. Any other indented row is guessed (and counted): a memcpy goes under
        the row before it, the rest under the innermost open container row (an executor,
        a dygraph op, a grad node), as the report prints them.
        """
        rows = self.report.events
        name = THREAD_PREFIX.sub("", row.name)
        if THREAD_PREFIX.match(row.name) and "/" not in row.name:
            return None
        open_names = [(index, THREAD_PREFIX.sub("", rows[index].name)) for index in self.stack]
        if "/" in name and (parent := self._parent_by_path(row)) is not None:
            return parent
        for index, open_name in reversed(open_names):
            if (name.startswith(open_name) and name[len(open_name):].isdigit()) or (
                    name.startswith("Local_") and open_name == "Global_" + name[6:]):
                return index
        if DEFAULT_STREAM.match(name):   # the standalone executor's "default-0" job
            for index, open_name in reversed(open_names):
                if open_name.endswith("StandaloneExecutor::run"):
                    return index
        if not indented or not self.stack:
            return None
        self.guessed += 1
        if MEMCPY_NAME.match(name):
            return self.stack[-1]
        # containers of one kind (grad nodes, dygraph ops) are siblings, never nested
        kind = _container_kind(name)
        return next((index for index, open_name in reversed(open_names)
                     if (open_kind := _container_kind(open_name))
                     and (kind is None or open_kind != kind)), self.stack[0])


class ReportParser:
    """Feed lines, get a :class:`ReportLog`; anything unreadable is counted in ``diagnostics``.

    >>> log = ReportParser().parse_text("Place: CPU")   # a header line outside any report
    >>> len(log.reports)
    0
    """

    def __init__(self, diagnostics: Diagnostics | None = None) -> None:
        self.diagnostics = diagnostics if diagnostics is not None else Diagnostics()
        self.log = ReportLog()
        self._report: ProfilingReport | None = None
        self._table: _Table | None = None
        self._memory: MemoryReport | None = None
        self._memory_rows = False
        self._in_explanation = False
        self._group = -1
        self._group_closed = True

    def parse_text(self, text: str) -> ReportLog:
        return self.parse_lines(text.splitlines())

    def parse_lines(self, lines: Iterable[str]) -> ReportLog:
        for number_, line in enumerate(lines, 1):
            self._line(number_, line.rstrip("\r\n"))
        self._end_table()
        return self.log

    # -- one line ---------------------------------------------------------------------------

    def _line(self, lineno: int, line: str) -> None:
        if BANNER.match(line):
            self._start_report(lineno)
        elif MEMORY_BANNER.match(line):
            self._end_table()
            self._memory = MemoryReport(line=lineno, group=max(self._group, 0))
            self.log.memory.append(self._memory)
            self._report, self._group_closed = None, True
        elif self._table is not None:
            self._table_line(lineno, line)
        elif self._memory is not None:
            self._memory_line(lineno, line)
        elif self._report is not None:
            self._header_line(lineno, line)
        elif line.strip():
            self._foreign(lineno, line)

    def _start_report(self, lineno: int) -> None:
        self._end_table()
        self._memory = None
        previous = self.log.reports[-1] if self.log.reports else None
        # The per-thread report follows the merged one of the same window.
        if self._group_closed or previous is None or not previous.merged:
            self._group += 1
        self._group_closed = False
        self._report = ProfilingReport(line=lineno, group=self._group)
        self.log.reports.append(self._report)

    def _header_line(self, lineno: int, line: str) -> None:
        report = self._report
        assert report is not None
        if not line.strip() or SECTION_TITLE.match(line):
            self._in_explanation = False
            return
        if m := MERGED_NOTE.match(line):
            report.merged = True
        elif m := PLACE.match(line):
            report.place = m.group(1)  # type: ignore[assignment]
        elif m := TIME_UNIT.match(line):
            report.time_unit = m.group(1)
        elif m := SORTED_BY.match(line):
            report.sorted_by = m.group(1)
        elif m := TOTAL_TIME.match(line):
            report.overhead = OverheadSummary(total_ms=number(m.group(1)),
                                              parallel_executor=self._in_explanation)
        elif m := OVERHEAD_SPLIT.match(line):
            self._overhead_split(m)
        elif m := PE_TIME.match(line):
            self._pe_time(m)
        elif PE_EXPLANATION.match(line):
            self._in_explanation = True
        elif m := MEMCPY.match(line):
            report.memcpy.append(MemcpyRow(name=m.group(1), calls=int(m.group(2)),
                                           total_ms=number(m.group(3)),
                                           ratio_pct=number(m.group(4))))
        elif EVENT_HEADER.match(line):
            self._table = _Table(report, line)
        elif not self._in_explanation:
            self._foreign(lineno, line)

    def _overhead_split(self, m: re.Match[str]) -> None:
        report = self._report
        assert report is not None
        if report.overhead is None:
            report.overhead = OverheadSummary(total_ms=None)
            self.diagnostics.add("paddle_report.overhead_without_total",
                                 "overhead split without a 'Total time' line",
                                 kind="repaired", example=m.group(0).strip())
        if m.group(1).startswith("Computation"):
            report.overhead.computation_ms = number(m.group(2))
            report.overhead.computation_ratio_pct = number(m.group(3))
        else:
            report.overhead.framework_ms = number(m.group(2))
            report.overhead.framework_ratio_pct = number(m.group(3))

    def _pe_time(self, m: re.Match[str]) -> None:
        report = self._report
        assert report is not None
        # The ParallelExecutor variant prints these instead of "Total time".
        self._in_explanation = False
        if report.overhead is None:
            report.overhead = OverheadSummary(total_ms=None, parallel_executor=True)
        value = number(m.group(2))
        if m.group(1) == "Elapsed":
            report.overhead.elapsed_ms = report.overhead.total_ms = value
        else:
            report.overhead.accumulated_ms = value

    def _table_line(self, lineno: int, line: str) -> None:
        table = self._table
        assert table is not None
        if not line.strip():
            if table.report.events:   # the blank line after the header is not the end
                self._end_table()
            return
        row = table.parse(line)
        if row is None:
            self.diagnostics.add("paddle_report.unreadable_row",
                                 "Event Summary line that is not a row (truncated or foreign)",
                                 kind="dropped", example=f"line {lineno}: {line.strip()}")
            return
        table.report.events.append(row)

    def _end_table(self) -> None:
        table, self._table = self._table, None
        if table is not None:
            table.finish()
        if table is not None and table.guessed:
            self.diagnostics.add(
                "paddle_report.nesting_guessed",
                "indentation collapsed: indented rows without a name hint were put under "
                "their top-level row", kind="guessed", count=table.guessed)

    def _memory_line(self, lineno: int, line: str) -> None:
        memory = self._memory
        assert memory is not None
        if not line.strip():
            if self._memory_rows:
                self._memory, self._memory_rows = None, False
            return
        if MEMORY_HEADER.match(line):
            self._memory_rows = True
            return
        if m := MEMORY_ROW.match(line):
            memory.rows.append(MemoryRow(event=m["event"], alloc_calls=int(m["ac"]),
                                         alloc_mb=number(m["am"]), free_calls=int(m["fc"]),
                                         free_mb=number(m["fm"])))
            self._memory_rows = True
        else:
            self._memory, self._memory_rows = None, False
            self._foreign(lineno, line)

    def _foreign(self, lineno: int, line: str) -> None:
        self.diagnostics.add("paddle_report.foreign_lines",
                             "lines that belong to no report (log output) were skipped",
                             kind="note", example=f"line {lineno}: {line.strip()}")

"""Line parser for Paddle's old text Profiling Report, in every layout seen since 2018,
and in whatever fragment of one a user pasted.

The report is printed with ``std::setw`` cells that overflow into each other, names hold
spaces and ``/``, and pastes often collapse whitespace, so rows are never sliced by column
position (see :mod:`..paddle_report_lines`). Every recognised line is context, not a precondition: a paste
may start at ``Total time:``, at a section title, at the table header or at the rows, and a
line that belongs earlier in a report than what was already seen (a second header, a second
``Total time``) starts the next report. Lines between reports are log output, counted.
"""

from __future__ import annotations

import re

from ...model import Diagnostics
from ..paddle_report_lines import (
    BANNER,
    MEMCPY,
    MEMORY_BANNER,
    MEMORY_HEADER,
    NUM,
    OVERHEAD_SPLIT,
    SECTION_TITLE,
    header_columns,
    headerless_columns,
    is_cut_row,
    is_memory_row,
    number,
)
from ..pasted_text import PastedLines, is_markup
from ..stated_totals import missing_end
from ..stray_lines import ForeignLines, count_input_end, count_stray, padded_whole
from .nesting import THREAD_PREFIX, EventTable
from .places import place_clock
from .schema import (
    MemcpyRow,
    MemoryReport,
    MemoryRow,
    OverheadSummary,
    ProfilingReport,
    ReportLog,
)

__all__ = ["THREAD_PREFIX", "ReportParser"]

MERGED_NOTE = re.compile(r"^\s*Note! This Report merge all thread info into one\.?\s*$")
PLACE = re.compile(r"^\s*Place:\s*(\S+(?:\s+\S+)?)\s*$")   # any spelling (places.py)
TIME_UNIT = re.compile(r"^\s*Time unit:\s*(\S+)\s*$")
SORTED_BY = re.compile(r"^\s*Sorted by (.+?) in descending order")
TOTAL_TIME = re.compile(rf"^\s*Total time:\s*({NUM})\s*$")
PE_TIME = re.compile(rf"^\s*(Elapsed|Accumulated) time of events:\s*({NUM})\s*$")
PE_EXPLANATION = re.compile(r"^\s*The Overhead Summary divides the cost")

# Where each header line sits in a printed report. A line whose place is before what the
# open report already showed (or a second one of the lines printed once) starts a new one.
_HEADER_LINES: list[tuple[int, re.Pattern[str]]] = [
    (1, MERGED_NOTE), (2, PLACE), (3, TIME_UNIT), (4, SORTED_BY), (5, SECTION_TITLE),
    (6, PE_EXPLANATION), (7, TOTAL_TIME), (8, PE_TIME), (9, OVERHEAD_SPLIT), (11, MEMCPY),
]
_TITLE_STAGE = {"Overhead": 5, "GpuMemCpy": 10, "Event": 12}
_HEADER_STAGE, _ROWS_STAGE = 13, 14
_PRINTED_ONCE = {1, 2, 3, 4, 5, 7, 10, 12, 13}
_HEADER_REST = re.compile(r"[A-Za-z()\s]*\(MB\)\s*")   # "s   Size(MB)" after a wrap
_DASHES = re.compile(r"\s*-+\s*")
_MAX_PIECES = 4       # a 180-column row wrapped at 60 columns is 3 pieces
_PIECE_WIDTH = 512    # a line longer than this is no paste's wrapped piece (each join
                      # tries the row patterns on the joined text: held long lines made a
                      # 1 MB input take 20 s)
_PIECE_START = re.compile(r"^\s*(?:-{3,}|Event\b|Place|Total|Computation|Framework|GpuMemcpy|"
                          r"Note!|Sorted|Time|Elapsed|Accumulated)")


class ReportParser:
    """Feed lines, get a :class:`ReportLog`; anything unreadable is counted in ``diagnostics``.

    >>> log = ReportParser().parse_text("Place: CPU")   # a report's header line, no banner
    >>> log.reports[0].place, log.reports[0].implicit
    ('CPU', True)
    """

    def __init__(self, diagnostics: Diagnostics | None = None) -> None:
        self.diagnostics = diagnostics if diagnostics is not None else Diagnostics()
        self._foreign_lines = ForeignLines("paddle_report")   # (the lines foreign to the report)
        self.log = ReportLog()
        self._report: ProfilingReport | None = None
        self._stage = 0                     # furthest header line seen in the open report
        self._table: EventTable | None = None
        self._memory: MemoryReport | None = None
        self._memory_header = False
        self._in_explanation = False
        self._ruled = False                 # the last line was a banner or a section title
        self._titled = False                # no row since the last title or header line
        self._whole_line = 0                # the last line read as a whole row
        self._memory_width = 0              # the width of the memory report's header
        self._group = -1
        self._group_closed = True
        self._lines = PastedLines("")
        self._last_row_line = 0             # the last line of the last Event Summary row
        self._joined_to = 0                 # the last line of the pieces being read as one
        self._overhead_groups: set[int] = set()   # the groups with an Overhead Summary title

    def parse_text(self, text: str) -> ReportLog:
        return self.parse_lines(PastedLines(text))

    def parse_lines(self, lines: PastedLines) -> ReportLog:
        held: list[tuple[int, str]] = []   # pieces of a line a paste may have hard-wrapped
        self._lines = lines   # (its cut_line: the line the input stopped inside, if any)
        lineno = last_text = 0
        for lineno, line in enumerate(lines, 1):
            last_text = lineno if line.strip() else last_text
            if held and self._rejoin(held, line, lineno):
                held = []
                continue
            if line.strip() and not self._understood(line) and self._may_be_piece(line):
                if len(held) == _MAX_PIECES:
                    self._line(*held.pop(0))
                held.append((lineno, line))
                continue
            for piece in held:
                self._line(*piece)
            held = []
            self._line(lineno, line)
        for piece in held:
            self._line(*piece)
        if not self._count_end(lines) and self._last_row_line == last_text:
            self._count_missing_memory_report()
        self._end_table()
        self._foreign_lines.count_in(self.diagnostics)
        return self.log

    # -- hard-wrapped lines -----------------------------------------------------------------

    def _rejoin(self, held: list[tuple[int, str]], line: str, lineno: int) -> bool:
        """Join the held pieces (a suffix of them) and ``line`` (at ``lineno``) when
        together they make a line the report prints; the pieces before the joined ones are
        read alone."""
        if not line.strip() or len(line) > _PIECE_WIDTH or self._understood(line):
            return False   # a line of its own
        for start in range(len(held)):
            pieces = [text for _, text in held[start:]] + [line]
            for joined in ("".join(pieces), " ".join(p.strip() for p in pieces)):
                if self._understood(joined):
                    for piece in held[:start]:
                        self._line(*piece)
                    self.diagnostics.add("paddle_report.wrapped_line", count=len(pieces) - 1,
                                         example=f"line {held[start][0]}")
                    self._joined_to = lineno
                    self._line(held[start][0], joined)
                    self._joined_to = 0
                    return True
        return False

    def _understood(self, line: str) -> bool:
        """Whether ``line`` reads as a whole line of the report in the current state."""
        if any(p.match(line) for p in (BANNER, MEMORY_BANNER, MEMORY_HEADER)) or any(
                p.match(line) for _, p in _HEADER_LINES) or header_columns(line):
            return True
        if self._table is not None:
            return self._table.parse_test(line)
        if self._memory is not None:
            return is_memory_row(line, header_seen=self._memory_header) is not None or (
                self._memory_header and not self._memory.rows
                and _HEADER_REST.fullmatch(line) is not None)
        return headerless_columns(line) is not None or \
            is_memory_row(line, header_seen=False) is not None

    def _may_be_piece(self, line: str) -> bool:
        """Lines worth holding for the next one: in a table anything, elsewhere the start
        of a report line or of a row."""
        if len(line) > _PIECE_WIDTH:
            return False
        return self._table is not None or self._memory is not None or \
            _PIECE_START.match(line) is not None or is_cut_row(line)

    # -- one line ---------------------------------------------------------------------------

    def _line(self, lineno: int, line: str) -> None:
        ruled, self._ruled = self._ruled, False
        if ruled and _DASHES.fullmatch(line):
            return                                  # the rest of a wrapped banner or title
        if line.strip():
            self._titled = False
        if BANNER.match(line) or MEMORY_BANNER.match(line) or SECTION_TITLE.match(line):
            self._ruled = self._titled = True
        if BANNER.match(line):
            self._start_report(lineno, implicit=False)
        elif MEMORY_BANNER.match(line):
            self._start_memory(lineno)
        elif (columns := header_columns(line)) is not None:
            self._end_table()
            self._memory = None
            report = self._report_for(_HEADER_STAGE, lineno)
            self._table = EventTable(report, columns, line, header=True)
            self._titled = True
        elif MEMORY_HEADER.match(line):
            if self._memory is None or self._memory_header or self._memory.rows:
                self._start_memory(lineno)
            self._memory_header = self._titled = True
            self._memory_width = len(line)
        elif self._header_line(lineno, line):
            pass
        elif self._table is not None:
            self._table_line(lineno, line)
        elif self._memory is not None:
            self._memory_line(lineno, line)
        elif not line.strip():
            self._in_explanation = False
        elif (columns := headerless_columns(line)) is not None:
            self._start_headerless_table(lineno, line, columns)
        elif is_memory_row(line, header_seen=False):
            self._start_memory(lineno)
            self._memory_line(lineno, line)
        elif not (self._in_explanation and self._report is not None):
            self._foreign(lineno, line)

    def _start_report(self, lineno: int, *, implicit: bool) -> ProfilingReport:
        self._end_table()
        self._memory = None
        previous = self.log.reports[-1] if self.log.reports else None
        # The per-thread report follows the merged one of the same window.
        if self._group_closed or previous is None or not previous.merged:
            self._group += 1
        self._group_closed = False
        self._report = ProfilingReport(line=lineno, group=self._group, implicit=implicit)
        self._stage, self._in_explanation = 0, False
        self.log.reports.append(self._report)
        return self._report

    def _report_joined_merged(self, report: ProfilingReport) -> bool:
        """Whether ``report`` was put in the group of a merged report before it."""
        reports = self.log.reports
        if len(reports) < 2 or reports[-1] is not report:
            return False
        return reports[-2].merged and reports[-2].group == report.group

    def _report_for(self, stage: int, lineno: int) -> ProfilingReport:
        """The report a header line at ``stage`` belongs to (a new one when it comes too late
        for the open report)."""
        report = self._report
        if report is None or stage < self._stage or (stage == self._stage
                                                     and stage in _PRINTED_ONCE):
            report = self._start_report(lineno, implicit=True)
        self._stage = max(self._stage, stage)
        return report

    def _start_memory(self, lineno: int) -> None:
        self._end_table()
        self._memory = MemoryReport(line=lineno, group=max(self._group, 0))
        self._memory_header = False
        self.log.memory.append(self._memory)
        self._report, self._group_closed = None, True

    def _start_headerless_table(self, lineno: int, line: str, columns: tuple[str, ...]) -> None:
        report = self._report
        if report is None or report.events or self._stage > _ROWS_STAGE:
            report = self._start_report(lineno, implicit=True)
        self._stage = _ROWS_STAGE
        self._table = EventTable(report, columns, line)
        self.diagnostics.add("paddle_report.headerless_table", example=f"line {lineno}")
        self._table_line(lineno, line)

    def _header_line(self, lineno: int, line: str) -> bool:
        """A report header / overhead / memcpy line (ends an open table); False otherwise."""
        found = next(((stage, pattern, m) for stage, pattern in _HEADER_LINES
                      if (m := pattern.match(line))), None)
        if found is None:
            return False
        stage, pattern, m = found
        if pattern is SECTION_TITLE:
            stage = _TITLE_STAGE[m.group(1)]
        explaining = self._in_explanation
        self._end_table()
        self._memory = None
        report = self._report_for(stage, lineno)
        if pattern is SECTION_TITLE and m.group(1) == "Overhead":
            self._overhead_groups.add(report.group)
        self._in_explanation = pattern is PE_EXPLANATION
        if pattern is MERGED_NOTE:
            report.merged = True
            if self._report_joined_merged(report):
                # (a merged report after a merged one is the next window's, not its
                # per-thread part: Paddle prints one merged report per window)
                self._group += 1
                report.group = self._group
        elif pattern is PLACE:
            report.place = m.group(1)
            if place_clock(report.place, True) is None:
                self.diagnostics.add("paddle_report.unknown_place",
                                     example=f"line {lineno}: {report.place}")
        elif pattern is TIME_UNIT:
            report.time_unit = m.group(1)
        elif pattern is SORTED_BY:
            report.sorted_by = m.group(1)
        elif pattern is TOTAL_TIME:
            report.overhead = OverheadSummary(total_ms=number(m.group(1)),
                                              parallel_executor=explaining,
                                              lines={"total_ms": lineno})
        elif pattern is OVERHEAD_SPLIT:
            self._overhead_split(report, m, lineno)
        elif pattern is PE_TIME:
            self._pe_time(report, m, lineno)
        elif pattern is MEMCPY:
            report.memcpy.append(MemcpyRow(name=m.group(1), calls=int(m.group(2)),
                                           total_ms=number(m.group(3)),
                                           ratio_pct=number(m.group(4)), line=lineno))
        return True

    def _overhead_split(self, report: ProfilingReport, m: re.Match[str], lineno: int) -> None:
        if report.overhead is None:
            report.overhead = OverheadSummary(total_ms=None)
            self.diagnostics.add("paddle_report.overhead_without_total", example=m.group(0).strip())
        if m.group(1).startswith("Computation"):
            report.overhead.computation_ms = number(m.group(2))
            report.overhead.computation_ratio_pct = number(m.group(3))
            report.overhead.lines["computation_ms"] = lineno
        else:
            report.overhead.framework_ms = number(m.group(2))
            report.overhead.framework_ratio_pct = number(m.group(3))
            report.overhead.lines["framework_ms"] = lineno

    def _pe_time(self, report: ProfilingReport, m: re.Match[str], lineno: int) -> None:
        # The ParallelExecutor variant prints these instead of "Total time".
        if report.overhead is None:
            report.overhead = OverheadSummary(total_ms=None, parallel_executor=True)
        value = number(m.group(2))
        if m.group(1) == "Elapsed":
            report.overhead.elapsed_ms = report.overhead.total_ms = value
            report.overhead.lines["total_ms"] = lineno
        else:
            report.overhead.accumulated_ms = value
            report.overhead.lines["accumulated_ms"] = lineno

    def _table_line(self, lineno: int, line: str) -> None:
        table = self._table
        assert table is not None
        if not line.strip():
            # pastes may double-space rows: a blank line ends the table only when what
            # follows it is not a row
            table.after_blank = bool(table.report.events)
            return
        if table.extend_header(line):
            self._titled = True   # (the rest of a wrapped header: no row yet)
        elif table.extend_last_row(line):
            self._last_row_line = max(lineno, self._joined_to)
        elif (row := table.parse(line)) is not None:
            row.line, self._last_row_line = lineno, max(lineno, self._joined_to)
            table.report.events.append(row)
            if padded_whole(line, 0 if table.collapsed else len(table.header_text or "")):
                self._whole_line = lineno
            self._stage = _ROWS_STAGE
        elif is_markup(line) or (table.after_blank and not table.row_shaped(line)):
            self._end_table()                       # the pasted block or the table ended
            self._line(lineno, line)
        else:
            cut = lineno == self._lines.cut_line
            kind = count_stray(self.diagnostics, self._foreign_lines, lineno, line,
                               in_table=True,
                               row_shaped=table.row_shaped(line), cut=cut,
                               dropped="paddle_report.cut_row" if cut or is_cut_row(line)
                               else "paddle_report.unreadable_row")
            if kind != "foreign":
                table.children_left_out(line)
        if self._table is table:
            table.after_blank = False

    def _count_end(self, lines: PastedLines) -> bool:
        """Count an input that ended inside the report (:func:`.count_input_end`): a row read
        whole has every cell, padded to its table's header's width (rows nested under the
        last top-level row have no stated whole, :mod:`.stated`, so the width alone tells a
        whole last row without its line end from one cut in its padding); returns whether
        it did."""
        title = "Event Summary table" if self._table is not None else \
            "Memory Profiling Report" if self._memory is not None else \
            "Profiling Report header" if self._report is not None else None
        cut = count_input_end(self.diagnostics, "paddle_report", lines, table=title,
                              expects_rows=True, awaiting_rows=self._titled,
                              whole=lines.cut_line == self._whole_line)
        if cut and self._table is not None:
            self._table.children_left_out("")
        return cut

    def _count_missing_memory_report(self) -> None:
        """Count an input whose text ends on a row of an Event Summary that the 2.x layout
        (its group titled ``Overhead Summary``) follows with the Memory Profiling Report:
        the rows after the last one read, nested ones too, are lost
        (:func:`.stated_totals.missing_end`; a merged report's sequel is
        :func:`.stated.missing_ends`'). The memory report itself ends with a blank line
        only, which an editor may trim: no evidence of a cut."""
        table = self._table
        if table is None or table.report.merged or \
                table.report.group not in self._overhead_groups:
            return
        missing_end(self.diagnostics, "paddle_report",
                    f"line {table.report.line}: Profiling Report",
                    "the Memory Profiling Report printed after its Event Summary")
        table.children_left_out("")

    def _cut_row(self, lineno: int, line: str) -> None:
        self.diagnostics.add("paddle_report.cut_row", example=f"line {lineno}: {line.strip()}")

    def _end_table(self) -> None:
        table, self._table = self._table, None
        if table is not None:
            table.finish()
        if table is not None and table.guessed:
            self.diagnostics.add("paddle_report.nesting_guessed", count=table.guessed)

    def _memory_line(self, lineno: int, line: str) -> None:
        memory = self._memory
        assert memory is not None
        if not line.strip():
            if self._memory_header or memory.rows:
                self._memory = None
            return
        if self._memory_header and not memory.rows and _HEADER_REST.fullmatch(line):
            return                                  # the rest of a header the paste wrapped
        if m := is_memory_row(line, header_seen=self._memory_header):
            memory.rows.append(MemoryRow(event=m["event"], alloc_calls=int(m["ac"]),
                                         alloc_mb=number(m["am"]), free_calls=int(m["fc"]),
                                         free_mb=number(m["fm"]), line=lineno))
            if padded_whole(line, self._memory_width):
                self._whole_line = lineno
        elif lineno == self._lines.cut_line or (
                (memory.rows or self._memory_header) and is_cut_row(line)):
            self._cut_row(lineno, line)
        else:
            self._memory = None
            self._line(lineno, line)

    def _foreign(self, lineno: int, line: str) -> None:
        # (the line the input stopped inside, within a report, is a line of it cut off)
        cut = lineno == self._lines.cut_line and self._report is not None
        count_stray(self.diagnostics, self._foreign_lines, lineno, line, in_table=cut,
                    row_shaped=False, cut=cut,
                    dropped="paddle_report.cut_row" if cut else "paddle_report.unreadable_row")

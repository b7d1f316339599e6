"""Line parser for ``Profiler.summary()`` tables and the ``Perf Summary`` text.

Cells are ``'{: <w}'.format(v) + '  '``: a value longer than its width pushes the rest of
the line right but stays at least two spaces from its neighbours, so rows are split on
runs of two or more spaces, never on column positions. A table is: centered title,
optional ``Time unit``/``Peak ... Memory`` lines, separator, header, separator, rows
(with ``Thread: ...`` sub-titles), and a closing separator or a blank line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from ...model import Diagnostics
from ...numbers import finite
from ..line_patterns import UP_TO_LAST_VISIBLE
from ..paddle_summary_lines import UNTITLED_ROW
from ..pasted_text import PastedLines, is_markup
from ..ruled_tables import bar_cells
from ..stated_totals import missing_end
from ..stray_lines import (
    ForeignLines,
    count_input_end,
    count_stray,
    open_rows_left_out,
    padded_whole,
)
from .schema import PerfSummary, StepInfo, SummaryDocument, SummaryRow, SummaryTable

TITLE = re.compile(r"^-{2,}\s*(?P<title>[A-Za-z(][^-].*?[^-\s])\s*-{2,}\s*$")
SEPARATOR = re.compile(r"^\s*-+(?: {2,}-+)* *$")
CELL_GAP = re.compile(r" {2,}")
TIME_UNIT = re.compile(r"^\s*Time unit:\s*(\S+)\s*$")
NOTE_VALUE = re.compile(r"^\s*(Peak (?:Allocated|Reserved) Memory):\s*(\S+)\s*$")
PERF_TITLE = re.compile(r"^=+\s*Perf Summary\s*=+\s*$")
PERF_RATIO = re.compile(r"^\s*Reader Ratio:\s*([-+\d.eE]+|nan)%\s*$")
# The IPS unit runs to the line's last visible character (one blank where there is none):
# a lazy ``(.+?)`` before ``\s*$`` re-read the trailing blanks once per blank.
PERF_UNITS = re.compile(
    rf"^\s*Time Unit:\s*(\S+?),\s*IPS Unit:\s*(\S{UP_TO_LAST_VISIBLE}|.)\s*$")
PERF_ROW = re.compile(r"^\s*\|(.*)\|\s*$")
# A unit may touch its number ("0.5s"): it is bounded, or the number and its unit would
# split a long word each possible way (quadratic on "reader_cost:" then 64 KiB of letters).
_STEP_UNIT = r"\w{1,32}"
STEP_INFO = re.compile(
    rf"^\s*reader_cost:\s*(?P<reader>\S+)\s*(?P<unit>{_STEP_UNIT})\s+batch_cost:\s*(?P<batch>\S+)"
    rf"\s*{_STEP_UNIT}(?:\s+ips:\s*(?P<ips>\S+)\s*(?P<ips_unit>\S{{1,32}}))?\s*$")
UNTITLED_HEADERS = {
    True: ["Name", "Calls", "CPU Total / Avg / Max / Min / Ratio(%)",
           "GPU Total / Avg / Max / Min / Ratio(%)"],
    False: ["Name", "Calls", "GPU Total / Avg / Max / Min / Ratio(%)"],
}
THREAD_TITLE = "Thread: "
# the tables printed without a rule after their rows (every other one closes with one)
UNRULED = ("UserDefined Summary", "Memory Summary")
PERF_ROWS = ("reader_cost", "batch_cost", "ips")   # the rows every Perf Summary prints
# the tables printed with a Note after their rows, closed by a rule across the table
NOTED = ("Device Summary", "Overview Summary", "Model Summary", "Distribution Summary")
_OPEN = ("before_header", "expect_header", "header_done", "rows")   # a table before its rule
FLOPS_MARK = "Flops Profiler"


def dedented(lines: Iterable[str]) -> Iterator[str]:
    """``lines`` with the indent of a pasted table taken off: a title line (``---X
    Summary---``, ``===Perf Summary===``) indented by some prefix (the docs indent their
    examples by two spaces) makes that prefix the block's margin, removed from every line
    that starts with it until a line with less indent or the next title. Indentation
    inside the table (child rows two spaces deeper) is kept.

    >>> list(dedented(["  ---Operator Summary---", "  Name  Calls", "    child  1", "prose"]))
    ['---Operator Summary---', 'Name  Calls', '  child  1', 'prose']
    """
    margin = ""
    for line in lines:
        body = line.lstrip(" \t")
        if TITLE.match(body) or PERF_TITLE.match(body):
            margin = line[:len(line) - len(body)]
        elif margin and body and not line.startswith(margin):
            margin = ""   # the block ended: text with less indent than the table
        yield line[len(margin):] if margin and line.startswith(margin) else line


def _float(text: str) -> float | None:
    """A finite number, else None.

    >>> _float("0.5"), _float("0.024]x"), _float("inf")
    (0.5, None, None)
    """
    try:
        return finite(text)
    except ValueError:
        return None


def _printed(text: str) -> float | None:
    """A number as printed, ``nan`` and ``inf`` included (the text readers' one rule
    judges them: never timed, past every range), else None.

    >>> _printed("0.5"), _printed("0.024]x"), _printed("inf"), _printed("nan")
    (0.5, None, inf, nan)
    """
    try:
        return float(text)
    except ValueError:
        return None


def _row_shaped(line: str) -> bool:
    """A line with the cells of a table row (two spaces apart) and a number among them,
    unlike the drawings of Note blocks (``Operator: |____|     |___|``).

    >>> _row_shaped("> matmul dygraph    16    3.20 / 0.20"), _row_shaped("  Result:   |___|  |__|")
    (True, False)
    """
    cells = CELL_GAP.split(line.strip())
    return len(cells) > 1 and any(c[:1].isdecimal() for c in cells[1:])

class SummaryParser:
    """Feed text, get a :class:`SummaryDocument`; unreadable rows are counted.

    >>> doc = SummaryParser().parse_text("---Device Summary---\\n---  ---\\nDevice  Utilization (%)\\n"
    ...                                  "---  ---\\nCPU(Process)  60.00\\n---  ---\\n")
    >>> doc.tables[0].rows[0].cells
    {'Device': 'CPU(Process)', 'Utilization (%)': '60.00'}
    """

    def __init__(self, diagnostics: Diagnostics | None = None) -> None:
        self.diagnostics = diagnostics if diagnostics is not None else Diagnostics()
        self._foreign_lines = ForeignLines("paddle_summary")   # (the lines foreign to the report)
        self.doc = SummaryDocument()
        self._table: SummaryTable | None = None
        self._perf: PerfSummary | None = None
        self._state = "none"   # expect_header | header_done | rows | after_rows | text | closed
        self._thread: str | None = None
        self._stack: list[int] = []
        self._base = 0          # indentation of the first untitled row
        self._untitled: SummaryTable | None = None   # the table told from rows alone
        self._cut = False       # the input stopped inside the line being read
        self._foreign_line = 0  # the last line counted as foreign
        self._flops_line = 0    # the last Flops Profiler mark (printed after the tables)
        self._row_line = 0      # the last line read as a whole row
        self._rule_width = 0    # the width of the open table's last rule (its rows' width)
        self.unnested: set[int] = set()   # the title lines of tables whose nesting was lost

    def parse_text(self, text: str) -> SummaryDocument:
        return self.parse_lines(PastedLines(text))

    def parse_lines(self, lines: PastedLines) -> SummaryDocument:
        for lineno, line in enumerate(dedented(lines), 1):
            self._cut = lineno == lines.cut_line
            self._line(lineno, line)
        if not self._count_end(lines):
            self._count_missing_end()
        self._foreign_lines.count_in(self.diagnostics)
        return self.doc

    def _count_missing_end(self) -> None:
        """Count a table the input stops before the end of, by the text summary() prints
        after its rows: a ruled table's closing rule, the rule that closes a noted one's
        Note, the Perf Summary's three rows (:func:`.stated_totals.missing_end`). An
        unruled table ends with blank lines only, which an editor trims: no evidence."""
        table, perf = self._table, self._perf
        if perf is not None and perf.metrics and not perf.metrics.keys() >= set(PERF_ROWS):
            missing_end(self.diagnostics, "paddle_summary", f"line {perf.line}: Perf Summary",
                        "its " + ", ".join(PERF_ROWS) + " rows")
        if table is None or table is self._untitled:
            return
        where = f"line {table.line}: {table.title}"
        if table.title in NOTED and self._state in ("after_rows", "text"):
            missing_end(self.diagnostics, "paddle_summary", where, "the rule that closes its "
                        "Note")
        if self._state in _OPEN and not table.title.startswith(UNRULED):
            missing_end(self.diagnostics, "paddle_summary", where, "its closing rule")

    def _count_end(self, lines: PastedLines) -> bool:
        """Count an input that ended inside a table (:func:`.count_input_end`); a line read
        whole is one foreign to the tables, the mark printed after them, or a row whole by
        its cells (one cell for each column) and padded to its table's rule's width (a row
        cut in its last number is short of the totals the summary states, :mod:`.stated`)."""
        table, perf = self._table, self._perf
        expects_rows = perf is not None or (table is not None and self._state in _OPEN)
        title = "Perf Summary" if perf is not None else \
            self.doc.tables[-1].title if self.doc.tables else None
        awaiting = not perf.metrics if perf is not None else \
            expects_rows and table is not None and not table.rows
        if not count_input_end(
                self.diagnostics, "paddle_summary", lines, table=title,
                expects_rows=expects_rows, awaiting_rows=awaiting,
                whole=lines.cut_line in (self._foreign_line, self._flops_line, self._row_line)):
            return False
        if table is not None and perf is None:
            self._children_left_out("")
        return True

    def _line(self, lineno: int, line: str) -> None:
        if (m := STEP_INFO.match(line)) and None in (_float(m["reader"]), _float(m["batch"])):
            self.diagnostics.add("paddle_summary.unreadable_row", example=f"line {lineno}")
        elif m:
            self.doc.steps.append(StepInfo(
                line=lineno, reader_cost=float(m["reader"]), batch_cost=float(m["batch"]),
                unit=m["unit"], ips=_float(m["ips"]) if m["ips"] else None,
                ips_unit=m["ips_unit"]))
        elif PERF_TITLE.match(line):
            self._table, self._state = None, "none"
            self._perf = PerfSummary(line=lineno)
            self.doc.perf.append(self._perf)
        elif self._perf is not None and self._perf_line(lineno, line):
            pass
        elif is_markup(line):   # (a table pasted into a page may end there, undashed)
            self._table, self._state = None, "none"
            self._foreign(lineno, line)
        elif SEPARATOR.match(line) and line.strip():
            self._rule_width = len(line)
            self._separator()
        elif m := TITLE.match(line):
            self._title(lineno, m["title"])
        elif (self._table is None or self._table is self._untitled) and (
                m := UNTITLED_ROW.match(line)):
            self._untitled_row(lineno, m)
        elif self._table is None:
            if line.strip():
                self._foreign(lineno, line)
        elif not line.strip():
            if self._state == "rows":
                self._state = "after_rows"
        elif m := TIME_UNIT.match(line):
            self._table.time_unit = m.group(1)
        elif m := NOTE_VALUE.match(line):
            self._table.notes[m.group(1)] = m.group(2)
        elif self._state == "expect_header" or (
                self._state == "after_rows" and line.startswith(" ")):
            self._header(line)
        elif self._state == "rows":
            self._row(lineno, line)
        elif self._state in ("before_header", "header_done") or _row_shaped(line):
            # the rule a table's header or rows must come after is not there, or a row
            # comes after its table ended (a page quoted some of the lines, a title was
            # not read as one): counted, never skipped
            self._foreign(lineno, line)
        else:
            self._state = "text"   # Note: blocks and their example drawings

    def _perf_line(self, lineno: int, line: str) -> bool:
        perf = self._perf
        assert perf is not None
        if m := PERF_RATIO.match(line):
            perf.reader_ratio_pct = _float(m.group(1))
        elif m := PERF_UNITS.match(line):
            perf.time_unit, perf.ips_unit = m.group(1), m.group(2)
        elif m := PERF_ROW.match(line):
            cells = bar_cells(m.group(0))
            if cells and cells[0]:
                perf.metrics[cells[0]] = {key: value for key, text in zip(
                    ("avg", "max", "min"), cells[1:], strict=False)
                    if (value := _printed(text)) is not None}
                if len(perf.metrics[cells[0]]) == len(cells) - 1 == 3:
                    self._row_line = lineno
        elif self._cut and line.lstrip().startswith("|"):
            pass   # a row the input stopped inside: the table is cut (_count_end)
        else:
            self._perf = None
            return False
        return True

    def _title(self, lineno: int, title: str) -> None:
        if title.startswith(THREAD_TITLE) and self._table is not None:
            self._thread = title.removeprefix(THREAD_TITLE)
            self._stack = []
            return
        if FLOPS_MARK in title:
            self._table, self._state, self._flops_line = None, "none", lineno
            return
        self._table = SummaryTable(title=title, line=lineno)
        self.doc.tables.append(self._table)
        self._state, self._thread, self._stack = "before_header", None, []

    def _separator(self) -> None:
        if self._table is None:
            return
        self._state = {"before_header": "expect_header", "header_done": "rows",
                       "rows": "after_rows", "text": "closed"}.get(self._state, self._state)

    def _header(self, line: str) -> None:
        table = self._table
        assert table is not None
        cells = CELL_GAP.split(line.strip())
        if line.startswith(" ") and table.headers:
            cells = [table.headers[0][0], *cells]   # Overview's GPU half: blank first cell
        table.headers.append(cells)
        self._state = "header_done"

    def _row(self, lineno: int, line: str, cells: list[str] | None = None) -> None:
        table = self._table
        assert table is not None
        header = table.headers[-1] if table.headers else []
        cells = cells if cells is not None else CELL_GAP.split(line.strip())
        if len(cells) != len(header):   # (a row is cells two spaces apart)
            kind = count_stray(self.diagnostics, self._foreign_lines, lineno, line,
                               in_table=True, row_shaped=len(cells) > 1,
                               dropped="paddle_summary.unreadable_row", cut=self._cut)
            if kind != "foreign":
                self._children_left_out(line)
            return
        depth = (len(line) - len(line.lstrip(" "))) // 2
        del self._stack[depth:]
        parent = self._stack[-1] if self._stack and len(self._stack) == depth else None
        if depth and parent is None:
            self.diagnostics.add("paddle_summary.orphan_indent",
                                 example=f"line {lineno}: {line.strip()}")
            self.unnested.add(table.line)
            depth = 0
        if padded_whole(line, self._rule_width):
            self._row_line = lineno
        table.rows.append(SummaryRow(name=cells[0], depth=depth, parent=parent,
                                     thread=self._thread, cells=dict(zip(header, cells,
                                                                         strict=True)),
                                     line=lineno))
        self._stack = self._stack[:depth] + [len(table.rows) - 1]

    def _children_left_out(self, line: str) -> None:
        """Rows were left out at ``line``: mark the open rows that may have lost children
        (:func:`~traceconv.formats.stray_lines.open_rows_left_out`)."""
        assert self._table is not None
        depth = (len(line) - len(line.lstrip(" "))) // 2
        for row in open_rows_left_out(self._stack, depth):
            self._table.rows[row].children_left_out = True

    def _untitled_row(self, lineno: int, m: re.Match[str]) -> None:
        """A summary row pasted without its table's title, rules or header: two time
        groups are an Operator Summary row (CPU and GPU), one a Kernel Summary row."""
        two = m["second"] is not None
        title = "Operator Summary" if two else "Kernel Summary"
        table = self._table
        if table is None or table.title != title:
            table = self._table = self._untitled = SummaryTable(title=title, line=lineno)
            header = UNTITLED_HEADERS[two] + (["FLOPs"] if m["flops"] else [])
            table.headers.append(header)
            self.doc.tables.append(table)
            self._state, self._thread, self._stack = "rows", None, []
            self._base, self._rule_width = len(m["indent"]), 0
            self.diagnostics.add("paddle_summary.untitled_rows", example=f"line {lineno}")
        cells = [m["name"], m["calls"], m["first"]] + ([m["second"]] if two else []) + (
            [m["flops"]] if m["flops"] else [])
        header = table.headers[-1]
        cells = cells[:len(header)] + [""] * (len(header) - len(cells))
        indent = " " * max(0, len(m["indent"]) - self._base)
        self._row(lineno, indent + "  ".join(cells), cells=cells)

    def _foreign(self, lineno: int, line: str) -> None:
        self._foreign_line = lineno
        count_stray(self.diagnostics, self._foreign_lines, lineno, line, in_table=False,
                    row_shaped=False, dropped="paddle_summary.unreadable_row")

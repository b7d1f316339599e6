"""One Event Summary table: its rows and the nesting that indentation, names or arithmetic tell.

Printed reports indent children by two spaces. A paste may indent everything (a quote, a
code block) or start at a nested row, so depth counts from the header's indentation, or
from the first row's when there is no header. When whitespace was collapsed, names tell
most of the nesting (``op/compute``, ``conv2d0`` under ``conv2d``, ``threadN::`` rows at
the top); the rest is decided by arithmetic, and counted as guessed: a parent's total is at
least the sum of its children's, and the top-level rows of a merged report add up to its
``Total time`` (top-level ``Ratio.`` sums to 1).
"""

from __future__ import annotations

import math
import re

from ..paddle_report_lines import CPU, ROW_START, header_columns, match_row, number, split_touching
from ..stray_lines import open_rows_left_out
from .schema import EventRow, ProfilingReport

THREAD_PREFIX = re.compile(r"^thread(\d+)::")
# Rows that enclose other rows whose names do not say so (for collapsed pastes): executors,
# dygraph op wrappers, grad nodes, the backward pass.
CONTAINER_NAME = re.compile(r"(?P<executor>::|^backward$|^default-\d+$)|(?P<grad>GradNode)|"
                            r" (?P<op>dygraph|pybind_imperative_func|pybind_patch_func)$")
DEFAULT_STREAM = re.compile(r"^default-\d+$")
# The rows the report prints as children of the op that copied (its own layout, no activity:
# the data reader's host copy BufferedReader:MemoryCopy is one, and no device copy)
MEMCPY_NAME = re.compile(r"^(?:GpuMemcpy|BufferedReader:MemoryCopy|TensorCopy)")


def container_kind(name: str) -> str | None:
    """``executor``, ``grad`` or ``op`` for rows that enclose unhinted rows, else None.

    >>> container_kind("Executor::Run"), container_kind("conv2d dygraph"), container_kind("relu")
    ('executor', 'op', None)
    """
    match = CONTAINER_NAME.search(name)
    return None if match is None else match.lastgroup


def _cell(groups: dict[str, str | None], key: str) -> float | None:
    text = groups.get(key)
    return None if text is None else number(text)


class EventTable:
    """Rows of one Event Summary table and the stack that rebuilds their nesting.

    >>> report = ProfilingReport(line=1)
    >>> table = EventTable(report, ("Calls", "Total"), first_line="  relu  4  2.0")
    >>> row = table.parse("  relu  4  2.0"); report.events.append(row); table.finish()
    >>> (row.name, row.calls, row.total_ms, row.depth, row.min_ms)
    ('relu', 4, 2.0, 0, None)
    """

    def __init__(self, report: ProfilingReport, columns: tuple[str, ...], first_line: str,
                 header: bool = False) -> None:
        self.report = report
        self.columns = columns
        report.has_cpu_gpu_columns = CPU in columns
        report.columns = list(columns)
        # A paste with collapsed whitespace has no double spaces in the header / first row.
        self.collapsed = "  " not in first_line.strip()
        self.base = len(first_line) - len(first_line.lstrip(" "))
        # where the calls cells start (None: collapsed, no columns): the header's "Calls",
        # else the leftmost of the rows read (a name too long for its cell pushes it right)
        start = ROW_START.match(first_line)
        self.calls_column = None if self.collapsed else first_line.find("Calls") if header \
            else start.start("calls") if start else None
        self.header_text = first_line if header else None
        self.last_line: str | None = None   # the text of the last row read
        self.stack: list[int] = []          # indices of the open ancestors, outermost first
        self.indents: list[int] = []        # collapsed tables: leading spaces of each row
        self.children_ms: list[float] = []  # sum of the children's totals, per row
        self.left_out_at: list[int] = []    # collapsed tables: rows read when rows were lost
        self.guessed = 0
        self.after_blank = False            # the last line was blank (the table may be over)

    def parse_test(self, line: str) -> bool:
        """Whether ``line`` is a row of this table, or the rest of its wrapped header or of
        its last row."""
        return match_row(line, self.columns) is not None or \
            self._longer_header(line) is not None or self._longer_last_row(line) is not None

    def row_shaped(self, line: str) -> bool:
        """Whether ``line`` starts like a row of this table: a name, then the calls where
        the table's rows have them (at or right of its calls column; a collapsed table has
        none: a number after them, or a name of one word, as event names are), however the
        rest reads.

        >>> table = EventTable(ProfilingReport(line=1), ("Calls", "Total"),
        ...                    first_line="Event          Calls    Total", header=True)
        >>> table.row_shaped("thread0::mul   10       0.3"), table.row_shaped("run_time = 2093")
        (True, False)
        """
        match = ROW_START.match(line)
        if match is None:
            return False
        if self.calls_column is None:
            return re.match(r"\s+[-+.\d]", match["rest"]) is not None or " " not in match["name"]
        return match.start("calls") >= self.calls_column

    def _longer_header(self, piece: str) -> tuple[str, tuple[str, ...]] | None:
        """The header text and columns when ``piece`` continues a wrapped header."""
        if self.header_text is None or self.report.events:
            return None
        for text in (self.header_text + piece, f"{self.header_text.rstrip()} {piece.strip()}"):
            columns = header_columns(text)
            if columns is not None and len(columns) > len(self.columns):
                return text, columns
        return None

    def extend_header(self, piece: str) -> bool:
        """Take ``piece`` as the rest of a header the paste wrapped (more columns)."""
        longer = self._longer_header(piece)
        if longer is not None:
            self.header_text, self.columns = longer
            self.report.columns = list(self.columns)
            self.report.has_cpu_gpu_columns = CPU in self.columns
        return longer is not None

    def _longer_last_row(self, piece: str) -> tuple[str, re.Match[str]] | None:
        """The last row's text and match when ``piece`` completes it (a wrap that cut it
        after a whole cell: ``... 0.1`` + ``6``)."""
        events = self.report.events
        if self.last_line is None or not events or match_row(piece, self.columns):
            return None
        for text in (self.last_line + piece, f"{self.last_line.rstrip()} {piece.strip()}"):
            match = match_row(text, self.columns)
            if match is not None and match["name"] == events[-1].name:
                return text, match
        return None

    def extend_last_row(self, piece: str) -> bool:
        """Take ``piece`` as the rest of the last row (its cells are read again)."""
        longer = self._longer_last_row(piece)
        if longer is None:
            return False
        self.last_line, match = longer
        row = self._row(match, self.last_line)
        for field in ("calls", "total_ms", "min_ms", "max_ms", "ave_ms", "ratio", "ratio_text",
                      "reorder_marked", "cpu_ms", "cpu_ratio", "gpu_ms", "gpu_ratio"):
            setattr(self.report.events[-1], field, getattr(row, field))
        return True

    def parse(self, line: str) -> EventRow | None:
        """``line`` as a row of this table's columns (nested at once unless collapsed)."""
        match = match_row(line, self.columns)
        if match is None:
            return None
        row = self._row(match, line)
        self.last_line = line
        if self.calls_column is not None:
            self.calls_column = min(self.calls_column, match.start("calls"))
        indent = max(0, len(match["indent"]) - self.base)
        self.children_ms.append(0.0)
        if self.collapsed:
            self.indents.append(indent)   # nested once the table is complete
        else:
            self._nest(row, indent // 2)
        return row

    def _row(self, match: re.Match[str], line: str) -> EventRow:
        g = match.groupdict()
        name, calls = g["name"], g["calls"]
        total, ave = _cell(g, "total"), _cell(g, "ave")
        if not line[match.start("calls") - 1].isspace():
            name, calls = split_touching(name, calls, total, ave) or (name, calls)
        row = EventRow(
            name=name, calls=int(calls), total_ms=total, min_ms=_cell(g, "min"),
            max_ms=_cell(g, "max"), ave_ms=ave, ratio=_cell(g, "ratio"), ratio_text=g.get("ratio"),
            reorder_marked=bool(g.get("star")))
        if CPU in self.columns:
            row.cpu_ms, row.cpu_ratio = _cell(g, "cpu"), _cell(g, "cpur")
            row.gpu_ms, row.gpu_ratio = _cell(g, "gpu"), _cell(g, "gpur")
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
        if parent is not None:
            self.children_ms[parent] += row.total_ms or 0.0
        self.stack = self.stack[:row.depth] + [index]

    def finish(self) -> None:
        """Nest the rows of a collapsed table. A single leading space may survive the
        collapse and mark nested rows; when none did, rows without a ``threadN::`` prefix
        are nested in a per-thread report, and in a merged one the arithmetic decides."""
        if not self.collapsed:
            return
        rows = self.report.events
        marked = any(self.indents)
        per_thread = bool(rows) and THREAD_PREFIX.match(rows[0].name) is not None
        nested = ([indent > 0 for indent in self.indents] if marked
                  else [per_thread] * len(rows) if per_thread
                  else self._nested_by_arithmetic())
        for index, (row, indented) in enumerate(zip(rows, nested, strict=True)):
            self._mark_left_out(self.left_out_at.count(index))
            self._attach(row, index, self._parent_by_name(row, indented))
        self._mark_left_out(self.left_out_at.count(len(rows)))

    def children_left_out(self, line: str) -> None:
        """Rows were left out at ``line`` (an elision, a row lost or cut): mark the open
        rows that may have lost children
        (:func:`~traceconv.formats.stray_lines.open_rows_left_out`); in a collapsed table,
        once its nesting is known (a mark there says nothing of its depth)."""
        if self.collapsed:
            self.left_out_at.append(len(self.report.events))
            return
        indent = len(line) - len(line.lstrip(" "))
        self._mark_left_out(1, max(0, indent - self.base) // 2 if line.strip() else 0)

    def _mark_left_out(self, marks: int, depth: int = 0) -> None:
        for row in open_rows_left_out(self.stack, depth) if marks else ():
            self.report.events[row].children_left_out = True

    def _nested_by_arithmetic(self) -> list[bool]:
        """Which rows of a collapsed merged table are not top level: the rows that names
        place (``op/compute``, ``default-0``...), then the set of other rows whose totals
        make up what the top level still has over ``Total time`` (memcpy rows, which sit
        under an op, are tried first)."""
        rows = self.report.events
        totals = [row.total_ms or 0.0 for row in rows]
        flat = _named_children([row.name for row in rows])
        whole = self._whole_ms()
        if whole is None or len(rows) < 2:
            return flat
        slack = 5e-6 * sum(totals) + 1e-9     # six printed digits per row
        excess = sum(t for t, nested in zip(totals, flat, strict=True) if not nested) - whole
        if excess <= slack:
            return flat
        candidates = [i for i in range(1, len(rows)) if not flat[i]
                      and not THREAD_PREFIX.match(rows[i].name)]
        memcpy = [i for i in candidates if MEMCPY_NAME.match(rows[i].name)]
        for group in (memcpy, candidates):
            chosen = _subset_with_sum([totals[i] for i in group], excess, slack)
            if chosen is not None:
                for position in chosen:
                    flat[group[position]] = True
                return flat
        return flat

    def _whole_ms(self) -> float | None:
        """What the top level must add up to: ``Total time``, else a row's total / ratio."""
        overhead = self.report.overhead
        if overhead is not None and overhead.total_ms:
            return overhead.total_ms
        return next(((row.total_ms or 0.0) / row.ratio for row in self.report.events
                     if row.ratio and row.total_ms), None)

    def _parent_by_name(self, row: EventRow, indented: bool) -> int | None:
        """Nesting when indentation was collapsed: names and the row order must tell it.

        ``op/compute`` (and a flat full path ``a/b/c``) belong under the open row named by
        the prefix, ``conv2d0`` under ``conv2d``, ``Local_XGradNode`` under
        ``Global_XGradNode``; ``threadN::`` rows and unindented rows are top level. Any
        other indented row is guessed (and counted): it goes under the innermost open row
        that can still hold its total (a memcpy never holds another row; containers of
        one kind are siblings).
        """
        rows = self.report.events
        name = THREAD_PREFIX.sub("", row.name)
        if THREAD_PREFIX.match(row.name) and "/" not in row.name:
            return None
        open_names = [(index, THREAD_PREFIX.sub("", rows[index].name)) for index in self.stack]
        if "/" in name and (parent := self._parent_by_path(row)) is not None:
            return parent
        for index, open_name in reversed(open_names):
            if (name.startswith(open_name) and name[len(open_name):].isdecimal()) or (
                    name.startswith("Local_") and open_name == "Global_" + name[6:]):
                return index
        if DEFAULT_STREAM.match(name):   # the standalone executor's "default-0" job
            for index, open_name in reversed(open_names):
                if open_name.endswith("StandaloneExecutor::run"):
                    return index
        if not indented or not self.stack:
            return None
        self.guessed += 1
        kind = container_kind(name)
        for index, open_name in reversed(open_names):
            if MEMCPY_NAME.match(open_name) or not self._holds(index, row):
                continue
            open_kind = container_kind(open_name)
            if kind is None and (open_kind or MEMCPY_NAME.match(name)):
                return index
            if open_kind and open_kind != kind:
                return index
        return self.stack[0]

    def _holds(self, index: int, row: EventRow) -> bool:
        """Whether the open row ``index`` has room left for ``row``'s total."""
        room = (self.report.events[index].total_ms or 0.0) - self.children_ms[index]
        return (row.total_ms or 0.0) <= room * (1 + 1e-5) + 1e-9


def _named_children(names: list[str]) -> list[bool]:
    """Which rows an earlier row's name makes its child (``a/b`` under ``a``, ``conv2d0``
    under ``conv2d``, ``Local_X`` under ``Global_X``, ``default-0`` under the executor).

    >>> _named_children(["conv2d", "conv2d/compute", "relu", "conv2d0", "sgd"])
    [False, True, False, True, False]
    """
    seen: set[str] = set()
    executor = False
    out = []
    for raw in names:
        name = THREAD_PREFIX.sub("", raw)
        parts = name.split("/")
        out.append(any("/".join(parts[:n]) in seen for n in range(1, len(parts)))
                   or (name != name.rstrip("0123456789") and name.rstrip("0123456789") in seen)
                   or (name.startswith("Local_") and "Global_" + name[6:] in seen)
                   or (executor and DEFAULT_STREAM.match(name) is not None))
        seen.add(name)
        executor = executor or name.endswith("StandaloneExecutor::run")
    return out


MAX_SUMS = 200_000     # reachable sums kept by the subset search of one table
MAX_WALK = 1_000_000   # sums walked in all by that search (each row walks every sum so far)


def _subset_with_sum(values: list[float], target: float, tolerance: float) -> list[int] | None:
    """Positions of a subset of ``values`` summing to ``target`` (within ``tolerance``),
    smallest subsets first; None when there is none (searched in 1e-3 steps).

    >>> _subset_with_sum([4.5, 1.5, 0.5], 6.0, 0.01)
    [0, 1]
    """
    if not all(math.isfinite(v) for v in (*values, target, tolerance)):
        return None   # an inf or nan printed in the report sums to nothing
    step = max(tolerance / 4, 1e-9)
    goal, slack = round(target / step), round(tolerance / step)
    reach: dict[int, list[int]] = {0: []}
    work = 0
    for position, value in enumerate(values):
        units = round(value / step)
        for total, members in list(reach.items()):
            new = total + units
            if new not in reach and new <= goal + slack:
                reach[new] = [*members, position]
        # Bounded on huge or hostile tables: each row walks every reachable sum, so cap the
        # total walk (not only the number of sums) to keep a table's cost linear in its rows.
        work += len(reach)
        if len(reach) > MAX_SUMS or work > MAX_WALK:
            break
    hits = [members for total, members in reach.items() if abs(total - goal) <= slack]
    return min(hits, key=len) if hits else None

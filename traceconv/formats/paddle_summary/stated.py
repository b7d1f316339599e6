"""What a ``summary()`` printout states of its own tables (``profiler_statistic.py``), for
the shared comparison with the rows read (:mod:`..stated_totals`):

* the Overview Summary counts the calls of each event type: its ``Operator`` calls are the
  calls of the Operator Summary's top-level rows (every thread's), its ``PythonUserDefined``
  calls those of the UserDefined Summary's (checked on every real 2.6.2 and 3.3.1 sample);
  a table it counts and the input lacks (cut at a line end before it) read none, unless the
  printout left tables out by choice (``summary(views=...)``): a table the Overview implies
  (the Model Summary of its phases, a table it counts) is missing while one printed after
  it is there, which no cut does;
* the top-level rows of the Operator Summary (per thread, CPU) and of the Kernel Summary
  share 100 % of their time;
* the Model Summary's ``ProfileStep`` time is that of its phases (``Others`` included).

Each Overview Summary states the tables of its run (a log or a page may hold several runs'
summaries: :mod:`.runs`). A table whose nesting was lost (an indent that fits
no parent, ``paddle_summary.orphan_indent``: its top-level rows are not known) is compared
with nothing. A Kernel Summary's calls are not compared with the
Overview's ``Kernel`` count, which no complete real sample confirms.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection

from ...model import Diagnostics
from ..stated_totals import compare_count, compare_total
from .runs import runs_of
from .schema import SummaryDocument, SummaryRow, SummaryTable

READER = "paddle_summary"
CPU_COMPOUND = "CPU Total / Avg / Max / Min / Ratio(%)"
GPU_COMPOUND = "GPU Total / Avg / Max / Min / Ratio(%)"
# Overview event type -> the table whose top-level rows it counts
COUNTED = {"Operator": "Operator Summary", "PythonUserDefined": "UserDefined Summary"}
# table -> the compound column whose top-level ratios add up to 100 %
SHARED = {"Operator Summary": CPU_COMPOUND, "Kernel Summary": GPU_COMPOUND}
OVERVIEW = "Overview Summary"
WHOLE = 100   # the % the shares of a table add up to (implied, exact)
# the tables in the order summary() prints them, and the Overview rows that imply each
ORDER = ("Device Summary", "Overview Summary", "Model Summary", "Distribution Summary",
         "Operator Summary", "Kernel Summary", "Memory Manipulation Summary",
         "UserDefined Summary")
IMPLIED_BY = {"Forward": "Model Summary", "Backward": "Model Summary",
              "Communication": "Distribution Summary", "Kernel": "Kernel Summary", **COUNTED}


def compare_stated(doc: SummaryDocument, diagnostics: Diagnostics,
                   unnested: Collection[int] = ()) -> None:
    """Compare what ``doc`` states of its tables with the rows read (module docstring);
    ``unnested``: the title lines of the tables whose nesting was lost.

    >>> from .parser import SummaryParser
    >>> found = Diagnostics()
    >>> doc = SummaryParser().parse_text(
    ...     "---Overview Summary---\\n---  ---\\nEvent Type  Calls  CPU Time  Ratio (%)\\n"
    ...     "---  ---\\nProfileStep  8  10.00  100.00\\n  Operator  544  4.00  40.00\\n---  ---\\n")
    >>> compare_stated(doc, found)
    >>> found["paddle_summary.rows_missing"].example
    'line 6: Operator Summary (not in the input): 544 calls (Overview Summary) stated, the rows read give 0'
    """
    for overview, all_tables in _runs(doc):
        tables = [t for t in all_tables if t.line not in unnested]
        if overview is not None and len(tables) == len(all_tables):
            _compare_counts(overview, tables, diagnostics)
        for table in tables:
            if table.title in SHARED:
                _compare_shares(table, SHARED[table.title], diagnostics)
            elif table.title == "Model Summary":
                _compare_phases(table, diagnostics)


def _runs(doc: SummaryDocument) -> list[tuple[SummaryTable | None, list[SummaryTable]]]:
    """The tables run by run (:func:`.runs.runs_of`), each run's Overview Summary (which
    states them) apart."""
    grouped: dict[int, list[SummaryTable]] = defaultdict(list)
    for table, run in zip(doc.tables, runs_of(doc.tables), strict=True):
        grouped[run].append(table)
    return [(next((t for t in tables if t.title == OVERVIEW), None),
             [t for t in tables if t.title != OVERVIEW]) for tables in grouped.values()]


def _calls(row: SummaryRow) -> int:
    text = row.cells.get("Calls", "")
    return int(text) if text.isdecimal() else 0


def views_chosen(overview: SummaryTable, tables: list[SummaryTable]) -> bool:
    """Whether the printout left out a table the Overview implies while printing one that
    comes after it (``summary(views=...)``; a cut loses every later table).

    >>> from .schema import SummaryRow as Row
    >>> overview = SummaryTable(title="Overview Summary", line=1, rows=[
    ...     Row(name="Forward", cells={}, line=3), Row(name="Operator", cells={}, line=4)])
    >>> views_chosen(overview, [SummaryTable(title="Operator Summary", line=9)])
    True
    >>> views_chosen(overview, [SummaryTable(title="Model Summary", line=9)])
    False
    """
    present = {t.title for t in tables}
    last = max((ORDER.index(t) for t in present if t in ORDER), default=-1)
    return any(title not in present and ORDER.index(title) < last
               for row in overview.rows if (title := IMPLIED_BY.get(row.name)))


def _compare_counts(overview: SummaryTable, tables: list[SummaryTable],
                    diagnostics: Diagnostics) -> None:
    chosen = views_chosen(overview, tables)
    for row in overview.rows:
        title = COUNTED.get(row.name)
        if title is None or not row.cells.get("Calls", "").isdecimal():
            continue
        counted = [t for t in tables if t.title == title]
        if not counted and chosen:
            continue
        where = f"line {counted[0].line}: {title}" if counted else \
            f"line {row.line}: {title} (not in the input)"
        compare_count(diagnostics, READER, where, _calls(row),
                      sum(_calls(r) for t in counted for r in t.rows if r.parent is None),
                      what="calls (Overview Summary)")


def _ratio(row: SummaryRow, column: str) -> str | None:
    parts = row.cells.get(column, "").split("/")
    return parts[4].strip() if len(parts) == 5 else None


def _compare_shares(table: SummaryTable, column: str, diagnostics: Diagnostics) -> None:
    by_thread: dict[str | None, list[str]] = defaultdict(list)
    for row in table.rows:
        if row.parent is None and (ratio := _ratio(row, column)) not in (None, "-"):
            by_thread[row.thread].append(ratio)
    for thread, ratios in by_thread.items():
        if any(_nonzero(r) for r in ratios):   # (no time at all: no shares to add up)
            where = f"line {table.line}: {table.title}" + (f", thread {thread}" if thread
                                                            else "")
            compare_total(diagnostics, READER, where, WHOLE, ratios, what="% of the time")


def _nonzero(text: str) -> bool:
    try:
        return float(text) != 0
    except ValueError:
        return False


def _compare_phases(table: SummaryTable, diagnostics: Diagnostics) -> None:
    for index, step in enumerate(table.rows):
        if step.parent is not None or step.name != "ProfileStep":
            continue
        total = step.cells.get(CPU_COMPOUND, "").split("/")[0].strip()
        phases = [r.cells.get(CPU_COMPOUND, "").split("/")[0].strip() for r in table.rows
                  if r.parent == index]
        if _number(total) and all(_number(p) is not None for p in phases):
            compare_total(diagnostics, READER, f"line {step.line}: {table.title}", total,
                          phases, what=f"{table.time_unit or 'ms'} of ProfileStep")


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None

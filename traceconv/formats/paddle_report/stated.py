"""What an old "Profiling Report" states of its Event Summary (``profiler_helper.h``), for
the shared comparison with the rows read (:mod:`..stated_totals`): the ``Ratio.`` of a
top-level row is its share of its thread's time (the sum of that thread's top-level totals),
so the top-level ratios of each thread (of the merged report: of all its rows) add up to 1
(checked on every real 2.6.2 and 3.3.1 sample). Ratios are printed ``%g`` (six significant
digits) and read as numbers: their tolerance is that of their shortest spelling.

Ends stated (:func:`missing_ends`): a ``Profiling Report`` banner is followed by its Event
Summary rows, and a merged report (``Note! This Report merge all thread info into one.``)
by the per-thread report of the same run (``DisableProfiler`` prints both); an input that
stops before them lost them. Rows nested under the last top-level row have no stated
whole; in the 2.x layout (an ``Overhead Summary`` title) the Memory Profiling Report
follows the last Event Summary, so an input whose text ends on one of its rows was cut
there (:meth:`.parser.ReportParser._count_missing_memory_report`).
"""

from __future__ import annotations

from collections import defaultdict

from ...model import Diagnostics
from ..stated_totals import compare_total, missing_end
from .schema import ProfilingReport, ReportLog

READER = "paddle_report"


def compare_stated(log: ReportLog, diagnostics: Diagnostics) -> None:
    """Compare each report's top-level ratios with the whole they share (module docstring).

    >>> from .schema import EventRow
    >>> row = dict(calls=1, total_ms=1.0, min_ms=1.0, max_ms=1.0, ave_ms=1.0)
    >>> report = ProfilingReport(line=3, events=[
    ...     EventRow(name="thread0::a", ratio=0.6, ratio_text="0.6", thread=0, **row),
    ...     EventRow(name="thread0::b", ratio=0.25, ratio_text="0.25", thread=0, **row)])
    >>> found = Diagnostics()
    >>> compare_stated(ReportLog(reports=[report]), found)
    >>> found["paddle_report.rows_missing"].example
    'line 3: Event Summary, thread 0: 1 of the time (Ratio.) stated, the rows read give 0.85'
    """
    for report in log.reports:
        _compare_report(report, diagnostics)


def _compare_report(report: ProfilingReport, diagnostics: Diagnostics) -> None:
    by_thread: dict[int | None, list[str]] = defaultdict(list)
    for row in report.events:
        if row.parent is None and row.ratio is not None and row.ratio_text is not None:
            by_thread[row.thread].append(row.ratio_text)
    for thread, ratios in by_thread.items():
        if any(map(float, ratios)):   # (no time at all: no shares to add up)
            where = f"line {report.line}: Event Summary" + (
                f", thread {thread}" if thread is not None else "")
            compare_total(diagnostics, READER, where, 1, ratios, what="of the time (Ratio.)")


def missing_ends(log: ReportLog, diagnostics: Diagnostics) -> None:
    """Count the reports of ``log`` whose stated sequel the input lacks (module docstring).

    >>> found = Diagnostics()
    >>> missing_ends(ReportLog(reports=[ProfilingReport(line=2, merged=True)]), found)
    >>> found["paddle_report.rows_missing"].count, found["paddle_report.rows_missing"].example
    (2, 'line 2: Profiling Report: the input ends before its Event Summary rows')
    """
    for index, report in enumerate(log.reports):
        where = f"line {report.line}: Profiling Report"
        if not report.events and not report.implicit:
            missing_end(diagnostics, READER, where, "its Event Summary rows")
        later = log.reports[index + 1:]
        if report.merged and not any(r.group == report.group and not r.merged for r in later):
            missing_end(diagnostics, READER, where,
                        "the per-thread report that follows a merged one")
